/**
 * Secure mode (`AUTHORIZED_FETCH=true`): every ActivityPub GET but the instance actor's needs an
 * HTTP signature from a server that is not suspended here, and the owner's blocks decide what a
 * signer sees. Checked with signed GETs from fake remote actors, and between two Rookery servers
 * where only one runs in secure mode: the other still resolves, follows and hears from it, since
 * its own fetches are signed by its instance actor.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { signRequest } from "@fedify/fedify";
import {
  createRemoteAccount,
  createUser,
  eventually,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { startServerBesideFakes, type FakeActor, type FakeRemote, type ServerBesideFakes } from "./fake_remote.ts";
import { followEachOther, startPeers, type Peers } from "./two_servers.ts";

const ACTIVITY_JSON = "application/activity+json";

interface Fetched {
  status: number;
  json: Record<string, unknown> | null;
}

/** A GET with Accept: activity+json, signed by `by` (draft-cavage, as Mastodon signs) or not at all. */
async function activityGet(url: string, by?: FakeActor, keyId?: string): Promise<Fetched> {
  let req = new Request(url, { headers: { accept: ACTIVITY_JSON } });
  if (by) req = await signRequest(req, by.privateKey, new URL(keyId ?? by.keyId));
  const res = await fetch(req);
  const text = await res.text();
  let json: Record<string, unknown> | null = null;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: left null.
  }
  return { status: res.status, json };
}

/** The items of a collection's first page (fetched with the same signer). */
async function firstPageItems(collectionUrl: string, by: FakeActor): Promise<unknown[]> {
  const collection = await activityGet(collectionUrl, by);
  assert.equal(collection.status, 200, JSON.stringify(collection.json));
  const first = collection.json!.first;
  // A collection without pages holds its items itself.
  if (first === undefined) return (collection.json!.orderedItems ?? collection.json!.items ?? []) as unknown[];
  const page = typeof first === "string" ? (await activityGet(first, by)).json! : (first as Record<string, unknown>);
  return (page.orderedItems ?? page.items ?? []) as unknown[];
}

