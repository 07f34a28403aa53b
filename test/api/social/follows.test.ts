/**
 * Following: follow and unfollow (with reblogs, notify, languages), follow requests of locked
 * accounts (list, authorize, reject), remove_from_followers, the Relationship entity and
 * GET /api/v1/accounts/relationships, and the counters behind them.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountJson,
  block,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  mute,
  request,
  requestFollow,
  standardAccounts,
  tokenFor,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Account, Relationship } from "../../types.ts";

const NOT_ALLOWED = "This action is not allowed";
const SELF = "Following your own account is not allowed";
const NOT_FOUND = "Record not found";

describe("following", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const act = (user: TestUser, id: string, action: string, json?: Record<string, unknown>) =>
    request(server.app, "POST", `/api/v1/accounts/${id}/${action}`, { token: user.token, json });
  const relationship = async (user: TestUser, id: string, action: string, json?: Record<string, unknown>) => {
    const res = await act(user, id, action, json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Relationship;
  };
  const relationships = async (user: TestUser, ids: string[], extra = "") => {
    const query = ids.map((id) => `id[]=${encodeURIComponent(id)}`).join("&");
    const res = await get(server.app, `/api/v1/accounts/relationships?${query}${extra}`, user.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Relationship[];
  };
  const counts = async (user: TestUser) => {
    const account: Account = await accountJson(server, user);
    return [account.followers_count, account.following_count];
  };

  test("following an unlocked account: following true, counters move once however often it is asked", async () => {
    const dora = await createUser(server.ctx, "dora");
    const eve = await createUser(server.ctx, "eve");
    const first = await relationship(dora, eve.account.id, "follow");
    assert.equal(first.id, eve.account.id);
    assert.equal(first.following, true);
    assert.equal(first.requested, false);
    assert.equal(first.showing_reblogs, true);
    assert.equal(first.notifying, false);
    assert.equal(first.languages, null);
    await relationship(dora, eve.account.id, "follow");
    assert.deepEqual(await counts(dora), [0, 1]);
    assert.deepEqual(await counts(eve), [1, 0]);
    const theirs = (await relationships(eve, [dora.account.id]))[0];
    assert.equal(theirs.followed_by, true);
    assert.equal(theirs.following, false);
  });

  test("following again updates only the options given", async () => {
    const fay = await createUser(server.ctx, "fay");
    const gus = await createUser(server.ctx, "gus");
    await relationship(fay, gus.account.id, "follow", { reblogs: false, notify: true, languages: ["en", "de"] });
    const kept = await relationship(fay, gus.account.id, "follow", {});
    assert.equal(kept.showing_reblogs, false);
    assert.equal(kept.notifying, true);
    assert.deepEqual(kept.languages, ["en", "de"]);
    const changed = await relationship(fay, gus.account.id, "follow", { reblogs: true, languages: [] });
    assert.equal(changed.showing_reblogs, true);
    assert.equal(changed.notifying, true);
    assert.equal(changed.languages, null);
    const form = await request(server.app, "POST", `/api/v1/accounts/${gus.account.id}/follow`, {
      token: fay.token,
      form: [
        ["notify", "false"],
        ["languages[]", "fr"],
      ],
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.equal((form.json() as Relationship).notifying, false);
    assert.deepEqual((form.json() as Relationship).languages, ["fr"]);
  });

  test("concurrent follows and unfollows keep the counters right", async () => {
    const hal = await createUser(server.ctx, "hal");
    const ivy = await createUser(server.ctx, "ivy");
    await Promise.all(Array.from({ length: 8 }, () => act(hal, ivy.account.id, "follow")));
    assert.deepEqual(await counts(ivy), [1, 0]);
    await Promise.all(Array.from({ length: 8 }, () => act(hal, ivy.account.id, "unfollow")));
    assert.deepEqual(await counts(ivy), [0, 0]);
    assert.deepEqual(await counts(hal), [0, 0]);
  });

  test("unfollow ends the follow and succeeds when there was none", async () => {
    const jan = await createUser(server.ctx, "jan");
    const kim = await createUser(server.ctx, "kim");
    await relationship(jan, kim.account.id, "follow");
    const after = await relationship(jan, kim.account.id, "unfollow");
    assert.equal(after.following, false);
    assert.equal((await relationship(jan, kim.account.id, "unfollow")).following, false);
    assert.deepEqual(await counts(kim), [0, 0]);
  });

  test("yourself: 403 with Mastodon's text; blocked either way: 403; unknown, suspended or non-ID: 404", async () => {
    const lea = await createUser(server.ctx, "lea");
    const max = await createUser(server.ctx, "max");
    const ned = await createUser(server.ctx, "ned");
    assert.deepEqual(errorOf(await act(lea, lea.account.id, "follow")), [403, SELF]);
    await block(server, lea, max);
    assert.deepEqual(errorOf(await act(lea, max.account.id, "follow")), [403, NOT_ALLOWED]);
    assert.deepEqual(errorOf(await act(max, lea.account.id, "follow")), [403, NOT_ALLOWED]);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", ned.account.id)
      .execute();
    for (const id of [ned.account.id, "123", "abc", "99999999999999999999"]) {
      assert.deepEqual(errorOf(await act(lea, id, "follow")), [404, NOT_FOUND], id);
    }
    assert.deepEqual(await counts(lea), [0, 0]);
  });

  describe("locked accounts", () => {
    test("a follow becomes a request; the owner lists, authorizes and rejects requests", async () => {
      const owner = await createUser(server.ctx, "olga", { locked: true });
      const pat = await createUser(server.ctx, "pat");
      const quinn = await createUser(server.ctx, "quinn");
      const asked = await relationship(pat, owner.account.id, "follow", { reblogs: false, languages: ["en"] });
      assert.equal(asked.following, false);
      assert.equal(asked.requested, true);
      assert.equal(asked.showing_reblogs, false);
      await relationship(quinn, owner.account.id, "follow");
      assert.deepEqual(await counts(owner), [0, 0]);

      const listed = await get(server.app, "/api/v1/follow_requests", owner.token);
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual(
        (listed.json() as Account[]).map((x) => x.acct),
        ["quinn", "pat"],
      );
      const credentials = await get(server.app, "/api/v1/accounts/verify_credentials", owner.token);
      assert.equal(credentials.json().source.follow_requests_count, 2);
      assert.equal((await relationships(owner, [pat.account.id]))[0].requested_by, true);

      const authorizing = await request(server.app, "POST", `/api/v1/follow_requests/${pat.account.id}/authorize`, {
        token: owner.token,
      });
      assert.equal(authorizing.statusCode, 200, authorizing.body);
      const authorized = authorizing.json() as Relationship;
      assert.equal(authorized.followed_by, true);
      assert.equal(authorized.requested_by, false);
      const follow = (await relationships(pat, [owner.account.id]))[0];
      assert.equal(follow.following, true);
      assert.equal(follow.requested, false);
      assert.equal(follow.showing_reblogs, false);
      assert.deepEqual(follow.languages, ["en"]);
      assert.deepEqual(await counts(owner), [1, 0]);

      const rejected = await request(server.app, "POST", `/api/v1/follow_requests/${quinn.account.id}/reject`, {
        token: owner.token,
      });
      assert.equal(rejected.statusCode, 200, rejected.body);
      assert.equal((rejected.json() as Relationship).requested_by, false);
      assert.equal((await relationships(quinn, [owner.account.id]))[0].requested, false);
      assert.deepEqual(await counts(owner), [1, 0]);
      assert.deepEqual((await get(server.app, "/api/v1/follow_requests", owner.token)).json(), []);
    });

    test("authorize and reject without a pending request: 404; a withdrawn request is gone", async () => {
      const owner = await createUser(server.ctx, "rosa", { locked: true });
      const sam = await createUser(server.ctx, "sam");
      for (const action of ["authorize", "reject"]) {
        const res = await request(server.app, "POST", `/api/v1/follow_requests/${sam.account.id}/${action}`, {
          token: owner.token,
        });
        assert.deepEqual(errorOf(res), [404, NOT_FOUND], action);
      }
      await relationship(sam, owner.account.id, "follow");
      const withdrawn = await relationship(sam, owner.account.id, "unfollow");
      assert.equal(withdrawn.requested, false);
      assert.deepEqual((await get(server.app, "/api/v1/follow_requests", owner.token)).json(), []);
    });

    test("follow_requests pages with a Link header (since_id back, next only when full)", async () => {
      const owner = await createUser(server.ctx, "tess", { locked: true });
      const fans: TestUser[] = [];
      for (let i = 0; i < 3; i++) fans.push(await createUser(server.ctx, `fan${i}`));
      for (const fan of fans) await requestFollow(server, fan, owner);
      const first = await get(server.app, "/api/v1/follow_requests?limit=2", owner.token);
      assert.deepEqual(
        (first.json() as Account[]).map((x) => x.acct),
        ["fan2", "fan1"],
      );
      const link = String(first.headers.link);
      assert.match(link, /rel="next"/);
      assert.match(link, /since_id=\d+>; rel="prev"/);
      const next = /<https:\/\/rookery\.test([^>]+)>; rel="next"/.exec(link)?.[1] ?? "";
      const second = await get(server.app, next, owner.token);
      assert.deepEqual(
        (second.json() as Account[]).map((x) => x.acct),
        ["fan0"],
      );
      assert.doesNotMatch(String(second.headers.link), /rel="next"/);
    });
  });

  test("remove_from_followers ends their follow of you", async () => {
    const uma = await createUser(server.ctx, "uma");
    const vic = await createUser(server.ctx, "vic");
    await relationship(vic, uma.account.id, "follow");
    const removed = await relationship(uma, vic.account.id, "remove_from_followers");
    assert.equal(removed.followed_by, false);
    assert.equal((await relationships(vic, [uma.account.id]))[0].following, false);
    assert.deepEqual(await counts(uma), [0, 0]);
    assert.deepEqual(await counts(vic), [0, 0]);
  });

  describe("GET /api/v1/accounts/relationships", () => {
    test("every flag, in the order asked; unknown and non-ID values left out", async () => {
      const wes = await createUser(server.ctx, "wes");
      const xia = await createUser(server.ctx, "xia");
      const yan = await createUser(server.ctx, "yan");
      await relationship(wes, xia.account.id, "follow");
      await relationship(xia, wes.account.id, "follow");
      await block(server, wes, yan);
      await mute(server, wes, a.rita, { notifications: false });
      const list = await relationships(wes, [yan.account.id, "abc", xia.account.id, "1", a.rita.id, wes.account.id]);
      assert.deepEqual(
        list.map((r) => r.id),
        [yan.account.id, xia.account.id, a.rita.id, wes.account.id],
      );
      const [withYan, withXia, withRita, withSelf] = list;
      assert.deepEqual(Object.keys(withXia), [
        "id",
        "following",
        "showing_reblogs",
        "notifying",
        "languages",
        "followed_by",
        "blocking",
        "blocked_by",
        "muting",
        "muting_notifications",
        "requested",
        "requested_by",
        "domain_blocking",
        "endorsed",
        "note",
      ]);
      assert.equal(withXia.following, true);
      assert.equal(withXia.followed_by, true);
      assert.equal(withYan.blocking, true);
      assert.equal((await relationships(yan, [wes.account.id]))[0].blocked_by, true);
      assert.equal(withRita.muting, true);
      assert.equal(withRita.muting_notifications, false);
      assert.equal(withRita.domain_blocking, false);
      assert.equal(withSelf.following, false);
      assert.equal(withSelf.note, "");
    });

    test("a single id= works; suspended accounts only with with_suspended", async () => {
      const zed = await createUser(server.ctx, "zed");
      const gone = await createUser(server.ctx, "gone");
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ suspended_at: new Date().toISOString() })
        .where("id", "=", gone.account.id)
        .execute();
      const single = await get(server.app, `/api/v1/accounts/relationships?id=${a.alice.account.id}`, zed.token);
      assert.deepEqual(
        (single.json() as Relationship[]).map((r) => r.id),
        [a.alice.account.id],
      );
      assert.deepEqual(await relationships(zed, [gone.account.id]), []);
      assert.deepEqual(
        (await relationships(zed, [gone.account.id], "&with_suspended=true")).map((r) => r.id),
        [gone.account.id],
      );
    });

    test("matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
      const [one] = await relationships(a.bob, [a.alice.account.id]);
      assert.deepEqual(validateSchema("Relationship", one), []);
    });
  });

  describeAuth("POST /api/v1/accounts/:id/follow", () => server, {
    scope: "write:follows",
    send: (s, token) => request(s.app, "POST", `/api/v1/accounts/${a.alice.account.id}/follow`, { token }),
  });
  describeAuth("POST /api/v1/accounts/:id/unfollow", () => server, {
    scope: "write:follows",
    send: (s, token) => request(s.app, "POST", `/api/v1/accounts/${a.alice.account.id}/unfollow`, { token }),
  });
  describeAuth("POST /api/v1/accounts/:id/remove_from_followers", () => server, {
    scope: "write:follows",
    send: (s, token) =>
      request(s.app, "POST", `/api/v1/accounts/${a.alice.account.id}/remove_from_followers`, { token }),
  });
  describeAuth("GET /api/v1/accounts/relationships", () => server, {
    scope: "read:follows",
    send: (s, token) => get(s.app, `/api/v1/accounts/relationships?id[]=${a.alice.account.id}`, token),
  });
  describeAuth("GET /api/v1/follow_requests", () => server, {
    scope: "read:follows",
    send: (s, token) => get(s.app, "/api/v1/follow_requests", token),
  });
  describeAuth("POST /api/v1/follow_requests/:id/reject", () => server, {
    scope: "write:follows",
    send: async (s, token, owner) => {
      await requestFollow(s, a.carol, owner);
      return request(s.app, "POST", `/api/v1/follow_requests/${a.carol.account.id}/reject`, { token });
    },
  });

  test("the legacy follow scope is accepted for following, not for relationships", async () => {
    const token = await tokenFor(server.ctx, a.carol, "follow");
    const res = await request(server.app, "POST", `/api/v1/accounts/${a.alice.account.id}/follow`, { token });
    assert.equal(res.statusCode, 200, res.body);
    const rel = await get(server.app, `/api/v1/accounts/relationships?id[]=${a.alice.account.id}`, token);
    assert.deepEqual(errorOf(rel), [403, "This action is outside the authorized scopes"]);
  });
});

describe("the follows rate limit (400 a day, account and tag follows together)", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("the 401st follow of a day from a client not on this machine is 429; loopback clients are not throttled", async () => {
    const user = await createUser(server.ctx, "eager_follower");
    const target = await createUser(server.ctx, "followed_last");
    // Two tokens, so the per-token API limit (300 in five minutes) is not what stops them.
    const tokens = [user.token, await tokenFor(server.ctx, user, "read write follow")];
    const remote = (url: string, token: string) =>
      server.app.inject({
        method: "POST",
        url,
        headers: { authorization: `Bearer ${token}` },
        remoteAddress: "203.0.113.9",
      });
    const first = await remote("/api/v1/tags/ratelimit0/follow", tokens[0]!);
    assert.equal(first.statusCode, 200);
    for (let i = 1; i < 400; i++) {
      const res = await remote(`/api/v1/tags/ratelimit${i}/follow`, tokens[i % 2]!);
      assert.equal(res.statusCode, 200, `follow ${i}: ${res.body}`);
    }
    const refused = await remote(`/api/v1/accounts/${target.account.id}/follow`, tokens[0]!);
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-limit"], "400");
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    // Nothing was followed by the refused request; other write endpoints still answer.
    const rel = await get(server.app, `/api/v1/accounts/relationships?id[]=${target.account.id}`, tokens[1]);
    assert.equal((rel.json() as Relationship[])[0]!.following, false);
    const unfollow = await remote(`/api/v1/tags/ratelimit0/unfollow`, tokens[1]!);
    assert.equal(unfollow.statusCode, 200);
    const local = await request(server.app, "POST", `/api/v1/accounts/${target.account.id}/follow`, {
      token: user.token,
    });
    assert.equal(local.statusCode, 200);
  });
});
