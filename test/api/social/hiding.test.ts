/**
 * Blocks, mutes (with notifications and duration), the user's own domain blocks, endorsements and
 * private notes: the actions, their lists and what they change in relationships and follows.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountJson,
  createRemoteAccount,
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
import type { Account, Relationship } from "../../types.ts";

const NOT_ALLOWED = "This action is not allowed";
const MUST_FOLLOW = "Validation failed: You must be already following the person you want to endorse";

describe("blocks, mutes, domain blocks, endorsements and notes", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let users = 0;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const user = () => createUser(server.ctx, `hider${++users}`);
  const act = (who: TestUser, id: string, action: string, json?: Record<string, unknown>) =>
    request(server.app, "POST", `/api/v1/accounts/${id}/${action}`, { token: who.token, json });
  const relationship = async (who: TestUser, id: string, action: string, json?: Record<string, unknown>) => {
    const res = await act(who, id, action, json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Relationship;
  };
  const relationshipWith = async (who: TestUser, id: string) =>
    ((await get(server.app, `/api/v1/accounts/relationships?id[]=${id}`, who.token)).json() as Relationship[])[0];
  const listed = async (who: TestUser, path: string) => {
    const res = await get(server.app, path, who.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Array<Account & { mute_expires_at?: string | null }>;
  };

  describe("blocks", () => {
    test("a block ends follows and requests both ways and keeps the counters right; unblock lifts it", async () => {
      const [me, them] = [await user(), await user()];
      await follow(server, me, them);
      await follow(server, them, me);
      const locked = await createUser(server.ctx, `locked${++users}`, { locked: true });
      await requestFollow(server, locked, me);
      const blocked = await relationship(me, them.account.id, "block");
      assert.equal(blocked.blocking, true);
      assert.equal(blocked.following, false);
      assert.equal(blocked.followed_by, false);
      assert.equal((await relationshipWith(them, me.account.id)).blocked_by, true);
      const meNow = await accountJson(server, me);
      assert.deepEqual([meNow.followers_count, meNow.following_count], [0, 0]);
      assert.deepEqual(errorOf(await act(them, me.account.id, "follow")), [403, NOT_ALLOWED]);
      await relationship(me, locked.account.id, "block");
      assert.deepEqual(await listed(me, "/api/v1/follow_requests"), []);
      assert.deepEqual(
        (await listed(me, "/api/v1/blocks")).map((x) => x.id),
        [locked.account.id, them.account.id],
      );
      const unblocked = await relationship(me, them.account.id, "unblock");
      assert.equal(unblocked.blocking, false);
      assert.equal((await relationship(me, them.account.id, "unblock")).blocking, false);
      assert.equal((await relationship(them, me.account.id, "follow")).following, true);
    });

    test("blocking yourself is refused; unknown accounts are 404", async () => {
      const me = await user();
      assert.deepEqual(errorOf(await act(me, me.account.id, "block")), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await act(me, "12345", "block")), [404, "Record not found"]);
    });
  });

  describe("mutes", () => {
    test("mute hides notifications by default; notifications=false mutes posts only; muting again rewrites both", async () => {
      const [me, them] = [await user(), await user()];
      const first = await relationship(me, them.account.id, "mute");
      assert.equal(first.muting, true);
      assert.equal(first.muting_notifications, true);
      const second = await relationship(me, them.account.id, "mute", { notifications: false });
      assert.equal(second.muting_notifications, false);
      const [entry] = await listed(me, "/api/v1/mutes");
      assert.equal(entry.id, them.account.id);
      assert.equal(entry.mute_expires_at, null);
      const unmuted = await relationship(me, them.account.id, "unmute");
      assert.equal(unmuted.muting, false);
      assert.deepEqual(await listed(me, "/api/v1/mutes"), []);
    });

    test("a mute with a duration lists its end and really ends: reads ignore it at once, the job deletes it", async () => {
      const [me, them] = [await user(), await user()];
      const before = Date.now();
      await relationship(me, them.account.id, "mute", { duration: 3600 });
      const [entry] = await listed(me, "/api/v1/mutes");
      const ends = Date.parse(String(entry.mute_expires_at));
      assert.ok(
        ends >= before + 3600_000 - 2000 && ends <= Date.now() + 3600_000 + 2000,
        String(entry.mute_expires_at),
      );
      const past = new Date(Date.now() - 1000).toISOString();
      await server.ctx.db.kysely
        .updateTable("mutes")
        .set({ expires_at: past })
        .where("account_id", "=", me.account.id)
        .execute();
      assert.equal((await relationshipWith(me, them.account.id)).muting, false);
      assert.deepEqual(await listed(me, "/api/v1/mutes"), []);
      await server.ctx.jobs.enqueue("mutes.expire", {});
      await server.ctx.jobs.drain();
      const left = await server.ctx.db.kysely
        .selectFrom("mutes")
        .select("id")
        .where("account_id", "=", me.account.id)
        .execute();
      assert.deepEqual(left, []);
    });
  });

  describe("domain blocks", () => {
    test("blocking a domain lists it, shows in relationships and ends follows with its accounts both ways", async () => {
      const me = await user();
      const remote = await createRemoteAccount(server.ctx, `far${users}`, "blocked.example");
      await follow(server, me, remote);
      await follow(server, remote, me);
      const res = await request(server.app, "POST", "/api/v1/domain_blocks", {
        token: me.token,
        json: { domain: "Blocked.Example" },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
      assert.deepEqual(await listed(me, "/api/v1/domain_blocks"), ["blocked.example"]);
      const rel = await relationshipWith(me, remote.id);
      assert.equal(rel.domain_blocking, true);
      assert.equal(rel.following, false);
      assert.equal(rel.followed_by, false);
      assert.equal((await relationshipWith(me, a.alice.account.id)).domain_blocking, false);
      const removed = await request(server.app, "DELETE", "/api/v1/domain_blocks?domain=blocked.example", {
        token: me.token,
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual(await listed(me, "/api/v1/domain_blocks"), []);
    });

    test("a blank or invalid domain is 422", async () => {
      const me = await user();
      const post = (domain: unknown) =>
        request(server.app, "POST", "/api/v1/domain_blocks", { token: me.token, json: { domain } });
      assert.deepEqual(errorOf(await post("")), [422, "Validation failed: Domain can't be blank"]);
      assert.deepEqual(errorOf(await post("not a domain")), [
        422,
        "Validation failed: Domain is not a valid domain name",
      ]);
      assert.deepEqual(errorOf(await post({ nested: true })), [422, "Validation failed: Domain can't be blank"]);
    });

    test("domain_blocks pages by 100 with a Link header", async () => {
      const me = await user();
      for (const domain of ["one.example", "two.example", "three.example"]) {
        await request(server.app, "POST", "/api/v1/domain_blocks", { token: me.token, json: { domain } });
      }
      const res = await get(server.app, "/api/v1/domain_blocks?limit=2", me.token);
      assert.deepEqual(res.json(), ["three.example", "two.example"]);
      assert.match(String(res.headers.link), /rel="next".*since_id=\d+>; rel="prev"/);
    });
  });

  describe("endorsements and notes", () => {
    test("only followed accounts can be endorsed; endorsed accounts are listed for the owner and on the profile", async () => {
      const [me, them] = [await user(), await user()];
      assert.deepEqual(errorOf(await act(me, them.account.id, "endorse")), [422, MUST_FOLLOW]);
      await follow(server, me, them);
      assert.equal((await relationship(me, them.account.id, "endorse")).endorsed, true);
      assert.equal((await relationship(me, them.account.id, "pin")).endorsed, true);
      assert.deepEqual(
        (await listed(me, "/api/v1/endorsements")).map((x) => x.id),
        [them.account.id],
      );
      const profile = await get(server.app, `/api/v1/accounts/${me.account.id}/endorsements`);
      assert.deepEqual(
        (profile.json() as Account[]).map((x) => x.id),
        [them.account.id],
      );
      assert.equal((await relationship(me, them.account.id, "unendorse")).endorsed, false);
      assert.deepEqual(await listed(me, "/api/v1/endorsements"), []);
    });

    test("a note is private, trimmed, replaced, cleared by an empty comment, and limited to 2000 characters", async () => {
      const [me, them] = [await user(), await user()];
      assert.equal(
        (await relationship(me, them.account.id, "note", { comment: "  met at the conference " })).note,
        "met at the conference",
      );
      assert.equal((await relationshipWith(them, me.account.id)).note, "");
      assert.equal((await relationship(me, them.account.id, "note", { comment: "changed" })).note, "changed");
      assert.deepEqual(errorOf(await act(me, them.account.id, "note", { comment: "x".repeat(2001) })), [
        422,
        "Validation failed: Comment is too long (maximum is 2000 characters)",
      ]);
      assert.equal((await relationship(me, them.account.id, "note", { comment: "" })).note, "");
    });
  });

  for (const [action, scope] of [
    ["block", "write:blocks"],
    ["unblock", "write:blocks"],
    ["mute", "write:mutes"],
    ["unmute", "write:mutes"],
    ["unendorse", "write:accounts"],
    ["note", "write:accounts"],
  ] as const) {
    describeAuth(`POST /api/v1/accounts/:id/${action}`, () => server, {
      scope,
      send: (s, token) => request(s.app, "POST", `/api/v1/accounts/${a.carol.account.id}/${action}`, { token }),
    });
  }
  for (const [path, scope] of [
    ["/api/v1/blocks", "read:blocks"],
    ["/api/v1/mutes", "read:mutes"],
    ["/api/v1/domain_blocks", "read:blocks"],
    ["/api/v1/endorsements", "read:accounts"],
  ] as const) {
    describeAuth(`GET ${path}`, () => server, { scope, send: (s, token) => get(s.app, path, token) });
  }
  describeAuth("POST /api/v1/domain_blocks", () => server, {
    scope: "write:blocks",
    send: (s, token) => request(s.app, "POST", "/api/v1/domain_blocks", { token, json: { domain: "scope.example" } }),
  });
  describeAuth("GET /api/v1/accounts/:id/endorsements", () => server, {
    scope: "read:accounts",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, `/api/v1/accounts/${a.alice.account.id}/endorsements`, token),
  });
});
