/**
 * /settings/export and /settings/exports/<kind>.csv: Mastodon's CSV files of a user's follows,
 * lists, blocks, mutes, domain blocks and bookmarks, exactly as Mastodon writes them (header
 * lines for follows and mutes only, `user@domain` with this server's domain for local accounts,
 * newest first), for the signed-in user only.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { Browser, locationOf } from "../browser.ts";
import { newId } from "../../src/db/ids.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  follow,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";

describe("exports", () => {
  let server: TestServer;
  let users = 0;

  before(async () => {
    server = await createTestServer();
  });
  after(() => server?.close());

  const user = (name = "exporter") => createUser(server.ctx, `${name}${++users}`);

  async function signedIn(who: TestUser): Promise<Browser> {
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(who.user.email)).statusCode, 303);
    return browser;
  }

  async function api(who: TestUser, path: string, json: unknown = {}) {
    const res = await request(server.app, "POST", path, { token: who.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { id: string };
  }

  function assertCsv(res: LightMyRequestResponse, filename: string) {
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    assert.equal(res.headers["content-type"], "text/csv; charset=utf-8");
    assert.equal(res.headers["content-disposition"], `attachment; filename="${filename}"`);
    assert.equal(res.headers["cache-control"], "no-store");
  }

  test("not signed in: the page and every file send the browser to sign in", async () => {
    const browser = new Browser(server.app);
    for (const path of [
      "/settings/export",
      "/settings/exports/follows.csv",
      "/settings/exports/lists.csv",
      "/settings/exports/blocks.csv",
      "/settings/exports/mutes.csv",
      "/settings/exports/domain_blocks.csv",
      "/settings/exports/bookmarks.csv",
    ]) {
      const res = await browser.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.equal(locationOf(res).pathname, "/auth/sign_in");
      assert.equal(locationOf(res).searchParams.get("return_to"), path);
    }
  });

  test("every file in Mastodon's format, and the page's counts", async () => {
    const me = await user();
    const bob = await user("bob");
    const carol = await user("carol");
    const dave = await user("dave");
    const rita = await createRemoteAccount(server.ctx, `rita${users}`, "remote.example");

    await api(me, `/api/v1/accounts/${bob.account.id}/follow`, {
      reblogs: false,
      notify: true,
      languages: ["en", "de"],
    });
    await follow(server, me, rita);
    await api(me, `/api/v1/accounts/${carol.account.id}/block`);
    await api(me, `/api/v1/accounts/${dave.account.id}/mute`, { notifications: false });
    await api(me, `/api/v1/accounts/${rita.id}/mute`);
    await api(me, "/api/v1/domain_blocks", { domain: "spam.example" });
    await api(me, "/api/v1/domain_blocks", { domain: "worse.example" });
    const friends = await api(me, "/api/v1/lists", { title: "Friends, old and new" });
    await api(me, `/api/v1/lists/${friends.id}/accounts`, { account_ids: [bob.account.id, rita.id] });
    await api(me, "/api/v1/lists", { title: "Empty" });
    const first = await postStatus(server, bob, { status: "first" });
    const second = await postStatus(server, bob, { status: "second" });
    await api(me, `/api/v1/statuses/${first.id}/bookmark`);
    await api(me, `/api/v1/statuses/${second.id}/bookmark`);

    const browser = await signedIn(me);
    const follows = await browser.get("/settings/exports/follows.csv");
    assertCsv(follows, "following_accounts.csv");
    assert.equal(
      follows.body,
      "Account address,Show boosts,Notify on new posts,Languages\n" +
        `${rita.username}@remote.example,true,false,\n` +
        `${bob.username}@rookery.test,false,true,"en, de"\n`,
    );
    const blocks = await browser.get("/settings/exports/blocks.csv");
    assertCsv(blocks, "blocked_accounts.csv");
    assert.equal(blocks.body, `${carol.username}@rookery.test\n`);
    const mutes = await browser.get("/settings/exports/mutes.csv");
    assertCsv(mutes, "muted_accounts.csv");
    assert.equal(
      mutes.body,
      "Account address,Hide notifications\n" +
        `${rita.username}@remote.example,true\n` +
        `${dave.username}@rookery.test,false\n`,
    );
    const domains = await browser.get("/settings/exports/domain_blocks.csv");
    assertCsv(domains, "blocked_domains.csv");
    assert.equal(domains.body, "worse.example\nspam.example\n");
    const lists = await browser.get("/settings/exports/lists.csv");
    assertCsv(lists, "lists.csv");
    assert.equal(
      lists.body,
      `"Friends, old and new",${rita.username}@remote.example\n"Friends, old and new",${bob.username}@rookery.test\n`,
    );
    const bookmarks = await browser.get("/settings/exports/bookmarks.csv");
    assertCsv(bookmarks, "bookmarks.csv");
    assert.equal(bookmarks.body, `${second.uri}\n${first.uri}\n`);

    const page = await browser.get("/settings/export");
    assert.equal(page.statusCode, 200);
    const counts = [...page.body.matchAll(/<tr><td>([^<]+)<\/td><td>([\d,]+)<\/td>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(counts, [
      ["Follows", "2"],
      ["Lists", "2"],
      ["You block", "1"],
      ["You mute", "2"],
      ["Domain blocks", "2"],
      ["Bookmarks", "2"],
    ]);
    for (const kind of ["follows", "lists", "blocks", "mutes", "domain_blocks", "bookmarks"])
      assert.match(page.body, new RegExp(`href="/settings/exports/${kind}\\.csv"`));
  });

  test("an account with nothing: follows and mutes are their header line, the others empty", async () => {
    const browser = await signedIn(await user());
    assert.equal(
      (await browser.get("/settings/exports/follows.csv")).body,
      "Account address,Show boosts,Notify on new posts,Languages\n",
    );
    assert.equal((await browser.get("/settings/exports/mutes.csv")).body, "Account address,Hide notifications\n");
    for (const kind of ["blocks", "lists", "domain_blocks", "bookmarks"])
      assert.equal((await browser.get(`/settings/exports/${kind}.csv`)).body, "", kind);
  });

  test("a long export is read in batches and has every row once", async () => {
    const me = await user();
    const now = new Date().toISOString();
    const domains = Array.from({ length: 2345 }, (_, i) => `d${i}.example`);
    for (let i = 0; i < domains.length; i += 500)
      await server.ctx.db.kysely
        .insertInto("account_domain_blocks")
        .values(
          domains
            .slice(i, i + 500)
            .map((domain) => ({ id: newId(), account_id: me.account.id, domain, created_at: now })),
        )
        .execute();
    const browser = await signedIn(me);
    const lines = (await browser.get("/settings/exports/domain_blocks.csv")).body.split("\n");
    assert.equal(lines.pop(), "");
    assert.deepEqual(lines, [...domains].reverse());
  });

  test("each user gets their own data only", async () => {
    const me = await user();
    const other = await user();
    const target = await user();
    await api(other, `/api/v1/accounts/${target.account.id}/block`);
    const browser = await signedIn(me);
    assert.equal((await browser.get("/settings/exports/blocks.csv")).body, "");
  });
});
