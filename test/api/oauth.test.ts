import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import {
  alertOf,
  Browser,
  cookieSetBy,
  decodeEntities,
  findForms,
  KIT_PASSWORD,
  locationOf,
  ORIGIN,
} from "../browser.ts";
import {
  appToken,
  createTestServer,
  createUser,
  errorOf,
  get,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

const OOB = "urn:ietf:wg:oauth:2.0:oob";
const INVALID_GRANT =
  "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
const INVALID_CLIENT =
  "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.";
const INVALID_SCOPE = "The requested scope is invalid, unknown, or malformed.";
const UNSUPPORTED_GRANT = "The authorization grant type is not supported by the authorization server.";

interface RegisteredApp {
  id: string;
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

async function registerApp(
  server: TestServer,
  name: string,
  redirectUris: string,
  scopes: string,
): Promise<RegisteredApp> {
  const res = await request(server.app, "POST", "/api/v1/apps", {
    form: { client_name: name, redirect_uris: redirectUris, scopes },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

function pkce(method: "S256" | "plain" = "S256") {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = method === "S256" ? createHash("sha256").update(verifier).digest("base64url") : verifier;
  return { verifier, challenge, method };
}

function authorizePath(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, value);
  return `/oauth/authorize?${query}`;
}

function tokenShape(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers["cache-control"], "no-store");
  assert.equal(res.headers.pragma, "no-cache");
  assert.match(res.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ["access_token", "token_type", "scope", "created_at"]);
  assert.match(body.access_token, /^[\w-]{43}$/);
  assert.equal(body.token_type, "Bearer");
  assert.equal(typeof body.scope, "string");
  assert.ok(Number.isInteger(body.created_at), `created_at ${body.created_at} is an integer`);
  assert.ok(Math.abs(body.created_at - Date.now() / 1000) < 60, "created_at is now, in seconds");
  return body as { access_token: string; token_type: string; scope: string; created_at: number };
}

function oauthError(res: LightMyRequestResponse): [number, string, string] {
  const body = res.json();
  return [res.statusCode, body.error, body.error_description];
}

const digest = (secret: string) => createHash("sha256").update(secret).digest("hex");

describe("authorization code flow (browser)", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let phanpy: RegisteredApp;
  let other: RegisteredApp;
  let native: RegisteredApp;
  const REDIRECT = "https://phanpy.example/login";

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    phanpy = await registerApp(
      server,
      "Phanpy & Friends",
      `${REDIRECT}\nhttps://phanpy.example/alt?keep=1`,
      "read write follow push profile",
    );
    other = await registerApp(server, "Other", REDIRECT, "read write");
    native = await registerApp(server, "Native", OOB, "read write");
  });
  after(() => server.close());

  /** A browser signed in as `email`. */
  async function signedIn(email: string): Promise<Browser> {
    const browser = new Browser(server.app);
    const res = await browser.signIn(email);
    assert.equal(res.statusCode, 303, res.body);
    return browser;
  }

  /** Authorizes (approving the consent page when it shows) and returns the redirect's response. */
  async function authorize(
    browser: Browser,
    params: Record<string, string | undefined>,
  ): Promise<LightMyRequestResponse> {
    const page = await browser.get(authorizePath({ response_type: "code", ...params }));
    if (page.statusCode !== 200) return page;
    return browser.submit(page, (f) => f.action === "/oauth/authorize" && f.fields.decision === "approve");
  }

  /** A fresh authorization code for `app`. */
  async function codeFor(
    browser: Browser,
    app: RegisteredApp,
    extra: Record<string, string | undefined> = {},
  ): Promise<string> {
    const res = await authorize(browser, {
      client_id: app.client_id,
      redirect_uri: app.redirect_uris[0],
      scope: "read",
      ...extra,
    });
    assert.equal(res.statusCode, 303, res.body);
    const code = locationOf(res).searchParams.get("code");
    assert.ok(code, `a code in ${res.headers.location}`);
    return code;
  }

  const exchange = (app: RegisteredApp, fields: Record<string, string | undefined>) =>
    request(server.app, "POST", "/oauth/token", {
      form: Object.fromEntries(
        Object.entries({
          grant_type: "authorization_code",
          client_id: app.client_id,
          client_secret: app.client_secret,
          redirect_uri: app.redirect_uris[0],
          ...fields,
        }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
    });

  test("PKCE S256, step by step: sign in, consent, redirect with code and state, token exchange", async () => {
    const browser = new Browser(server.app);
    const { verifier, challenge } = pkce("S256");
    const state = "st4te with spaces & symbols/é";
    const url = authorizePath({
      response_type: "code",
      client_id: phanpy.client_id,
      redirect_uri: REDIRECT,
      scope: "read write",
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });

    const anonymous = await browser.get(url);
    assert.equal(anonymous.statusCode, 303);
    const signInLocation = locationOf(anonymous);
    assert.equal(signInLocation.pathname, "/auth/sign_in");
    assert.equal(signInLocation.searchParams.get("return_to"), url);

    const signInPage = await browser.follow(anonymous);
    assert.equal(signInPage.statusCode, 200);
    assert.match(signInPage.headers["content-type"] as string, /^text\/html; charset=utf-8$/);
    const csrfCookie = cookieSetBy(signInPage, "_rookery_csrf");
    assert.ok(csrfCookie, "the sign-in page sets the CSRF cookie");
    const [form] = findForms(signInPage.body).filter((f) => f.action === "/auth/sign_in");
    assert.equal(form.method, "post");
    assert.equal(form.fields.authenticity_token, csrfCookie.value);
    assert.equal(form.fields.return_to, url);
    assert.ok(form.names.includes("email") && form.names.includes("password"));

    const signIn = await browser.submit(signInPage, "/auth/sign_in", {
      email: "alice@rookery.test",
      password: KIT_PASSWORD,
    });
    assert.equal(signIn.statusCode, 303);
    assert.equal(signIn.headers.location, url);
    const session = cookieSetBy(signIn, "_rookery_session");
    assert.ok(session, "signing in sets the session cookie");
    assert.match(session.value, /^[\w-]{43}$/);
    assert.ok("httponly" in session.attributes, "HttpOnly");
    assert.equal(session.attributes.samesite, "Lax");
    assert.ok("secure" in session.attributes, "Secure (the test server is https)");
    assert.equal(session.attributes.path, "/");
    assert.equal(session.attributes["max-age"], String(30 * 24 * 60 * 60));
    for (const flag of ["httponly", "secure"]) assert.ok(flag in csrfCookie.attributes, `CSRF cookie ${flag}`);
    assert.equal(csrfCookie.attributes.samesite, "Lax");

    const consent = await browser.follow(signIn);
    assert.equal(consent.statusCode, 200);
    assert.match(consent.headers["content-type"] as string, /^text\/html/);
    const text = decodeEntities(consent.body);
    assert.ok(text.includes("<strong>Phanpy & Friends</strong>"), "names the app (escaped in the HTML)");
    assert.ok(consent.body.includes("Phanpy &amp; Friends"));
    assert.ok(text.includes("@alice"));
    assert.ok(text.includes("Read all your account's data") && text.includes("(read)"));
    assert.ok(text.includes("Modify all your account's data") && text.includes("(write)"));
    assert.ok(!text.includes("(push)"), "only the requested scopes are listed");
    const forms = findForms(consent.body).filter((f) => f.action === "/oauth/authorize");
    assert.deepEqual(
      forms.map((f) => f.fields.decision),
      ["approve", "deny"],
    );
    assert.equal(forms[0].fields.state, state);
    assert.equal(forms[0].fields.code_challenge, challenge);
    assert.equal(forms[0].fields.authenticity_token, browser.cookies.get("_rookery_csrf"));

    const approved = await browser.submit(consent, (f) => f.fields.decision === "approve");
    assert.equal(approved.statusCode, 303);
    const callback = locationOf(approved);
    assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT);
    assert.equal(callback.searchParams.get("state"), state);
    const code = callback.searchParams.get("code")!;
    assert.match(code, /^[\w-]{43}$/);

    const token = tokenShape(await exchange(phanpy, { code, code_verifier: verifier }));
    assert.equal(token.scope, "read write");
    const me = await get(server.app, "/api/v1/accounts/verify_credentials", token.access_token);
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().username, "alice");
    const app = await get(server.app, "/api/v1/apps/verify_credentials", token.access_token);
    assert.equal(app.json().name, "Phanpy & Friends");
  });

  test("the code exchange accepts a JSON body and HTTP Basic client authentication", async () => {
    const browser = await signedIn("bob@rookery.test");
    const s1 = pkce();
    const code1 = await codeFor(browser, phanpy, { code_challenge: s1.challenge, code_challenge_method: "S256" });
    const json = await request(server.app, "POST", "/oauth/token", {
      json: {
        grant_type: "authorization_code",
        code: code1,
        client_id: phanpy.client_id,
        client_secret: phanpy.client_secret,
        redirect_uri: REDIRECT,
        code_verifier: s1.verifier,
      },
    });
    const fromJson = tokenShape(json);
    assert.equal(fromJson.scope, "read");

    const s2 = pkce();
    const code2 = await codeFor(browser, phanpy, { code_challenge: s2.challenge, code_challenge_method: "S256" });
    const basic = Buffer.from(`${phanpy.client_id}:${phanpy.client_secret}`).toString("base64");
    const res = await request(server.app, "POST", "/oauth/token", {
      headers: { authorization: `Basic ${basic}` },
      form: { grant_type: "authorization_code", code: code2, redirect_uri: REDIRECT, code_verifier: s2.verifier },
    });
    const fromBasic = tokenShape(res);
    assert.notEqual(fromBasic.access_token, fromJson.access_token);
    assert.equal(
      (await get(server.app, "/api/v1/accounts/verify_credentials", fromBasic.access_token)).json().username,
      "bob",
    );
  });

  test("PKCE plain", async () => {
    const browser = await signedIn("carol@rookery.test");
    const { verifier } = pkce("plain");
    const code = await codeFor(browser, phanpy, { code_challenge: verifier, code_challenge_method: "plain" });
    const grant = await server.ctx.db.kysely
      .selectFrom("oauth_access_grants")
      .selectAll()
      .where("code_digest", "=", digest(code))
      .executeTakeFirstOrThrow();
    assert.equal(grant.code_challenge_method, "plain");
    assert.deepEqual(oauthError(await exchange(phanpy, { code, code_verifier: `${verifier}x` })), [
      400,
      "invalid_grant",
      INVALID_GRANT,
    ]);
    const token = tokenShape(await exchange(phanpy, { code, code_verifier: verifier }));
    assert.equal(
      (await get(server.app, "/api/v1/accounts/verify_credentials", token.access_token)).json().username,
      "carol",
    );
  });

  test("without PKCE a code exchanges without a verifier", async () => {
    const browser = await signedIn("lucy@rookery.test");
    const code = await codeFor(browser, phanpy);
    const token = tokenShape(await exchange(phanpy, { code }));
    assert.equal(token.scope, "read");
  });

  test("invalid_grant: wrong verifier, missing verifier, reused code, wrong redirect_uri, another client, expired", async () => {
    const browser = await signedIn("alice@rookery.test");
    const challenged = async () => {
      const s = pkce();
      return {
        ...s,
        code: await codeFor(browser, phanpy, { code_challenge: s.challenge, code_challenge_method: "S256" }),
      };
    };
    const expectInvalid = async (res: LightMyRequestResponse, label: string) => {
      assert.deepEqual(oauthError(res), [400, "invalid_grant", INVALID_GRANT], label);
      assert.equal(res.headers["cache-control"], "no-store", label);
    };

    const wrong = await challenged();
    await expectInvalid(await exchange(phanpy, { code: wrong.code, code_verifier: pkce().verifier }), "wrong verifier");
    await expectInvalid(await exchange(phanpy, { code: wrong.code, code_verifier: "short" }), "malformed verifier");

    const missing = await challenged();
    await expectInvalid(await exchange(phanpy, { code: missing.code }), "missing verifier");

    const reused = await challenged();
    tokenShape(await exchange(phanpy, { code: reused.code, code_verifier: reused.verifier }));
    await expectInvalid(await exchange(phanpy, { code: reused.code, code_verifier: reused.verifier }), "reused code");

    const redirect = await challenged();
    await expectInvalid(
      await exchange(phanpy, {
        code: redirect.code,
        code_verifier: redirect.verifier,
        redirect_uri: "https://phanpy.example/alt?keep=1",
      }),
      "other registered redirect_uri",
    );
    await expectInvalid(
      await exchange(phanpy, { code: redirect.code, code_verifier: redirect.verifier, redirect_uri: undefined }),
      "no redirect_uri",
    );

    const stolen = await challenged();
    await expectInvalid(
      await exchange(other, { code: stolen.code, code_verifier: stolen.verifier }),
      "another client's code",
    );

    const expired = await challenged();
    await server.ctx.db.kysely
      .updateTable("oauth_access_grants")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("code_digest", "=", digest(expired.code))
      .execute();
    await expectInvalid(
      await exchange(phanpy, { code: expired.code, code_verifier: expired.verifier }),
      "expired code",
    );

    await expectInvalid(await exchange(phanpy, { code: "no-such-code" }), "unknown code");
    assert.deepEqual(oauthError(await exchange(phanpy, { code: undefined })), [
      400,
      "invalid_request",
      "Missing required parameter: code.",
    ]);
  });

  test("a code lives ten minutes", async () => {
    const browser = await signedIn("alice@rookery.test");
    const code = await codeFor(browser, phanpy);
    const grant = await server.ctx.db.kysely
      .selectFrom("oauth_access_grants")
      .selectAll()
      .where("code_digest", "=", digest(code))
      .executeTakeFirstOrThrow();
    assert.equal(Date.parse(grant.expires_at) - Date.parse(grant.created_at), 10 * 60 * 1000);
    assert.equal(grant.user_id, accounts.alice.user.id);
    assert.equal(grant.redirect_uri, REDIRECT);
  });

  test("deny redirects with error=access_denied and the state", async () => {
    const browser = await signedIn("bob@rookery.test");
    const state = `deny-me"><script>alert(1)</script>`;
    const page = await browser.get(
      authorizePath({
        response_type: "code",
        client_id: other.client_id,
        redirect_uri: REDIRECT,
        scope: "read write",
        state,
      }),
    );
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /<script/i, "the state is escaped in the consent forms");
    const res = await browser.submit(page, (f) => f.fields.decision === "deny");
    assert.equal(res.statusCode, 303);
    const location = locationOf(res);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get("error"), "access_denied");
    assert.equal(
      location.searchParams.get("error_description"),
      "The resource owner or authorization server denied the request.",
    );
    assert.equal(location.searchParams.get("state"), state);
    assert.equal(location.searchParams.get("code"), null);
  });

  test("a redirect URI with its own query keeps it", async () => {
    const browser = await signedIn("bob@rookery.test");
    const res = await authorize(browser, {
      client_id: phanpy.client_id,
      redirect_uri: "https://phanpy.example/alt?keep=1",
      scope: "read",
      state: "s",
    });
    const location = locationOf(res);
    assert.equal(location.pathname, "/alt");
    assert.equal(location.searchParams.get("keep"), "1");
    assert.ok(location.searchParams.get("code"));
    assert.equal(location.searchParams.get("state"), "s");
  });

  test("out-of-band redirect: the code is shown on a page and exchanges", async () => {
    const browser = await signedIn("carol@rookery.test");
    const { verifier, challenge } = pkce();
    const page = await browser.get(
      authorizePath({
        response_type: "code",
        client_id: native.client_id,
        redirect_uri: OOB,
        scope: "read write",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );
    assert.equal(page.statusCode, 200);
    const res = await browser.submit(page, (f) => f.fields.decision === "approve");
    assert.equal(res.statusCode, 303);
    const location = locationOf(res);
    assert.equal(location.origin, ORIGIN);
    assert.equal(location.pathname, "/oauth/authorize/native");
    const code = location.searchParams.get("code")!;
    assert.match(code, /^[\w-]{43}$/);
    const shown = await browser.follow(res);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.headers["content-type"] as string, /^text\/html/);
    const displayed = /<code>([^<]*)<\/code>/.exec(shown.body)?.[1];
    assert.equal(displayed, code);
    const token = tokenShape(await exchange(native, { code: displayed, code_verifier: verifier, redirect_uri: OOB }));
    assert.equal(token.scope, "read write");
    assert.equal(
      (await get(server.app, "/api/v1/accounts/verify_credentials", token.access_token)).json().username,
      "carol",
    );
  });

  test("the redirect URI may be left out when the app registered exactly one", async () => {
    const browser = await signedIn("carol@rookery.test");
    const res = await authorize(browser, { client_id: other.client_id, scope: "read" });
    assert.equal(res.statusCode, 303);
    assert.ok(res.headers.location!.startsWith(`${REDIRECT}?code=`), res.headers.location);
    assert.deepEqual([...locationOf(res).searchParams.keys()], ["code"], "no state when none was sent");
    const ambiguous = await browser.get(
      authorizePath({ response_type: "code", client_id: phanpy.client_id, scope: "read" }),
    );
    assert.equal(ambiguous.statusCode, 400);
    assert.equal(ambiguous.headers.location, undefined);
  });

  test("a scope the app did not register: redirect with error=invalid_scope", async () => {
    for (const browser of [new Browser(server.app), await signedIn("alice@rookery.test")]) {
      const res = await browser.get(
        authorizePath({
          response_type: "code",
          client_id: other.client_id,
          redirect_uri: REDIRECT,
          scope: "read push",
          state: "xy",
        }),
      );
      assert.equal(res.statusCode, 303);
      const location = locationOf(res);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      assert.equal(location.searchParams.get("error"), "invalid_scope");
      assert.equal(location.searchParams.get("error_description"), INVALID_SCOPE);
      assert.equal(location.searchParams.get("state"), "xy");
    }
    const unknown = await new Browser(server.app).get(
      authorizePath({
        response_type: "code",
        client_id: other.client_id,
        redirect_uri: REDIRECT,
        scope: "read:everything",
      }),
    );
    assert.equal(locationOf(unknown).searchParams.get("error"), "invalid_scope");
  });

  test("an unknown client or an unregistered redirect URI: a 400 page, never a redirect", async () => {
    const browser = await signedIn("alice@rookery.test");
    const cases = [
      authorizePath({ response_type: "code", client_id: "nope", redirect_uri: REDIRECT, scope: "read" }),
      authorizePath({ response_type: "code", redirect_uri: REDIRECT, scope: "read" }),
      authorizePath({
        response_type: "code",
        client_id: phanpy.client_id,
        redirect_uri: "https://evil.example/steal",
        scope: "read",
        state: "s",
      }),
      authorizePath({
        response_type: "code",
        client_id: phanpy.client_id,
        redirect_uri: `${REDIRECT}/`,
        scope: "read",
      }),
      authorizePath({
        response_type: "token",
        client_id: phanpy.client_id,
        redirect_uri: "https://evil.example/steal",
        scope: "read",
      }),
    ];
    for (const url of cases) {
      const res = await browser.get(url);
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.headers.location, undefined, url);
      assert.match(res.headers["content-type"] as string, /^text\/html/, url);
      assert.ok(!res.body.includes("evil.example"), url);
      assert.ok(alertOf(res.body), url);
    }
    assert.equal(alertOf((await browser.get(cases[0])).body), INVALID_CLIENT);
    assert.equal(alertOf((await browser.get(cases[2])).body), "The redirect URI included is not valid.");
    const grants = await server.ctx.db.kysely
      .selectFrom("oauth_access_grants")
      .select("id")
      .where("redirect_uri", "like", "%evil%")
      .execute();
    assert.equal(grants.length, 0);
  });

  test("response_type other than code: unsupported_response_type; bad PKCE method: invalid_request", async () => {
    const browser = await signedIn("alice@rookery.test");
    const errorFor = async (params: Record<string, string | undefined>) => {
      const res = await browser.get(
        authorizePath({ client_id: phanpy.client_id, redirect_uri: REDIRECT, scope: "read", state: "z", ...params }),
      );
      assert.equal(res.statusCode, 303, JSON.stringify(params));
      const location = locationOf(res);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      assert.equal(location.searchParams.get("state"), "z");
      assert.equal(location.searchParams.get("code"), null);
      return location.searchParams.get("error");
    };
    assert.equal(await errorFor({ response_type: "token" }), "unsupported_response_type");
    assert.equal(await errorFor({ response_type: undefined }), "unsupported_response_type");
    const { challenge } = pkce();
    assert.equal(
      await errorFor({ response_type: "code", code_challenge: challenge, code_challenge_method: "S512" }),
      "invalid_request",
    );
    assert.equal(await errorFor({ response_type: "code", code_challenge_method: "S256" }), "invalid_request");
    assert.equal(
      await errorFor({ response_type: "code", code_challenge: "too-short", code_challenge_method: "S256" }),
      "invalid_request",
    );
  });

  test("an OOB app's errors are shown on a page, not redirected", async () => {
    const res = await new Browser(server.app).get(
      authorizePath({ response_type: "code", client_id: native.client_id, redirect_uri: OOB, scope: "admin:read" }),
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
    assert.equal(alertOf(res.body), INVALID_SCOPE);
  });

  test("a second authorization with the same scopes skips consent; force_login shows it again", async () => {
    const app = await registerApp(server, "Repeat", "https://repeat.example/cb", "read write");
    const browser = await signedIn("bob@rookery.test");
    const params = {
      response_type: "code",
      client_id: app.client_id,
      redirect_uri: "https://repeat.example/cb",
      scope: "read write",
      state: "1",
    };
    const first = await browser.get(authorizePath(params));
    assert.equal(first.statusCode, 200, "consent the first time");
    const approved = await browser.submit(first, (f) => f.fields.decision === "approve");
    const firstCode = locationOf(approved).searchParams.get("code")!;
    // Approval alone does not skip consent; holding a token does.
    assert.equal((await browser.get(authorizePath(params))).statusCode, 200);
    tokenShape(await exchange(app, { code: firstCode }));

    const again = await browser.get(authorizePath({ ...params, state: "2" }));
    assert.equal(again.statusCode, 303, "consent is skipped");
    const location = locationOf(again);
    assert.equal(location.searchParams.get("state"), "2");
    const code = location.searchParams.get("code")!;
    assert.equal(tokenShape(await exchange(app, { code })).scope, "read write");

    const reordered = await browser.get(authorizePath({ ...params, scope: "write read" }));
    assert.equal(reordered.statusCode, 303, "the same scopes in another order");

    const fewer = await browser.get(authorizePath({ ...params, scope: "read" }));
    assert.equal(fewer.statusCode, 200, "other scopes ask again");

    for (const force of ["true", "1"]) {
      const forced = await browser.get(authorizePath({ ...params, force_login: force }));
      assert.equal(forced.statusCode, 200, `force_login=${force}`);
      assert.ok(findForms(forced.body).some((f) => f.fields.decision === "approve"));
      assert.ok(
        findForms(forced.body).some((f) => f.action === "/auth/sign_out"),
        "offers to switch account",
      );
    }
    const notForced = await browser.get(authorizePath({ ...params, force_login: "false" }));
    assert.equal(notForced.statusCode, 303);

    // "Use another account" on the consent page signs out and comes back to the same request.
    const forcedUrl = authorizePath({ ...params, force_login: "true" });
    const forced = await browser.get(forcedUrl);
    const out = await browser.submit(forced, "/auth/sign_out");
    assert.equal(out.statusCode, 303);
    const signInUrl = locationOf(out);
    assert.equal(signInUrl.pathname, "/auth/sign_in");
    assert.equal(signInUrl.searchParams.get("return_to"), forcedUrl);
    const signInPage = await browser.follow(out);
    const back = await browser.submit(signInPage, "/auth/sign_in", {
      email: "carol@rookery.test",
      password: KIT_PASSWORD,
    });
    assert.equal(back.headers.location, forcedUrl);
    const carolConsent = await browser.follow(back);
    assert.equal(carolConsent.statusCode, 200);
    assert.ok(carolConsent.body.includes("@carol"));
    const carolCode = locationOf(
      await browser.submit(carolConsent, (f) => f.fields.decision === "approve"),
    ).searchParams.get("code")!;
    const carolToken = tokenShape(await exchange(app, { code: carolCode }));
    assert.equal(
      (await get(server.app, "/api/v1/accounts/verify_credentials", carolToken.access_token)).json().username,
      "carol",
    );
    const bobBrowser = await signedIn("bob@rookery.test");

    // Revoking the tokens brings consent back.
    assert.equal((await bobBrowser.get(authorizePath(params))).statusCode, 303);
    await server.ctx.db.kysely
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: new Date().toISOString() })
      .where("application_id", "=", app.id)
      .execute();
    assert.equal((await bobBrowser.get(authorizePath(params))).statusCode, 200);
  });

  test("approving without the CSRF token: 422 page and no code", async () => {
    const browser = await signedIn("carol@rookery.test");
    const page = await browser.get(
      authorizePath({
        response_type: "code",
        client_id: other.client_id,
        redirect_uri: REDIRECT,
        scope: "read write",
        state: "c",
      }),
    );
    assert.equal(page.statusCode, 200);
    const countGrants = async () =>
      Number(
        (
          await server.ctx.db.kysely
            .selectFrom("oauth_access_grants")
            .select((eb) => eb.fn.countAll<string>().as("n"))
            .where("user_id", "=", accounts.carol.user.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const grants = await countGrants();
    for (const [values, omit] of [
      [{}, ["authenticity_token"]],
      [{ authenticity_token: "x".repeat(43) }, []],
    ] as const) {
      const res = await browser.submit(page, (f) => f.fields.decision === "approve", values, [...omit]);
      assert.equal(res.statusCode, 422);
      assert.equal(res.headers.location, undefined);
      assert.match(res.headers["content-type"] as string, /^text\/html/);
      assert.equal(alertOf(res.body), "This form has expired. Go back to the app and try again.");
      assert.ok(!res.body.includes("code="));
    }
    // A browser without the CSRF cookie cannot reuse someone's form either.
    browser.cookies.delete("_rookery_csrf");
    assert.equal((await browser.submit(page, (f) => f.fields.decision === "approve")).statusCode, 422);
    assert.equal(await countGrants(), grants);
  });

  test("posting the consent form signed out goes to the sign-in page", async () => {
    const browser = await signedIn("carol@rookery.test");
    const page = await browser.get(
      authorizePath({ response_type: "code", client_id: other.client_id, redirect_uri: REDIRECT, scope: "read write" }),
    );
    browser.cookies.delete("_rookery_session");
    const res = await browser.submit(page, (f) => f.fields.decision === "approve");
    assert.equal(res.statusCode, 303);
    assert.equal(locationOf(res).pathname, "/auth/sign_in");
  });

  test("an unconfirmed user is asked to confirm the e-mail instead of consenting", async () => {
    await createUser(server.ctx, "unconfirmed", { confirmed: false });
    const url = authorizePath({
      response_type: "code",
      client_id: phanpy.client_id,
      redirect_uri: REDIRECT,
      scope: "read",
    });
    const browser = new Browser(server.app);
    const signIn = await browser.signIn("unconfirmed@rookery.test", KIT_PASSWORD, url);
    assert.equal(signIn.statusCode, 303);
    assert.equal(signIn.headers.location, url);
    const page = await browser.follow(signIn);
    assert.equal(page.statusCode, 403);
    assert.match(page.headers["content-type"] as string, /^text\/html/);
    assert.equal(alertOf(page.body), "Confirm your e-mail address first: follow the link we sent you, then try again.");
    assert.ok(!findForms(page.body).some((f) => f.fields.decision === "approve"));
    // Posting a forged approval does not work either.
    const forged = await browser.post("/oauth/authorize", {
      authenticity_token: browser.cookies.get("_rookery_csrf")!,
      client_id: phanpy.client_id,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: "read",
      decision: "approve",
    });
    assert.equal(forged.statusCode, 403);
    assert.equal(forged.headers.location, undefined);
  });

  test("a pending user is told the account awaits approval", async () => {
    await createUser(server.ctx, "waiting", { approved: false });
    const browser = await signedIn("waiting@rookery.test");
    const page = await browser.get(
      authorizePath({ response_type: "code", client_id: phanpy.client_id, redirect_uri: REDIRECT, scope: "read" }),
    );
    assert.equal(page.statusCode, 403);
    assert.equal(alertOf(page.body), "Your account is waiting for a moderator's approval.");
  });
});

describe("POST /oauth/token (other grants) and errors", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let client: RegisteredApp;
  let second: RegisteredApp;

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    client = await registerApp(server, "Client", "https://client.example/cb", "read write profile");
    second = await registerApp(server, "Second", "https://second.example/cb", "read write");
  });
  after(() => server.close());

  const token = (fields: Record<string, string>, headers?: Record<string, string>) =>
    request(server.app, "POST", "/oauth/token", { form: fields, headers });
  const creds = (app: RegisteredApp = client) => ({ client_id: app.client_id, client_secret: app.client_secret });

  test("client_credentials: an app token, default scope read", async () => {
    const body = tokenShape(await token({ grant_type: "client_credentials", ...creds() }));
    assert.equal(body.scope, "read");
    const row = await server.ctx.db.kysely
      .selectFrom("oauth_access_tokens")
      .selectAll()
      .where("token_digest", "=", digest(body.access_token))
      .executeTakeFirstOrThrow();
    assert.equal(row.user_id, null);
    assert.equal(row.application_id, client.id);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", body.access_token)), [
      422,
      "This method requires an authenticated user",
    ]);
    const app = await get(server.app, "/api/v1/apps/verify_credentials", body.access_token);
    assert.equal(app.statusCode, 200);
    assert.equal(app.json().id, client.id);
  });

  test("client_credentials with a scope subset, through JSON and Basic", async () => {
    const json = await request(server.app, "POST", "/oauth/token", {
      json: { grant_type: "client_credentials", scope: "read write", ...creds() },
    });
    assert.equal(tokenShape(json).scope, "read write");
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64");
    const viaBasic = await token(
      { grant_type: "client_credentials", scope: "write" },
      { authorization: `Basic ${basic}` },
    );
    assert.equal(tokenShape(viaBasic).scope, "write");
  });

  test("client_credentials: a scope outside the app's is invalid_scope", async () => {
    for (const scope of ["read follow", "push", "admin:read", "read:statuses", "nonsense"]) {
      const res = await token({ grant_type: "client_credentials", scope, ...creds() });
      assert.deepEqual(oauthError(res), [400, "invalid_scope", INVALID_SCOPE], scope);
    }
  });

  test("password grant: username is the e-mail, case-insensitive", async () => {
    const res = await token({
      grant_type: "password",
      username: "ALICE@Rookery.TEST",
      password: KIT_PASSWORD,
      scope: "read write",
      ...creds(),
    });
    const body = tokenShape(res);
    assert.equal(body.scope, "read write");
    const me = await get(server.app, "/api/v1/accounts/verify_credentials", body.access_token);
    assert.equal(me.json().id, accounts.alice.account.id);
    const defaulted = tokenShape(
      await token({ grant_type: "password", username: "bob@rookery.test", password: KIT_PASSWORD, ...creds() }),
    );
    assert.equal(defaulted.scope, "read");
  });

  test("password grant: wrong password, unknown user, disabled or suspended user → invalid_grant", async () => {
    const disabled = await createUser(server.ctx, "disabled");
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: true })
      .where("id", "=", disabled.user.id)
      .execute();
    const suspended = await createUser(server.ctx, "suspended");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.account.id)
      .execute();
    const cases: Array<[string, string]> = [
      ["alice@rookery.test", "wrong password"],
      ["alice@rookery.test", ""],
      ["alice", KIT_PASSWORD],
      ["nobody@rookery.test", KIT_PASSWORD],
      ["disabled@rookery.test", KIT_PASSWORD],
      ["suspended@rookery.test", KIT_PASSWORD],
    ];
    for (const [username, password] of cases) {
      const fields: Record<string, string> = { grant_type: "password", username, ...creds() };
      if (password) fields.password = password;
      const res = await token(fields);
      if (password)
        assert.deepEqual(oauthError(res), [400, "invalid_grant", INVALID_GRANT], `${username} / ${password}`);
      else assert.deepEqual(oauthError(res), [400, "invalid_request", "Missing required parameter: password."]);
    }
  });

  test("missing grant_type, unsupported grant types", async () => {
    assert.deepEqual(oauthError(await token({ ...creds() })), [
      400,
      "invalid_request",
      "Missing required parameter: grant_type.",
    ]);
    assert.deepEqual(oauthError(await token({ grant_type: "", ...creds() })), [
      400,
      "invalid_request",
      "Missing required parameter: grant_type.",
    ]);
    for (const grant of ["refresh_token", "implicit", "urn:ietf:params:oauth:grant-type:device_code"]) {
      const res = await token({ grant_type: grant, refresh_token: "x", ...creds() });
      assert.deepEqual(oauthError(res), [400, "unsupported_grant_type", UNSUPPORTED_GRANT], grant);
      assert.equal(res.headers["cache-control"], "no-store");
    }
  });

  test("bad or missing client authentication → 401 invalid_client", async () => {
    const cases: Array<[Record<string, string>, Record<string, string>?]> = [
      [{ grant_type: "client_credentials", client_id: client.client_id, client_secret: "wrong" }],
      [{ grant_type: "client_credentials", client_id: client.client_id, client_secret: second.client_secret }],
      [{ grant_type: "client_credentials", client_id: "unknown", client_secret: client.client_secret }],
      [{ grant_type: "client_credentials", client_id: client.client_id }],
      [{ grant_type: "client_credentials" }],
      [
        {
          grant_type: "password",
          username: "alice@rookery.test",
          password: KIT_PASSWORD,
          client_id: client.client_id,
          client_secret: "",
        },
      ],
      [
        { grant_type: "client_credentials" },
        { authorization: `Basic ${Buffer.from(`${client.client_id}:nope`).toString("base64")}` },
      ],
    ];
    for (const [fields, headers] of cases) {
      const res = await token(fields, headers);
      assert.deepEqual(oauthError(res), [401, "invalid_client", INVALID_CLIENT], JSON.stringify(fields));
    }
    const issued = await server.ctx.db.kysely
      .selectFrom("oauth_access_tokens")
      .select("id")
      .where("application_id", "=", client.id)
      .where("user_id", "=", accounts.alice.user.id)
      .execute();
    assert.equal(issued.length, 1, "only the earlier successful password grant issued a token for alice");
  });
});

