import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  appToken,
  createTestServer,
  errorOf,
  get,
  multipartBody,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

const CREDENTIAL_KEYS = [
  "id",
  "name",
  "website",
  "scopes",
  "redirect_uris",
  "vapid_key",
  "redirect_uri",
  "client_id",
  "client_secret",
  "client_secret_expires_at",
];
const APPLICATION_KEYS = ["id", "name", "website", "scopes", "redirect_uris", "vapid_key", "redirect_uri"];

describe("POST /api/v1/apps", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const register = (form: Record<string, string | string[]> | Array<[string, string]>) =>
    request(server.app, "POST", "/api/v1/apps", { form });

  test("registers an app from a form body and answers a CredentialApplication", async () => {
    const res = await register({
      client_name: "Tusky",
      redirect_uris: "https://tusky.example/callback",
      scopes: "read write push",
      website: "https://tusky.example",
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
    const body = res.json();
    assert.deepEqual(Object.keys(body), CREDENTIAL_KEYS);
    assert.match(body.id, /^\d+$/);
    assert.equal(body.name, "Tusky");
    assert.equal(body.website, "https://tusky.example");
    assert.deepEqual(body.scopes, ["read", "write", "push"]);
    assert.deepEqual(body.redirect_uris, ["https://tusky.example/callback"]);
    assert.equal(body.redirect_uri, "https://tusky.example/callback");
    assert.match(body.client_id, /^[\w-]{32,}$/);
    assert.match(body.client_secret, /^[\w-]{32,}$/);
    assert.notEqual(body.client_id, body.client_secret);
    assert.equal(body.client_secret_expires_at, 0);
    const row = await server.ctx.db.kysely
      .selectFrom("oauth_applications")
      .selectAll()
      .where("id", "=", body.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.client_id, body.client_id);
    assert.equal(row.scopes, "read write push");
  });

  test("each registration gets its own credentials", async () => {
    const a = (await register({ client_name: "Same", redirect_uris: "https://same.example/cb" })).json();
    const b = (await register({ client_name: "Same", redirect_uris: "https://same.example/cb" })).json();
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.client_id, b.client_id);
    assert.notEqual(a.client_secret, b.client_secret);
  });

  test("accepts a JSON body with redirect_uris as an array", async () => {
    const res = await request(server.app, "POST", "/api/v1/apps", {
      json: {
        client_name: "Elk",
        redirect_uris: ["https://elk.example/cb", "elk://oauth"],
        scopes: "read write follow push",
        website: "",
      },
    });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.redirect_uris, ["https://elk.example/cb", "elk://oauth"]);
    assert.equal(body.redirect_uri, "https://elk.example/cb\nelk://oauth");
    assert.deepEqual(body.scopes, ["read", "write", "follow", "push"]);
    assert.equal(body.website, null);
  });

  test("accepts a multipart body", async () => {
    const { body, contentType } = multipartBody([
      { name: "client_name", value: "Ivory" },
      { name: "redirect_uris", value: "ivory://callback" },
      { name: "scopes", value: "read:statuses write:media" },
      { name: "website", value: "https://ivory.example" },
    ]);
    const res = await request(server.app, "POST", "/api/v1/apps", { body, headers: { "content-type": contentType } });
    assert.equal(res.statusCode, 200);
    const app = res.json();
    assert.equal(app.name, "Ivory");
    assert.deepEqual(app.redirect_uris, ["ivory://callback"]);
    assert.deepEqual(app.scopes, ["read:statuses", "write:media"]);
    assert.equal(app.website, "https://ivory.example");
  });

  test("redirect_uris as a form array (redirect_uris[])", async () => {
    const res = await register([
      ["client_name", "Arrays"],
      ["redirect_uris[]", "https://a.example/one"],
      ["redirect_uris[]", "https://a.example/two"],
    ]);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().redirect_uris, ["https://a.example/one", "https://a.example/two"]);
    assert.equal(res.json().redirect_uri, "https://a.example/one\nhttps://a.example/two");
  });

  test("a redirect_uris string may hold several URIs separated by newlines or spaces", async () => {
    const newline = (
      await register({
        client_name: "Lines",
        redirect_uris: "https://b.example/one\nhttps://b.example/two\r\nurn:ietf:wg:oauth:2.0:oob",
      })
    ).json();
    assert.deepEqual(newline.redirect_uris, [
      "https://b.example/one",
      "https://b.example/two",
      "urn:ietf:wg:oauth:2.0:oob",
    ]);
    assert.equal(newline.redirect_uri, "https://b.example/one\nhttps://b.example/two\nurn:ietf:wg:oauth:2.0:oob");
    const spaced = (
      await register({ client_name: "Spaces", redirect_uris: "  https://c.example/one   https://c.example/two " })
    ).json();
    assert.deepEqual(spaced.redirect_uris, ["https://c.example/one", "https://c.example/two"]);
  });

  test("scopes default to read; blank website is null; http and custom schemes and OOB are allowed", async () => {
    const res = await register({ client_name: "Defaults", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", website: "   " });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body.scopes, ["read"]);
    assert.equal(body.website, null);
    assert.deepEqual(body.redirect_uris, ["urn:ietf:wg:oauth:2.0:oob"]);
    const blankScopes = (
      await register({ client_name: "Blank", redirect_uris: "http://localhost:4000/cb", scopes: "" })
    ).json();
    assert.deepEqual(blankScopes.scopes, ["read"]);
    assert.deepEqual(blankScopes.redirect_uris, ["http://localhost:4000/cb"]);
  });

  test("the name is trimmed", async () => {
    const body = (await register({ client_name: "  Padded  ", redirect_uris: "https://p.example/cb" })).json();
    assert.equal(body.name, "Padded");
  });

  test("422 texts for each invalid field", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ redirect_uris: "https://x.example/cb" }, "Validation failed: Name can't be blank"],
      [{ client_name: "   ", redirect_uris: "https://x.example/cb" }, "Validation failed: Name can't be blank"],
      [
        { client_name: "x".repeat(61), redirect_uris: "https://x.example/cb" },
        "Validation failed: Name is too long (maximum is 60 characters)",
      ],
      [{ client_name: "NoUri" }, "Validation failed: Redirect URI can't be blank"],
      [{ client_name: "NoUri", redirect_uris: "  " }, "Validation failed: Redirect URI can't be blank"],
      [
        { client_name: "Relative", redirect_uris: "/callback" },
        "Validation failed: Redirect URI must be an absolute URI.",
      ],
      [{ client_name: "Word", redirect_uris: "callback" }, "Validation failed: Redirect URI must be an absolute URI."],
      [
        { client_name: "Fragment", redirect_uris: "https://x.example/cb#frag" },
        "Validation failed: Redirect URI cannot contain a fragment.",
      ],
      [
        { client_name: "Script", redirect_uris: "javascript:alert(1)" },
        "Validation failed: Redirect URI is forbidden by the server.",
      ],
      [
        { client_name: "Data", redirect_uris: "data:text/html,hi" },
        "Validation failed: Redirect URI is forbidden by the server.",
      ],
      [
        { client_name: "Scope", redirect_uris: "https://x.example/cb", scopes: "read bogus" },
        "Validation failed: Scopes doesn't match configured on the server.",
      ],
      [
        { client_name: "Scope", redirect_uris: "https://x.example/cb", scopes: "admin" },
        "Validation failed: Scopes doesn't match configured on the server.",
      ],
      [
        { client_name: "Site", redirect_uris: "https://x.example/cb", website: "not a url" },
        "Validation failed: Website is not a valid URL",
      ],
      [
        { client_name: "Site", redirect_uris: "https://x.example/cb", website: "ftp://files.example" },
        "Validation failed: Website is not a valid URL",
      ],
      [{}, "Validation failed: Name can't be blank, Redirect URI can't be blank"],
    ];
    const before = await server.ctx.db.kysely
      .selectFrom("oauth_applications")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    for (const [form, message] of cases) {
      assert.deepEqual(errorOf(await register(form)), [422, message], JSON.stringify(form));
    }
    const afterCount = await server.ctx.db.kysely
      .selectFrom("oauth_applications")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n), "no application is stored for a refused registration");
  });

  test("one bad URI among good ones refuses the whole registration", async () => {
    assert.deepEqual(
      errorOf(
        await register({ client_name: "Mixed", redirect_uris: "https://ok.example/cb\nhttps://ok.example/cb#x" }),
      ),
      [422, "Validation failed: Redirect URI cannot contain a fragment."],
    );
  });

  test("needs no token, and an unknown token is ignored", async () => {
    const res = await request(server.app, "POST", "/api/v1/apps", {
      token: "not-a-token",
      form: { client_name: "Anon", redirect_uris: "https://anon.example/cb" },
    });
    assert.equal(res.statusCode, 200);
  });
});

