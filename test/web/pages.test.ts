import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import {
  alertOf,
  Browser,
  cookieSetBy,
  decodeEntities,
  findForm,
  findForms,
  KIT_PASSWORD,
  locationOf,
} from "../browser.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  createTestServer,
  createUser,
  errorOf,
  get,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

function assertPage(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body.slice(0, 2000));
  assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
  assert.equal(res.headers["x-frame-options"], "DENY");
  assert.equal(res.headers["x-content-type-options"], "nosniff");
  assert.equal(res.headers["cache-control"], "no-store");
  const csp = res.headers["content-security-policy"] as string;
  assert.ok(csp, "a Content-Security-Policy header");
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /script-src/, "no script may run");
  assert.ok(res.body.startsWith("<!DOCTYPE html>"));
  assert.doesNotMatch(res.body, /<script/i);
}

/** The signed-in state as the server sees it: /settings answers 200 when signed in, 303 to sign-in otherwise. */
async function settingsStatus(browser: Browser): Promise<number> {
  return (await browser.get("/settings")).statusCode;
}

function newestMailLink(server: TestServer): { to: string; link: string } {
  const dir = server.config.mailDir;
  assert.ok(existsSync(dir), "mail was written");
  const files = readdirSync(dir).sort((a, b) =>
    BigInt(a.replace(".eml", "")) < BigInt(b.replace(".eml", "")) ? -1 : 1,
  );
  const raw = readFileSync(join(dir, files[files.length - 1]), "utf8");
  const text = raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  const link = /https:\/\/rookery\.test(\/auth\/confirmation\?confirmation_token=[\w-]+)/.exec(text)?.[1];
  assert.ok(link, text);
  return { to: /^To: (.*)$/m.exec(raw)![1], link };
}

describe("public pages", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("/, /auth/sign_in and /auth/sign_up render script-free HTML with security headers", async () => {
    const home = await get(server.app, "/");
    assertPage(home);
    assert.ok(home.body.includes("<title>Rookery</title>"));
    assert.ok(home.body.includes('href="/auth/sign_in"') && home.body.includes('href="/auth/sign_up"'));

    const signIn = await get(server.app, "/auth/sign_in");
    assertPage(signIn);
    const form = findForm(signIn.body, "/auth/sign_in");
    assert.equal(form.method, "post");
    assert.match(form.fields.authenticity_token, /^[\w-]{43}$/);
    assert.equal(cookieSetBy(signIn, "_rookery_csrf")?.value, form.fields.authenticity_token);
    assert.deepEqual(form.names, ["authenticity_token", "return_to", "email", "password"]);

    const signUp = await get(server.app, "/auth/sign_up");
    assertPage(signUp);
    const up = findForm(signUp.body, "/auth/sign_up");
    assert.deepEqual(up.names, [
      "authenticity_token",
      "locale",
      "username",
      "email",
      "password",
      "password_confirmation",
      "agreement",
    ]);
    assert.equal(up.fields.agreement, undefined, "the agreement box starts unchecked");
  });

  test("approval mode asks why the visitor wants to join", async () => {
    await saveSetting(server.ctx.db.kysely, "registrations_mode", "approved");
    try {
      const page = await get(server.app, "/auth/sign_up");
      assertPage(page);
      assert.ok(findForm(page.body, "/auth/sign_up").names.includes("reason"));
    } finally {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
    }
    assert.ok(!findForm((await get(server.app, "/auth/sign_up")).body, "/auth/sign_up").names.includes("reason"));
  });

  test("the CSRF cookie is reused by the same browser", async () => {
    const browser = new Browser(server.app);
    const first = findForm((await browser.get("/auth/sign_in")).body, "/auth/sign_in").fields.authenticity_token;
    const second = await browser.get("/auth/sign_up");
    assert.equal(cookieSetBy(second, "_rookery_csrf"), undefined, "no new cookie");
    assert.equal(findForm(second.body, "/auth/sign_up").fields.authenticity_token, first);
  });

  test("closed registrations: no sign-up link, and the sign-up page says so", async () => {
    await saveSetting(server.ctx.db.kysely, "registrations_mode", "none");
    await saveSetting(server.ctx.db.kysely, "closed_registrations_message", "Come back <later>");
    try {
      const home = await get(server.app, "/");
      assert.ok(!home.body.includes('href="/auth/sign_up"'));
      const page = await get(server.app, "/auth/sign_up");
      assertPage(page, 403);
      assert.ok(page.body.includes("This server is not accepting new accounts."));
      assert.ok(page.body.includes("Come back &lt;later&gt;"), "the message is escaped");
      assert.deepEqual(
        findForms(page.body).filter((f) => f.action === "/auth/sign_up"),
        [],
      );
      const browser = new Browser(server.app);
      const token = findForm((await browser.get("/auth/sign_in")).body, "/auth/sign_in").fields.authenticity_token;
      const posted = await browser.post("/auth/sign_up", {
        authenticity_token: token,
        username: "sneakin",
        email: "sneakin@example.com",
        password: "swordfish123",
        password_confirmation: "swordfish123",
        agreement: "1",
      });
      assertPage(posted, 403);
      assert.equal(
        await server.ctx.db.kysely
          .selectFrom("users")
          .select("id")
          .where("email", "=", "sneakin@example.com")
          .executeTakeFirst(),
        undefined,
      );
    } finally {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
    }
  });
});