describe("POST /oauth/revoke", () => {
  let server: TestServer;
  let client: RegisteredApp;
  let second: RegisteredApp;

  before(async () => {
    server = await createTestServer();
    await standardAccounts(server.ctx);
    client = await registerApp(server, "Client", "https://client.example/cb", "read write");
    second = await registerApp(server, "Second", "https://second.example/cb", "read write");
  });
  after(() => server.close());

  const passwordToken = async (app: RegisteredApp) =>
    tokenShape(
      await request(server.app, "POST", "/oauth/token", {
        form: {
          grant_type: "password",
          username: "alice@rookery.test",
          password: KIT_PASSWORD,
          client_id: app.client_id,
          client_secret: app.client_secret,
        },
      }),
    ).access_token;
  const revoke = (app: RegisteredApp, tokenValue?: string, secret = app.client_secret) =>
    request(server.app, "POST", "/oauth/revoke", {
      form:
        tokenValue === undefined
          ? { client_id: app.client_id, client_secret: secret }
          : { client_id: app.client_id, client_secret: secret, token: tokenValue },
    });

  test("revokes the client's token; later API calls get 401", async () => {
    const accessToken = await passwordToken(client);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).statusCode, 200);
    const res = await revoke(client, accessToken);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)), [
      401,
      "The access token was revoked",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/apps/verify_credentials", accessToken)), [
      401,
      "The access token was revoked",
    ]);
    const again = await revoke(client, accessToken);
    assert.equal(again.statusCode, 200, "revoking twice is fine");
    assert.deepEqual(again.json(), {});
  });

  test("revokes app tokens too (JSON body)", async () => {
    const appTokenValue = tokenShape(
      await request(server.app, "POST", "/oauth/token", {
        form: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret },
      }),
    ).access_token;
    const res = await request(server.app, "POST", "/oauth/revoke", {
      json: { client_id: client.client_id, client_secret: client.client_secret, token: appTokenValue },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/apps/verify_credentials", appTokenValue)), [
      401,
      "The access token was revoked",
    ]);
  });

  test("an unknown token: 200 {}", async () => {
    const res = await revoke(client, "never-issued");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
  });

  test("another client's token: 403 unauthorized_client, and the token keeps working", async () => {
    const accessToken = await passwordToken(second);
    const res = await revoke(client, accessToken);
    assert.deepEqual(res.json(), {
      error: "unauthorized_client",
      error_description: "You are not authorized to revoke this token",
    });
    assert.equal(res.statusCode, 403);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).statusCode, 200);
    const kitToken = await appToken(server.ctx, "read");
    assert.equal((await revoke(client, kitToken)).statusCode, 403);
  });

  test("accepts HTTP Basic client authentication", async () => {
    const accessToken = await passwordToken(client);
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64");
    const res = await request(server.app, "POST", "/oauth/revoke", {
      headers: { authorization: `Basic ${basic}` },
      form: { token: accessToken },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)), [
      401,
      "The access token was revoked",
    ]);
  });

  test("bad client credentials: 401 invalid_client; no token: 400", async () => {
    const accessToken = await passwordToken(client);
    assert.deepEqual(oauthError(await revoke(client, accessToken, "wrong")), [401, "invalid_client", INVALID_CLIENT]);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).statusCode, 200);
    assert.deepEqual(oauthError(await revoke(client)), [400, "invalid_request", "Missing required parameter: token."]);
  });
});

