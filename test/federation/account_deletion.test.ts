/**
 * A local account deleted on one Rookery server: the other server, which knew it, gets the Delete
 * of its actor and removes it there too (suspended, its posts gone, its followers' follows ended).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Browser } from "../browser.ts";
import { createUser, eventually, postStatus, request } from "../kit.ts";
import { followEachOther, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("deleting an account, seen from another server", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
  });
  after(() => peers?.close());

  test("the other server hears the Delete of the actor and removes the account there", async () => {
    const alice = await createUser(a.server.ctx, "alice");
    const carol = await createUser(b.server.ctx, "carol");
    const { xOnY: aliceOnB } = await followEachOther(a, alice, b, carol);
    const post = await postStatus(a.server, alice, { status: "soon gone" });
    const onB = async () =>
      (
        (await request(b.server.app, "GET", "/api/v1/timelines/home", { token: carol.token })).json() as Array<{
          uri: string;
          id: string;
        }>
      ).find((s) => s.uri === post.uri);
    await eventually(async () => (await onB()) !== undefined, "alice's post on b.test");
    const copy = (await onB())!;

    const browser = new Browser(a.server.app);
    assert.equal((await browser.signIn(alice.user.email)).statusCode, 303);
    const page = await browser.get("/settings/delete");
    const done = await browser.submit(page, "/settings/delete", { current_password: "correct horse battery staple" });
    assert.equal(done.statusCode, 200);

    await eventually(
      async () => (await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}`)).json().suspended === true,
      "alice suspended on b.test",
    );
    await eventually(
      async () =>
        (await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: carol.token })).statusCode === 404,
      "alice's post gone from b.test",
    );
    // Her followers there no longer follow her (a suspended account has no relationships to show).
    await eventually(
      async () =>
        (await b.server.ctx.db.kysely
          .selectFrom("follows")
          .select("id")
          .where("target_account_id", "=", aliceOnB)
          .executeTakeFirst()) === undefined,
      "carol's follow of alice ended",
    );
  });
});