describe("sign-up through the form", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
    await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const fill = (extra: Record<string, string> = {}) => ({
    username: "webby",
    email: "webby@example.com",
    password: "swordfish123",
    password_confirmation: "swordfish123",
    agreement: "1",
    ...extra,
  });

  test("a confirmation that does not match: 422 with the error, nothing created", async () => {
    const browser = new Browser(server.app);
    const res = await browser.submit(
      await browser.get("/auth/sign_up"),
      "/auth/sign_up",
      fill({ password_confirmation: "swordfish124" }),
    );
    assertPage(res, 422);
    assert.ok(res.body.includes("doesn&#39;t match the password"));
    const form = findForm(res.body, "/auth/sign_up");
    assert.equal(form.fields.username, "webby", "what was typed is kept");
    assert.equal(form.fields.email, "webby@example.com");
    assert.equal(
      await server.ctx.db.kysely
        .selectFrom("users")
        .select("id")
        .where("email", "=", "webby@example.com")
        .executeTakeFirst(),
      undefined,
    );
    assert.equal(cookieSetBy(res, "_rookery_session"), undefined);
  });

  test("validation errors are shown next to the fields", async () => {
    const browser = new Browser(server.app);
    const page = await browser.get("/auth/sign_up");
    const taken = await browser.submit(
      page,
      "/auth/sign_up",
      fill({ username: "alice", password: "short", password_confirmation: "short" }),
      ["agreement"],
    );
    assertPage(taken, 422);
    const text = decodeEntities(taken.body);
    assert.ok(text.includes("is already taken"));
    assert.ok(text.includes("is too short (minimum is 8 characters)"));
    assert.ok(text.includes("must be accepted"));
  });

  test("a stale form (no CSRF token) is refused", async () => {
    const browser = new Browser(server.app);
    const res = await browser.submit(await browser.get("/auth/sign_up"), "/auth/sign_up", fill(), [
      "authenticity_token",
    ]);
    assertPage(res, 422);
    assert.equal(alertOf(res.body), "This form has expired. Please try again.");
    assert.equal(
      await server.ctx.db.kysely
        .selectFrom("users")
        .select("id")
        .where("email", "=", "webby@example.com")
        .executeTakeFirst(),
      undefined,
    );
  });

  test("success signs in and lands on /settings, which asks to confirm the e-mail", async () => {
    const browser = new Browser(server.app);
    const res = await browser.submit(await browser.get("/auth/sign_up"), "/auth/sign_up", fill());
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, "/settings");
    assert.ok(cookieSetBy(res, "_rookery_session"));
    const settings = await browser.follow(res);
    assertPage(settings);
    assert.equal(
      alertOf(settings.body)?.startsWith("Confirm your e-mail address: we sent a link to webby@example.com."),
      true,
      alertOf(settings.body),
    );
    assert.ok(settings.body.includes("@webby@rookery.test"));
    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .selectAll()
      .where("email", "=", "webby@example.com")
      .executeTakeFirstOrThrow();
    assert.equal(user.confirmed_at, null);
    assert.equal(user.created_by_application_id, null);
    assert.equal(user.locale, "en");

    // The resend button sends a new link; the link confirms and the prompt goes away.
    await server.ctx.jobs.drain();
    const first = newestMailLink(server);
    assert.equal(first.to, "webby@example.com");
    const resent = await browser.submit(settings, "/auth/confirmation/resend");
    assertPage(resent);
    await server.ctx.jobs.drain();
    const second = newestMailLink(server);
    assert.notEqual(second.link, first.link);
    assert.equal((await browser.get(first.link)).statusCode, 404);
    assertPage(await browser.get(second.link));
    const after = await browser.get("/settings");
    assert.equal(alertOf(after.body), undefined);
  });
});

