/**
 * Limited federation mode between three Rookery servers: `a.test` runs with
 * LIMITED_FEDERATION_MODE=true and federates only with the domains on its allow-list. While
 * `c.test` is allowed, follows and posts flow both ways; once it is taken off the list, its
 * accounts are removed from `a.test`, nothing is delivered to it, its deliveries and signed
 * fetches are refused, and `a.test` no longer resolves its accounts — while `b.test`, still
 * allowed, keeps federating. The mode also implies secure mode and a signed-in-only API.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { signRequest } from "@fedify/fedify";
import { allowDomain, unallowDomain } from "../../src/services/admin/domain_allows.ts";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createRemoteAccount,
  createUser,
  eventually,
  follow,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import {
  nextId,
  startServerBesideFakes,
  type FakeActor,
  type FakeRemote,
  type ServerBesideFakes,
} from "./fake_remote.ts";
import { followEachOther, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("limited federation mode", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let c: Peer;
  let amy: TestUser;
  let bea: TestUser;
  let carl: TestUser;

  const homeHas = async (peer: Peer, viewer: TestUser, uri: string) =>
    (
      (
        await request(peer.server.app, "GET", "/api/v1/timelines/home?limit=40", { token: viewer.token })
      ).json() as Array<{
        uri: string;
      }>
    ).some((s) => s.uri === uri);

  const accountsFrom = async (peer: Peer, domain: string) =>
    (
      await peer.server.ctx.db.kysely
        .selectFrom("accounts")
        .select("id")
        .where("domain", "=", domain)
        .where("suspended_at", "is", null)
        .execute()
    ).length;

  before(async () => {
    peers = await startPeers(["a.test", "b.test", "c.test"], (host) =>
      host === "a.test" ? { LIMITED_FEDERATION_MODE: "true" } : ({} as Record<string, string>),
    );
    [a, b, c] = peers.peers as [Peer, Peer, Peer];
    await allowDomain(a.server.ctx, "b.test");
    await allowDomain(a.server.ctx, "C.Test."); // stored normalized: c.test
    amy = await createUser(a.server.ctx, "amy");
    bea = await createUser(b.server.ctx, "bea");
    carl = await createUser(c.server.ctx, "carl");
  });
  after(() => peers?.close());

  test("the mode implies secure mode and an API for signed-in users only", async () => {
    const actor = await fetch(`${a.baseUrl}/users/amy`, { headers: { accept: "application/activity+json" } });
    assert.equal(actor.status, 401);
    const timeline = await request(a.server.app, "GET", "/api/v1/timelines/public");
    assert.equal(timeline.statusCode, 401);
    const page = await request(a.server.app, "GET", "/@amy", { headers: { accept: "text/html" } });
    assert.equal(page.statusCode, 302, "visitors are sent to sign in");
  });

  test("allowed servers federate both ways", async () => {
    await followEachOther(a, amy, b, bea);
    await followEachOther(a, amy, c, carl);
    const post = await postStatus(a.server, amy, { status: "to everyone allowed" });
    await eventually(() => homeHas(b, bea, post.uri), "amy's post on b.test");
    await eventually(() => homeHas(c, carl, post.uri), "amy's post on c.test");
    const reply = await postStatus(c.server, carl, { status: "from c.test" });
    await eventually(() => homeHas(a, amy, reply.uri), "carl's post on a.test");
  });

  test("a server taken off the list is cut off: its accounts go, nothing flows either way", async () => {
    assert.ok((await accountsFrom(a, c.domain)) > 0);
    const allow = await a.server.ctx.db.kysely
      .selectFrom("domain_allows")
      .select("id")
      .where("domain", "=", "c.test")
      .executeTakeFirstOrThrow();
    await unallowDomain(a.server.ctx, allow.id);
    await eventually(async () => (await accountsFrom(a, c.domain)) === 0, "c.test's accounts removed from a.test");

    // a.test delivers to b.test but not to c.test.
    const post = await postStatus(a.server, amy, { status: "only for b.test now" });
    await eventually(() => homeHas(b, bea, post.uri), "the post on b.test");
    await sleep(500);
    assert.equal(await homeHas(c, carl, post.uri), false, "nothing reaches c.test");

    // c.test's deliveries are refused (carl still follows amy there, so c.test sends to a.test).
    const fromC = await postStatus(c.server, carl, { status: "shouting into the void" });
    const fromB = await postStatus(b.server, bea, { status: "still welcome" });
    await eventually(() => homeHas(a, amy, fromB.uri), "bea's post on a.test");
    await sleep(500);
    assert.equal(await homeHas(a, amy, fromC.uri), false, "carl's post refused");

    // Neither side finds the other any more.
    const search = await request(a.server.app, "GET", `/api/v2/search?q=carl@${c.domain}&resolve=true&type=accounts`, {
      token: amy.token,
    });
    assert.equal(search.statusCode, 200);
    assert.deepEqual(search.json().accounts, []);
    const fromCSide = await request(
      c.server.app,
      "GET",
      `/api/v2/search?q=${encodeURIComponent(`${a.baseUrl}/users/amy`)}&resolve=true&type=accounts`,
      { token: carl.token },
    );
    assert.equal(fromCSide.statusCode, 200);
    // carl's server knew amy already; what it cannot do is fetch anything new from a.test.
    const unsignedFromC = await fetch(`${a.baseUrl}/users/amy/outbox`, {
      headers: { accept: "application/activity+json" },
    });
    assert.equal(unsignedFromC.status, 401);
  });
});

describe("limited federation mode at each door: inbox, signed fetches, deliveries", () => {
  let beside: ServerBesideFakes;
  let fake: FakeRemote;
  let server: TestServer;
  let amy: TestUser;
  let welcome: FakeActor;
  let stranger: FakeActor;

  before(async () => {
    beside = await startServerBesideFakes(["allowed.example", "other.example"], { LIMITED_FEDERATION_MODE: "true" });
    ({ server, fake } = beside);
    await allowDomain(server.ctx, "allowed.example");
    welcome = await fake.addActor({ name: "welcome", software: "mastodon", host: "allowed.example" });
    stranger = await fake.addActor({ name: "stranger", software: "mastodon", host: "other.example" });
    amy = await createUser(server.ctx, "amy");
  });

  after(() => beside?.close());

  const follow_ = (by: FakeActor) => ({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${by.id}#follows/${nextId()}`,
    type: "Follow",
    actor: by.id,
    object: `${server.config.baseUrl}/users/amy`,
  });

  test("an activity from a server not on the list is refused at the inbox", async () => {
    const refused = await fake.deliver(server, "/inbox", follow_(stranger), { actor: stranger });
    assert.equal(refused.status, 401);
    assert.match(refused.body, /not allowed/);
    assert.equal((await fake.deliver(server, "/inbox", follow_(welcome), { actor: welcome })).status, 202);
  });

  test("a signed fetch from a server not on the list is refused", async () => {
    const get = async (by: FakeActor) => {
      const req = await signRequest(
        new Request(`${server.config.baseUrl}/users/amy`, { headers: { accept: "application/activity+json" } }),
        by.privateKey,
        new URL(by.keyId),
      );
      const res = await fetch(req);
      return { status: res.status, body: await res.text() };
    };
    const refused = await get(stranger);
    assert.equal(refused.status, 401);
    assert.match(refused.body, /The signer's domain is not allowed/);
    assert.equal((await get(welcome)).status, 200);
  });

  test("nothing is delivered to followers on a server not on the list", async () => {
    // Followers from before the mode was turned on, one on each server.
    const port = fake.port;
    const there = await createRemoteAccount(server.ctx, "fan", `allowed.example:${port}`);
    const elsewhere = await createRemoteAccount(server.ctx, "fan", `other.example:${port}`);
    await follow(server, there, amy);
    await follow(server, elsewhere, amy);
    const post = await postStatus(server, amy, { status: "for the allowed only" });
    const creates = (host: string) =>
      fake
        .posted("Create")
        .filter((r) => r.host === host && (r.json.object as { id?: string } | undefined)?.id === post.uri);
    await eventually(() => creates("allowed.example").length > 0, "the Create on allowed.example");
    await sleep(500);
    assert.equal(creates("other.example").length, 0);
  });
});
