/** POST /api/v1/statuses with a poll or media attachments: their rules and errors. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { newId } from "../../../src/db/ids.ts";
import {
  createTestServer,
  errorOf,
  get,
  postStatus,
  request,
  standardAccounts,
  statusRowCount,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";

/** POST /api/v1/statuses as sent, for answers that are refusals. */
function post(
  server: TestServer,
  token: string | undefined,
  json: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return request(server.app, "POST", "/api/v1/statuses", { token, json, headers });
}

describe("POST /api/v1/statuses with a poll or media", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  describe("polls", () => {
    const poll = (options: string[], expiresIn = 600, extra: { multiple?: boolean; hide_totals?: boolean } = {}) => ({
      status: "Poll?",
      poll: { options, expires_in: expiresIn, ...extra },
    });

    test("a poll is created with its options, expiry and flags", async () => {
      const before = Date.now();
      const { poll: created } = await postStatus(
        server,
        a.carol,
        poll(["Yes", "No", "Maybe"], 3600, { multiple: true, hide_totals: false }),
      );
      assert.ok(created);
      assert.equal(created.multiple, true);
      assert.equal(created.expired, false);
      assert.equal(created.votes_count, 0);
      assert.deepEqual(created.options, [
        { title: "Yes", votes_count: 0 },
        { title: "No", votes_count: 0 },
        { title: "Maybe", votes_count: 0 },
      ]);
      const expires = Date.parse(created.expires_at!);
      assert.ok(
        expires >= before + 3600_000 - 1000 && expires <= Date.now() + 3600_000 + 1000,
        String(created.expires_at),
      );
    });

    test("2 to 4 options", async () => {
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["Only"]))), [
        422,
        "Validation failed: Poll options must have more than one item",
      ]);
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["a", "b", "c", "d", "e"]))), [
        422,
        "Validation failed: Poll options can't contain more than 4 items",
      ]);
      await postStatus(server, a.carol, poll(["a", "b"]));
      await postStatus(server, a.carol, poll(["a", "b", "c", "d"]));
    });

    test("options of at most 50 characters, not blank, not duplicated", async () => {
      await postStatus(server, a.carol, poll(["x".repeat(50), "y"]));
      await postStatus(server, a.carol, poll(["👩‍👩‍👧".repeat(50), "y"]));
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["x".repeat(51), "y"]))), [
        422,
        "Validation failed: Poll options cannot be longer than 50 characters each",
      ]);
      const [status, error] = errorOf(await post(server, a.carol.token, poll(["same", "same"])));
      assert.equal(status, 422);
      assert.match(error, /^Validation failed: .*duplicate/);
      const [blankStatus, blankError] = errorOf(await post(server, a.carol.token, poll(["a", " "])));
      assert.equal(blankStatus, 422);
      assert.match(blankError, /^Validation failed: /);
    });

    test("expires_in between 300 seconds and one month", async () => {
      const [tooSoon, soonText] = errorOf(await post(server, a.carol.token, poll(["a", "b"], 299)));
      assert.equal(tooSoon, 422);
      assert.match(soonText, /^Validation failed: .*is too soon$/);
      const [tooFar, farText] = errorOf(await post(server, a.carol.token, poll(["a", "b"], 2_629_747)));
      assert.equal(tooFar, 422);
      assert.match(farText, /^Validation failed: .*is too far into the future$/);
      await postStatus(server, a.carol, poll(["a", "b"], 300));
      const longest = await postStatus(server, a.carol, poll(["a", "b"], 2_629_746));
      assert.ok(Date.parse(longest.poll!.expires_at!) - Date.now() > 2_629_000_000);
    });

    test("a poll without expires_in, or expires_in without options, is refused", async () => {
      assert.equal((await post(server, a.carol.token, { status: "p", poll: { options: ["a", "b"] } })).statusCode, 422);
      assert.equal((await post(server, a.carol.token, { status: "p", poll: { expires_in: 600 } })).statusCode, 422);
    });

    test("a poll cannot be combined with media", async () => {
      const media = (await uploadImage(server, a.carol)).id;
      const res = await post(server, a.carol.token, { ...poll(["a", "b"]), media_ids: [media] });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().error, /./);
      // The media stayed free.
      assert.equal((await get(server.app, `/api/v1/media/${media}`, a.carol.token)).statusCode, 200);
    });

    test("nothing is stored when a poll is refused", async () => {
      const count = await statusRowCount(server, a.carol);
      await post(server, a.carol.token, poll(["a"]));
      assert.equal(await statusRowCount(server, a.carol), count);
    });
  });

  describe("media_ids", () => {
    test("attaches the author's processed media in the order given", async () => {
      const first = (await uploadImage(server, a.carol)).id;
      const second = (await uploadImage(server, a.carol)).id;
      const body = await postStatus(server, a.carol, { status: "pics", media_ids: [second, first] });
      assert.deepEqual(
        body.media_attachments.map((m) => m.id),
        [second, first],
      );
      assert.equal(body.media_attachments[0].type, "image");
      // Attached media are no longer available as drafts.
      assert.equal((await get(server.app, `/api/v1/media/${first}`, a.carol.token)).statusCode, 404);
    });

    test("at most 4 files", async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push((await uploadImage(server, a.carol)).id);
      assert.deepEqual(errorOf(await post(server, a.carol.token, { status: "too many", media_ids: ids })), [
        422,
        "Cannot attach more than 4 files",
      ]);
      const body = await postStatus(server, a.carol, { status: "four", media_ids: ids.slice(0, 4) });
      assert.equal(body.media_attachments.length, 4);
    });

    test("someone else's media, media already attached and unknown IDs are refused", async () => {
      const bobs = (await uploadImage(server, a.bob)).id;
      const [status, error] = errorOf(await post(server, a.carol.token, { status: "theft", media_ids: [bobs] }));
      assert.equal(status, 422);
      assert.match(error, /not found or already attached to another post/);
      const mine = (await uploadImage(server, a.carol)).id;
      await postStatus(server, a.carol, { status: "first use", media_ids: [mine] });
      assert.equal((await post(server, a.carol.token, { status: "second use", media_ids: [mine] })).statusCode, 422);
      assert.equal((await post(server, a.carol.token, { status: "unknown", media_ids: ["12345"] })).statusCode, 422);
    });

    test("media still processing cannot be attached", async () => {
      const id = newId();
      const now = new Date().toISOString();
      await server.ctx.db.kysely
        .insertInto("media_attachments")
        .values({
          id,
          account_id: a.carol.account.id,
          type: "image",
          processing: "in_progress",
          created_at: now,
          updated_at: now,
        })
        .execute();
      assert.deepEqual(errorOf(await post(server, a.carol.token, { status: "wait", media_ids: [id] })), [
        422,
        "Cannot attach files that have not finished processing. Try again in a moment!",
      ]);
    });
  });
});
