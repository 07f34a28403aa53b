/**
 * Offset-paged lists (trends, suggestions, search) share one bounded `offset`: numbers beyond 64
 * bits once reached the database and answered 500 without a token; past MAX_OFFSET a list answers
 * an empty page with no `next` link, and a negative offset is 400 only where Mastodon says so (search).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MAX_OFFSET } from "../../src/api/pagination.ts";
import { refreshTrends } from "../../src/services/trends/trends.ts";
import { createTestServer, createUser, get, postStatus, type TestServer, type TestUser } from "../kit.ts";

// ("1e308" reads as 1, as Ruby's to_i reads it.)
const HUGE = ["9223372036854775808", "99999999999999999999999", String(MAX_OFFSET + 1)];

describe("offsets", () => {
  let server: TestServer;
  let users: TestUser[];
  before(async () => {
    server = await createTestServer();
    users = await Promise.all(["oa", "ob", "oc"].map((n) => createUser(server.ctx, n)));
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ discoverable: true })
      .where(
        "id",
        "in",
        users.map((u) => u.account.id),
      )
      .execute();
    for (const user of users) await postStatus(server, user, { status: "#offsettag findable words" });
    await refreshTrends(server.ctx);
  });
  after(() => server.close());

  test("trends answer an empty page for offsets past the bound, with or without a token", async () => {
    assert.equal(((await get(server.app, "/api/v1/trends/tags")).json() as unknown[]).length, 1, "a trend exists");
    for (const path of ["/api/v1/trends/tags", "/api/v1/trends", "/api/v1/trends/statuses", "/api/v1/trends/links"])
      for (const offset of HUGE)
        for (const token of [undefined, users[0]!.token]) {
          const res = await get(server.app, `${path}?offset=${offset}`, token);
          assert.equal(res.statusCode, 200, `${path} ${offset}: ${res.body}`);
          assert.deepEqual(res.json(), []);
          assert.equal(res.headers.link, undefined);
        }
  });

  test("a negative trends offset reads as 0; an offset at the bound is still served", async () => {
    const first = (await get(server.app, "/api/v1/trends/tags")).json();
    assert.deepEqual((await get(server.app, "/api/v1/trends/tags?offset=-5")).json(), first);
    const atBound = await get(server.app, `/api/v1/trends/tags?offset=${MAX_OFFSET}`);
    assert.equal(atBound.statusCode, 200);
    assert.deepEqual(atBound.json(), []);
  });

  test("search and account search answer an empty page past the bound and 400 for negatives", async () => {
    const viewer = users[0]!;
    const found = (await get(server.app, "/api/v2/search?q=findable&type=statuses", viewer.token)).json() as {
      statuses: unknown[];
    };
    assert.ok(found.statuses.length > 0, "something to find");
    for (const offset of HUGE) {
      const res = await get(server.app, `/api/v2/search?q=findable&offset=${offset}`, viewer.token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { accounts: [], statuses: [], hashtags: [] });
      const accounts = await get(server.app, `/api/v1/accounts/search?q=o&offset=${offset}`, viewer.token);
      assert.equal(accounts.statusCode, 200, accounts.body);
      assert.deepEqual(accounts.json(), []);
    }
    for (const path of ["/api/v2/search?q=findable", "/api/v1/accounts/search?q=o"])
      assert.equal((await get(server.app, `${path}&offset=-9223372036854775809`, viewer.token)).statusCode, 400);
  });

  test("suggestions answer an empty page past the bound", async () => {
    for (const path of ["/api/v2/suggestions", "/api/v1/suggestions"])
      for (const offset of HUGE) {
        const res = await get(server.app, `${path}?offset=${offset}`, users[1]!.token);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), []);
      }
  });
});
