/**
 * Deleting one's account from /settings/delete (and with `rookery accounts delete`): the password
 * confirms it; then no sign-in, no token, no stream, the account suspended and emptied, its
 * content gone once the jobs ran, its actor and WebFinger 410, and its username never given again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { cli } from "../cli_run.ts";
import { alertOf, Browser } from "../browser.ts";
import {
  createTestServer,
  createUser,
  follow,
  postStatus,
  request,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../kit.ts";

describe("deleting an account", () => {
  let server: TestServer;

  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  async function signedIn(user: TestUser): Promise<Browser> {
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
    return browser;
  }

  test("a wrong password or an expired form deletes nothing", async () => {
    const keeper = await createUser(server.ctx, "keeper");
    const browser = await signedIn(keeper);
    const page = await browser.get("/settings/delete");
    assert.equal(page.statusCode, 200);
    const wrong = await browser.submit(page, "/settings/delete", { current_password: "not it" });
    assert.equal(wrong.statusCode, 422);
    assert.equal(alertOf(wrong.body), "The current password is not correct.");
    const stale = await browser.submit(page, "/settings/delete", { current_password: "x" }, ["authenticity_token"]);
    assert.equal(stale.statusCode, 422);
    const me = await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: keeper.token });
    assert.equal(me.statusCode, 200);
  });

  test("not signed in: the page sends the browser to sign in", async () => {
    const res = await request(server.app, "GET", "/settings/delete");
    assert.equal(res.statusCode, 303);
    assert.match(String(res.headers.location), /^\/auth\/sign_in\?return_to=%2Fsettings%2Fdelete/);
  });

  test("a deleted account is gone: access, content, profile, discovery; the username stays taken", async () => {
    const leaver = await createUser(server.ctx, "leaver");
    const friend = await createUser(server.ctx, "friend");
    await follow(server, friend, leaver);
    await follow(server, leaver, friend);
    const media = await uploadImage(server, leaver);
    const post = await postStatus(server, leaver, { status: "last words", media_ids: [media.id] });
    const theirs = await postStatus(server, friend, { status: "a friend's post" });
    await request(server.app, "POST", `/api/v1/statuses/${theirs.id}/favourite`, { token: leaver.token });
    await request(server.app, "POST", "/api/v1/lists", { token: leaver.token, json: { title: "mine" } });
    await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: leaver.token,
      form: { display_name: "Leaving Soon", note: "bye" },
    });

    const browser = await signedIn(leaver);
    const page = await browser.get("/settings/delete");
    const done = await browser.submit(page, "/settings/delete", { current_password: "correct horse battery staple" });
    assert.equal(done.statusCode, 200, alertOf(done.body) ?? "");
    assert.match(done.body, /Your account is being deleted/);

    // At once: no token, no session, no sign-in.
    assert.equal(
      (await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: leaver.token })).statusCode,
      401,
    );
    assert.equal((await browser.get("/settings")).statusCode, 303);
    const again = new Browser(server.app);
    assert.notEqual((await again.signIn(leaver.user.email)).statusCode, 303);
    // Suspended for everyone, and gone from discovery.
    const entity = (await request(server.app, "GET", `/api/v1/accounts/${leaver.account.id}`)).json();
    assert.equal(entity.suspended, true);
    const finger = await request(
      server.app,
      "GET",
      `/.well-known/webfinger?resource=acct:leaver@${server.config.localDomain}`,
    );
    assert.equal(finger.statusCode, 410);
    const actor = await request(server.app, "GET", "/users/leaver", {
      headers: { accept: "application/activity+json" },
    });
    assert.equal(actor.statusCode, 410);
    const gonePage = await request(server.app, "GET", "/@leaver", { headers: { accept: "text/html" } });
    assert.equal(gonePage.statusCode, 410);
    assert.match(gonePage.body, /This account has been deleted/);

    await server.ctx.jobs.drain();
    const db = server.ctx.db.kysely;
    const count = async (table: "follows" | "favourites" | "lists", column: "account_id" | "target_account_id") =>
      Number(
        (
          await sql<{
            n: number;
          }>`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${leaver.account.id}`.execute(db)
        ).rows[0]!.n,
      );
    assert.equal((await request(server.app, "GET", `/api/v1/statuses/${post.id}`)).statusCode, 404);
    assert.equal(await count("follows", "account_id"), 0);
    assert.equal(await count("follows", "target_account_id"), 0);
    assert.equal(await count("favourites", "account_id"), 0);
    assert.equal(await count("lists", "account_id"), 0);
    const favourited = (await request(server.app, "GET", `/api/v1/statuses/${theirs.id}`)).json();
    assert.equal(favourited.favourites_count, 0);
    const row = await db
      .selectFrom("accounts")
      .selectAll()
      .where("id", "=", leaver.account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.display_name, "");
    assert.equal(row.note, "");

    // The username is never given to someone else.
    const app = (
      await request(server.app, "POST", "/api/v1/apps", {
        form: { client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" },
      })
    ).json();
    const tokenRes = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "client_credentials",
        client_id: app.client_id,
        client_secret: app.client_secret,
        scope: "write",
      },
    });
    const signUp = await request(server.app, "POST", "/api/v1/accounts", {
      token: tokenRes.json().access_token,
      form: {
        username: "leaver",
        email: "new@example.com",
        password: "a long password 123",
        agreement: "true",
        locale: "en",
      },
    });
    assert.equal(signUp.statusCode, 422, signUp.body);
    assert.match(signUp.body, /username/i);
  });

  test("rookery accounts delete needs --yes, then deletes; a second time says so", async () => {
    const gone = await createUser(server.ctx, "clidelete");
    const refused = await cli(server, "accounts", "delete", "clidelete");
    assert.notEqual(refused.code, 0);
    assert.match(refused.err.join("\n"), /--yes/);
    assert.equal(
      (await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: gone.token })).statusCode,
      200,
    );
    assert.equal((await cli(server, "accounts", "delete", "clidelete", "--yes")).code, 0);
    assert.equal(
      (await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: gone.token })).statusCode,
      401,
    );
    const again = await cli(server, "accounts", "delete", "clidelete", "--yes");
    assert.equal(again.code, 1);
    assert.match(again.err.join("\n"), /already deleted/);
    assert.notEqual((await cli(server, "accounts", "delete", "nobody-here", "--yes")).code, 0);
  });
});