describe("secure mode: signed fetches from other servers", () => {
  let beside: ServerBesideFakes;
  let fake: FakeRemote;
  let server: TestServer;
  let base: string;
  let alice: TestUser;
  let friend: FakeActor;
  let foe: FakeActor;
  let outcast: FakeActor;
  let publicPost: { id: string; uri: string };

  before(async () => {
    beside = await startServerBesideFakes(["friend.example", "outcast.example"], { AUTHORIZED_FETCH: "true" });
    ({ server, fake } = beside);
    base = server.config.baseUrl;
    friend = await fake.addActor({ name: "friend", software: "mastodon", host: "friend.example", username: "friend" });
    foe = await fake.addActor({ name: "foe", software: "mastodon", host: "friend.example", username: "foe" });
    outcast = await fake.addActor({ name: "outcast", software: "mastodon", host: "outcast.example", username: "out" });
    alice = await createUser(server.ctx, "alice");
    publicPost = await postStatus(server, alice, { status: "for signed eyes only" });
    await request(server.app, "POST", `/api/v1/statuses/${publicPost.id}/pin`, { token: alice.token });
  });

  after(() => beside?.close());

  const documents = () => [
    `${base}/users/alice`,
    `${base}/users/alice/statuses/${publicPost.id}`,
    `${base}/users/alice/statuses/${publicPost.id}/replies`,
    `${base}/users/alice/outbox`,
    `${base}/users/alice/followers`,
    `${base}/users/alice/following`,
    `${base}/users/alice/collections/featured`,
    `${base}/users/alice/collections/tags`,
    `${base}/@alice`,
    `${base}/@alice/${publicPost.id}`,
  ];

  test("an unsigned GET of any document but the instance actor is 401", async () => {
    for (const url of documents()) {
      const res = await activityGet(url);
      assert.equal(res.status, 401, url);
      assert.deepEqual(res.json, { error: "Request not signed" }, url);
    }
    const instance = await activityGet(`${base}/actor`);
    assert.equal(instance.status, 200);
    assert.ok((instance.json!.publicKey as Record<string, unknown>).publicKeyPem);
  });

  test("a signed GET gets every document", async () => {
    for (const url of documents()) assert.equal((await activityGet(url, friend)).status, 200, url);
    const note = await activityGet(`${base}/users/alice/statuses/${publicPost.id}`, friend);
    assert.match(String(note.json!.content), /for signed eyes only/);
    const outbox = await firstPageItems(`${base}/users/alice/outbox`, friend);
    assert.equal(outbox.length, 1);
    assert.equal((await firstPageItems(`${base}/users/alice/collections/featured`, friend)).length, 1);
  });

  test("a signature that does not verify is refused like none", async () => {
    // friend's signature under foe's key id: the key does not verify it.
    const res = await activityGet(`${base}/users/alice`, friend, foe.keyId);
    assert.equal(res.status, 401);
    assert.equal(res.json!.error, "The request's signature could not be verified");
  });

  test("a server suspended here is refused even with a good signature", async () => {
    const admin = await createUser(server.ctx, "securityadmin", { role: "Admin" });
    const token = await tokenFor(server.ctx, admin, "admin:write:domain_blocks");
    const block = await request(server.app, "POST", "/api/v1/admin/domain_blocks", {
      token,
      json: { domain: "outcast.example", severity: "suspend" },
    });
    assert.equal(block.statusCode, 200, block.body);
    const res = await activityGet(`${base}/users/alice`, outcast);
    assert.equal(res.status, 401);
    assert.equal(res.json!.error, "The signer's domain is blocked");
    // Other servers are not affected.
    assert.equal((await activityGet(`${base}/users/alice`, friend)).status, 200);
  });

  test("an account the owner blocks gets the actor, but empty collections and none of its posts", async () => {
    const foeRow = await createRemoteAccount(server.ctx, "foe", "friend.example");
    await server.ctx.db.kysely.updateTable("accounts").set({ uri: foe.id }).where("id", "=", foeRow.id).execute();
    const res = await request(server.app, "POST", `/api/v1/accounts/${foeRow.id}/block`, { token: alice.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await activityGet(`${base}/users/alice`, foe)).status, 200);
    assert.equal((await activityGet(`${base}/users/alice/statuses/${publicPost.id}`, foe)).status, 404);
    assert.deepEqual(await firstPageItems(`${base}/users/alice/outbox`, foe), []);
    assert.deepEqual(await firstPageItems(`${base}/users/alice/collections/featured`, foe), []);
    // Its neighbour on the same server still sees everything.
    assert.equal((await firstPageItems(`${base}/users/alice/outbox`, friend)).length, 1);
  });

  test("a server the owner blocks sees none of the owner's posts", async () => {
    const bob = await createUser(server.ctx, "bob");
    const post = await postStatus(server, bob, { status: "not for friend.example" });
    const res = await request(server.app, "POST", "/api/v1/domain_blocks", {
      token: bob.token,
      form: { domain: "friend.example" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await activityGet(`${base}/users/bob/statuses/${post.id}`, friend)).status, 404);
    assert.deepEqual(await firstPageItems(`${base}/users/bob/outbox`, friend), []);
  });

  test("the pages and the API are not behind signatures", async () => {
    const page = await request(server.app, "GET", "/@alice", { headers: { accept: "text/html" } });
    assert.equal(page.statusCode, 200);
    const webfinger = await request(
      server.app,
      "GET",
      `/.well-known/webfinger?resource=acct:alice@${server.config.localDomain}`,
    );
    assert.equal(webfinger.statusCode, 200);
  });
});

describe("secure mode between two Rookery servers", () => {
  let peers: Peers;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"], (host) =>
      host === "b.test" ? { AUTHORIZED_FETCH: "true" } : ({} as Record<string, string>),
    );
  });
  after(() => peers?.close());

  test("a server in secure mode is still found, followed and heard from by one that signs its fetches", async () => {
    const [a, b] = peers.peers as [Peers["peers"][0], Peers["peers"][0]];
    const amy = await createUser(a.server.ctx, "amy");
    const bea = await createUser(b.server.ctx, "bea");
    // Resolving bea fetches her actor from b: signed by a's instance actor.
    const { yOnX: beaOnA } = await followEachOther(a, amy, b, bea);
    assert.ok(beaOnA);
    const unsigned = await activityGet(`${b.baseUrl}/users/bea`);
    assert.equal(unsigned.status, 401);
    const post = await postStatus(b.server, bea, { status: "hello from the secure side" });
    await eventually(async () => {
      const home = await request(a.server.app, "GET", "/api/v1/timelines/home", { token: amy.token });
      return (home.json() as Array<{ uri: string }>).some((s) => s.uri === post.uri);
    }, "bea's post in amy's home timeline");
    // A post found by URL is fetched signed too.
    const search = await request(
      a.server.app,
      "GET",
      `/api/v2/search?q=${encodeURIComponent(post.uri)}&resolve=true&type=statuses`,
      { token: amy.token },
    );
    assert.equal(search.statusCode, 200);
    assert.equal((search.json().statuses as unknown[]).length, 1);
  });
});