describe("sign-in, sign-out, password change", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const passwordGrant = async (password: string) => {
    const app = accounts.app;
    return request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "password",
        username: "carol@rookery.test",
        password,
        client_id: app.client_id,
        client_secret: app.client_secret,
      },
    });
  };

  test("a wrong password or unknown e-mail: 401 page with the alert, no session", async () => {
    for (const [email, password] of [
      ["alice@rookery.test", "wrong password"],
      ["nobody@rookery.test", KIT_PASSWORD],
    ]) {
      const browser = new Browser(server.app);
      const res = await browser.signIn(email, password);
      assertPage(res, 401);
      assert.equal(alertOf(res.body), "Invalid e-mail address or password.");
      assert.equal(findForm(res.body, "/auth/sign_in").fields.email, email, "the e-mail is kept");
      assert.equal(cookieSetBy(res, "_rookery_session"), undefined);
      assert.equal(await settingsStatus(browser), 303);
    }
  });

  test("the e-mail is matched case-insensitively", async () => {
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn("ALICE@Rookery.Test")).statusCode, 303);
    assert.equal(await settingsStatus(browser), 200);
  });

  test("a sign-in without the CSRF token is refused", async () => {
    const browser = new Browser(server.app);
    const res = await browser.submit(
      await browser.get("/auth/sign_in"),
      "/auth/sign_in",
      { email: "alice@rookery.test", password: KIT_PASSWORD },
      ["authenticity_token"],
    );
    assertPage(res, 422);
    assert.equal(alertOf(res.body), "This form has expired. Please try again.");
    assert.equal(cookieSetBy(res, "_rookery_session"), undefined);
  });

  test("a disabled user cannot sign in", async () => {
    const disabled = await createUser(server.ctx, "disabledweb");
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: true })
      .where("id", "=", disabled.user.id)
      .execute();
    const res = await new Browser(server.app).signIn("disabledweb@rookery.test");
    assertPage(res, 403);
    assert.equal(alertOf(res.body), "Your account is disabled.");
    assert.equal(cookieSetBy(res, "_rookery_session"), undefined);
  });

  test("/settings needs a session", async () => {
    const res = await get(server.app, "/settings");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/auth/sign_in?return_to=%2Fsettings");
  });

  test("each sign-in starts a new session id", async () => {
    const browser = new Browser(server.app);
    await browser.signIn("bob@rookery.test");
    const first = browser.cookies.get("_rookery_session");
    browser.cookies.delete("_rookery_session");
    await browser.signIn("bob@rookery.test");
    assert.ok(first);
    assert.notEqual(browser.cookies.get("_rookery_session"), first);
  });

  test("sign out (POST with CSRF) ends the session, also for a replayed cookie", async () => {
    const browser = new Browser(server.app);
    const signIn = await browser.signIn("bob@rookery.test");
    assert.equal(signIn.headers.location, "/settings");
    const settings = await browser.get("/settings");
    assertPage(settings);
    assert.ok(settings.body.includes("Signed in as <strong>@bob@rookery.test</strong>"));
    const oldSession = browser.cookies.get("_rookery_session")!;

    const refused = await browser.submit(settings, "/auth/sign_out", {}, ["authenticity_token"]);
    assertPage(refused, 422);
    assert.equal(await settingsStatus(browser), 200, "still signed in after a forged sign-out");

    const out = await browser.submit(settings, "/auth/sign_out");
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, "/auth/sign_in?return_to=%2Fsettings");
    const cleared = cookieSetBy(out, "_rookery_session");
    assert.equal(cleared?.value, "");
    assert.equal(cleared?.attributes["max-age"], "0");
    assert.equal(browser.cookies.has("_rookery_session"), false);
    const after = await browser.get("/settings");
    assert.equal(after.statusCode, 303);
    assert.equal(locationOf(after).pathname, "/auth/sign_in");

    browser.cookies.set("_rookery_session", oldSession);
    assert.equal(await settingsStatus(browser), 303, "the old cookie no longer opens a session");
  });

  test("change password: wrong current password 422; success swaps the passwords", async () => {
    const browser = new Browser(server.app);
    await browser.signIn("carol@rookery.test");
    const elsewhere = new Browser(server.app);
    await elsewhere.signIn("carol@rookery.test");
    const page = await browser.get("/settings/password");
    assertPage(page);

    const cases: Array<[Record<string, string>, string]> = [
      [
        { current_password: "not it", password: "a new passphrase", password_confirmation: "a new passphrase" },
        "The current password is not correct.",
      ],
      [
        { current_password: KIT_PASSWORD, password: "short", password_confirmation: "short" },
        "The new password is too short (minimum is 8 characters).",
      ],
      [
        { current_password: KIT_PASSWORD, password: "p".repeat(73), password_confirmation: "p".repeat(73) },
        "The new password is too long (maximum is 72 characters).",
      ],
      [
        { current_password: KIT_PASSWORD, password: "a new passphrase", password_confirmation: "another one" },
        "The confirmation does not match the new password.",
      ],
    ];
    for (const [values, alert] of cases) {
      const res = await browser.submit(page, "/settings/password", values);
      assertPage(res, 422);
      assert.equal(alertOf(res.body), alert);
    }
    const forged = await browser.submit(
      page,
      "/settings/password",
      { current_password: KIT_PASSWORD, password: "a new passphrase", password_confirmation: "a new passphrase" },
      ["authenticity_token"],
    );
    assertPage(forged, 422);
    assert.equal((await passwordGrant(KIT_PASSWORD)).statusCode, 200, "nothing changed yet");

    const done = await browser.submit(page, "/settings/password", {
      current_password: KIT_PASSWORD,
      password: "a new passphrase",
      password_confirmation: "a new passphrase",
    });
    assertPage(done);
    assert.ok(done.body.includes("Your password has been changed."));

    assert.equal((await passwordGrant(KIT_PASSWORD)).json().error, "invalid_grant");
    assert.equal((await passwordGrant("a new passphrase")).statusCode, 200);
    assert.equal(await settingsStatus(browser), 200, "this browser stays signed in");
    assert.equal(await settingsStatus(elsewhere), 303, "other browsers are signed out");
    assert.equal((await new Browser(server.app).signIn("carol@rookery.test", KIT_PASSWORD)).statusCode, 401);
    assert.equal((await new Browser(server.app).signIn("carol@rookery.test", "a new passphrase")).statusCode, 303);
  });

  test("return_to must stay on this site", async () => {
    for (const evil of [
      "//evil.example",
      "https://evil.example",
      "https://evil.example/settings",
      "/\\evil.example",
      "evil.example",
    ]) {
      const browser = new Browser(server.app);
      const page = await browser.get(`/auth/sign_in?return_to=${encodeURIComponent(evil)}`);
      assert.equal(findForm(page.body, "/auth/sign_in").fields.return_to, "/settings", evil);
      const res = await browser.submit(page, "/auth/sign_in", {
        email: "alice@rookery.test",
        password: KIT_PASSWORD,
        return_to: evil,
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, "/settings", evil);
      const signedIn = await browser.get(`/auth/sign_in?return_to=${encodeURIComponent(evil)}`);
      assert.equal(signedIn.headers.location, "/settings", `already signed in, ${evil}`);
      const out = await browser.submit(await browser.get("/settings"), "/auth/sign_out", { return_to: evil });
      assert.equal(out.headers.location, "/auth/sign_in?return_to=%2Fsettings", `sign-out ${evil}`);
    }
    const browser = new Browser(server.app);
    const res = await browser.signIn("alice@rookery.test", KIT_PASSWORD, "/settings/password");
    assert.equal(res.headers.location, "/settings/password", "a path on this site is kept");
  });

  test("return_to with a tab inside (/<TAB>/evil.example) is not followed off-site", {}, async () => {
    const evil = "/\t/evil.example";
    const browser = new Browser(server.app);
    const page = await browser.get(`/auth/sign_in?return_to=${encodeURIComponent(evil)}`);
    const res = await browser.submit(page, "/auth/sign_in", { email: "alice@rookery.test", password: KIT_PASSWORD });
    assert.equal(res.statusCode, 303);
    assert.equal(
      locationOf(res).origin,
      "https://rookery.test",
      `Location ${JSON.stringify(res.headers.location)} leaves the site`,
    );
    assert.equal(res.headers.location, "/settings");
  });

  test("return_to with a newline falls back to /settings instead of failing", {}, async () => {
    const browser = new Browser(server.app);
    const page = await browser.get("/auth/sign_in");
    const res = await browser.submit(page, "/auth/sign_in", {
      email: "alice@rookery.test",
      password: KIT_PASSWORD,
      return_to: "/\n/evil.example",
    });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/settings");
  });

  test("sign-in attempts from one address are throttled", async () => {
    // The limit counts in fixed five-minute windows: start well inside one, so it cannot reset midway.
    const window = 5 * 60_000;
    const left = window - (Date.now() % window);
    if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const browser = new Browser(server.app, { remoteAddress: "203.0.113.50" });
    const page = await browser.get("/auth/sign_in");
    for (let i = 0; i < 25; i++) {
      const res = await browser.submit(page, "/auth/sign_in", { email: "nobody@rookery.test", password: "guess" });
      assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
    }
    const res = await browser.submit(page, "/auth/sign_in", { email: "alice@rookery.test", password: KIT_PASSWORD });
    assertPage(res, 429);
    assert.equal(cookieSetBy(res, "_rookery_session"), undefined);
    assert.equal(
      (await new Browser(server.app, { remoteAddress: "203.0.113.51" }).signIn("alice@rookery.test")).statusCode,
      303,
    );
  });
});

