/**
 * Moving one's data between two Rookery servers the way Mastodon users do: every export of a
 * user on a.test (follows, lists, blocks, mutes, domain blocks, bookmarks) imported by a user on
 * b.test through its settings pages. Accounts and posts of b.test in the files are found there as
 * local ones; those of a.test are looked up over the network in the background (WebFinger, the
 * actor, the post) — follows then go out and are accepted — and no row fails.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, Browser, decodeEntities, findForm, locationOf } from "../browser.ts";
import { createUser, eventually, postStatus, request, type TestUser } from "../kit.ts";
import { resolveOn, startPeers, type Peer, type Peers } from "./two_servers.ts";

describe("export on one server, import on another", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
  });
  after(() => peers?.close());

  async function signedIn(peer: Peer, user: TestUser): Promise<Browser> {
    const browser = new Browser(peer.server.app);
    assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
    return browser;
  }

  async function api(peer: Peer, user: TestUser, method: "GET" | "POST", path: string, json?: unknown) {
    const res = await request(peer.server.app, method, path, { token: user.token, json });
    assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    return res.json();
  }

  async function relationship(peer: Peer, user: TestUser, id: string) {
    return (await api(peer, user, "GET", `/api/v1/accounts/relationships?id[]=${id}`))[0] as {
      following: boolean;
      requested: boolean;
      showing_reblogs: boolean;
      blocking: boolean;
      muting: boolean;
      muting_notifications: boolean;
    };
  }

  /** Uploads `file` on `peer` and waits until the import is finished; returns its page. */
  async function importOn(peer: Peer, browser: Browser, type: string, file: string): Promise<string> {
    const form = findForm((await browser.get("/settings/imports")).body, "/settings/imports");
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await request(peer.server.app, "POST", "/settings/imports", {
      headers: { cookie, accept: "text/html" },
      parts: [
        { name: "authenticity_token", value: form.fields.authenticity_token! },
        { name: "form_import[type]", value: type },
        { name: "form_import[mode]", value: "merge" },
        { name: "form_import[data]", value: file, filename: `${type}.csv`, type: "text/csv" },
      ],
    });
    assert.equal(res.statusCode, 303, alertOf(res.body) ?? res.body.slice(0, 500));
    const path = locationOf(res).pathname;
    let page = "";
    await eventually(
      async () => {
        page = decodeEntities((await browser.get(path)).body);
        return /<td>State<\/td><td>Finished/.test(page);
      },
      `the ${type} import on ${peer.domain}`,
      30_000,
    );
    return page;
  }

  test("every kind of export from a.test imports on b.test", async () => {
    const alice = await createUser(a.server.ctx, "alice");
    const carol = await createUser(a.server.ctx, "carol");
    const dave = await createUser(a.server.ctx, "dave");
    const bob = await createUser(b.server.ctx, "bob");
    const mallory = await createUser(b.server.ctx, "mallory");
    const newAlice = await createUser(b.server.ctx, "newalice");

    // alice's life on a.test, with accounts and posts of both servers.
    const bobOnA = (await resolveOn(a, alice, `bob@${b.domain}`)).id;
    const malloryOnA = (await resolveOn(a, alice, `mallory@${b.domain}`)).id;
    await api(a, alice, "POST", `/api/v1/accounts/${bobOnA}/follow`, { reblogs: false });
    await eventually(async () => (await relationship(a, alice, bobOnA)).following, "alice follows bob");
    await api(a, alice, "POST", `/api/v1/accounts/${carol.account.id}/follow`);
    await api(a, alice, "POST", `/api/v1/accounts/${malloryOnA}/block`);
    await api(a, alice, "POST", `/api/v1/accounts/${dave.account.id}/mute`, { notifications: false });
    await api(a, alice, "POST", "/api/v1/domain_blocks", { domain: "spam.example" });
    const list = await api(a, alice, "POST", "/api/v1/lists", { title: "Friends" });
    await api(a, alice, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: [bobOnA, carol.account.id] });
    const bobsPost = await postStatus(b.server, bob, { status: "hello from b" });
    const found = await api(
      a,
      alice,
      "GET",
      `/api/v2/search?q=${encodeURIComponent(bobsPost.uri)}&resolve=true&type=statuses`,
    );
    assert.equal(found.statuses.length, 1);
    await api(a, alice, "POST", `/api/v1/statuses/${found.statuses[0].id}/bookmark`);
    const ownPost = await postStatus(a.server, alice, { status: "hello from a" });
    await api(a, alice, "POST", `/api/v1/statuses/${ownPost.id}/bookmark`);

    const from = await signedIn(a, alice);
    const file = async (kind: string) => {
      const res = await from.get(`/settings/exports/${kind}.csv`);
      assert.equal(res.statusCode, 200);
      return res.body;
    };
    const follows = await file("follows");
    assert.equal(
      follows,
      "Account address,Show boosts,Notify on new posts,Languages\n" +
        `carol@${a.domain},true,false,\nbob@${b.domain},false,false,\n`,
    );

    const to = await signedIn(b, newAlice);
    for (const [kind, type] of [
      ["follows", "following"],
      ["blocks", "blocking"],
      ["mutes", "muting"],
      ["domain_blocks", "domain_blocking"],
      ["lists", "lists"],
      ["bookmarks", "bookmarks"],
    ]) {
      const page = await importOn(b, to, type!, await file(kind!));
      assert.match(page, /<td>Failed<\/td><td>0<\/td>/, `${kind}: ${page}`);
    }

    // What b.test knows as its own is found at once; a.test's accounts and posts were fetched.
    const toBob = await relationship(b, newAlice, bob.account.id);
    assert.equal(toBob.following, true);
    assert.equal(toBob.showing_reblogs, false);
    assert.equal((await relationship(b, newAlice, mallory.account.id)).blocking, true);
    const carolOnB = (await resolveOn(b, newAlice, `carol@${a.domain}`)).id;
    await eventually(async () => (await relationship(b, newAlice, carolOnB)).following, "a.test accepts the follow");
    const daveOnB = (await resolveOn(b, newAlice, `dave@${a.domain}`)).id;
    const toDave = await relationship(b, newAlice, daveOnB);
    assert.equal(toDave.muting, true);
    assert.equal(toDave.muting_notifications, false);
    assert.deepEqual(await api(b, newAlice, "GET", "/api/v1/domain_blocks"), ["spam.example"]);
    const lists = (await api(b, newAlice, "GET", "/api/v1/lists")) as Array<{ id: string; title: string }>;
    assert.deepEqual(
      lists.map((l) => l.title),
      ["Friends"],
    );
    const members = (await api(b, newAlice, "GET", `/api/v1/lists/${lists[0]!.id}/accounts`)) as Array<{ id: string }>;
    assert.deepEqual(members.map((m) => m.id).sort(), [bob.account.id, carolOnB].sort());
    const bookmarks = (await api(b, newAlice, "GET", "/api/v1/bookmarks")) as Array<{ uri: string }>;
    assert.deepEqual(bookmarks.map((s) => s.uri).sort(), [bobsPost.uri, ownPost.uri].sort());

    // And back: b.test's export of the follows names both servers' accounts by their full address.
    const back = (await to.get("/settings/exports/follows.csv")).body.split("\n").slice(1, -1).sort();
    assert.deepEqual(back, [`bob@${b.domain},false,false,`, `carol@${a.domain},true,false,`].sort());
  });
});
