/**
 * Two Rookery servers on loopback with HTTPS, following each other the way Mastodon servers do:
 * a handle found through WebFinger, a Follow of an unlocked account accepted at once, of a locked
 * one accepted or rejected by its owner, an unfollow undone on the other side, and a follower
 * removed or blocked rejected there. Both sides' counts and relationships are checked.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createUser, eventually, request, type TestUser } from "../kit.ts";
import { resolveOn, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("follows between two servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
    alice = await createUser(a.server.ctx, "alice");
    bob = await createUser(b.server.ctx, "bob");
    carol = await createUser(b.server.ctx, "carol", { locked: true });
  });
  after(() => peers?.close());

  async function relationship(peer: Peer, viewer: TestUser, id: string) {
    const res = await request(peer.server.app, "GET", `/api/v1/accounts/relationships?id[]=${id}`, {
      token: viewer.token,
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json()[0] as { following: boolean; requested: boolean; followed_by: boolean; blocked_by: boolean };
  }

  async function counts(peer: Peer, id: string) {
    const res = await request(peer.server.app, "GET", `/api/v1/accounts/${id}`);
    return res.json() as { followers_count: number; following_count: number };
  }

  test("a handle on the other server is found through WebFinger, by search and by lookup", async () => {
    const found = await resolveOn(a, alice, `@bob@${b.domain}`);
    assert.equal(found.acct, `bob@${b.domain}`);
    const lookup = await request(a.server.app, "GET", `/api/v1/accounts/lookup?acct=carol@${b.domain}`);
    assert.equal(lookup.statusCode, 200, lookup.body);
    assert.equal(lookup.json().acct, `carol@${b.domain}`);
    assert.equal(lookup.json().locked, true);
    const missing = await request(a.server.app, "GET", `/api/v1/accounts/lookup?acct=nobody@${b.domain}`);
    assert.equal(missing.statusCode, 404);
  });

  test("following an unlocked account: requested at first, then accepted by its server; unfollow is undone there", async () => {
    const bobOnA = await resolveOn(a, alice, `bob@${b.domain}`);
    const res = await request(a.server.app, "POST", `/api/v1/accounts/${bobOnA.id}/follow`, { token: alice.token });
    assert.equal(res.statusCode, 200, res.body);
    await eventually(async () => (await relationship(a, alice, bobOnA.id)).following, "alice follows bob on a");
    const aliceOnB = await resolveOn(b, bob, `alice@${a.domain}`);
    assert.equal((await relationship(b, bob, aliceOnB.id)).followed_by, true);
    assert.equal((await counts(b, bob.account.id)).followers_count, 1);
    assert.equal((await counts(a, alice.account.id)).following_count, 1);

    const unfollowed = await request(a.server.app, "POST", `/api/v1/accounts/${bobOnA.id}/unfollow`, {
      token: alice.token,
    });
    assert.equal(unfollowed.statusCode, 200);
    await eventually(async () => !(await relationship(b, bob, aliceOnB.id)).followed_by, "the follow is undone on b");
    assert.equal((await counts(b, bob.account.id)).followers_count, 0);
  });

  test("following a locked account waits for its owner: authorized, it becomes a follow on both sides", async () => {
    const carolOnA = await resolveOn(a, alice, `carol@${b.domain}`);
    await request(a.server.app, "POST", `/api/v1/accounts/${carolOnA.id}/follow`, { token: alice.token });
    assert.equal((await relationship(a, alice, carolOnA.id)).requested, true);
    let requests: Array<{ id: string; acct: string }> = [];
    await eventually(async () => {
      const res = await request(b.server.app, "GET", "/api/v1/follow_requests", { token: carol.token });
      requests = res.json();
      return requests.length === 1;
    }, "carol sees the request");
    assert.equal(requests[0]!.acct, `alice@${a.domain}`);
    const authorized = await request(b.server.app, "POST", `/api/v1/follow_requests/${requests[0]!.id}/authorize`, {
      token: carol.token,
    });
    assert.equal(authorized.statusCode, 200, authorized.body);
    await eventually(async () => (await relationship(a, alice, carolOnA.id)).following, "alice follows carol on a");
    assert.equal((await relationship(a, alice, carolOnA.id)).requested, false);

    // Carol removes alice from her followers: a's side hears a Reject.
    const removed = await request(b.server.app, "POST", `/api/v1/accounts/${requests[0]!.id}/remove_from_followers`, {
      token: carol.token,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    await eventually(async () => !(await relationship(a, alice, carolOnA.id)).following, "a hears of the removal");
  });

  test("a request the owner rejects ends on both sides", async () => {
    const carolOnA = await resolveOn(a, alice, `carol@${b.domain}`);
    await request(a.server.app, "POST", `/api/v1/accounts/${carolOnA.id}/follow`, { token: alice.token });
    let requests: Array<{ id: string }> = [];
    await eventually(async () => {
      requests = (await request(b.server.app, "GET", "/api/v1/follow_requests", { token: carol.token })).json();
      return requests.length === 1;
    }, "carol sees the request");
    const rejected = await request(b.server.app, "POST", `/api/v1/follow_requests/${requests[0]!.id}/reject`, {
      token: carol.token,
    });
    assert.equal(rejected.statusCode, 200);
    await eventually(async () => !(await relationship(a, alice, carolOnA.id)).requested, "a hears of the rejection");
    assert.equal((await relationship(a, alice, carolOnA.id)).following, false);
  });

  test("a block ends the follow on the blocked side", async () => {
    const aliceOnB = await resolveOn(b, bob, `alice@${a.domain}`);
    const bobOnA = await resolveOn(a, alice, `bob@${b.domain}`);
    await request(a.server.app, "POST", `/api/v1/accounts/${bobOnA.id}/follow`, { token: alice.token });
    await eventually(async () => (await relationship(b, bob, aliceOnB.id)).followed_by, "alice follows bob again");
    const blocked = await request(b.server.app, "POST", `/api/v1/accounts/${aliceOnB.id}/block`, { token: bob.token });
    assert.equal(blocked.statusCode, 200);
    await eventually(async () => !(await relationship(a, alice, bobOnA.id)).following, "a hears the follow ended");
    await eventually(async () => (await relationship(a, alice, bobOnA.id)).blocked_by, "a knows alice is blocked");
    const refollow = await request(a.server.app, "POST", `/api/v1/accounts/${bobOnA.id}/follow`, {
      token: alice.token,
    });
    assert.equal(refollow.statusCode, 403, "a blocked account cannot follow again");
    const unblocked = await request(b.server.app, "POST", `/api/v1/accounts/${aliceOnB.id}/unblock`, {
      token: bob.token,
    });
    assert.equal(unblocked.statusCode, 200);
    await eventually(async () => !(await relationship(a, alice, bobOnA.id)).blocked_by, "a hears of the unblock");
  });
});