describe("POST /api/v1/apps rate limit", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const registerFrom = (remoteAddress: string, name: string) =>
    server.app.inject({
      method: "POST",
      url: "/api/v1/apps",
      remoteAddress,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `client_name=${name}&redirect_uris=${encodeURIComponent("https://rl.example/cb")}`,
    });

  test("5 registrations per IP per 10 minutes, with X-RateLimit-* headers, then 429", async () => {
    const startedAt = Date.now();
    for (let i = 1; i <= 5; i++) {
      const res = await registerFrom("203.0.113.7", `App${i}`);
      assert.equal(res.statusCode, 200, `registration ${i}`);
      assert.equal(res.headers["x-ratelimit-limit"], "5");
      assert.equal(res.headers["x-ratelimit-remaining"], String(5 - i));
      const reset = res.headers["x-ratelimit-reset"] as string;
      assert.match(reset, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      const resetMs = Date.parse(reset);
      assert.equal(resetMs % (10 * 60_000), 0, "windows are aligned to 10 minutes");
      assert.ok(resetMs > startedAt && resetMs <= Date.now() + 10 * 60_000, reset);
    }
    const refused = await registerFrom("203.0.113.7", "App6");
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-limit"], "5");
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    assert.match(refused.headers["x-ratelimit-reset"] as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const stored = await server.ctx.db.kysely
      .selectFrom("oauth_applications")
      .select("name")
      .where("name", "=", "App6")
      .execute();
    assert.equal(stored.length, 0);
    // Another address has its own allowance.
    const other = await registerFrom("198.51.100.20", "Other");
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers["x-ratelimit-remaining"], "4");
  });

  test("refused registrations count too", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await server.app.inject({
        method: "POST",
        url: "/api/v1/apps",
        remoteAddress: "203.0.113.99",
        payload: {},
      });
      assert.equal(res.statusCode, 422);
    }
    assert.equal((await registerFrom("203.0.113.99", "Late")).statusCode, 429);
  });

  test("loopback is never throttled and gets no rate-limit headers", async () => {
    for (let i = 0; i < 8; i++) {
      const res = await registerFrom("127.0.0.1", `Local${i}`);
      assert.equal(res.statusCode, 200, `registration ${i}`);
      assert.equal(res.headers["x-ratelimit-limit"], undefined);
    }
  });
});

