/** Lists: create, read, update, delete, members (followed or requested accounts only), lists of an account. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  request,
  requestFollow,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Account } from "../../types.ts";

interface List {
  id: string;
  title: string;
  replies_policy: string;
  exclusive: boolean;
}

const BLANK = "Validation failed: Title can't be blank";
const NOT_FOLLOWED = "Validation failed: Account must be a followed account";

describe("lists", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let owners = 0;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const owner = () => createUser(server.ctx, `lister${++owners}`);
  const send = (
    user: TestUser,
    method: "POST" | "PUT" | "DELETE" | "GET",
    path: string,
    json?: Record<string, unknown>,
  ) => request(server.app, method, path, { token: user.token, json });
  const create = async (user: TestUser, json: Record<string, unknown>) => {
    const res = await send(user, "POST", "/api/v1/lists", json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as List;
  };

  test("create, show, rename, list and delete; defaults as Mastodon", async () => {
    const me = await owner();
    const list = await create(me, { title: "  Friends " });
    assert.deepEqual({ ...list, id: "" }, { id: "", title: "Friends", replies_policy: "list", exclusive: false });
    const updated = await send(me, "PUT", `/api/v1/lists/${list.id}`, {
      title: "Close friends",
      replies_policy: "followed",
      exclusive: true,
    });
    assert.deepEqual(updated.json(), {
      id: list.id,
      title: "Close friends",
      replies_policy: "followed",
      exclusive: true,
    });
    await create(me, { title: "Second" });
    assert.deepEqual(
      ((await get(server.app, "/api/v1/lists", me.token)).json() as List[]).map((l) => l.title),
      ["Close friends", "Second"],
    );
    assert.equal((await get(server.app, `/api/v1/lists/${list.id}`, me.token)).json().title, "Close friends");
    assert.deepEqual((await send(me, "DELETE", `/api/v1/lists/${list.id}`)).json(), {});
    assert.deepEqual(errorOf(await get(server.app, `/api/v1/lists/${list.id}`, me.token)), [404, "Record not found"]);
  });

  test("validation: blank title, bad replies policy, over-long title, the 50-list limit", async () => {
    const me = await owner();
    assert.deepEqual(errorOf(await send(me, "POST", "/api/v1/lists", {})), [422, BLANK]);
    assert.deepEqual(errorOf(await send(me, "POST", "/api/v1/lists", { title: "x", replies_policy: "all" })), [
      422,
      "Validation failed: Replies policy is not included in the list",
    ]);
    assert.deepEqual(errorOf(await send(me, "POST", "/api/v1/lists", { title: "x".repeat(257) })), [
      422,
      "Validation failed: Title is too long (maximum is 256 characters)",
    ]);
    const list = await create(me, { title: "ok" });
    assert.deepEqual(errorOf(await send(me, "PUT", `/api/v1/lists/${list.id}`, { title: " " })), [422, BLANK]);
    for (let i = 1; i < 50; i++) await create(me, { title: `list ${i}` });
    assert.deepEqual(errorOf(await send(me, "POST", "/api/v1/lists", { title: "one too many" })), [
      422,
      "Validation failed: You have reached the maximum number of lists",
    ]);
  });

  test("someone else's list is 404 for every route", async () => {
    const [me, other] = [await owner(), await owner()];
    const list = await create(me, { title: "mine" });
    for (const [method, path] of [
      ["GET", `/api/v1/lists/${list.id}`],
      ["PUT", `/api/v1/lists/${list.id}`],
      ["DELETE", `/api/v1/lists/${list.id}`],
      ["GET", `/api/v1/lists/${list.id}/accounts`],
      ["POST", `/api/v1/lists/${list.id}/accounts`],
      ["GET", "/api/v1/lists/abc"],
    ] as const) {
      assert.deepEqual(
        errorOf(await send(other, method, path, { title: "x" })),
        [404, "Record not found"],
        `${method} ${path}`,
      );
    }
  });

  test("members: followed and requested accounts and oneself; others 422, unknown 404, twice 422; all or none", async () => {
    const me = await owner();
    const list = await create(me, { title: "members" });
    await follow(server, me, a.alice);
    await requestFollow(server, me, a.lucy);
    const add = (ids: string[]) => send(me, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: ids });
    assert.deepEqual(errorOf(await add([a.alice.account.id, a.bob.account.id])), [422, NOT_FOLLOWED]);
    assert.deepEqual(errorOf(await add(["12345"])), [404, "Record not found"]);
    assert.deepEqual((await add([a.alice.account.id, a.lucy.account.id, me.account.id])).json(), {});
    assert.deepEqual(errorOf(await add([a.alice.account.id])), [
      422,
      "Validation failed: Account has already been taken",
    ]);
    const members = (await get(server.app, `/api/v1/lists/${list.id}/accounts`, me.token)).json() as Account[];
    assert.deepEqual(members.map((m) => m.username).sort(), ["alice", "lucy", me.username].sort());
    const lists = (await get(server.app, `/api/v1/accounts/${a.alice.account.id}/lists`, me.token)).json() as List[];
    assert.deepEqual(
      lists.map((l) => l.id),
      [list.id],
    );
    assert.deepEqual((await get(server.app, `/api/v1/accounts/${a.bob.account.id}/lists`, me.token)).json(), []);
    await send(me, "DELETE", `/api/v1/lists/${list.id}/accounts`, { account_ids: [a.lucy.account.id] });
    assert.equal(
      ((await get(server.app, `/api/v1/lists/${list.id}/accounts`, me.token)).json() as Account[]).length,
      2,
    );
  });

  test("unfollowing takes the account off the follower's lists", async () => {
    const me = await owner();
    const list = await create(me, { title: "temporary" });
    await follow(server, me, a.carol);
    await send(me, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: [a.carol.account.id] });
    const res = await request(server.app, "POST", `/api/v1/accounts/${a.carol.account.id}/unfollow`, {
      token: me.token,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((await get(server.app, `/api/v1/lists/${list.id}/accounts`, me.token)).json(), []);
  });

  test("members page by 40 with Link, or all at once with limit=0", async () => {
    const me = await owner();
    const list = await create(me, { title: "paged" });
    const friends: TestUser[] = [];
    for (let i = 0; i < 3; i++) friends.push(await createUser(server.ctx, `member${owners}x${i}`));
    for (const friend of friends) await follow(server, me, friend);
    await send(me, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: friends.map((f) => f.account.id) });
    const page = await get(server.app, `/api/v1/lists/${list.id}/accounts?limit=2`, me.token);
    assert.equal((page.json() as Account[]).length, 2);
    assert.match(String(page.headers.link), /rel="next"/);
    const all = await get(server.app, `/api/v1/lists/${list.id}/accounts?limit=0`, me.token);
    assert.equal((all.json() as Account[]).length, 3);
    assert.equal(all.headers.link, undefined);
  });

  test("a List matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    assert.deepEqual(validateSchema("List", await create(await owner(), { title: "schema" })), []);
  });

  describeAuth("GET /api/v1/lists", () => server, {
    scope: "read:lists",
    send: (s, token) => get(s.app, "/api/v1/lists", token),
  });
  describeAuth("POST /api/v1/lists", () => server, {
    scope: "write:lists",
    send: (s, token) => request(s.app, "POST", "/api/v1/lists", { token, json: { title: "scoped" } }),
  });
  describeAuth("GET /api/v1/accounts/:id/lists", () => server, {
    scope: "read:lists",
    send: (s, token) => get(s.app, `/api/v1/accounts/${a.alice.account.id}/lists`, token),
  });
});
