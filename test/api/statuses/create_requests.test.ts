/** POST /api/v1/statuses as clients send it: Idempotency-Key, and JSON, form and multipart bodies. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import {
  accountJson,
  createTestServer,
  createUser,
  multipartBody,
  postStatus,
  request,
  standardAccounts,
  statusRowCount,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import type { Status } from "../../types.ts";

/** POST /api/v1/statuses as sent, for answers that are refusals. */
function post(
  server: TestServer,
  token: string | undefined,
  json: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return request(server.app, "POST", "/api/v1/statuses", { token, json, headers });
}

describe("POST /api/v1/statuses requests", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  describe("Idempotency-Key", () => {
    test("the same key returns the same status and creates nothing more", async () => {
      const user = await createUser(server.ctx, "idem");
      const first = await postStatus(server, user, { status: "once" }, { "Idempotency-Key": "key-1" });
      const second = await postStatus(
        server,
        user,
        { status: "other params are ignored" },
        { "Idempotency-Key": "key-1" },
      );
      assert.equal(second.id, first.id);
      assert.equal(second.content, "<p>once</p>");
      assert.equal(await statusRowCount(server, user), 1);
      assert.equal((await accountJson(server, user)).statuses_count, 1);
      const third = await postStatus(server, user, { status: "new key" }, { "Idempotency-Key": "key-2" });
      assert.notEqual(third.id, first.id);
      const noKey = await postStatus(server, user, { status: "once" });
      assert.notEqual(noKey.id, first.id);
      assert.equal(await statusRowCount(server, user), 3);
    });

    test("keys belong to an account: the same key from another account creates its own status", async () => {
      const one = await createUser(server.ctx, "idem_one");
      const two = await createUser(server.ctx, "idem_two");
      const a1 = await postStatus(server, one, { status: "mine" }, { "Idempotency-Key": "shared" });
      const a2 = await postStatus(server, two, { status: "mine too" }, { "Idempotency-Key": "shared" });
      assert.notEqual(a1.id, a2.id);
      assert.equal(a2.account.id, two.account.id);
    });

    test("a key older than an hour no longer deduplicates", async () => {
      const user = await createUser(server.ctx, "idem_old");
      const first = await postStatus(server, user, { status: "an hour ago" }, { "Idempotency-Key": "old" });
      await server.ctx.db.kysely
        .updateTable("idempotency_keys")
        .set({ created_at: new Date(Date.now() - 61 * 60_000).toISOString() })
        .where("account_id", "=", user.account.id)
        .execute();
      const second = await postStatus(server, user, { status: "now" }, { "Idempotency-Key": "old" });
      assert.notEqual(second.id, first.id);
      assert.equal(second.content, "<p>now</p>");
      const third = await postStatus(server, user, { status: "again" }, { "Idempotency-Key": "old" });
      assert.equal(third.id, second.id);
    });

    test("a failed creation does not consume the key", async () => {
      const user = await createUser(server.ctx, "idem_fail");
      assert.equal((await post(server, user.token, { status: "" }, { "Idempotency-Key": "retry" })).statusCode, 422);
      const ok = await postStatus(server, user, { status: "fixed" }, { "Idempotency-Key": "retry" });
      assert.equal(ok.content, "<p>fixed</p>");
    });

    test("concurrent duplicates still make one status", async () => {
      const user = await createUser(server.ctx, "idem_race");
      const results = await Promise.all(
        [1, 2, 3].map(() => post(server, user.token, { status: "race" }, { "Idempotency-Key": "race" })),
      );
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [200, 200, 200],
      );
      assert.equal(new Set(results.map((r) => r.json().id)).size, 1);
      assert.equal(await statusRowCount(server, user), 1);
    });
  });

  describe("request bodies", () => {
    test("form-encoded, with Rails-style arrays and nested poll", async () => {
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        form: [
          ["status", "form body"],
          ["visibility", "unlisted"],
          ["spoiler_text", "cw"],
          ["poll[options][]", "one"],
          ["poll[options][]", "two"],
          ["poll[expires_in]", "900"],
          ["poll[multiple]", "true"],
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<Status>();
      assert.equal(body.content, "<p>form body</p>");
      assert.equal(body.visibility, "unlisted");
      assert.equal(body.spoiler_text, "cw");
      assert.deepEqual(
        body.poll?.options.map((o) => o.title),
        ["one", "two"],
      );
      assert.equal(body.poll?.multiple, true);
    });

    test("form-encoded media_ids[]", async () => {
      const m1 = (await uploadImage(server, a.alice)).id;
      const m2 = (await uploadImage(server, a.alice)).id;
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        form: [
          ["media_ids[]", m1],
          ["media_ids[]", m2],
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json<Status>().media_attachments.map((m) => m.id),
        [m1, m2],
      );
    });

    test("JSON with arrays and a nested poll object", async () => {
      const body = await postStatus(server, a.alice, {
        status: "json body",
        poll: { options: ["x", "y"], expires_in: "600", hide_totals: true },
        language: "en",
      });
      assert.deepEqual(
        body.poll?.options.map((o) => o.title),
        ["x", "y"],
      );
      assert.equal(body.language, "en");
    });

    test("multipart/form-data", async () => {
      const media = (await uploadImage(server, a.alice)).id;
      const { body, contentType } = multipartBody([
        { name: "status", value: "multipart body" },
        { name: "media_ids[]", value: media },
        { name: "sensitive", value: "true" },
        { name: "visibility", value: "private" },
      ]);
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        body,
        headers: { "content-type": contentType },
      });
      assert.equal(res.statusCode, 200, res.body);
      const json = res.json<Status>();
      assert.equal(json.content, "<p>multipart body</p>");
      assert.equal(json.sensitive, true);
      assert.equal(json.visibility, "private");
      assert.deepEqual(
        json.media_attachments.map((m) => m.id),
        [media],
      );
    });
  });
});