describe("/oauth/userinfo", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let client: RegisteredApp;

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    client = await registerApp(server, "Profile", "https://profile.example/cb", "read profile");
  });
  after(() => server.close());

  const tokenWith = async (scope: string) =>
    tokenShape(
      await request(server.app, "POST", "/oauth/token", {
        form: {
          grant_type: "password",
          username: "alice@rookery.test",
          password: KIT_PASSWORD,
          scope,
          client_id: client.client_id,
          client_secret: client.client_secret,
        },
      }),
    ).access_token;

  test("a profile-scoped token reads the user's OpenID-style profile (GET and POST)", async () => {
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ display_name: "Alice A." })
      .where("id", "=", accounts.alice.account.id)
      .execute();
    const accessToken = await tokenWith("profile");
    const expected = {
      iss: "https://rookery.test/",
      sub: "https://rookery.test/users/alice",
      name: "Alice A.",
      preferred_username: "alice",
      profile: "https://rookery.test/@alice",
      picture: "https://rookery.test/avatars/original/missing.png",
    };
    const res = await get(server.app, "/oauth/userinfo", accessToken);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), expected);
    const posted = await request(server.app, "POST", "/oauth/userinfo", { token: accessToken });
    assert.deepEqual(posted.json(), expected);
    const me = (await get(server.app, "/api/v1/accounts/verify_credentials", accessToken)).json();
    assert.equal(me.avatar, expected.picture, "the same picture as the account's avatar");
  });

  test("a read token is outside the scopes; no token is 401; an app token is 422", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/oauth/userinfo", await tokenWith("read"))), [
      403,
      "This action is outside the authorized scopes",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/oauth/userinfo")), [401, "The access token is invalid"]);
    assert.deepEqual(errorOf(await get(server.app, "/oauth/userinfo", "bogus")), [401, "The access token is invalid"]);
    const app = tokenShape(
      await request(server.app, "POST", "/oauth/token", {
        form: {
          grant_type: "client_credentials",
          scope: "profile",
          client_id: client.client_id,
          client_secret: client.client_secret,
        },
      }),
    ).access_token;
    assert.deepEqual(errorOf(await get(server.app, "/oauth/userinfo", app)), [
      422,
      "This method requires an authenticated user",
    ]);
  });
});

