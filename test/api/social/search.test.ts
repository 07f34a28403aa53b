/** GET /api/v2/search and GET /api/v1/accounts/search, on the database's own full-text search. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Status } from "../../types.ts";

interface Results {
  accounts: Array<{ id: string; username: string; acct: string }>;
  statuses: Status[];
  hashtags: Array<{ name: string }>;
}

describe("search", () => {
  let server: TestServer;
  let viewer: TestUser;
  let author: TestUser;
  let hidden: TestUser;
  before(async () => {
    server = await createTestServer();
    viewer = await createUser(server.ctx, "viewer");
    author = await createUser(server.ctx, "writer");
    hidden = await createUser(server.ctx, "hiddenwriter");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ indexable: true, display_name: "Wendy Writer" })
      .where("id", "in", [author.account.id, hidden.account.id])
      .execute();
  });
  after(() => server.close());

  /** Searches as the viewer, or anonymously with `{ anonymous: true }`. */
  const search = async (query: string, as: { anonymous: boolean } = { anonymous: false }) => {
    const res = await get(server.app, `/api/v2/search?${query}`, as.anonymous ? undefined : viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Results;
  };
  const q = (text: string, extra = "") => `q=${encodeURIComponent(text)}${extra}`;
  const usernames = (r: Results) => r.accounts.map((a) => a.username);
  const contents = (r: Results) => r.statuses.map((s) => s.content.replace(/<[^>]+>/g, ""));

  describe("accounts", () => {
    test("by username prefix and display name words; an exact handle comes first", async () => {
      await createUser(server.ctx, "writerly");
      assert.deepEqual(usernames(await search(q("wri", "&type=accounts"))).sort(), [
        "hiddenwriter",
        "writer",
        "writerly",
      ]);
      assert.deepEqual(usernames(await search(q("wendy"))).sort(), ["hiddenwriter", "writer"]);
      assert.equal(usernames(await search(q("@writer")))[0], "writer");
      assert.equal(usernames(await search(q("writer@rookery.test")))[0], "writer");
    });

    test("remote accounts by their domain; suspended, unconfirmed and blocked ones never", async () => {
      await createRemoteAccount(server.ctx, "farfriend", "faraway.example");
      assert.deepEqual(usernames(await search(q("faraway"))), ["farfriend"]);
      const gone = await createUser(server.ctx, "gonezo");
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ suspended_at: new Date().toISOString() })
        .where("id", "=", gone.account.id)
        .execute();
      assert.deepEqual(usernames(await search(q("gonezo"))), []);
      await createUser(server.ctx, "pendingzo", { confirmed: false });
      assert.deepEqual(usernames(await search(q("pendingzo"))), []);
      const blocker = await createUser(server.ctx, "blockerzo");
      await block(server, blocker, viewer);
      assert.deepEqual(usernames(await search(q("blockerzo"))), []);
      assert.deepEqual(usernames(await search(q("blockerzo"), { anonymous: true })), ["blockerzo"]);
    });

    test("following=true keeps accounts the viewer follows; /api/v1/accounts/search pages with limit and offset", async () => {
      const names = ["pagezoa", "pagezob", "pagezoc"];
      const users = await Promise.all(names.map((n) => createUser(server.ctx, n)));
      await follow(server, viewer, users[1]!);
      assert.deepEqual(usernames(await search(q("pagezo", "&following=true"))), ["pagezob"]);
      const page = async (query: string) => {
        const res = await get(server.app, `/api/v1/accounts/search?${query}`, viewer.token);
        assert.equal(res.statusCode, 200, res.body);
        return (res.json() as Results["accounts"]).map((a) => a.username);
      };
      const all = await page(q("pagezo"));
      assert.deepEqual([...all].sort(), names);
      assert.deepEqual(await page(q("pagezo", "&limit=2")), all.slice(0, 2));
      assert.deepEqual(await page(q("pagezo", "&limit=2&offset=2")), all.slice(2));
      assert.deepEqual(await page(q("pagezo", "&following=true")), ["pagezob"]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/search", viewer.token)), [
        400,
        "param is missing or the value is empty or invalid: q",
      ]);
    });
  });

  describe("hashtags", () => {
    test("names starting with the query, shortest first, with or without #", async () => {
      await postStatus(server, author, { status: "#searchtag #searchtagging #other" });
      const names = (r: Results) => r.hashtags.map((h) => h.name);
      assert.deepEqual(names(await search(q("searcht"))), ["searchtag", "searchtagging"]);
      assert.deepEqual(names(await search(q("#SEARCHTAGG"))), ["searchtagging"]);
      assert.deepEqual(names(await search(q("nothing_like_it"))), []);
      assert.deepEqual(names(await search(q("searcht", "&type=hashtags&limit=1&offset=1"))), ["searchtagging"]);
    });

    test("exclude_unreviewed keeps the exact tag and the tags a moderator reviewed", async () => {
      await postStatus(server, author, { status: "#reviewme #reviewmelater #reviewmenow" });
      const names = (r: Results) => r.hashtags.map((h) => h.name);
      assert.deepEqual(names(await search(q("reviewme", "&exclude_unreviewed=true"))), ["reviewme"]);
      assert.deepEqual(names(await search(q("#REVIEWME", "&exclude_unreviewed=1"))), ["reviewme"]);
      assert.deepEqual(names(await search(q("review", "&exclude_unreviewed=true"))), []);
      assert.deepEqual(names(await search(q("reviewme", "&exclude_unreviewed=false"))), [
        "reviewme",
        "reviewmenow",
        "reviewmelater",
      ]);
      // A review (approval or rejection: reviewed either way, as Mastodon's `reviewed` scope).
      const tag = await server.ctx.db.kysely
        .selectFrom("tags")
        .select("id")
        .where("name", "=", "reviewmelater")
        .executeTakeFirstOrThrow();
      await server.ctx.db.kysely
        .insertInto("trend_reviews")
        .values({ kind: "tags", item_id: tag.id, trendable: false, reviewed_at: new Date().toISOString() })
        .execute();
      assert.deepEqual(names(await search(q("review", "&exclude_unreviewed=true"))), ["reviewmelater"]);
      assert.deepEqual(names(await search(q("reviewme", "&exclude_unreviewed=true"))), ["reviewme", "reviewmelater"]);
    });
  });

  describe("statuses", () => {
    let stranger: TestUser;
    before(async () => {
      stranger = await createUser(server.ctx, "strangerposter");
      await postStatus(server, viewer, { status: "my own zebra note", visibility: "private" });
      await postStatus(server, author, { status: "public zebra from an indexable author" });
      await postStatus(server, author, { status: "unlisted zebra", visibility: "unlisted" });
      await postStatus(server, stranger, { status: "public zebra from someone not indexable" });
      const liked = await postStatus(server, stranger, { status: "liked zebra" });
      await request(server.app, "POST", `/api/v1/statuses/${liked.id}/favourite`, { token: viewer.token });
      const saved = await postStatus(server, stranger, { status: "bookmarked zebra" });
      await request(server.app, "POST", `/api/v1/statuses/${saved.id}/bookmark`, { token: viewer.token });
      await postStatus(server, stranger, {
        status: `@${viewer.username} private zebra mention`,
        visibility: "private",
      });
      await postStatus(server, stranger, { status: "private zebra for followers", visibility: "private" });
      await postStatus(server, hidden, { status: "zebra by a blocked author" });
      await block(server, viewer, hidden);
    });

    test("own, mentioning, favourited, bookmarked and indexable public posts; nothing else", async () => {
      assert.deepEqual(contents(await search(q("zebra"))).sort(), [
        `@${viewer.username} private zebra mention`,
        "bookmarked zebra",
        "liked zebra",
        "my own zebra note",
        "public zebra from an indexable author",
      ]);
    });

    test("every word must match; account_id keeps one author; anonymous searches find no statuses", async () => {
      assert.deepEqual(contents(await search(q("zebra indexable"))), ["public zebra from an indexable author"]);
      assert.deepEqual(contents(await search(q("zebra", `&account_id=${author.account.id}`))), [
        "public zebra from an indexable author",
      ]);
      assert.deepEqual((await search(q("zebra"), { anonymous: true })).statuses, []);
    });

    test("newest first, with limit and offset; edits and deletions are searched at once", async () => {
      const first = await postStatus(server, viewer, { status: "giraffe one" });
      await postStatus(server, viewer, { status: "giraffe two" });
      assert.deepEqual(contents(await search(q("giraffe"))), ["giraffe two", "giraffe one"]);
      assert.deepEqual(contents(await search(q("giraffe", "&type=statuses&limit=1&offset=1"))), ["giraffe one"]);
      const edited = await request(server.app, "PUT", `/api/v1/statuses/${first.id}`, {
        token: viewer.token,
        json: { status: "okapi one" },
      });
      assert.equal(edited.statusCode, 200, edited.body);
      assert.deepEqual(contents(await search(q("giraffe"))), ["giraffe two"]);
      assert.deepEqual(contents(await search(q("okapi"))), ["okapi one"]);
      await request(server.app, "DELETE", `/api/v1/statuses/${first.id}`, { token: viewer.token });
      assert.deepEqual(contents(await search(q("okapi"))), []);
    });

    test("search syntax in the query is taken as words, never as an error", async () => {
      for (const text of ['"zebra', "zebra OR NOT*", "NEAR(zebra", "zebra:*", "')--", "***", "ünïcödé"]) {
        const res = await get(server.app, `/api/v2/search?${q(text)}`, viewer.token);
        assert.equal(res.statusCode, 200, `${text}: ${res.body}`);
      }
    });
  });

  test("resolve finds a post or a profile of this server by its link", async () => {
    const status = await postStatus(server, author, { status: "link me" });
    const byLink = await search(q(`https://rookery.test/@writer/${status.id}`, "&resolve=true"));
    assert.deepEqual(
      byLink.statuses.map((s) => s.id),
      [status.id],
    );
    const byUri = await search(q(`https://rookery.test/users/writer/statuses/${status.id}`, "&resolve=true"));
    assert.deepEqual(
      byUri.statuses.map((s) => s.id),
      [status.id],
    );
    assert.deepEqual(usernames(await search(q("https://rookery.test/@writer", "&resolve=true"))), ["writer"]);
    const privatePost = await postStatus(server, author, { status: "not yours", visibility: "private" });
    assert.deepEqual((await search(q(`https://rookery.test/@writer/${privatePost.id}`, "&resolve=true"))).statuses, []);
  });

  test("errors: q missing, anonymous offset or resolve, negative numbers; an unknown type finds nothing", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v2/search", viewer.token)), [
      400,
      "param is missing or the value is empty or invalid: q",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v2/search?q=x&offset=1")), [
      401,
      "Search queries pagination is not supported without authentication",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v2/search?q=x&resolve=true")), [
      401,
      "Search queries that resolve remote resources are not supported without authentication",
    ]);
    assert.equal((await get(server.app, "/api/v2/search?q=x&limit=-1", viewer.token)).statusCode, 400);
    assert.equal((await get(server.app, "/api/v2/search?q=x&offset=-5&type=accounts", viewer.token)).statusCode, 400);
    assert.deepEqual(await search(q("writer", "&type=people")), { accounts: [], statuses: [], hashtags: [] });
    assert.equal((await search(q("writer", "&limit=1&type=accounts"))).accounts.length, 1);
  });

  test("the answer matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const res = await search(q("writer"));
    assert.deepEqual(validateSchema("Search", res), []);
  });

  describeAuth("GET /api/v2/search", () => server, {
    scope: "read:search",
    user: false,
    anonymous: true,
    send: (s, token) => get(s.app, "/api/v2/search?q=writer", token),
  });
  describeAuth("GET /api/v1/accounts/search", () => server, {
    scope: "read:accounts",
    send: (s, token) => get(s.app, "/api/v1/accounts/search?q=writer", token),
  });
});