describe("/oauth/authorized_applications", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let client: { id: string; client_id: string; client_secret: string };
  const REDIRECT = "https://toot.example/cb";

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    const res = await request(server.app, "POST", "/api/v1/apps", {
      form: {
        client_name: "Toot <Client>",
        redirect_uris: REDIRECT,
        scopes: "read write",
        website: "https://toot.example",
      },
    });
    client = res.json();
  });
  after(() => server.close());

  /** Runs the authorization-code flow in `browser` and returns the access token. */
  async function authorizeApp(browser: Browser): Promise<string> {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const query = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "read write",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const consent = await browser.get(`/oauth/authorize?${query}`);
    assert.equal(consent.statusCode, 200);
    const approved = await browser.submit(consent, (f) => f.fields.decision === "approve");
    const code = locationOf(approved).searchParams.get("code")!;
    const token = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        client_id: client.client_id,
        client_secret: client.client_secret,
      },
    });
    assert.equal(token.statusCode, 200, token.body);
    return token.json().access_token;
  }

  test("lists the apps the user authorized; Revoke revokes their tokens", async () => {
    const browser = new Browser(server.app);
    await browser.signIn("alice@rookery.test");
    const accessToken = await authorizeApp(browser);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).statusCode, 200);

    const page = await browser.get("/oauth/authorized_applications");
    assertPage(page);
    assert.ok(page.body.includes("<strong>Toot &lt;Client&gt;</strong>"), "the app's name, escaped");
    assert.ok(page.body.includes("https://toot.example"));
    assert.ok(page.body.includes("Test Client"), "the kit's app holds a token too");
    const revokeForm = findForm(page.body, `/oauth/authorized_applications/${client.id}/revoke`);
    assert.equal(revokeForm.method, "post");

    // Without the CSRF token nothing is revoked.
    const forged = await browser.submit(page, revokeForm.action, {}, ["authenticity_token"]);
    assert.equal(forged.statusCode, 303);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).statusCode, 200);

    const res = await browser.submit(page, revokeForm.action);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/oauth/authorized_applications");
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)), [
      401,
      "The access token was revoked",
    ]);
    assert.equal(
      (await get(server.app, "/api/v1/accounts/verify_credentials", accounts.alice.token)).statusCode,
      200,
      "other apps keep their tokens",
    );

    const listed = await browser.follow(res);
    assert.ok(!listed.body.includes("Toot &lt;Client&gt;"));
    assert.ok(listed.body.includes("Test Client"));
    // Authorizing again asks for consent again.
    const query = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "read write",
    });
    assert.equal((await browser.get(`/oauth/authorize?${query}`)).statusCode, 200);
  });

  test("revoking also voids codes not yet exchanged", async () => {
    const browser = new Browser(server.app);
    await browser.signIn("carol@rookery.test");
    await authorizeApp(browser);
    // Consent is now skipped: the next authorization answers a code at once.
    const query = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      scope: "read write",
    });
    const immediate = await browser.get(`/oauth/authorize?${query}`);
    assert.equal(immediate.statusCode, 303);
    const code = locationOf(immediate).searchParams.get("code")!;
    const page = await browser.get("/oauth/authorized_applications");
    await browser.submit(page, `/oauth/authorized_applications/${client.id}/revoke`);
    const res = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
        client_secret: client.client_secret,
      },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, "invalid_grant");
  });

  test("another user's apps are neither listed nor revocable", async () => {
    const alice = new Browser(server.app);
    await alice.signIn("alice@rookery.test");
    const aliceToken = await authorizeApp(alice);
    const bob = new Browser(server.app);
    await bob.signIn("bob@rookery.test");
    const page = await bob.get("/oauth/authorized_applications");
    assert.ok(!page.body.includes("Toot &lt;Client&gt;"));
    const res = await bob.post(`/oauth/authorized_applications/${client.id}/revoke`, {
      authenticity_token: bob.cookies.get("_rookery_csrf")!,
    });
    assert.equal(res.statusCode, 303);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", aliceToken)).statusCode, 200);
  });

  test("an account without authorized apps sees an empty list", async () => {
    const user = await createUser(server.ctx, "loner");
    await server.ctx.db.kysely
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: new Date().toISOString() })
      .where("user_id", "=", user.user.id)
      .execute();
    const browser = new Browser(server.app);
    await browser.signIn("loner@rookery.test");
    const page = await browser.get("/oauth/authorized_applications");
    assertPage(page);
    assert.ok(page.body.includes("No app has access to your account."));
  });

  test("needs a session", async () => {
    const res = await get(server.app, "/oauth/authorized_applications");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/auth/sign_in?return_to=%2Foauth%2Fauthorized_applications");
  });
});