describe("GET /.well-known/oauth-authorization-server", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("describes the endpoints (RFC 8414)", async () => {
    const res = await get(server.app, "/.well-known/oauth-authorization-server");
    assert.equal(res.statusCode, 200);
    assert.match(res.headers["content-type"] as string, /^application\/json/);
    const body = res.json();
    assert.equal(body.issuer, "https://rookery.test/");
    assert.equal(body.authorization_endpoint, "https://rookery.test/oauth/authorize");
    assert.equal(body.token_endpoint, "https://rookery.test/oauth/token");
    assert.equal(body.revocation_endpoint, "https://rookery.test/oauth/revoke");
    assert.equal(body.userinfo_endpoint, "https://rookery.test/oauth/userinfo");
    assert.equal(body.app_registration_endpoint, "https://rookery.test/api/v1/apps");
    assert.ok(body.code_challenge_methods_supported.includes("S256"));
    assert.deepEqual(body.response_types_supported, ["code"]);
    assert.ok(body.grant_types_supported.includes("authorization_code"));
    assert.ok(body.grant_types_supported.includes("client_credentials"));
    assert.ok(!body.grant_types_supported.includes("refresh_token"));
    assert.deepEqual([...body.token_endpoint_auth_methods_supported].sort(), [
      "client_secret_basic",
      "client_secret_post",
    ]);
    assert.equal(body.scopes_supported[0], "read", "the default scope first");
    for (const scope of [
      "write",
      "push",
      "follow",
      "profile",
      "read:statuses",
      "write:media",
      "admin:read",
      "admin:write:reports",
    ])
      assert.ok(body.scopes_supported.includes(scope), scope);
    assert.ok(!body.scopes_supported.includes("admin"));
  });
});
