/**
 * The remote-follow page, `/authorize_interaction?uri=…` (where WebFinger's subscribe template
 * leads): signed out it sends the browser to sign in and back; signed in it shows the account a
 * handle or link names (a post's link: the post and its author) with a Follow form that follows
 * through the API's follow service — a locked account gets a request — and says instead when the
 * viewer already follows, asked, is the account, or a block stands between them. The form needs
 * its CSRF token. Bad addresses (nothing, garbage, private addresses, unknown hosts and users,
 * posts the viewer may not see) are 404 pages that say why. On two servers, the Follow arrives at
 * the other side.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { alertOf, Browser, decodeEntities, findForm, findForms, locationOf } from "../browser.ts";
import { installOutboundAgent } from "../../src/services/http/outbound.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  eventually,
  postStatus,
  request,
  standardData,
  type StandardData,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { startPeers, type Peer, type Peers } from "../federation/two_servers.ts";

const PATH = "/authorize_interaction";
const EXPIRED_FORM = "This form has expired. Please try again.";
const CANNOT_FOLLOW = "You cannot follow this account.";
const NOTHING_GIVEN = "Enter the handle (like user@example.com) or the link of an account or a post.";
const NOT_AN_ADDRESS = "This is neither a handle (like user@example.com) nor a link to an account or a post.";
const NOTHING_FOUND =
  "No account or post could be found at this address. Check it for typos; the server it names may also be unreachable.";

const pageOf = (uri: string) => `${PATH}?uri=${encodeURIComponent(uri)}`;

function assertPage(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body.slice(0, 3000));
  assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
  assert.equal(res.headers["cache-control"], "no-store");
  assert.match(String(res.headers["content-security-policy"]), /default-src 'none'/);
  assert.ok(res.body.startsWith("<!DOCTYPE html>"));
  assert.doesNotMatch(res.body, /<script/i);
}

/** The text of the page's notice (`role="status"`), if any. */
function noticeOf(html: string): string | undefined {
  const match = /<div class="flash notice" role="status">([\s\S]*?)<\/div>/.exec(html);
  return match ? decodeEntities(match[1]!.replace(/<[^>]*>/g, "")).trim() : undefined;
}

/** The page's text without tags, whitespace collapsed. */
function textOf(html: string): string {
  return decodeEntities(html.replace(/<style>[\s\S]*?<\/style>/, "").replace(/<[^>]*>/g, " "))
    .replace(/\s+/g, " ")
    .trim();
}

function titleOf(html: string): string {
  return decodeEntities(/<h1>([\s\S]*?)<\/h1>/.exec(html)![1]!);
}

const isFollow = (form: { action: string; method: string }) => form.action === PATH && form.method === "post";

/** The Follow form of a page, if it has one. */
function followFormOf(html: string) {
  return findForms(html).find(isFollow);
}

