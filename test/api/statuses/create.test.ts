/**
 * POST /api/v1/statuses: the Status it answers, content warnings, Mastodon's character counting,
 * visibility, language and sensitivity with their defaults, replies, and who may post.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import {
  createTestServer,
  describeAuth,
  createUser,
  errorOf,
  follow,
  postStatus,
  request,
  standardAccounts,
  statusJson,
  statusRowCount,
  tokenFor,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";

const REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist.";
const TOO_LONG = "Validation failed: Text character limit of 500 exceeded";
const BLANK = "Validation failed: Text can't be blank";

/** POST /api/v1/statuses as sent, for answers that are refusals. */
function post(
  server: TestServer,
  token: string | undefined,
  json: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return request(server.app, "POST", "/api/v1/statuses", { token, json, headers });
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
    const body = await postStatus(server, a.alice, { status: "Hello world" });
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
    assert.deepEqual(
      [body.favourited, body.reblogged, body.muted, body.bookmarked, body.pinned],
      [false, false, false, false, false],
    );
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
    const media = (await uploadImage(server, a.alice)).id;
    const withMedia = await postStatus(server, a.alice, {
      status: "#schema @bob",
      media_ids: [media],
      sensitive: true,
      language: "en",
    });
    assert.deepEqual(validateSchema("Status", withMedia), []);
    const withPoll = await postStatus(server, a.alice, {
      status: "poll",
      poll: { options: ["a", "b"], expires_in: 600 },
    });
    assert.deepEqual(validateSchema("Status", withPoll), []);
    assert.deepEqual(validateSchema("Poll", withPoll.poll), []);
    assert.deepEqual(validateSchema("Status", await statusJson(server, withMedia.id)), []);
  });

  test("status is required unless media_ids are given", async () => {
    assert.deepEqual(errorOf(await post(server, a.alice.token, {})), [422, BLANK]);
    assert.deepEqual(errorOf(await post(server, a.alice.token, { status: "" })), [422, BLANK]);
    assert.deepEqual(errorOf(await post(server, a.alice.token, { status: "  \n\t " })), [422, BLANK]);
    const media = (await uploadImage(server, a.alice)).id;
    const body = await postStatus(server, a.alice, { media_ids: [media] });
    assert.equal(body.content, "");
    assert.deepEqual(
      body.media_attachments.map((m) => m.id),
      [media],
    );
  });

  test("a post with only a content warning uses the warning as its text", async () => {
    const body = await postStatus(server, a.alice, { status: "", spoiler_text: "Just a warning" });
    assert.equal(body.content, "<p>Just a warning</p>");
    assert.equal(body.spoiler_text, "");
  });

  test("a content-warning-only post is sensitive (the warning was given)", {}, async () => {
    const body = await postStatus(server, a.alice, { status: "", spoiler_text: "Only a CW" });
    assert.equal(body.sensitive, true);
  });

  describe("the 500-character limit, counted as Mastodon counts", () => {
    test("500 plain characters pass, 501 fail", async () => {
      await postStatus(server, a.bob, { status: "a".repeat(500) });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "a".repeat(501) })), [422, TOO_LONG]);
    });

    test("a URL counts as 23 characters however long it is", async () => {
      const url = `https://example.com/${"x".repeat(300)}`;
      const body = await postStatus(server, a.bob, { status: `${"a".repeat(476)} ${url}` });
      assert.ok(body.content.includes(`href="${url}"`));
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `${"a".repeat(477)} ${url}` })), [
        422,
        TOO_LONG,
      ]);
      // A short URL counts 23 too, not its own length.
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `${"a".repeat(477)} https://a.co` })), [
        422,
        TOO_LONG,
      ]);
    });

    test("a remote mention counts only as @username; a local one in full", async () => {
      await postStatus(server, a.bob, { status: `@rita@remote.example ${"a".repeat(494)}` });
      assert.deepEqual(
        errorOf(await post(server, a.bob.token, { status: `@rita@remote.example ${"a".repeat(495)}` })),
        [422, TOO_LONG],
      );
      // Even when the account is unknown here.
      await postStatus(server, a.bob, { status: `@ghost@elsewhere.example ${"a".repeat(493)}` });
      await postStatus(server, a.bob, { status: `@carol ${"a".repeat(493)}` });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: `@carol ${"a".repeat(494)}` })), [
        422,
        TOO_LONG,
      ]);
    });

    test("an emoji ZWJ sequence or a flag counts as one character", async () => {
      const family = "👨‍👩‍👧‍👦";
      await postStatus(server, a.bob, { status: family.repeat(500) });
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: family.repeat(501) })), [422, TOO_LONG]);
      await postStatus(server, a.bob, { status: "🇫🇷".repeat(250) + "é".repeat(250) });
    });

    test("the content warning counts with the text", async () => {
      await postStatus(server, a.bob, { status: "b".repeat(250), spoiler_text: "w".repeat(250) });
      assert.deepEqual(
        errorOf(await post(server, a.bob.token, { status: "b".repeat(251), spoiler_text: "w".repeat(250) })),
        [422, TOO_LONG],
      );
      assert.deepEqual(errorOf(await post(server, a.bob.token, { status: "b", spoiler_text: "w".repeat(500) })), [
        422,
        TOO_LONG,
      ]);
    });

    test("a URL at the start of the text still counts 23 when a content warning is set", {}, async () => {
      await postStatus(server, a.bob, { status: `https://example.com/${"a".repeat(600)}`, spoiler_text: "Spoiler" });
    });
  });

  describe("visibility", () => {
    test("each of the four values is kept", async () => {
      for (const visibility of ["public", "unlisted", "private", "direct"] as const) {
        const body = await postStatus(server, a.alice, { status: `v ${visibility} @bob`, visibility });
        assert.equal(body.visibility, visibility);
      }
    });

    test("the default comes from the user's source[privacy] preference", async () => {
      const user = await createUser(server.ctx, "privacy_default");
      assert.equal((await postStatus(server, user, { status: "before" })).visibility, "public");
      const patch = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
        token: user.token,
        form: { "source[privacy]": "private" },
      });
      assert.equal(patch.statusCode, 200, patch.body);
      assert.equal((await postStatus(server, user, { status: "after" })).visibility, "private");
      assert.equal(
        (await postStatus(server, user, { status: "explicit", visibility: "unlisted" })).visibility,
        "unlisted",
      );
    });

    test("an unknown visibility is refused and stores nothing", async () => {
      const count = await statusRowCount(server, a.alice);
      for (const visibility of ["everyone", "limited", "PUBLIC"]) {
        const [status, error] = errorOf(await post(server, a.alice.token, { status: "x", visibility }));
        assert.equal(status, 422, visibility);
        assert.match(error, /^Validation failed: Visibility/);
      }
      assert.equal(await statusRowCount(server, a.alice), count);
    });
  });

  test("language is normalised to an ISO 639-1 code; anything else is dropped", async () => {
    assert.equal((await postStatus(server, a.alice, { status: "l1", language: "en" })).language, "en");
    assert.equal((await postStatus(server, a.alice, { status: "l2", language: "DE" })).language, "de");
    assert.equal((await postStatus(server, a.alice, { status: "l3", language: "pt-BR" })).language, "pt");
    assert.equal((await postStatus(server, a.alice, { status: "l4", language: "klingon" })).language, null);
    assert.equal((await postStatus(server, a.alice, { status: "l5", language: "zz" })).language, null);
    assert.equal((await postStatus(server, a.alice, { status: "l6" })).language, null);
  });

  test("the default language comes from source[language]", async () => {
    const user = await createUser(server.ctx, "language_default");
    const patch = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: user.token,
      form: { "source[language]": "fr" },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal((await postStatus(server, user, { status: "bonjour" })).language, "fr");
    assert.equal((await postStatus(server, user, { status: "hello", language: "en" })).language, "en");
  });

  test("sensitive, and a content warning forces it", async () => {
    assert.equal((await postStatus(server, a.alice, { status: "s1", sensitive: true })).sensitive, true);
    assert.equal((await postStatus(server, a.alice, { status: "s2", sensitive: false })).sensitive, false);
    const cw = await postStatus(server, a.alice, { status: "s3", sensitive: false, spoiler_text: "Spoilers!" });
    assert.equal(cw.sensitive, true);
    assert.equal(cw.spoiler_text, "Spoilers!");
    // Form booleans the Rails way.
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: a.alice.token,
      form: { status: "s4", sensitive: "1" },
    });
    assert.equal(res.json().sensitive, true);
    const off = await request(server.app, "POST", "/api/v1/statuses", {
      token: a.alice.token,
      form: { status: "s5", sensitive: "false" },
    });
    assert.equal(off.json().sensitive, false);
  });

  test("the default sensitivity comes from source[sensitive]", async () => {
    const user = await createUser(server.ctx, "sensitive_default");
    await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: user.token,
      form: { "source[sensitive]": "true" },
    });
    assert.equal((await postStatus(server, user, { status: "nsfw" })).sensitive, true);
    assert.equal((await postStatus(server, user, { status: "sfw", sensitive: false })).sensitive, false);
  });

  describe("in_reply_to_id", () => {
    test("a reply to a visible status links both ways and counts for public and unlisted replies", async () => {
      const parent = await postStatus(server, a.alice, { status: "parent" });
      const reply = await postStatus(server, a.bob, { status: "@alice reply", in_reply_to_id: parent.id });
      assert.equal(reply.in_reply_to_id, parent.id);
      assert.equal(reply.in_reply_to_account_id, a.alice.account.id);
      assert.equal((await statusJson(server, parent.id)).replies_count, 1);
      await postStatus(server, a.carol, {
        status: "unlisted reply",
        in_reply_to_id: parent.id,
        visibility: "unlisted",
      });
      assert.equal((await statusJson(server, parent.id)).replies_count, 2);
      await postStatus(server, a.carol, { status: "private reply", in_reply_to_id: parent.id, visibility: "private" });
      await postStatus(server, a.carol, {
        status: "@alice direct reply",
        in_reply_to_id: parent.id,
        visibility: "direct",
      });
      assert.equal((await statusJson(server, parent.id)).replies_count, 2);
    });

    test("a reply to an invisible, unknown or malformed status is 404 with Mastodon's text", async () => {
      const secret = await postStatus(server, a.lucy, { status: "followers only", visibility: "private" });
      const count = await statusRowCount(server, a.bob);
      for (const id of [secret.id, "1234567890", "not-a-number", "-1"]) {
        assert.deepEqual(
          errorOf(await post(server, a.bob.token, { status: "reply", in_reply_to_id: id })),
          [404, REPLY_NOT_FOUND],
          id,
        );
      }
      assert.equal(await statusRowCount(server, a.bob), count);
      // The author herself may reply to it.
      await postStatus(server, a.lucy, { status: "self reply", in_reply_to_id: secret.id });
    });

    test("a follower may reply to a private status", async () => {
      const follower = await createUser(server.ctx, "lucy_follower");
      await follow(server, follower, a.lucy);
      const secret = await postStatus(server, a.lucy, { status: "for followers", visibility: "private" });
      const reply = await postStatus(server, follower, { status: "@lucy hi", in_reply_to_id: secret.id });
      assert.equal(reply.in_reply_to_id, secret.id);
    });
  });

  test("posting and editing share Mastodon's limit of 300 in three hours for clients not on this machine", async () => {
    const user = await createUser(server.ctx, "prolific");
    // Two tokens, so the per-token API limit (300 in five minutes) is not what stops them.
    const tokens = [user.token, await tokenFor(server.ctx, user, "read write")];
    const remote = (method: "POST" | "PUT", url: string, i: number, status: string) =>
      server.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${tokens[i % 2]}` },
        payload: { status },
        remoteAddress: "203.0.113.8",
      });
    const first = await remote("POST", "/api/v1/statuses", 0, "post 0");
    assert.equal(first.statusCode, 200);
    const firstId = (first.json() as { id: string }).id;
    for (let i = 1; i < 299; i++)
      assert.equal((await remote("POST", "/api/v1/statuses", i, `post ${i}`)).statusCode, 200);
    assert.equal((await remote("PUT", `/api/v1/statuses/${firstId}`, 1, "post 0, edited")).statusCode, 200);
    const refused = await remote("POST", "/api/v1/statuses", 0, "one too many");
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-limit"], "300");
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    assert.equal(await statusRowCount(server, user), 299);
    // A client on this machine is not throttled.
    assert.equal((await post(server, user.token, { status: "from loopback" })).statusCode, 200);
  });

  // Mastodon's authorization checks, the scopes that are close to write:statuses included.
  describeAuth("POST /api/v1/statuses", () => server, {
    scope: "write:statuses",
    insufficient: ["read", "read:statuses", "write:media", "write:favourites", "follow"],
    send: (s, token) => post(s, token, { status: "checking who may post" }),
  });
});
