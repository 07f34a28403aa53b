/**
 * Admin domain blocks on federation traffic, between two Rookery servers on loopback with HTTPS:
 * `silence` keeps the other server's posts off the public timelines but in followers' homes;
 * `suspend` cuts the two apart — follows end, the domain's posts go, its new activities are
 * refused and nothing more is sent to it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createUser, eventually, postStatus, request, tokenFor, type TestUser } from "../kit.ts";
import { followEachOther, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("domain blocks between two servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let alice: TestUser;
  let bob: TestUser;
  let adminToken: string;

  const uris = async (peer: Peer, viewer: TestUser, path: string) =>
    ((await request(peer.server.app, "GET", path, { token: viewer.token })).json() as Array<{ uri: string }>).map(
      (s) => s.uri,
    );

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
    alice = await createUser(a.server.ctx, "alice");
    bob = await createUser(b.server.ctx, "bob");
    const admin = await createUser(b.server.ctx, "admin", { role: "Admin" });
    adminToken = await tokenFor(b.server.ctx, admin, "admin:read admin:write");
    await followEachOther(a, alice, b, bob);
  });
  after(() => peers?.close());

  test("silence: the domain's posts stay in followers' homes, off the public timelines", async () => {
    const block = await request(b.server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      json: { domain: "a.test", severity: "silence" },
    });
    assert.equal(block.statusCode, 200, block.body);
    const post = await postStatus(a.server, alice, { status: "Heard only by followers on b" });
    await eventually(async () => (await uris(b, bob, "/api/v1/timelines/home")).includes(post.uri), "in bob's home");
    assert.ok(!(await uris(b, bob, "/api/v1/timelines/public")).includes(post.uri));
    const lifted = await request(b.server.app, "DELETE", `/api/v1/admin/domain_blocks/${block.json().id}`, {
      token: adminToken,
    });
    assert.equal(lifted.statusCode, 200);
    const later = await postStatus(a.server, alice, { status: "Public again" });
    await eventually(async () => (await uris(b, bob, "/api/v1/timelines/public")).includes(later.uri), "public on b");
  });

  test("suspend: follows end, the domain's posts go, nothing crosses either way", async () => {
    const before = await postStatus(a.server, alice, { status: "Before the suspension" });
    await eventually(async () => (await uris(b, bob, "/api/v1/timelines/home")).includes(before.uri), "in bob's home");
    const block = await request(b.server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      json: { domain: "a.test", severity: "suspend" },
    });
    assert.equal(block.statusCode, 200, block.body);
    assert.ok(!(await uris(b, bob, "/api/v1/timelines/home")).includes(before.uri), "hidden at once");
    await eventually(async () => {
      const gone = await b.server.ctx.db.kysely
        .selectFrom("statuses")
        .select("id")
        .where("uri", "=", before.uri)
        .executeTakeFirst();
      const bobNow = (await request(b.server.app, "GET", `/api/v1/accounts/${bob.account.id}`)).json();
      return gone === undefined && bobNow.following_count === 0 && bobNow.followers_count === 0;
    }, "the purge removed the post and the follows on b");

    // a's new posts are refused at b's inbox; b's posts are not sent to a.
    const refused = await postStatus(a.server, alice, { status: "After the suspension" });
    const fromB = await postStatus(b.server, bob, { status: "Not for a" });
    const marker = await postStatus(a.server, alice, { status: "marker", visibility: "direct" });
    await eventually(
      async () => (await a.server.ctx.jobs.drain()) === 0 && (await b.server.ctx.jobs.drain()) === 0,
      "both queues are empty",
    );
    void marker;
    const stored = await b.server.ctx.db.kysely
      .selectFrom("statuses")
      .select("id")
      .where("uri", "=", refused.uri)
      .executeTakeFirst();
    assert.equal(stored, undefined);
    assert.ok(!(await uris(a, alice, "/api/v1/timelines/home")).includes(fromB.uri));
  });
});
