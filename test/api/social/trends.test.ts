/** /api/v1/trends/*: rankings from real activity, empty until there is some; and follow suggestions. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  requestFollow,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Status } from "../../types.ts";
import { newId } from "../../../src/db/ids.ts";
import { refreshTrends } from "../../../src/services/trends/trends.ts";

describe("trends", () => {
  let server: TestServer;
  let users: TestUser[];
  before(async () => {
    server = await createTestServer();
    users = await Promise.all(["ta", "tb", "tc", "td"].map((n) => createUser(server.ctx, n)));
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ discoverable: true })
      .where(
        "id",
        "in",
        users.map((u) => u.account.id),
      )
      .execute();
  });
  after(() => server.close());

  const json = async <T>(path: string, token?: string) => {
    const res = await get(server.app, path, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as T;
  };
  const interact = (user: TestUser, status: Status, action: "favourite" | "reblog") =>
    request(server.app, "POST", `/api/v1/statuses/${status.id}/${action}`, { token: user.token });

  test("a new server has no trends, and says so with empty lists", async () => {
    await refreshTrends(server.ctx);
    for (const path of ["/api/v1/trends/tags", "/api/v1/trends", "/api/v1/trends/statuses", "/api/v1/trends/links"]) {
      const res = await get(server.app, path);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), []);
      assert.equal(res.headers.link, undefined);
    }
  });

  test("hashtags used publicly by two or more accounts today trend; unlisted and lone uses do not", async () => {
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    await postStatus(server, a, { status: "#RisingTag one" });
    await postStatus(server, b, { status: "#risingtag two" });
    await postStatus(server, c, { status: "#risingtag three, #quiettag" });
    await postStatus(server, a, { status: "#hushtag", visibility: "unlisted" });
    await postStatus(server, b, { status: "#hushtag", visibility: "unlisted" });
    await refreshTrends(server.ctx);
    const tags =
      await json<Array<{ name: string; history: Array<{ uses: string; accounts: string }> }>>("/api/v1/trends/tags");
    assert.deepEqual(
      tags.map((t) => t.name),
      ["risingtag"],
    );
    assert.equal(tags[0]!.history[0]!.accounts, "3");
    assert.deepEqual(await json("/api/v1/trends"), tags);
  });

  test("statuses: discoverable authors' public posts with interactions, hidden authors left out", async () => {
    const [a, b, c, d] = users as [TestUser, TestUser, TestUser, TestUser];
    const popular = await postStatus(server, a, { status: "popular post" });
    const sensitive = await postStatus(server, a, { status: "sensitive", sensitive: true });
    const reply = await postStatus(server, b, { status: "a reply", in_reply_to_id: popular.id });
    const lonely = await postStatus(server, b, { status: "one like only" });
    const shy = await createUser(server.ctx, "shyauthor");
    const hiddenAuthorPost = await postStatus(server, shy, { status: "not discoverable" });
    for (const status of [popular, sensitive, reply, hiddenAuthorPost]) {
      await interact(c, status, "favourite");
      await interact(d, status, "reblog");
    }
    await interact(c, lonely, "favourite");
    await refreshTrends(server.ctx);
    const ids = async (token?: string) => (await json<Status[]>("/api/v1/trends/statuses", token)).map((s) => s.id);
    assert.deepEqual(await ids(), [popular.id]);
    await block(server, b, a);
    assert.deepEqual(await ids(b.token), []);
    assert.deepEqual(await ids(c.token), [popular.id]);
  });

  test("links shared by two or more accounts trend, with a week of history; limit and offset page them", async () => {
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    const now = new Date().toISOString();
    const cards = ["https://news.example/one", "https://news.example/two", "https://news.example/three"];
    for (const [i, url] of cards.entries()) {
      const cardId = newId();
      await server.ctx.db.kysely
        .insertInto("preview_cards")
        .values({
          id: cardId,
          url,
          title: `story ${i}`,
          author_name: "Reporter",
          author_url: "https://news.example/reporter",
          provider_name: "News",
          provider_url: "https://news.example/",
          embed_url: url,
          created_at: now,
          updated_at: now,
        })
        .execute();
      // The first story is shared by three accounts, the second by two, the third by one.
      for (const user of [a, b, c].slice(0, 3 - i)) {
        const status = await postStatus(server, user, { status: `read ${url}` });
        await server.ctx.db.kysely
          .insertInto("preview_cards_statuses")
          .values({ status_id: status.id, preview_card_id: cardId, url })
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    }
    await refreshTrends(server.ctx);
    const links =
      await json<Array<{ url: string; history: Array<{ accounts: string; uses: string }> }>>("/api/v1/trends/links");
    assert.deepEqual(
      links.map((l) => l.url),
      cards.slice(0, 2),
    );
    assert.deepEqual(links[0]!.history[0], { ...links[0]!.history[0], accounts: "3", uses: "3" });
    assert.equal(links[0]!.history.length, 7);
    const first = await get(server.app, "/api/v1/trends/links?limit=1");
    assert.deepEqual(
      (first.json() as Array<{ url: string }>).map((l) => l.url),
      [cards[0]],
    );
    assert.match(first.headers.link as string, /offset=1>; rel="next"/);
    const second = await get(server.app, "/api/v1/trends/links?limit=1&offset=1");
    assert.deepEqual(
      (second.json() as Array<{ url: string }>).map((l) => l.url),
      [cards[1]],
    );
  });

  test("trends match Mastodon's OpenAPI schemas", { skip: openApiSkip }, async () => {
    for (const tag of await json<unknown[]>("/api/v1/trends/tags")) assert.deepEqual(validateSchema("Tag", tag), []);
    for (const link of await json<unknown[]>("/api/v1/trends/links"))
      assert.deepEqual(validateSchema("TrendsLink", link), []);
  });
});

describe("follow suggestions", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let count = 0;
  const user = async (name: string, discoverable = true) => {
    const u = await createUser(server.ctx, `${name}${++count}`);
    await server.ctx.db.kysely.updateTable("accounts").set({ discoverable }).where("id", "=", u.account.id).execute();
    return u;
  };
  const suggestions = async (viewer: TestUser, query = "") => {
    const res = await get(server.app, `/api/v2/suggestions${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Array<{ source: string; sources: string[]; account: { id: string; username: string } }>;
  };

  test("friends of friends and active popular accounts; never followed, requested, blocked or dismissed ones", async () => {
    const viewer = await user("viewer");
    const friend = await user("friend");
    const friendOfFriend = await user("fof");
    const hiddenFof = await user("shy", false);
    const popular = await user("popular");
    const requested = await user("requested");
    const blocked = await user("blocked");
    await follow(server, viewer, friend);
    await follow(server, friend, friendOfFriend);
    await follow(server, friend, hiddenFof);
    await follow(server, friend, viewer);
    for (const fan of [friendOfFriend, requested, blocked]) await follow(server, fan, popular);
    for (const active of [popular, requested, blocked, friend]) await postStatus(server, active, { status: "active" });
    await requestFollow(server, viewer, requested);
    await block(server, viewer, blocked);
    await refreshTrends(server.ctx);
    const found = await suggestions(viewer);
    assert.deepEqual(
      found.map((s) => s.account.username),
      [friendOfFriend.username, popular.username],
    );
    assert.deepEqual(found[0]!.sources, ["friends_of_friends"]);
    assert.equal(found[0]!.source, "past_interactions");
    assert.deepEqual(found[1]!.sources, ["most_followed"]);
    assert.equal(found[1]!.source, "global");

    const v1 = await get(server.app, "/api/v1/suggestions", viewer.token);
    assert.deepEqual(
      (v1.json() as Array<{ username: string }>).map((a) => a.username),
      [friendOfFriend.username, popular.username],
    );
    const limited = await get(server.app, "/api/v2/suggestions?limit=1", viewer.token);
    assert.equal((limited.json() as unknown[]).length, 1);
    assert.match(limited.headers.link as string, /offset=1>; rel="next"/);

    const dismissed = await request(server.app, "DELETE", `/api/v1/suggestions/${friendOfFriend.account.id}`, {
      token: viewer.token,
    });
    assert.equal(dismissed.statusCode, 200, dismissed.body);
    assert.deepEqual(dismissed.json(), {});
    assert.deepEqual(
      (await suggestions(viewer)).map((s) => s.account.username),
      [popular.username],
    );
    assert.deepEqual(
      errorOf(await request(server.app, "DELETE", "/api/v1/suggestions/987654321", { token: viewer.token })),
      [404, "Record not found"],
    );
  });

  test("a Suggestion matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const viewer = await user("schemaviewer");
    const popular = await user("schemapopular");
    await postStatus(server, popular, { status: "hello" });
    await refreshTrends(server.ctx);
    const [first] = await suggestions(viewer);
    assert.ok(first);
    assert.deepEqual(validateSchema("Suggestion", first), []);
  });

  describeAuth("GET /api/v2/suggestions", () => server, {
    scope: "read:accounts",
    send: (s, token) => get(s.app, "/api/v2/suggestions", token),
  });
  describeAuth("DELETE /api/v1/suggestions/:account_id", () => server, {
    scope: "write:accounts",
    send: async (s, token) => {
      const target = await user("dismissable");
      return request(s.app, "DELETE", `/api/v1/suggestions/${target.account.id}`, { token });
    },
  });
});