async function relationship(server: TestServer, viewer: TestUser, id: string) {
  const res = await request(server.app, "GET", `/api/v1/accounts/relationships?id[]=${id}`, { token: viewer.token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json()[0] as { following: boolean; requested: boolean; blocking: boolean };
}

async function signedIn(server: TestServer, user: TestUser): Promise<Browser> {
  const browser = new Browser(server.app);
  assert.equal((await browser.signIn(`${user.username}@rookery.test`)).statusCode, 303);
  return browser;
}

describe("the remote-follow page on one server", () => {
  let server: TestServer;
  let data: StandardData;
  before(async () => {
    server = await createTestServer();
    data = await standardData(server);
    // As in production: every fetch of the process goes through the outbound rules (no private addresses).
    installOutboundAgent(server.config);
  });
  after(() => server.close());

  test("signed out, it sends the browser to sign in and back to the same address; a POST follows nobody", async () => {
    const browser = new Browser(server.app);
    const address = pageOf("acct:alice@rookery.test");
    const res = await browser.get(address);
    assert.equal(res.statusCode, 303);
    const signIn = locationOf(res);
    assert.equal(signIn.pathname, "/auth/sign_in");
    assert.equal(signIn.searchParams.get("return_to"), address);

    const posted = await browser.post(PATH, { account_id: data.alice.account.id, uri: "alice" });
    assert.equal(posted.statusCode, 303);
    assert.equal(locationOf(posted).searchParams.get("return_to"), pageOf("alice"));
    assert.equal((await relationship(server, data.admin, data.alice.account.id)).following, false);

    const back = await browser.signIn("admin@rookery.test", undefined, address);
    assert.equal(back.statusCode, 303);
    assert.equal(back.headers.location, address);
    const page = await browser.follow(back);
    assertPage(page);
    assert.equal(titleOf(page.body), "Follow @alice@rookery.test");
  });

  test("an unlocked account: the page shows it, Follow follows it as the API would", async () => {
    const dave = await createUser(server.ctx, "dave");
    const browser = await signedIn(server, dave);
    const shown = (await request(server.app, "GET", `/api/v1/accounts/${data.alice.account.id}`)).json();
    const page = await browser.get(pageOf("acct:alice@rookery.test"));
    assertPage(page);
    assert.equal(titleOf(page.body), "Follow @alice@rookery.test");
    assert.ok(
      textOf(page.body).includes(
        `alice @alice@rookery.test ${shown.statuses_count} posts · ${shown.following_count} following · ${shown.followers_count} followers`,
      ),
      textOf(page.body),
    );
    const form = followFormOf(page.body);
    assert.ok(form, "a Follow form");
    assert.equal(form.fields.account_id, data.alice.account.id);
    assert.ok(form.fields.authenticity_token, "with its CSRF token");
    assert.doesNotMatch(page.body, /approves each follower/);

    const done = await browser.submit(page, isFollow);
    assertPage(done);
    assert.equal(noticeOf(done.body), "You are now following @alice@rookery.test.");
    assert.equal((await relationship(server, dave, data.alice.account.id)).following, true);
    const alice = (await request(server.app, "GET", `/api/v1/accounts/${data.alice.account.id}`)).json();
    assert.equal(alice.followers_count, shown.followers_count + 1);

    const again = await browser.get(pageOf("alice@rookery.test"));
    assertPage(again);
    assert.equal(noticeOf(again.body), "You are following @alice@rookery.test.");
    assert.equal(followFormOf(again.body), undefined, "no Follow button");
  });

  test("a locked account: Follow makes a request its owner sees", async () => {
    const erin = await createUser(server.ctx, "erin");
    const browser = await signedIn(server, erin);
    const page = await browser.get(pageOf("@lucy@rookery.test"));
    assertPage(page);
    assert.match(textOf(page.body), /@lucy@rookery\.test approves each follower/);
    const done = await browser.submit(page, isFollow);
    assertPage(done);
    assert.equal(
      noticeOf(done.body),
      "Your follow request has been sent: you will follow @lucy@rookery.test once they approve it.",
    );
    const rel = await relationship(server, erin, data.lucy.account.id);
    assert.equal(rel.following, false);
    assert.equal(rel.requested, true);
    const requests = await request(server.app, "GET", "/api/v1/follow_requests", { token: data.lucy.token });
    assert.ok((requests.json() as Array<{ id: string }>).some((a) => a.id === erin.account.id));
  });

  test("a follow or a request that exists already is shown as such, without a Follow button", async () => {
    const browser = await signedIn(server, data.bob);
    const following = await browser.get(pageOf("alice"));
    assertPage(following);
    assert.equal(noticeOf(following.body), "You are following @alice@rookery.test.");
    assert.equal(followFormOf(following.body), undefined);
    const asked = await browser.get(pageOf("lucy@ROOKERY.TEST"));
    assertPage(asked);
    assert.equal(
      noticeOf(asked.body),
      "You asked to follow @lucy@rookery.test; the request is waiting for their approval.",
    );
    assert.equal(followFormOf(asked.body), undefined);
  });

  test("a Follow form without its CSRF token, or with another browser's, is refused and follows nobody", async () => {
    const frank = await createUser(server.ctx, "frank");
    const browser = await signedIn(server, frank);
    const page = await browser.get(pageOf("alice@rookery.test"));
    const missing = await browser.submit(page, isFollow, {}, ["authenticity_token"]);
    assertPage(missing, 422);
    assert.equal(alertOf(missing.body), EXPIRED_FORM);
    const other = await browser.submit(page, isFollow, { authenticity_token: "x".repeat(43) });
    assertPage(other, 422);
    assert.equal(alertOf(other.body), EXPIRED_FORM);
    assert.equal((await relationship(server, frank, data.alice.account.id)).following, false);
  });

  test("a post's link shows the post and its author, with a Follow button for the author", async () => {
    const grace = await createUser(server.ctx, "grace");
    const browser = await signedIn(server, grace);
    const { alicePublic } = data.statuses;
    for (const link of [alicePublic.url!, alicePublic.uri]) {
      const page = await browser.get(pageOf(link));
      assertPage(page);
      assert.equal(titleOf(page.body), "Post by @alice@rookery.test");
      assert.match(textOf(page.body), /Hello from alice #introduction/);
      assert.equal(followFormOf(page.body)?.fields.account_id, data.alice.account.id);
      assert.match(followFormOf(page.body)!.html, /<button type="submit">Follow @alice@rookery\.test<\/button>/);
    }
    const warned = await postStatus(server, data.alice, {
      status: "Spoilers <b>here</b>",
      spoiler_text: "Film ending",
    });
    const page = await browser.get(pageOf(warned.url!));
    assertPage(page);
    assert.match(
      page.body,
      /<details><summary>Film ending<\/summary><p>Spoilers &lt;b&gt;here&lt;\/b&gt;<\/p><\/details>/,
    );
  });

  test("a post the viewer may not see is not found; its author's followers see it", async () => {
    const { alicePrivate, aliceDirect } = data.statuses;
    const stranger = await signedIn(server, data.carol);
    for (const post of [alicePrivate, aliceDirect]) {
      const page = await stranger.get(pageOf(post.url!));
      assertPage(page, 404);
      assert.equal(alertOf(page.body), NOTHING_FOUND);
      assert.doesNotMatch(page.body, /For my followers only|a secret between us/);
    }
    const follower = await signedIn(server, data.bob);
    const page = await follower.get(pageOf(alicePrivate.url!));
    assertPage(page);
    assert.match(textOf(page.body), /For my followers only/);
  });

  test("bad addresses are 404 pages that say why and offer to look again; nothing is followed", async () => {
    const unconfirmed = await createUser(server.ctx, "unconfirmedone", { confirmed: false });
    const suspended = await createRemoteAccount(server.ctx, "gone", "remote.example");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.id)
      .execute();
    const browser = await signedIn(server, data.admin);
    const cases: Array<[string | undefined, string]> = [
      [undefined, NOTHING_GIVEN],
      ["", NOTHING_GIVEN],
      ["   ", NOTHING_GIVEN],
      ["not a handle", NOT_AN_ADDRESS],
      ["https://", NOT_AN_ADDRESS],
      ["javascript:alert(1)", NOT_AN_ADDRESS],
      ["ftp://remote.example/users/rita", NOT_AN_ADDRESS],
      ["a@b@c", NOT_AN_ADDRESS],
      [`https://remote.example/${"a".repeat(3000)}`, NOT_AN_ADDRESS],
      ["nobody", NOTHING_FOUND],
      ["nobody@rookery.test", NOTHING_FOUND],
      [`${unconfirmed.username}@rookery.test`, NOTHING_FOUND],
      ["gone@remote.example", NOTHING_FOUND],
      ["https://rookery.test/@nobody", NOTHING_FOUND],
      ["https://rookery.test/@alice/999999999", NOTHING_FOUND],
      ["https://rookery.test/@%E0", NOTHING_FOUND],
      ["https://rookery.test/about", NOTHING_FOUND],
      ["someone@127.0.0.1", NOTHING_FOUND],
      ["someone@localhost", NOTHING_FOUND],
      ["someone@10.0.0.1", NOTHING_FOUND],
      ["https://10.0.0.1/users/someone", NOTHING_FOUND],
      ["https://[::1]/@someone", NOTHING_FOUND],
      ["https://localhost/users/someone", NOTHING_FOUND],
      ["nobody@nowhere.invalid", NOTHING_FOUND],
      ["https://nowhere.invalid/@nobody", NOTHING_FOUND],
    ];
    for (const [uri, message] of cases) {
      const page = await browser.get(uri === undefined ? PATH : pageOf(uri));
      assertPage(page, 404);
      assert.equal(alertOf(page.body), message, String(uri));
      const again = findForm(page.body, (f) => f.action === PATH && f.method === "get");
      assert.equal(again.fields.uri ?? "", uri ?? "", "the address is kept to correct it");
      assert.equal(followFormOf(page.body), undefined);
    }
    const following = await request(server.app, "GET", `/api/v1/accounts/${data.admin.account.id}`);
    assert.equal(following.json().following_count, 0);
  });

  test("a Follow of an account that is not there is a 404 page", async () => {
    const browser = await signedIn(server, data.admin);
    const page = await browser.get(pageOf("alice"));
    for (const id of ["999999999", "nonsense", "", "9223372036854775808", "1e308", " 12 "]) {
      const res = await browser.submit(page, isFollow, { account_id: id });
      assertPage(res, 404);
      assert.equal(alertOf(res.body), NOTHING_FOUND);
    }
    const token = findForm(page.body, isFollow).fields.authenticity_token!;
    for (const accountId of [{}, [], 1e308, null, true]) {
      const res = await request(server.app, "POST", PATH, {
        headers: { accept: "text/html", cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
        json: { authenticity_token: token, account_id: accountId },
      });
      assertPage(res, 404);
    }
    assert.equal((await relationship(server, data.admin, data.alice.account.id)).following, false);
    const repeated = await browser.get(`${PATH}?uri[]=alice&uri[]=bob`);
    assertPage(repeated, 404);
    assert.equal(alertOf(repeated.body), NOTHING_GIVEN);
  });

  test("one's own account, or one blocked either way, has no Follow button; a forced Follow is refused", async () => {
    const carol = await signedIn(server, data.carol);
    const own = await carol.get(pageOf("carol@rookery.test"));
    assertPage(own);
    assert.match(textOf(own.body), /This is your own account\./);
    assert.equal(followFormOf(own.body), undefined);

    const blocking = await carol.get(pageOf("rita@remote.example"));
    assertPage(blocking);
    assert.match(textOf(blocking.body), /You are blocking @rita@remote\.example\./);
    assert.equal(followFormOf(blocking.body), undefined);

    // A form made for another account, sent with carol's own id and then rita's.
    const page = await carol.get(pageOf("alice"));
    const self = await carol.submit(page, isFollow, { account_id: data.carol.account.id });
    assertPage(self, 403);
    assert.equal(alertOf(self.body), CANNOT_FOLLOW);
    assert.match(textOf(self.body), /This is your own account\./);
    const blocked = await carol.submit(page, isFollow, { account_id: data.rita.id });
    assertPage(blocked, 403);
    assert.equal(alertOf(blocked.body), CANNOT_FOLLOW);
    assert.equal((await relationship(server, data.carol, data.rita.id)).following, false);

    // Blocked by the account.
    const hank = await createUser(server.ctx, "hank");
    await request(server.app, "POST", `/api/v1/accounts/${data.admin.account.id}/block`, { token: hank.token });
    const admin = await signedIn(server, data.admin);
    const blockedBy = await admin.get(pageOf("hank"));
    assertPage(blockedBy);
    assert.match(textOf(blockedBy.body), /You cannot follow @hank@rookery\.test\./);
    assert.equal(followFormOf(blockedBy.body), undefined);
  });

  test("a moved account points at its new one; a forced Follow is refused", async () => {
    const old = await createUser(server.ctx, "oldalice");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ moved_to_account_id: data.alice.account.id })
      .where("id", "=", old.account.id)
      .execute();
    const browser = await signedIn(server, data.admin);
    const page = await browser.get(pageOf("oldalice"));
    assertPage(page);
    assert.match(textOf(page.body), /@oldalice@rookery\.test has moved to @alice@rookery\.test ?\./);
    assert.ok(page.body.includes(`href="${pageOf(data.alice.account.uri).replace(/&/g, "&amp;")}"`));
    assert.equal(followFormOf(page.body), undefined);
    const form = await browser.get(pageOf("alice"));
    const forced = await browser.submit(form, isFollow, { account_id: old.account.id });
    assertPage(forced, 403);
    assert.equal(alertOf(forced.body), CANNOT_FOLLOW);
    assert.equal((await relationship(server, data.admin, old.account.id)).following, false);
  });

  test("a known remote account by handle or profile link; Mastodon's `acct` parameter too", async () => {
    const browser = await signedIn(server, data.bob);
    for (const address of [
      pageOf("rita@remote.example"),
      pageOf("https://remote.example/@rita"),
      pageOf("https://remote.example/users/rita"),
      `${PATH}?acct=${encodeURIComponent("acct:rita@remote.example")}`,
    ]) {
      const page = await browser.get(address);
      assertPage(page);
      assert.equal(titleOf(page.body), "Follow @rita@remote.example", address);
      assert.ok(page.body.includes('href="https://remote.example/@rita"'), "a link to the profile on its server");
      assert.equal(followFormOf(page.body)?.fields.account_id, data.rita.id);
    }
  });

  test("what other servers say is escaped", async () => {
    const mallory = await createRemoteAccount(server.ctx, "mallory", "remote.example");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ display_name: `<script>alert("x")</script>`, note: "<p>Bio &lt;img src=x onerror=alert(1)&gt;</p>" })
      .where("id", "=", mallory.id)
      .execute();
    const browser = await signedIn(server, data.bob);
    const page = await browser.get(pageOf("mallory@remote.example"));
    assertPage(page);
    assert.ok(page.body.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
    assert.ok(page.body.includes("Bio &lt;img src=x onerror=alert(1)&gt;"));
    assert.doesNotMatch(page.body, /<img src=x/);
  });

  test("a user who has not confirmed their e-mail address is asked to first", async () => {
    const newbie = await createUser(server.ctx, "newbie", { confirmed: false });
    const browser = await signedIn(server, newbie);
    const page = await browser.get(pageOf("alice"));
    assertPage(page, 403);
    assert.equal(alertOf(page.body), "Confirm your e-mail address first: follow the link we sent you, then try again.");
    const token = decodeURIComponent(browser.cookies.get("_rookery_csrf")!);
    const res = await browser.post(PATH, { account_id: data.alice.account.id, authenticity_token: token });
    assertPage(res, 403);
    const followers = await request(server.app, "GET", `/api/v1/accounts/${data.alice.account.id}/followers`, {
      token: data.alice.token,
    });
    assert.ok(!(followers.json() as Array<{ id: string }>).some((f) => f.id === newbie.account.id));
  });
});

