/**
 * POST/GET/PUT/DELETE /api/v1/statuses: parameters and their errors, Mastodon's character counting,
 * the exact HTML of local posts, counters, idempotency, edits with their history and source, and
 * the conversation context with its anonymous limits.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import type { LightMyRequestResponse } from "fastify";
import type { Ctx } from "../../src/context.ts";
import { newId } from "../../src/db/ids.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { appToken, createTestServer, createUser, errorOf, get, multipartBody, request, standardAccounts, tokenFor, type StandardAccounts, type TestServer } from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

type Json = Record<string, any>;

const REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist.";
const TOO_LONG = "Validation failed: Text character limit of 500 exceeded";
const BLANK = "Validation failed: Text can't be blank";

function post(server: TestServer, token: string | undefined, json: Json, headers?: Record<string, string>): Promise<LightMyRequestResponse> {
  return request(server.app, "POST", "/api/v1/statuses", { token, json, headers });
}

async function postOk(server: TestServer, token: string, json: Json, headers?: Record<string, string>): Promise<Json> {
  const res = await post(server, token, json, headers);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function jpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } }).jpeg().toBuffer();
}

async function upload(server: TestServer, token: string): Promise<string> {
  const { body, contentType } = multipartBody([{ name: "file", value: await jpeg(24, 16), filename: "a.jpg", type: "image/jpeg" }]);
  const res = await request(server.app, "POST", "/api/v2/media", { token, body, headers: { "content-type": contentType } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().id;
}

async function follow(ctx: Ctx, follower: AccountRow, target: AccountRow): Promise<void> {
  const now = new Date().toISOString();
  await ctx.db.kysely.insertInto("follows").values({ id: newId(), account_id: follower.id, target_account_id: target.id, created_at: now, updated_at: now }).execute();
}

async function statusCount(ctx: Ctx, accountId: string): Promise<number> {
  const row = await ctx.db.kysely.selectFrom("statuses").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function accountJson(server: TestServer, id: string): Promise<Json> {
  const res = await get(server.app, `/api/v1/accounts/${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function statusJson(server: TestServer, id: string, token?: string): Promise<Json> {
  const res = await get(server.app, `/api/v1/statuses/${id}`, token);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

describe("POST /api/v1/statuses", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("creates a status and answers with the Status entity", async () => {
    const body = await postOk(server, a.alice.token, { status: "Hello world" });
    assert.match(body.id, /^\d+$/);
    assert.equal(body.content, "<p>Hello world</p>");
    assert.equal(body.visibility, "public");
    assert.equal(body.spoiler_text, "");
    assert.equal(body.sensitive, false);
    assert.equal(body.in_reply_to_id, null);
    assert.equal(body.in_reply_to_account_id, null);
    assert.equal(body.reblog, null);
    assert.equal(body.poll, null);
    assert.equal(body.edited_at, null);
    assert.deepEqual([body.replies_count, body.reblogs_count, body.favourites_count], [0, 0, 0]);
    assert.deepEqual([body.favourited, body.reblogged, body.muted, body.bookmarked, body.pinned], [false, false, false, false, false]);
    assert.deepEqual(body.media_attachments, []);
    assert.equal(body.account.id, a.alice.account.id);
    assert.deepEqual(body.application, { name: "Test Client", website: "https://client.example" });
    assert.match(body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(body.uri, `https://rookery.test/users/alice/statuses/${body.id}`);
    assert.equal(body.url, `https://rookery.test/@alice/${body.id}`);
    // The stored status is what GET returns.
    const fetched = await statusJson(server, body.id, a.alice.token);
    assert.deepEqual(fetched, body);
  });

  test("the Status matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const media = await upload(server, a.alice.token);
    const withMedia = await postOk(server, a.alice.token, { status: "#schema @bob", media_ids: [media], sensitive: true, language: "en" });
    assert.deepEqual(validateSchema("Status", withMedia), []);
    const withPoll = await postOk(server, a.alice.token, { status: "poll", poll: { options: ["a", "b"], expires_in: 600 } });
    assert.deepEqual(validateSchema("Status", withPoll), []);
    assert.deepEqual(validateSchema("Poll", withPoll.poll), []);
    assert.deepEqual(validateSchema("Status", await statusJson(server, withMedia.id)), []);
  });

  test("status is required unless media_ids are given", async () => {
    assert.deepEqual(errorOf(await post(server, a.alice.token, {})), [422, BLANK]);
    assert.deepEqual(errorOf(await post(server, a.alice.token, { status: "" })), [422, BLANK]);
    assert.deepEqual(errorOf(await post(server, a.alice.token, { status: "  \n\t " })), [422, BLANK]);
    const media = await upload(server, a.alice.token);
    const body = await postOk(server, a.alice.token, { media_ids: [media] });
    assert.equal(body.content, "");
    assert.deepEqual(body.media_attachments.map((m: Json) => m.id), [media]);
  });

  test("a post with only a content warning uses the warning as its text", async () => {
    const body = await postOk(server, a.alice.token, { status: "", spoiler_text: "Just a warning" });
    assert.equal(body.content, "<p>Just a warning</p>");
    assert.equal(body.spoiler_text, "");
  });

  test(
    "a content-warning-only post is sensitive (the warning was given)",
    {},
    async () => {
      const body = await postOk(server, a.alice.token, { status: "", spoiler_text: "Only a CW" });
      assert.equal(body.sensitive, true);
    },
  );

  describe("the 500-character limit, counted as Mastodon counts", () => {
    test("500 plain characters pass, 501 fail", async () => {
      await postOk(server, a.bob.token, { status: "a".repeat(500) });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "a".repeat(501) })), [422, TOO_LONG]);
    });

    test("a URL counts as 23 characters however long it is", async () => {
      const url = `https://example.com/${"x".repeat(300)}`;
      const body = await postOk(server, a.bob.token, { status: `${"a".repeat(476)} ${url}` });
      assert.ok(body.content.includes(`href="${url}"`));
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `${"a".repeat(477)} ${url}` })), [422, TOO_LONG]);
      // A short URL counts 23 too, not its own length.
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `${"a".repeat(477)} https://a.co` })), [422, TOO_LONG]);
    });

    test("a remote mention counts only as @username; a local one in full", async () => {
      await postOk(server, a.bob.token, { status: `@rita@remote.example ${"a".repeat(494)}` });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `@rita@remote.example ${"a".repeat(495)}` })), [422, TOO_LONG]);
      // Even when the account is unknown here.
      await postOk(server, a.bob.token, { status: `@ghost@elsewhere.example ${"a".repeat(493)}` });
      await postOk(server, a.bob.token, { status: `@carol ${"a".repeat(493)}` });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `@carol ${"a".repeat(494)}` })), [422, TOO_LONG]);
    });

    test("an emoji ZWJ sequence or a flag counts as one character", async () => {
      const family = "👨‍👩‍👧‍👦";
      await postOk(server, a.bob.token, { status: family.repeat(500) });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: family.repeat(501) })), [422, TOO_LONG]);
      await postOk(server, a.bob.token, { status: "🇫🇷".repeat(250) + "é".repeat(250) });
    });

    test("the content warning counts with the text", async () => {
      await postOk(server, a.bob.token, { status: "b".repeat(250), spoiler_text: "w".repeat(250) });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "b".repeat(251), spoiler_text: "w".repeat(250) })), [422, TOO_LONG]);
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "b", spoiler_text: "w".repeat(500) })), [422, TOO_LONG]);
    });

    test(
      "a URL at the start of the text still counts 23 when a content warning is set",
      {},
      async () => {
        await postOk(server, a.bob.token, { status: `https://example.com/${"a".repeat(600)}`, spoiler_text: "Spoiler" });
      },
    );
  });

  describe("polls", () => {
    const poll = (options: string[], expiresIn: number | undefined = 600, extra: Json = {}) => ({ status: "Poll?", poll: { options, expires_in: expiresIn, ...extra } });

    test("a poll is created with its options, expiry and flags", async () => {
      const before = Date.now();
      const body = await postOk(server, a.carol.token, poll(["Yes", "No", "Maybe"], 3600, { multiple: true, hide_totals: false }));
      assert.equal(body.poll.multiple, true);
      assert.equal(body.poll.expired, false);
      assert.equal(body.poll.votes_count, 0);
      assert.deepEqual(body.poll.options, [
        { title: "Yes", votes_count: 0 },
        { title: "No", votes_count: 0 },
        { title: "Maybe", votes_count: 0 },
      ]);
      const expires = Date.parse(body.poll.expires_at);
      assert.ok(expires >= before + 3600_000 - 1000 && expires <= Date.now() + 3600_000 + 1000, body.poll.expires_at);
    });

    test("2 to 4 options", async () => {
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["Only"]))), [422, "Validation failed: Poll options must have more than one item"]);
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["a", "b", "c", "d", "e"]))), [422, "Validation failed: Poll options can't contain more than 4 items"]);
      await postOk(server, a.carol.token, poll(["a", "b"]));
      await postOk(server, a.carol.token, poll(["a", "b", "c", "d"]));
    });

    test("options of at most 50 characters, not blank, not duplicated", async () => {
      await postOk(server, a.carol.token, poll(["x".repeat(50), "y"]));
      await postOk(server, a.carol.token, poll(["👩‍👩‍👧".repeat(50), "y"]));
      assert.deepEqual(errorOf(await post(server, a.carol.token, poll(["x".repeat(51), "y"]))), [422, "Validation failed: Poll options cannot be longer than 50 characters each"]);
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
      await postOk(server, a.carol.token, poll(["a", "b"], 300));
      const longest = await postOk(server, a.carol.token, poll(["a", "b"], 2_629_746));
      assert.ok(Date.parse(longest.poll.expires_at) - Date.now() > 2_629_000_000);
    });

    test("a poll without expires_in, or expires_in without options, is refused", async () => {
      assert.equal((await post(server, a.carol.token, { status: "p", poll: { options: ["a", "b"] } })).statusCode, 422);
      assert.equal((await post(server, a.carol.token, { status: "p", poll: { expires_in: 600 } })).statusCode, 422);
    });

    test("a poll cannot be combined with media", async () => {
      const media = await upload(server, a.carol.token);
      const res = await post(server, a.carol.token, { ...poll(["a", "b"]), media_ids: [media] });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().error, /./);
      // The media stayed free.
      assert.equal((await get(server.app, `/api/v1/media/${media}`, a.carol.token)).statusCode, 200);
    });

    test("nothing is stored when a poll is refused", async () => {
      const count = await statusCount(server.ctx, a.carol.account.id);
      await post(server, a.carol.token, poll(["a"]));
      assert.equal(await statusCount(server.ctx, a.carol.account.id), count);
    });
  });

  describe("visibility", () => {
    test("each of the four values is kept", async () => {
      for (const visibility of ["public", "unlisted", "private", "direct"]) {
        const body = await postOk(server, a.alice.token, { status: `v ${visibility} @bob`, visibility });
        assert.equal(body.visibility, visibility);
      }
    });

    test("the default comes from the user's source[privacy] preference", async () => {
      const user = await createUser(server.ctx, "privacy_default");
      assert.equal((await postOk(server, user.token, { status: "before" })).visibility, "public");
      const patch = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", { token: user.token, form: { "source[privacy]": "private" } });
      assert.equal(patch.statusCode, 200, patch.body);
      assert.equal((await postOk(server, user.token, { status: "after" })).visibility, "private");
      assert.equal((await postOk(server, user.token, { status: "explicit", visibility: "unlisted" })).visibility, "unlisted");
    });

    test("an unknown visibility is refused and stores nothing", async () => {
      const count = await statusCount(server.ctx, a.alice.account.id);
      for (const visibility of ["everyone", "limited", "PUBLIC"]) {
        const [status, error] = errorOf(await post(server, a.alice.token, { status: "x", visibility }));
        assert.equal(status, 422, visibility);
        assert.match(error, /^Validation failed: Visibility/);
      }
      assert.equal(await statusCount(server.ctx, a.alice.account.id), count);
    });
  });

  test("language is normalised to an ISO 639-1 code; anything else is dropped", async () => {
    assert.equal((await postOk(server, a.alice.token, { status: "l1", language: "en" })).language, "en");
    assert.equal((await postOk(server, a.alice.token, { status: "l2", language: "DE" })).language, "de");
    assert.equal((await postOk(server, a.alice.token, { status: "l3", language: "pt-BR" })).language, "pt");
    assert.equal((await postOk(server, a.alice.token, { status: "l4", language: "klingon" })).language, null);
    assert.equal((await postOk(server, a.alice.token, { status: "l5", language: "zz" })).language, null);
    assert.equal((await postOk(server, a.alice.token, { status: "l6" })).language, null);
  });

  test("the default language comes from source[language]", async () => {
    const user = await createUser(server.ctx, "language_default");
    const patch = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", { token: user.token, form: { "source[language]": "fr" } });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal((await postOk(server, user.token, { status: "bonjour" })).language, "fr");
    assert.equal((await postOk(server, user.token, { status: "hello", language: "en" })).language, "en");
  });

  test("sensitive, and a content warning forces it", async () => {
    assert.equal((await postOk(server, a.alice.token, { status: "s1", sensitive: true })).sensitive, true);
    assert.equal((await postOk(server, a.alice.token, { status: "s2", sensitive: false })).sensitive, false);
    const cw = await postOk(server, a.alice.token, { status: "s3", sensitive: false, spoiler_text: "Spoilers!" });
    assert.equal(cw.sensitive, true);
    assert.equal(cw.spoiler_text, "Spoilers!");
    // Form booleans the Rails way.
    const res = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, form: { status: "s4", sensitive: "1" } });
    assert.equal(res.json().sensitive, true);
    const off = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, form: { status: "s5", sensitive: "false" } });
    assert.equal(off.json().sensitive, false);
  });

  test("the default sensitivity comes from source[sensitive]", async () => {
    const user = await createUser(server.ctx, "sensitive_default");
    await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", { token: user.token, form: { "source[sensitive]": "true" } });
    assert.equal((await postOk(server, user.token, { status: "nsfw" })).sensitive, true);
    assert.equal((await postOk(server, user.token, { status: "sfw", sensitive: false })).sensitive, false);
  });

  describe("in_reply_to_id", () => {
    test("a reply to a visible status links both ways and counts for public and unlisted replies", async () => {
      const parent = await postOk(server, a.alice.token, { status: "parent" });
      const reply = await postOk(server, a.bob.token, { status: "@alice reply", in_reply_to_id: parent.id });
      assert.equal(reply.in_reply_to_id, parent.id);
      assert.equal(reply.in_reply_to_account_id, a.alice.account.id);
      assert.equal((await statusJson(server, parent.id)).replies_count, 1);
      await postOk(server, a.carol.token, { status: "unlisted reply", in_reply_to_id: parent.id, visibility: "unlisted" });
      assert.equal((await statusJson(server, parent.id)).replies_count, 2);
      await postOk(server, a.carol.token, { status: "private reply", in_reply_to_id: parent.id, visibility: "private" });
      await postOk(server, a.carol.token, { status: "@alice direct reply", in_reply_to_id: parent.id, visibility: "direct" });
      assert.equal((await statusJson(server, parent.id)).replies_count, 2);
    });

    test("a reply to an invisible, unknown or malformed status is 404 with Mastodon's text", async () => {
      const secret = await postOk(server, a.lucy.token, { status: "followers only", visibility: "private" });
      const count = await statusCount(server.ctx, a.bob.account.id);
      for (const id of [secret.id, "1234567890", "not-a-number", "-1"]) {
        assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "reply", in_reply_to_id: id })), [404, REPLY_NOT_FOUND], id);
      }
      assert.equal(await statusCount(server.ctx, a.bob.account.id), count);
      // The author herself may reply to it.
      await postOk(server, a.lucy.token, { status: "self reply", in_reply_to_id: secret.id });
    });

    test("a follower may reply to a private status", async () => {
      const follower = await createUser(server.ctx, "lucy_follower");
      await follow(server.ctx, follower.account, a.lucy.account);
      const secret = await postOk(server, a.lucy.token, { status: "for followers", visibility: "private" });
      const reply = await postOk(server, follower.token, { status: "@lucy hi", in_reply_to_id: secret.id });
      assert.equal(reply.in_reply_to_id, secret.id);
    });
  });

  describe("media_ids", () => {
    test("attaches the author's processed media in the order given", async () => {
      const first = await upload(server, a.carol.token);
      const second = await upload(server, a.carol.token);
      const body = await postOk(server, a.carol.token, { status: "pics", media_ids: [second, first] });
      assert.deepEqual(body.media_attachments.map((m: Json) => m.id), [second, first]);
      assert.equal(body.media_attachments[0].type, "image");
      // Attached media are no longer available as drafts.
      assert.equal((await get(server.app, `/api/v1/media/${first}`, a.carol.token)).statusCode, 404);
    });

    test("at most 4 files", async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await upload(server, a.carol.token));
      assert.deepEqual(errorOf(await post(server, a.carol.token, { status: "too many", media_ids: ids })), [422, "Cannot attach more than 4 files"]);
      const body = await postOk(server, a.carol.token, { status: "four", media_ids: ids.slice(0, 4) });
      assert.equal(body.media_attachments.length, 4);
    });

    test("someone else's media, media already attached and unknown IDs are refused", async () => {
      const bobs = await upload(server, a.bob.token);
      const [status, error] = errorOf(await post(server, a.carol.token, { status: "theft", media_ids: [bobs] }));
      assert.equal(status, 422);
      assert.match(error, /not found or already attached to another post/);
      const mine = await upload(server, a.carol.token);
      await postOk(server, a.carol.token, { status: "first use", media_ids: [mine] });
      assert.equal((await post(server, a.carol.token, { status: "second use", media_ids: [mine] })).statusCode, 422);
      assert.equal((await post(server, a.carol.token, { status: "unknown", media_ids: ["12345"] })).statusCode, 422);
    });

    test("media still processing cannot be attached", async () => {
      const id = newId();
      const now = new Date().toISOString();
      await server.ctx.db.kysely
        .insertInto("media_attachments")
        .values({ id, account_id: a.carol.account.id, type: "image", processing: "in_progress", created_at: now, updated_at: now })
        .execute();
      assert.deepEqual(errorOf(await post(server, a.carol.token, { status: "wait", media_ids: [id] })), [422, "Cannot attach files that have not finished processing. Try again in a moment!"]);
    });
  });

  describe("Idempotency-Key", () => {
    test("the same key returns the same status and creates nothing more", async () => {
      const user = await createUser(server.ctx, "idem");
      const first = await postOk(server, user.token, { status: "once" }, { "Idempotency-Key": "key-1" });
      const second = await postOk(server, user.token, { status: "other params are ignored" }, { "Idempotency-Key": "key-1" });
      assert.equal(second.id, first.id);
      assert.equal(second.content, "<p>once</p>");
      assert.equal(await statusCount(server.ctx, user.account.id), 1);
      assert.equal((await accountJson(server, user.account.id)).statuses_count, 1);
      const third = await postOk(server, user.token, { status: "new key" }, { "Idempotency-Key": "key-2" });
      assert.notEqual(third.id, first.id);
      const noKey = await postOk(server, user.token, { status: "once" });
      assert.notEqual(noKey.id, first.id);
      assert.equal(await statusCount(server.ctx, user.account.id), 3);
    });

    test("keys belong to an account: the same key from another account creates its own status", async () => {
      const one = await createUser(server.ctx, "idem_one");
      const two = await createUser(server.ctx, "idem_two");
      const a1 = await postOk(server, one.token, { status: "mine" }, { "Idempotency-Key": "shared" });
      const a2 = await postOk(server, two.token, { status: "mine too" }, { "Idempotency-Key": "shared" });
      assert.notEqual(a1.id, a2.id);
      assert.equal(a2.account.id, two.account.id);
    });

    test("a key older than an hour no longer deduplicates", async () => {
      const user = await createUser(server.ctx, "idem_old");
      const first = await postOk(server, user.token, { status: "an hour ago" }, { "Idempotency-Key": "old" });
      await server.ctx.db.kysely
        .updateTable("idempotency_keys")
        .set({ created_at: new Date(Date.now() - 61 * 60_000).toISOString() })
        .where("account_id", "=", user.account.id)
        .execute();
      const second = await postOk(server, user.token, { status: "now" }, { "Idempotency-Key": "old" });
      assert.notEqual(second.id, first.id);
      assert.equal(second.content, "<p>now</p>");
      const third = await postOk(server, user.token, { status: "again" }, { "Idempotency-Key": "old" });
      assert.equal(third.id, second.id);
    });

    test("a failed creation does not consume the key", async () => {
      const user = await createUser(server.ctx, "idem_fail");
      assert.equal((await post(server, user.token, { status: "" }, { "Idempotency-Key": "retry" })).statusCode, 422);
      const ok = await postOk(server, user.token, { status: "fixed" }, { "Idempotency-Key": "retry" });
      assert.equal(ok.content, "<p>fixed</p>");
    });

    test("concurrent duplicates still make one status", async () => {
      const user = await createUser(server.ctx, "idem_race");
      const results = await Promise.all([1, 2, 3].map(() => post(server, user.token, { status: "race" }, { "Idempotency-Key": "race" })));
      assert.deepEqual(results.map((r) => r.statusCode), [200, 200, 200]);
      assert.equal(new Set(results.map((r) => r.json().id)).size, 1);
      assert.equal(await statusCount(server.ctx, user.account.id), 1);
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
      const body = res.json();
      assert.equal(body.content, "<p>form body</p>");
      assert.equal(body.visibility, "unlisted");
      assert.equal(body.spoiler_text, "cw");
      assert.deepEqual(body.poll.options.map((o: Json) => o.title), ["one", "two"]);
      assert.equal(body.poll.multiple, true);
    });

    test("form-encoded media_ids[]", async () => {
      const m1 = await upload(server, a.alice.token);
      const m2 = await upload(server, a.alice.token);
      const res = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, form: [["media_ids[]", m1], ["media_ids[]", m2]] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().media_attachments.map((m: Json) => m.id), [m1, m2]);
    });

    test("JSON with arrays and a nested poll object", async () => {
      const body = await postOk(server, a.alice.token, { status: "json body", poll: { options: ["x", "y"], expires_in: "600", hide_totals: true }, language: "en" });
      assert.deepEqual(body.poll.options.map((o: Json) => o.title), ["x", "y"]);
      assert.equal(body.language, "en");
    });

    test("multipart/form-data", async () => {
      const media = await upload(server, a.alice.token);
      const { body, contentType } = multipartBody([
        { name: "status", value: "multipart body" },
        { name: "media_ids[]", value: media },
        { name: "sensitive", value: "true" },
        { name: "visibility", value: "private" },
      ]);
      const res = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, body, headers: { "content-type": contentType } });
      assert.equal(res.statusCode, 200, res.body);
      const json = res.json();
      assert.equal(json.content, "<p>multipart body</p>");
      assert.equal(json.sensitive, true);
      assert.equal(json.visibility, "private");
      assert.deepEqual(json.media_attachments.map((m: Json) => m.id), [media]);
    });
  });

  describe("authentication", () => {
    test("401 without a token or with an unknown one", async () => {
      assert.deepEqual(errorOf(await post(server, undefined, { status: "anon" })), [401, "The access token is invalid"]);
      assert.deepEqual(errorOf(await post(server, "bogus", { status: "anon" })), [401, "The access token is invalid"]);
    });

    test("422 for an app token", async () => {
      const token = await appToken(server.ctx, "read write");
      assert.deepEqual(errorOf(await post(server, token, { status: "app" })), [422, "This method requires an authenticated user"]);
    });

    test("403 without write:statuses; write and write:statuses work", async () => {
      for (const scopes of ["read", "read:statuses", "write:media", "write:favourites", "follow"]) {
        const token = await tokenFor(server.ctx, a.carol, scopes);
        assert.deepEqual(errorOf(await post(server, token, { status: "scoped" })), [403, "This action is outside the authorized scopes"], scopes);
      }
      for (const scopes of ["write", "write:statuses"]) {
        const token = await tokenFor(server.ctx, a.carol, scopes);
        assert.equal((await post(server, token, { status: `with ${scopes}` })).statusCode, 200, scopes);
      }
    });
  });
});

describe("HTML of local posts, mentions, tags and emojis", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const content = async (status: string) => (await postOk(server, a.alice.token, { status })).content;
  const link = (href: string, prefix: string, middle: string, cls: string, rest: string) =>
    `<a href="${href}" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">${prefix}</span><span class="${cls}">${middle}</span><span class="invisible">${rest}</span></a>`;

  test("a long link: scheme hidden, 30 visible characters with an ellipsis, the rest hidden", async () => {
    assert.equal(
      await content("https://example.com/a/very/long/path/that/goes/on"),
      `<p>${link("https://example.com/a/very/long/path/that/goes/on", "https://", "example.com/a/very/long/path/t", "ellipsis", "hat/goes/on")}</p>`,
    );
  });

  test("a short link has an empty class and an empty last span; www. is hidden with the scheme", async () => {
    assert.equal(await content("see https://example.com"), `<p>see ${link("https://example.com/", "https://", "example.com", "", "")}</p>`);
    assert.equal(await content("http://www.example.org/page"), `<p>${link("http://www.example.org/page", "http://www.", "example.org/page", "", "")}</p>`);
  });

  test("when exactly one character would be left over the whole URL is shown", async () => {
    const display31 = `example.com/${"b".repeat(19)}`;
    assert.equal([...display31].length, 31);
    assert.equal(await content(`https://${display31}`), `<p>${link(`https://${display31}`, "https://", display31, "", "")}</p>`);
    const display32 = `${display31}c`;
    assert.equal(await content(`https://${display32}`), `<p>${link(`https://${display32}`, "https://", display32.slice(0, 30), "ellipsis", display32.slice(30))}</p>`);
  });

  test("trailing punctuation is not part of a link; text around it is escaped", async () => {
    assert.equal(await content("Go to https://example.com/x. <b>now</b> & \"then\""), `<p>Go to ${link("https://example.com/x", "https://", "example.com/x", "", "")}. &lt;b&gt;now&lt;/b&gt; &amp; &quot;then&quot;</p>`);
  });

  test("mentions of local and remote accounts; unknown ones stay text", async () => {
    const body = await postOk(server, a.alice.token, { status: "Hi @bob, @rita@remote.example, @nobody and @ghost@nowhere.example" });
    assert.equal(
      body.content,
      '<p>Hi <span class="h-card" translate="no"><a href="https://rookery.test/@bob" class="u-url mention">@<span>bob</span></a></span>, ' +
        '<span class="h-card" translate="no"><a href="https://remote.example/@rita" class="u-url mention">@<span>rita</span></a></span>, @nobody and @ghost@nowhere.example</p>',
    );
    assert.deepEqual(body.mentions, [
      { id: a.bob.account.id, username: "bob", url: "https://rookery.test/@bob", acct: "bob" },
      { id: a.rita.id, username: "rita", url: "https://remote.example/@rita", acct: "rita@remote.example" },
    ]);
  });

  test("a local mention written with the local domain, and a repeated mention, are listed once", async () => {
    const body = await postOk(server, a.alice.token, { status: "@carol@rookery.test and @carol again" });
    assert.deepEqual(body.mentions.map((m: Json) => m.acct), ["carol"]);
    assert.equal(body.content.match(/class="u-url mention"/g)?.length, 2);
  });

  test("a remote account sharing a local username is shown with its domain", async () => {
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("accounts")
      .values({ id: newId(), username: "bob", domain: "other.example", uri: "https://other.example/users/bob", url: "https://other.example/@bob", created_at: now, updated_at: now })
      .execute();
    const body = await postOk(server, a.alice.token, { status: "@bob @bob@other.example" });
    assert.equal(
      body.content,
      '<p><span class="h-card" translate="no"><a href="https://rookery.test/@bob" class="u-url mention">@<span>bob</span></a></span> ' +
        '<span class="h-card" translate="no"><a href="https://other.example/@bob" class="u-url mention">@<span>bob@other.example</span></a></span></p>',
    );
    assert.deepEqual(body.mentions.map((m: Json) => m.acct), ["bob", "bob@other.example"]);
  });

  test("hashtags keep their casing in the HTML; tags are lowercase with their URL", async () => {
    const body = await postOk(server, a.alice.token, { status: "#Caturday and #caturday and #123 and #Café_Time" });
    assert.equal(
      body.content,
      '<p><a href="https://rookery.test/tags/Caturday" class="mention hashtag" rel="tag">#<span>Caturday</span></a> and ' +
        '<a href="https://rookery.test/tags/caturday" class="mention hashtag" rel="tag">#<span>caturday</span></a> and #123 and ' +
        '<a href="https://rookery.test/tags/Caf%C3%A9_Time" class="mention hashtag" rel="tag">#<span>Café_Time</span></a></p>',
    );
    assert.deepEqual(
      [...body.tags].sort((x: Json, y: Json) => x.name.localeCompare(y.name)),
      [
        { name: "café_time", url: "https://rookery.test/tags/caf%C3%A9_time" },
        { name: "caturday", url: "https://rookery.test/tags/caturday" },
      ],
    );
  });

  test("paragraphs and line breaks", async () => {
    assert.equal(await content("a\nb\n\nc"), "<p>a<br />b</p><p>c</p>");
    assert.equal(await content("one\r\ntwo\r\n\r\n\r\nthree"), "<p>one<br />two</p><p>three</p>");
    assert.equal(await content("single line"), "<p>single line</p>");
  });

  test("custom emoji stay as shortcodes and are listed in emojis", async () => {
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("custom_emojis")
      .values({ id: newId(), shortcode: "blobcat", image_remote_url: "https://rookery.test/emoji/blobcat.png", visible_in_picker: true, created_at: now, updated_at: now })
      .execute();
    const body = await postOk(server, a.alice.token, { status: "I love :blobcat: and :unknown:", spoiler_text: ":blobcat:" });
    assert.equal(body.content, "<p>I love :blobcat: and :unknown:</p>");
    assert.equal(body.emojis.length, 1);
    assert.equal(body.emojis[0].shortcode, "blobcat");
    assert.equal(body.emojis[0].url, "https://rookery.test/emoji/blobcat.png");
    assert.equal(body.emojis[0].visible_in_picker, true);
  });

  test("statuses_count and last_status_at move with new posts, but not for direct messages", async () => {
    const user = await createUser(server.ctx, "counter");
    const start = await accountJson(server, user.account.id);
    assert.equal(start.statuses_count, 0);
    assert.equal(start.last_status_at, null);
    await postOk(server, user.token, { status: "one" });
    await postOk(server, user.token, { status: "two", visibility: "private" });
    const account = await accountJson(server, user.account.id);
    assert.equal(account.statuses_count, 2);
    assert.equal(account.last_status_at, new Date().toISOString().slice(0, 10));
    await postOk(server, user.token, { status: "@alice psst", visibility: "direct" });
    assert.equal((await accountJson(server, user.account.id)).statuses_count, 2);
  });
});

describe("GET /api/v1/statuses/:id and GET /api/v1/statuses?id[]=", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let s1: Json;
  let s2: Json;
  let hidden: Json;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
    s1 = await postOk(server, a.alice.token, { status: "first" });
    s2 = await postOk(server, a.bob.token, { status: "second", visibility: "unlisted" });
    hidden = await postOk(server, a.bob.token, { status: "private", visibility: "private" });
  });
  after(() => server.close());

  test("a public status is readable without a token; viewer fields appear only with one", async () => {
    const anon = await statusJson(server, s1.id);
    assert.equal(anon.content, "<p>first</p>");
    for (const key of ["favourited", "reblogged", "muted", "bookmarked", "pinned", "filtered"]) assert.equal(key in anon, false, key);
    const signed = await statusJson(server, s1.id, a.bob.token);
    assert.equal(signed.favourited, false);
    assert.equal("pinned" in signed, false, "pinned is shown only to the author");
    assert.equal((await statusJson(server, s1.id, a.alice.token)).pinned, false);
  });

  test("unknown and malformed IDs are 404", async () => {
    for (const id of ["1", "99999999999999999", "abc", "1.5"]) {
      assert.equal((await get(server.app, `/api/v1/statuses/${id}`, a.alice.token)).statusCode, 404, id);
    }
  });

  test("the batch returns the visible statuses in the order asked, each once", async () => {
    const res = await get(server.app, `/api/v1/statuses?id[]=${s2.id}&id[]=${s1.id}&id[]=${hidden.id}&id[]=123&id[]=junk&id[]=${s2.id}`, a.carol.token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().map((s: Json) => s.id), [s2.id, s1.id]);
    const owner = await get(server.app, `/api/v1/statuses?id[]=${hidden.id}&id[]=${s1.id}`, a.bob.token);
    assert.deepEqual(owner.json().map((s: Json) => s.id), [hidden.id, s1.id]);
    const anon = await get(server.app, `/api/v1/statuses?id[]=${hidden.id}&id[]=${s1.id}`);
    assert.deepEqual(anon.json().map((s: Json) => s.id), [s1.id]);
  });

  test(
    "more than 20 IDs are refused, as Mastodon's check_statuses_limit does",
    {},
    async () => {
      const distinct = Array.from({ length: 21 }, (_, i) => `id[]=${BigInt(s1.id) + BigInt(i + 1)}`).join("&");
      assert.equal((await get(server.app, `/api/v1/statuses?${distinct}`)).statusCode, 422);
    },
  );

  test("a bare id= and an empty request are accepted", async () => {
    assert.deepEqual((await get(server.app, `/api/v1/statuses?id=${s1.id}`)).json().map((s: Json) => s.id), [s1.id]);
    assert.deepEqual((await get(server.app, "/api/v1/statuses")).json(), []);
  });
});

describe("DELETE /api/v1/statuses/:id", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const del = (id: string, token?: string) => request(server.app, "DELETE", `/api/v1/statuses/${id}`, { token });

  test("returns the deleted status with its source text instead of content, with media and poll", async () => {
    const media = await upload(server, a.alice.token);
    const withMedia = await postOk(server, a.alice.token, { status: "Source *text* with #tag", media_ids: [media], spoiler_text: "cw" });
    const res = await del(withMedia.id, a.alice.token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.id, withMedia.id);
    assert.equal(body.text, "Source *text* with #tag");
    assert.equal("content" in body, false);
    assert.equal(body.spoiler_text, "cw");
    assert.deepEqual(body.media_attachments.map((m: Json) => m.id), [media]);
    assert.equal((await get(server.app, `/api/v1/statuses/${withMedia.id}`, a.alice.token)).statusCode, 404);

    const withPoll = await postOk(server, a.alice.token, { status: "poll", poll: { options: ["a", "b"], expires_in: 600, multiple: true } });
    const deleted = (await del(withPoll.id, a.alice.token)).json();
    assert.equal(deleted.text, "poll");
    assert.deepEqual(deleted.poll.options.map((o: Json) => o.title), ["a", "b"]);
    assert.equal(deleted.poll.multiple, true);
    assert.equal((await get(server.app, `/api/v1/polls/${withPoll.poll.id}`, a.bob.token)).statusCode, 404);
  });

  test("the media are detached and can be reused to redraft", async () => {
    const media = await upload(server, a.alice.token);
    const original = await postOk(server, a.alice.token, { status: "draft 1", media_ids: [media] });
    const deleted = (await del(original.id, a.alice.token)).json();
    assert.equal((await get(server.app, `/api/v1/media/${media}`, a.alice.token)).statusCode, 200);
    const redraft = await postOk(server, a.alice.token, { status: deleted.text, media_ids: deleted.media_attachments.map((m: Json) => m.id) });
    assert.deepEqual(redraft.media_attachments.map((m: Json) => m.id), [media]);
  });

  test("counters go back: statuses_count, the parent's replies_count; boosts of it are deleted", async () => {
    const user = await createUser(server.ctx, "deleter");
    const parent = await postOk(server, a.carol.token, { status: "parent" });
    const reply = await postOk(server, user.token, { status: "reply", in_reply_to_id: parent.id });
    assert.equal((await statusJson(server, parent.id)).replies_count, 1);
    const boost = (await request(server.app, "POST", `/api/v1/statuses/${reply.id}/reblog`, { token: a.bob.token })).json();
    const bobCount = (await accountJson(server, a.bob.account.id)).statuses_count;
    assert.equal((await accountJson(server, user.account.id)).statuses_count, 1);
    assert.equal((await del(reply.id, user.token)).statusCode, 200);
    assert.equal((await accountJson(server, user.account.id)).statuses_count, 0);
    assert.equal((await statusJson(server, parent.id)).replies_count, 0);
    assert.equal((await get(server.app, `/api/v1/statuses/${boost.id}`, a.bob.token)).statusCode, 404);
    assert.equal((await accountJson(server, a.bob.account.id)).statuses_count, bobCount - 1);
  });

  test("deleting one's own boost removes the boost only", async () => {
    const status = await postOk(server, a.carol.token, { status: "boosted then unboosted" });
    const boost = (await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: a.bob.token })).json();
    const count = (await accountJson(server, a.bob.account.id)).statuses_count;
    const res = await del(boost.id, a.bob.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().id, boost.id);
    assert.equal(res.json().reblog.id, status.id);
    const original = await statusJson(server, status.id, a.bob.token);
    assert.equal(original.reblogs_count, 0);
    assert.equal(original.reblogged, false);
    assert.equal((await accountJson(server, a.bob.account.id)).statuses_count, count - 1);
    assert.equal((await del(status.id, a.bob.token)).statusCode, 404, "the boosted status is not the booster's");
  });

  test("deleting a direct message leaves statuses_count alone", async () => {
    const user = await createUser(server.ctx, "dm_deleter");
    await postOk(server, user.token, { status: "public" });
    const dm = await postOk(server, user.token, { status: "@bob dm", visibility: "direct" });
    assert.equal((await del(dm.id, user.token)).statusCode, 200);
    assert.equal((await accountJson(server, user.account.id)).statuses_count, 1);
  });

  test("someone else's status, an unknown one and a second delete are 404; nothing is removed", async () => {
    const status = await postOk(server, a.alice.token, { status: "mine" });
    assert.equal((await del(status.id, a.bob.token)).statusCode, 404);
    assert.equal((await del("1234", a.alice.token)).statusCode, 404);
    assert.equal((await statusJson(server, status.id)).id, status.id);
    assert.equal((await del(status.id, a.alice.token)).statusCode, 200);
    assert.equal((await del(status.id, a.alice.token)).statusCode, 404);
  });

  test("401 without a token, 403 without write:statuses", async () => {
    const status = await postOk(server, a.alice.token, { status: "keep" });
    assert.equal((await del(status.id)).statusCode, 401);
    const readOnly = await tokenFor(server.ctx, a.alice, "read");
    assert.deepEqual(errorOf(await del(status.id, readOnly)), [403, "This action is outside the authorized scopes"]);
  });

  test("deletions are rate limited (30 per 30 minutes) for clients that are not on this machine", async () => {
    const user = await createUser(server.ctx, "rate_limited");
    const ids: string[] = [];
    for (let i = 0; i < 31; i++) ids.push((await postOk(server, user.token, { status: `s${i}` })).id);
    const remote = (id: string) =>
      server.app.inject({ method: "DELETE", url: `/api/v1/statuses/${id}`, headers: { authorization: `Bearer ${user.token}` }, remoteAddress: "203.0.113.7" });
    const first = await remote(ids[0]);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers["x-ratelimit-limit"], "30");
    assert.equal(first.headers["x-ratelimit-remaining"], "29");
    assert.match(String(first.headers["x-ratelimit-reset"]), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    for (let i = 1; i < 30; i++) assert.equal((await remote(ids[i])).statusCode, 200);
    const refused = await remote(ids[30]);
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    // The refused status still exists; loopback clients are not throttled.
    assert.equal((await del(ids[30], user.token)).statusCode, 200);
  });
});

describe("PUT /api/v1/statuses/:id (edit), history and source", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const edit = (id: string, json: Json, token = a.alice.token) => request(server.app, "PUT", `/api/v1/statuses/${id}`, { token, json });
  const editOk = async (id: string, json: Json, token = a.alice.token) => {
    const res = await edit(id, json, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const history = async (id: string, token?: string) => {
    const res = await get(server.app, `/api/v1/statuses/${id}/history`, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Json[];
  };

  test("an unedited status has one version in its history", async () => {
    const status = await postOk(server, a.alice.token, { status: "never edited", spoiler_text: "cw" });
    const versions = await history(status.id);
    assert.equal(versions.length, 1);
    assert.equal(versions[0].content, "<p>never edited</p>");
    assert.equal(versions[0].spoiler_text, "cw");
    assert.equal(versions[0].account.id, a.alice.account.id);
  });

  test("editing the text sets edited_at; the history lists every version, the first included", async () => {
    const status = await postOk(server, a.alice.token, { status: "version one" });
    const edited = await editOk(status.id, { status: "version two #edited" });
    assert.equal(edited.id, status.id);
    assert.equal(edited.content, '<p>version two <a href="https://rookery.test/tags/edited" class="mention hashtag" rel="tag">#<span>edited</span></a></p>');
    assert.deepEqual(edited.tags.map((t: Json) => t.name), ["edited"]);
    assert.match(edited.edited_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(Date.parse(edited.edited_at) >= Date.parse(status.created_at));
    assert.equal(edited.created_at, status.created_at);
    const first = await history(status.id);
    assert.deepEqual(first.map((v) => v.content), ["<p>version one</p>", edited.content]);
    assert.equal(first[0].created_at, status.created_at);
    await editOk(status.id, { status: "version three" });
    const second = await history(status.id);
    assert.deepEqual(second.map((v) => v.content), ["<p>version one</p>", edited.content, "<p>version three</p>"]);
    assert.equal((await statusJson(server, status.id)).content, "<p>version three</p>");
  });

  test("history and its versions match the OpenAPI schema", { skip: openApiSkip }, async () => {
    const status = await postOk(server, a.alice.token, { status: "schema", poll: { options: ["a", "b"], expires_in: 600 } });
    await editOk(status.id, { status: "schema 2" });
    for (const version of await history(status.id)) assert.deepEqual(validateSchema("StatusEdit", version), []);
    const source = await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token);
    assert.deepEqual(validateSchema("StatusSource", source.json()), []);
  });

  test("spoiler_text, sensitive and language", async () => {
    const status = await postOk(server, a.alice.token, { status: "plain", language: "en" });
    const withCw = await editOk(status.id, { spoiler_text: "now with a CW" });
    assert.equal(withCw.spoiler_text, "now with a CW");
    assert.equal(withCw.sensitive, true);
    assert.equal(withCw.content, "<p>plain</p>", "an absent status keeps the text");
    const noCw = await editOk(status.id, { spoiler_text: "", sensitive: false });
    assert.equal(noCw.spoiler_text, "");
    assert.equal(noCw.sensitive, false);
    assert.equal((await editOk(status.id, { sensitive: true })).sensitive, true);
    assert.equal((await editOk(status.id, { language: "fr" })).language, "fr");
    assert.equal((await editOk(status.id, { language: "de-AT" })).language, "de");
    const versions = await history(status.id);
    assert.equal(versions.length, 6);
    assert.deepEqual(versions.map((v) => v.spoiler_text), ["", "now with a CW", "", "", "", ""]);
    assert.deepEqual(versions.map((v) => v.sensitive), [false, true, false, true, true, true]);
  });

  test("source returns the plain text and warning", async () => {
    const status = await postOk(server, a.alice.token, { status: "Look at https://example.com & @bob", spoiler_text: "warn" });
    const res = await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id: status.id, text: "Look at https://example.com & @bob", spoiler_text: "warn" });
    await editOk(status.id, { status: "edited <text>" });
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token)).json().text, "edited <text>");
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/source`)).statusCode, 401);
  });

  test("media_ids add and remove attachments; removed media are free again", async () => {
    const m1 = await upload(server, a.alice.token);
    const m2 = await upload(server, a.alice.token);
    const status = await postOk(server, a.alice.token, { status: "media edit" });
    const added = await editOk(status.id, { media_ids: [m1, m2] });
    assert.deepEqual(added.media_attachments.map((m: Json) => m.id), [m1, m2]);
    const reordered = await editOk(status.id, { media_ids: [m2] });
    assert.deepEqual(reordered.media_attachments.map((m: Json) => m.id), [m2]);
    assert.equal((await get(server.app, `/api/v1/media/${m1}`, a.alice.token)).statusCode, 200);
    assert.equal((await get(server.app, `/api/v1/media/${m2}`, a.alice.token)).statusCode, 404);
    // Media may replace the text entirely.
    const onlyMedia = await editOk(status.id, { status: "", media_ids: [m2] });
    assert.equal(onlyMedia.content, "");
    // And someone else's media cannot be attached.
    const bobs = await upload(server, a.bob.token);
    assert.equal((await edit(status.id, { media_ids: [bobs] })).statusCode, 422);
    assert.equal((await edit(status.id, { media_ids: [m1, m2, await upload(server, a.alice.token), await upload(server, a.alice.token), await upload(server, a.alice.token)] })).statusCode, 422);
  });

  test("media_attributes change descriptions and focus of attached media (form and JSON)", async () => {
    const m1 = await upload(server, a.alice.token);
    const m2 = await upload(server, a.alice.token);
    const status = await postOk(server, a.alice.token, { status: "described", media_ids: [m1, m2] });
    const res = await request(server.app, "PUT", `/api/v1/statuses/${status.id}`, {
      token: a.alice.token,
      form: [
        ["media_ids[]", m1],
        ["media_ids[]", m2],
        ["media_attributes[][id]", m1],
        ["media_attributes[][description]", "A red square"],
        ["media_attributes[][focus]", "0.5,-0.25"],
        ["media_attributes[][id]", m2],
        ["media_attributes[][description]", "A blue square"],
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const [first, second] = res.json().media_attachments;
    assert.equal(first.description, "A red square");
    assert.deepEqual(first.meta.focus, { x: 0.5, y: -0.25 });
    assert.equal(second.description, "A blue square");
    const json = await editOk(status.id, { media_ids: [m1, m2], media_attributes: [{ id: m2, description: "Changed", focus: "-1,1" }] });
    assert.equal(json.media_attachments[0].description, "A red square");
    assert.equal(json.media_attachments[1].description, "Changed");
    assert.deepEqual(json.media_attachments[1].meta.focus, { x: -1, y: 1 });
    const versions = await history(status.id);
    assert.deepEqual(versions.at(-1)!.media_attachments.map((m: Json) => m.description), ["A red square", "Changed"]);
    assert.deepEqual(versions[1].media_attachments.map((m: Json) => m.description), ["A red square", "A blue square"]);
  });

  test(
    "the history keeps each version's media descriptions, also when they were empty",
    {},
    async () => {
      const media = await upload(server, a.alice.token);
      const status = await postOk(server, a.alice.token, { status: "undescribed", media_ids: [media] });
      await editOk(status.id, { media_ids: [media], media_attributes: [{ id: media, description: "Described later" }] });
      const versions = await history(status.id);
      assert.deepEqual(versions.map((v) => v.media_attachments.map((m: Json) => m.description)), [[null], ["Described later"]]);
    },
  );

  test("changing the poll's options resets its votes; keeping them keeps the votes", async () => {
    const status = await postOk(server, a.alice.token, { status: "vote", poll: { options: ["red", "blue"], expires_in: 3600 } });
    const vote = await request(server.app, "POST", `/api/v1/polls/${status.poll.id}/votes`, { token: a.bob.token, json: { choices: [0] } });
    assert.equal(vote.statusCode, 200, vote.body);
    const kept = await editOk(status.id, { status: "vote (edited)", poll: { options: ["red", "blue"], expires_in: 3600 } });
    assert.equal(kept.poll.votes_count, 1);
    assert.deepEqual(kept.poll.options, [{ title: "red", votes_count: 1 }, { title: "blue", votes_count: 0 }]);
    const textOnly = await editOk(status.id, { status: "text only" });
    assert.equal(textOnly.poll.votes_count, 1, "an edit without poll keeps the poll");
    const changed = await editOk(status.id, { poll: { options: ["red", "green", "blue"], expires_in: 3600 } });
    assert.equal(changed.poll.votes_count, 0);
    assert.deepEqual(changed.poll.options, [{ title: "red", votes_count: 0 }, { title: "green", votes_count: 0 }, { title: "blue", votes_count: 0 }]);
    const bobView = (await get(server.app, `/api/v1/polls/${changed.poll.id}`, a.bob.token)).json();
    assert.equal(bobView.voted, false);
    assert.deepEqual(bobView.own_votes, []);
    assert.equal((await request(server.app, "POST", `/api/v1/polls/${changed.poll.id}/votes`, { token: a.bob.token, json: { choices: [1] } })).statusCode, 200);
    const versions = await history(status.id);
    assert.deepEqual(versions[0].poll, { options: [{ title: "red" }, { title: "blue" }] });
    assert.deepEqual(versions.at(-1)!.poll, { options: [{ title: "red" }, { title: "green" }, { title: "blue" }] });
  });

  test(
    "keeping the options but changing expires_in or multiple updates the poll",
    {},
    async () => {
      const status = await postOk(server, a.alice.token, { status: "settings", poll: { options: ["a", "b"], expires_in: 600 } });
      const edited = await editOk(status.id, { poll: { options: ["a", "b"], expires_in: 7200, multiple: true } });
      assert.ok(Date.parse(edited.poll.expires_at) > Date.now() + 3600_000, edited.poll.expires_at);
      assert.equal(edited.poll.multiple, true);
    },
  );

  test("a poll can be added by an edit, and cannot be combined with media", async () => {
    const status = await postOk(server, a.alice.token, { status: "no poll yet" });
    const withPoll = await editOk(status.id, { poll: { options: ["x", "y"], expires_in: 600 } });
    assert.deepEqual(withPoll.poll.options.map((o: Json) => o.title), ["x", "y"]);
    const media = await upload(server, a.alice.token);
    assert.equal((await edit(status.id, { media_ids: [media], poll: { options: ["x", "y"], expires_in: 600 } })).statusCode, 422);
    assert.equal((await edit(status.id, { poll: { options: ["only one"], expires_in: 600 } })).statusCode, 422);
  });

  test("edits follow the rules of new posts and store nothing when refused", async () => {
    const status = await postOk(server, a.alice.token, { status: "rules" });
    assert.deepEqual(errorOf(await edit(status.id, { status: "" })), [422, BLANK]);
    assert.deepEqual(errorOf(await edit(status.id, { status: "x".repeat(501) })), [422, TOO_LONG]);
    const after = await statusJson(server, status.id);
    assert.equal(after.content, "<p>rules</p>");
    assert.equal(after.edited_at, null);
    assert.equal((await history(status.id)).length, 1);
  });

  test("mentions added by an edit are listed", async () => {
    const status = await postOk(server, a.alice.token, { status: "hello" });
    const edited = await editOk(status.id, { status: "hello @carol" });
    assert.deepEqual(edited.mentions.map((m: Json) => m.acct), ["carol"]);
  });

  test("a mention removed by an edit leaves the list but keeps the account's access to a direct post", async () => {
    const status = await postOk(server, a.alice.token, { status: "@carol @bob secret plan", visibility: "direct" });
    const edited = await editOk(status.id, { status: "@bob secret plan" });
    assert.deepEqual(edited.mentions.map((m: Json) => m.acct), ["bob"]);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}`, a.carol.token)).statusCode, 200);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}`, a.lucy.token)).statusCode, 404);
  });

  test("someone else's status, a boost, an unknown ID: 404; an app token: 422", async () => {
    const status = await postOk(server, a.alice.token, { status: "alice's" });
    assert.equal((await edit(status.id, { status: "hijack" }, a.bob.token)).statusCode, 404);
    const boost = (await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: a.bob.token })).json();
    assert.equal((await edit(boost.id, { status: "boost edit" }, a.bob.token)).statusCode, 404);
    assert.equal((await edit("123456", { status: "nothing" })).statusCode, 404);
    const token = await appToken(server.ctx);
    assert.equal((await edit(status.id, { status: "app" }, token)).statusCode, 422);
    assert.equal((await statusJson(server, status.id)).content, "<p>alice&#39;s</p>");
  });

  test("history and source of a private status are hidden from strangers", async () => {
    const status = await postOk(server, a.alice.token, { status: "secret", visibility: "private" });
    await editOk(status.id, { status: "secret 2" });
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/history`, a.carol.token)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/history`)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/source`, a.carol.token)).statusCode, 404);
    assert.equal((await history(status.id, a.alice.token)).length, 2);
  });
});

describe("GET /api/v1/statuses/:id/context", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const context = async (id: string, token?: string) => {
    const res = await get(server.app, `/api/v1/statuses/${id}/context`, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { ancestors: Json[]; descendants: Json[] };
  };
  const ids = (list: Json[]) => list.map((s) => s.id);

  /** Inserts statuses in one batch: `parents[i]` is the index (or existing ID) the i-th replies to. */
  async function insertThread(rootId: string, count: number, parentOf: (i: number, made: string[]) => string): Promise<string[]> {
    const now = new Date().toISOString();
    const made: string[] = [];
    const rows = [];
    for (let i = 0; i < count; i++) {
      const id = newId();
      const parent = parentOf(i, made);
      made.push(id);
      rows.push({
        id,
        uri: `https://rookery.test/users/bob/statuses/${id}`,
        url: `https://rookery.test/@bob/${id}`,
        account_id: a.bob.account.id,
        text: `t${i}`,
        content: `<p>t${i}</p>`,
        visibility: "public" as const,
        in_reply_to_id: parent,
        in_reply_to_account_id: a.bob.account.id,
        conversation_id: rootId,
        local: true,
        created_at: now,
        updated_at: now,
      });
    }
    await server.ctx.db.kysely.insertInto("statuses").values(rows).execute();
    return made;
  }

  test("ancestors oldest first, descendants depth-first with siblings oldest first", async () => {
    const root = await postOk(server, a.alice.token, { status: "root" });
    const b = await postOk(server, a.bob.token, { status: "b", in_reply_to_id: root.id });
    const c = await postOk(server, a.carol.token, { status: "c", in_reply_to_id: b.id });
    const d = await postOk(server, a.carol.token, { status: "d", in_reply_to_id: root.id });
    const e = await postOk(server, a.alice.token, { status: "e", in_reply_to_id: c.id });
    const f = await postOk(server, a.bob.token, { status: "f", in_reply_to_id: b.id });
    const ofC = await context(c.id);
    assert.deepEqual(ids(ofC.ancestors), [root.id, b.id]);
    assert.deepEqual(ids(ofC.descendants), [e.id]);
    const ofRoot = await context(root.id, a.carol.token);
    assert.deepEqual(ofRoot.ancestors, []);
    assert.deepEqual(ids(ofRoot.descendants), [b.id, c.id, e.id, f.id, d.id]);
    assert.equal(ofRoot.descendants[0].content, "<p>b</p>");
    assert.equal(ofRoot.descendants[0].favourited, false);
  });

  test("the context matches the OpenAPI schema", { skip: openApiSkip }, async () => {
    const root = await postOk(server, a.alice.token, { status: "schema root" });
    await postOk(server, a.bob.token, { status: "schema reply", in_reply_to_id: root.id });
    assert.deepEqual(validateSchema("Context", await context(root.id)), []);
    assert.deepEqual(validateSchema("Context", await context(root.id, a.carol.token)), []);
  });

  test("anonymous readers get at most the 40 nearest ancestors; signed-in users all", async () => {
    const root = await postOk(server, a.bob.token, { status: "top" });
    const chain = await insertThread(root.id, 50, (i, made) => (i === 0 ? root.id : made[i - 1]));
    const leaf = chain.at(-1)!;
    const anon = await context(leaf);
    assert.equal(anon.ancestors.length, 40);
    assert.deepEqual(ids(anon.ancestors), chain.slice(9, 49));
    const signed = await context(leaf, a.carol.token);
    assert.deepEqual(ids(signed.ancestors), [root.id, ...chain.slice(0, 49)]);
  });

  test("anonymous readers get at most 60 descendants; signed-in users all", async () => {
    const root = await postOk(server, a.bob.token, { status: "wide" });
    const replies = await insertThread(root.id, 70, () => root.id);
    const anon = await context(root.id);
    assert.deepEqual(ids(anon.descendants), replies.slice(0, 60));
    const signed = await context(root.id, a.alice.token);
    assert.deepEqual(ids(signed.descendants), replies);
  });

  test("anonymous readers get descendants at most 20 levels deep; signed-in users all", async () => {
    const root = await postOk(server, a.bob.token, { status: "deep" });
    const chain = await insertThread(root.id, 45, (i, made) => (i === 0 ? root.id : made[i - 1]));
    const anon = await context(root.id);
    assert.deepEqual(ids(anon.descendants), chain.slice(0, 20));
    const signed = await context(root.id, a.alice.token);
    assert.deepEqual(ids(signed.descendants), chain);
  });

  test("private replies are hidden from strangers and anonymous readers", async () => {
    const root = await postOk(server, a.alice.token, { status: "open thread" });
    const open = await postOk(server, a.carol.token, { status: "public reply", in_reply_to_id: root.id });
    const secret = await postOk(server, a.bob.token, { status: "@alice private reply", in_reply_to_id: root.id, visibility: "private" });
    const dm = await postOk(server, a.bob.token, { status: "@lucy direct reply", in_reply_to_id: root.id, visibility: "direct" });
    const follower = await createUser(server.ctx, "bob_fan");
    await follow(server.ctx, follower.account, a.bob.account);
    assert.deepEqual(ids((await context(root.id)).descendants), [open.id]);
    assert.deepEqual(ids((await context(root.id, a.carol.token)).descendants), [open.id]);
    assert.deepEqual(ids((await context(root.id, a.alice.token)).descendants), [open.id, secret.id], "alice is mentioned in the private reply");
    assert.deepEqual(ids((await context(root.id, follower.token)).descendants), [open.id, secret.id]);
    assert.deepEqual(ids((await context(root.id, a.lucy.token)).descendants), [open.id, dm.id]);
    assert.deepEqual(ids((await context(root.id, a.bob.token)).descendants), [open.id, secret.id, dm.id]);
    // And a hidden ancestor is left out of the chain of a visible reply.
    const under = await postOk(server, a.bob.token, { status: "reply to the private one", in_reply_to_id: secret.id });
    assert.deepEqual(ids((await context(under.id, a.carol.token)).ancestors), [root.id]);
    assert.deepEqual(ids((await context(under.id, follower.token)).ancestors), [root.id, secret.id]);
  });

  test("the context of a status the reader cannot see is 404", async () => {
    const secret = await postOk(server, a.bob.token, { status: "hidden", visibility: "private" });
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}/context`)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}/context`, a.carol.token)).statusCode, 404);
    assert.equal((await get(server.app, "/api/v1/statuses/42/context")).statusCode, 404);
  });
});