describe("GET /api/v1/apps/verify_credentials", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("with a user token: the Application, without credentials", async () => {
    const res = await get(server.app, "/api/v1/apps/verify_credentials", accounts.alice.token);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), APPLICATION_KEYS);
    assert.deepEqual(body, {
      id: accounts.app.id,
      name: "Test Client",
      website: "https://client.example",
      scopes: ["read", "write", "follow", "push"],
      redirect_uris: ["urn:ietf:wg:oauth:2.0:oob"],
      vapid_key: body.vapid_key,
      redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
    });
  });

  test("with an app token, and with a token of any scope", async () => {
    const token = await appToken(server.ctx, "read");
    const res = await get(server.app, "/api/v1/apps/verify_credentials", token);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, accounts.app.id);
    const pushOnly = await appToken(server.ctx, "push");
    assert.equal((await get(server.app, "/api/v1/apps/verify_credentials", pushOnly)).json().name, "Test Client");
  });

  test("answers the token's own app", async () => {
    const registered = (
      await request(server.app, "POST", "/api/v1/apps", {
        form: { client_name: "Mine", redirect_uris: "https://mine.example/cb", scopes: "read write" },
      })
    ).json();
    const token = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "client_credentials",
        client_id: registered.client_id,
        client_secret: registered.client_secret,
      },
    });
    const res = await get(server.app, "/api/v1/apps/verify_credentials", token.json().access_token);
    assert.deepEqual(res.json(), {
      id: registered.id,
      name: "Mine",
      website: null,
      scopes: ["read", "write"],
      redirect_uris: ["https://mine.example/cb"],
      vapid_key: registered.vapid_key,
      redirect_uri: "https://mine.example/cb",
    });
    assert.match(registered.vapid_key, /^[A-Za-z0-9_-]{80,}$/);
  });

  test("401 without a token or with an unknown one; revoked tokens are named", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/apps/verify_credentials")), [
      401,
      "The access token is invalid",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/apps/verify_credentials", "bogus")), [
      401,
      "The access token is invalid",
    ]);
    const token = await appToken(server.ctx, "write");
    await server.ctx.db.kysely
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: new Date().toISOString() })
      .where("scopes", "=", "write")
      .where("user_id", "is", null)
      .execute();
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/apps/verify_credentials", token)), [
      401,
      "The access token was revoked",
    ]);
  });
});
