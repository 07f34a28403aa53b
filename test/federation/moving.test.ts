/**
 * Moving between two Rookery servers, both ways, through the settings pages: the new account
 * names the old one as an alias, the old one moves (password confirmed); its profile says where
 * it went, its followers on both servers follow the new account — local ones by the old
 * server's job, remote ones by their server on receiving the Move — and a move to an account
 * that does not name the old one is refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, Browser } from "../browser.ts";
import { createUser, eventually, request, type TestUser } from "../kit.ts";
import { resolveOn, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("moving between servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
  });
  after(() => peers?.close());

  /** `viewer` on `peer` follows `handle` (resolved there) and waits until it is accepted. */
  async function followOn(peer: Peer, viewer: TestUser, handle: string): Promise<string> {
    const id = (await resolveOn(peer, viewer, handle)).id;
    const res = await request(peer.server.app, "POST", `/api/v1/accounts/${id}/follow`, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    await eventually(() => following(peer, viewer, id), `${viewer.account.username} follows ${handle}`);
    return id;
  }

  async function following(peer: Peer, viewer: TestUser, id: string): Promise<boolean> {
    const res = await request(peer.server.app, "GET", `/api/v1/accounts/relationships?id[]=${id}`, {
      token: viewer.token,
    });
    return res.json()[0].following === true;
  }

  /** A browser signed in as `user` on `peer`. */
  async function signedIn(peer: Peer, user: TestUser): Promise<Browser> {
    const browser = new Browser(peer.server.app);
    assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
    return browser;
  }

  async function addAlias(peer: Peer, user: TestUser, handle: string): Promise<void> {
    const browser = await signedIn(peer, user);
    const page = await browser.get("/settings/aliases");
    assert.equal(page.statusCode, 200);
    const res = await browser.submit(page, "/settings/aliases", { acct: handle });
    assert.equal(res.statusCode, 200, alertOf(res.body) ?? res.body.slice(0, 300));
    assert.match(res.body, new RegExp(handle.replace(/[.:]/g, "\\$&")));
  }

  async function move(peer: Peer, user: TestUser, handle: string) {
    const browser = await signedIn(peer, user);
    const page = await browser.get("/settings/migration");
    return browser.submit(page, "/settings/migration", {
      acct: handle,
      current_password: "correct horse battery staple",
    });
  }

  test("moving away from Rookery: followers here and there follow the new account", async () => {
    const alice = await createUser(a.server.ctx, "alice");
    const dave = await createUser(a.server.ctx, "dave");
    const bob = await createUser(b.server.ctx, "bob");
    const carol = await createUser(b.server.ctx, "carol");
    await followOn(a, dave, "alice");
    const aliceOnB = await followOn(b, carol, `alice@${a.domain}`);

    // Not yet an alias: refused, nothing changes.
    const early = await move(a, alice, `bob@${b.domain}`);
    assert.equal(early.statusCode, 422);
    assert.match(alertOf(early.body) ?? "", /does not name this account among its aliases/);

    await addAlias(b, bob, `alice@${a.domain}`);
    const actor = await fetch(`${b.baseUrl}/users/bob`, { headers: { accept: "application/activity+json" } });
    const aliases = ((await actor.json()) as { alsoKnownAs?: string | string[] }).alsoKnownAs;
    assert.deepEqual([aliases].flat(), [`${a.baseUrl}/users/alice`]);

    const wrongPassword = await (async () => {
      const browser = await signedIn(a, alice);
      const page = await browser.get("/settings/migration");
      return browser.submit(page, "/settings/migration", { acct: `bob@${b.domain}`, current_password: "nope" });
    })();
    assert.equal(wrongPassword.statusCode, 422);
    assert.equal(alertOf(wrongPassword.body), "The current password is not correct.");

    const moved = await move(a, alice, `bob@${b.domain}`);
    assert.equal(moved.statusCode, 200, alertOf(moved.body) ?? "");
    assert.match(moved.body, /This account is moving to @bob@b\.test/);

    // The old account says where it went, here and on the new server's side.
    const entity = (await request(a.server.app, "GET", `/api/v1/accounts/${alice.account.id}`)).json();
    assert.equal(entity.moved?.acct, `bob@${b.domain}`);
    const bobOnA = entity.moved.id as string;
    // dave (same server as alice) follows bob now, and no longer alice.
    await eventually(() => following(a, dave, bobOnA), "dave follows bob");
    await eventually(async () => !(await following(a, dave, alice.account.id)), "dave no longer follows alice");
    // carol (bob's server) got the Move: she follows bob, not alice.
    await eventually(() => following(b, carol, bob.account.id), "carol follows bob");
    await eventually(async () => !(await following(b, carol, aliceOnB)), "carol no longer follows alice");
    const aliceSeenFromB = (await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}`)).json();
    assert.equal(aliceSeenFromB.moved?.acct, "bob");
    // The profile page points on.
    const page = await request(a.server.app, "GET", "/@alice", { headers: { accept: "text/html" } });
    assert.match(page.body, /has moved to <a href="[^"]*\/@bob"/);
  });

  test("moving to Rookery: a Move from another server to a local account that names it", async () => {
    const eve = await createUser(b.server.ctx, "eve");
    const frank = await createUser(a.server.ctx, "frank");
    const gina = await createUser(a.server.ctx, "gina");
    const eveOnA = await followOn(a, gina, `eve@${b.domain}`);
    await addAlias(a, frank, `eve@${b.domain}`);
    const moved = await move(b, eve, `frank@${a.domain}`);
    assert.equal(moved.statusCode, 200, alertOf(moved.body) ?? "");
    // gina's server (a) checks frank's aliases in its own database and moves her.
    await eventually(() => following(a, gina, frank.account.id), "gina follows frank");
    // The old follow ends right after the new one is made.
    await eventually(async () => !(await following(a, gina, eveOnA)), "gina no longer follows eve");
  });

  test("a Move to a local account that does not name the old one is refused", async () => {
    const hank = await createUser(b.server.ctx, "hank");
    const ivy = await createUser(a.server.ctx, "ivy");
    const jo = await createUser(a.server.ctx, "jo");
    const hankOnA = await followOn(a, jo, `hank@${b.domain}`);
    // ivy does not name hank: b refuses to start the move at all.
    const res = await move(b, hank, `ivy@${a.domain}`);
    assert.equal(res.statusCode, 422);
    assert.equal(await following(a, jo, hankOnA), true);
    assert.equal(await following(a, jo, ivy.account.id), false);
  });
});