describe("the remote-follow page between two servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let browser: Browser;

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
    alice = await createUser(a.server.ctx, "alice");
    bob = await createUser(b.server.ctx, "bob");
    carol = await createUser(b.server.ctx, "carol", { locked: true });
    dave = await createUser(b.server.ctx, "dave");
    browser = await signedIn(a.server, alice);
  });
  after(() => peers?.close());

  /** The accounts following `user` on its own server, by handle. */
  async function followersOn(peer: Peer, user: TestUser): Promise<string[]> {
    const res = await request(peer.server.app, "GET", `/api/v1/accounts/${user.account.id}/followers`, {
      token: user.token,
    });
    return (res.json() as Array<{ acct: string }>).map((f) => f.acct);
  }

  test("a handle on the other server is found there; Follow sends a Follow that its server accepts", async () => {
    const page = await browser.get(pageOf(`acct:bob@${b.domain}`));
    assertPage(page);
    assert.equal(titleOf(page.body), `Follow @bob@${b.domain}`);
    assert.ok(page.body.includes(`href="${b.baseUrl}/@bob"`));
    const done = await browser.submit(page, isFollow);
    assertPage(done);
    // Accepted already, or on its way.
    assert.ok(
      [
        `You are now following @bob@${b.domain}.`,
        `Your follow has been sent: you will follow @bob@${b.domain} as soon as their server confirms it.`,
      ].includes(noticeOf(done.body)!),
      noticeOf(done.body),
    );
    await eventually(
      async () => (await followersOn(b, bob)).includes(`alice@${a.domain}`),
      "bob's server has the follow",
    );
    const bobOnA = followFormOf(page.body)!.fields.account_id!;
    await eventually(async () => (await relationship(a.server, alice, bobOnA)).following, "the Accept came back");
    const again = await browser.get(pageOf(`bob@${b.domain}`));
    assert.equal(noticeOf(again.body), `You are following @bob@${b.domain}.`);
  });

  test("a locked account on the other server: the request waits there for its owner", async () => {
    const page = await browser.get(pageOf(`carol@${b.domain}`));
    assertPage(page);
    assert.match(textOf(page.body), /approves each follower/);
    const done = await browser.submit(page, isFollow);
    assertPage(done);
    assert.equal(
      noticeOf(done.body),
      `Your follow request has been sent: you will follow @carol@${b.domain} once they approve it.`,
    );
    await eventually(async () => {
      const res = await request(b.server.app, "GET", "/api/v1/follow_requests", { token: carol.token });
      return (res.json() as Array<{ acct: string }>).some((r) => r.acct === `alice@${a.domain}`);
    }, "carol sees the request");
    assert.deepEqual(await followersOn(b, carol), []);
  });

  test("a post's link on the other server shows the post; Follow follows its author there", async () => {
    const post = await postStatus(b.server, dave, { status: "Greetings from the other server" });
    const page = await browser.get(pageOf(post.url!));
    assertPage(page);
    assert.equal(titleOf(page.body), `Post by @dave@${b.domain}`);
    assert.match(textOf(page.body), /Greetings from the other server/);
    assert.ok(page.body.includes(`href="${post.url}"`), "a link to the post on its server");
    await browser.submit(page, isFollow);
    await eventually(
      async () => (await followersOn(b, dave)).includes(`alice@${a.domain}`),
      "dave's server has the follow",
    );
  });

  test("an account the other server does not have is a 404 page", async () => {
    for (const uri of [`nobody@${b.domain}`, `${b.baseUrl}/users/nobody`, `${b.baseUrl}/@bob/999999999`]) {
      const page = await browser.get(pageOf(uri));
      assertPage(page, 404);
      assert.equal(alertOf(page.body), NOTHING_FOUND, uri);
    }
  });
});
