/** Followers and following lists (paging, hidden collections, blocks) and familiar followers. */
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
  standardAccounts,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Account } from "../../types.ts";

describe("followers, following and familiar followers", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let star: TestUser;
  let fans: TestUser[];
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
    star = await createUser(server.ctx, "star");
    fans = [];
    for (let i = 0; i < 3; i++) fans.push(await createUser(server.ctx, `fan${i}`));
    for (const fan of fans) await follow(server, fan, star);
    await follow(server, star, fans[0]);
  });
  after(() => server.close());

  const names = (res: { json(): unknown }) => (res.json() as Account[]).map((x) => x.username);

  test("followers newest first with Link paging (since_id back, next only when full), for anyone", async () => {
    const first = await get(server.app, `/api/v1/accounts/${star.account.id}/followers?limit=2`);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(names(first), ["fan2", "fan1"]);
    const link = String(first.headers.link);
    assert.match(link, /since_id=\d+>; rel="prev"/);
    const next = /<https:\/\/rookery\.test([^>]+)>; rel="next"/.exec(link)?.[1] ?? "";
    const second = await get(server.app, next);
    assert.deepEqual(names(second), ["fan0"]);
    assert.doesNotMatch(String(second.headers.link ?? ""), /rel="next"/);
    assert.deepEqual(names(await get(server.app, `/api/v1/accounts/${star.account.id}/following`, a.bob.token)), [
      "fan0",
    ]);
  });

  test("hidden collections are empty to others and whole to the owner; a blocked viewer sees nothing", async () => {
    const shy = await createUser(server.ctx, "shy");
    await follow(server, fans[1], shy);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ hide_collections: true })
      .where("id", "=", shy.account.id)
      .execute();
    assert.deepEqual(names(await get(server.app, `/api/v1/accounts/${shy.account.id}/followers`)), []);
    assert.deepEqual(names(await get(server.app, `/api/v1/accounts/${shy.account.id}/followers`, shy.token)), ["fan1"]);
    const grumpy = await createUser(server.ctx, "grumpy");
    await follow(server, fans[2], grumpy);
    await block(server, grumpy, a.carol);
    assert.deepEqual(
      names(await get(server.app, `/api/v1/accounts/${grumpy.account.id}/followers`, a.carol.token)),
      [],
    );
    assert.deepEqual(names(await get(server.app, `/api/v1/accounts/${grumpy.account.id}/followers`)), ["fan2"]);
  });

  test("unknown and suspended accounts are 404; suspended followers are left out", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/123/followers")), [404, "Record not found"]);
    const gone = await createUser(server.ctx, "gonefan");
    await follow(server, gone, star);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", gone.account.id)
      .execute();
    assert.equal(
      names(await get(server.app, `/api/v1/accounts/${star.account.id}/followers`)).includes("gonefan"),
      false,
    );
    assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${gone.account.id}/following`)), [
      404,
      "Record not found",
    ]);
  });

  test("familiar followers: the accounts I follow that follow them, per account asked", async () => {
    const me = await createUser(server.ctx, "me");
    await follow(server, me, fans[0]);
    await follow(server, me, fans[1]);
    const res = await get(
      server.app,
      `/api/v1/accounts/familiar_followers?id[]=${star.account.id}&id[]=${a.alice.account.id}&id[]=abc`,
      me.token,
    );
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as Array<{ id: string; accounts: Account[] }>;
    assert.deepEqual(
      body.map((x) => x.id),
      [star.account.id, a.alice.account.id],
    );
    assert.deepEqual(body[0].accounts.map((x) => x.username).sort(), ["fan0", "fan1"]);
    assert.deepEqual(body[1].accounts, []);
  });

  describeAuth("GET /api/v1/accounts/:id/followers", () => server, {
    scope: "read:accounts",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, `/api/v1/accounts/${a.alice.account.id}/followers`, token),
  });
  describeAuth("GET /api/v1/accounts/familiar_followers", () => server, {
    scope: "read:follows",
    send: (s, token) => get(s.app, `/api/v1/accounts/familiar_followers?id[]=${a.alice.account.id}`, token),
  });
});
