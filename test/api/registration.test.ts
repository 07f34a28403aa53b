import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { alertOf, KIT_PASSWORD } from "../browser.ts";
import { newId } from "../../src/db/ids.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  createTestServer,
  errorOf,
  get,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

interface RegisteredApp {
  id: string;
  client_id: string;
  client_secret: string;
}

interface Mail {
  file: string;
  to: string;
  subject: string;
  text: string;
  /** The confirmation link's path and query. */
  link: string | undefined;
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

/** The .eml files written so far, oldest first (their names are time-ordered IDs). */
function mailFiles(server: TestServer): string[] {
  if (!existsSync(server.config.mailDir)) return [];
  return readdirSync(server.config.mailDir)
    .filter((f) => f.endsWith(".eml"))
    .sort((a, b) => (BigInt(a.replace(".eml", "")) < BigInt(b.replace(".eml", "")) ? -1 : 1));
}

function readMail(server: TestServer, file: string): Mail {
  const raw = readFileSync(join(server.config.mailDir, file), "utf8");
  const split = raw.indexOf("\n\n");
  const head = raw.slice(0, split);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, "mi").exec(head)?.[1] ?? "";
  const body = /quoted-printable/i.test(header("Content-Transfer-Encoding"))
    ? decodeQuotedPrintable(raw.slice(split + 2))
    : raw.slice(split + 2);
  const link = /https:\/\/rookery\.test(\/auth\/confirmation\?confirmation_token=[\w-]+)/.exec(body)?.[1];
  return { file, to: header("To"), subject: header("Subject"), text: body, link };
}

/** Delivers queued mail and returns the newest message. */
async function newestMail(server: TestServer): Promise<Mail> {
  await server.ctx.jobs.drain();
  const files = mailFiles(server);
  assert.ok(files.length > 0, "a mail was written");
  return readMail(server, files[files.length - 1]);
}

async function registerApp(server: TestServer, name: string, scopes = "read write"): Promise<RegisteredApp> {
  const res = await request(server.app, "POST", "/api/v1/apps", {
    form: { client_name: name, redirect_uris: "https://signup.example/cb", scopes },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function clientToken(server: TestServer, app: RegisteredApp, scope = "write"): Promise<string> {
  const res = await request(server.app, "POST", "/oauth/token", {
    form: { grant_type: "client_credentials", scope, client_id: app.client_id, client_secret: app.client_secret },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().access_token;
}

let serial = 0;
/** A valid sign-up, unique on every call; fields are overridden by `extra`. */
function signUp(extra: Record<string, unknown> = {}): Record<string, unknown> {
  serial++;
  return {
    username: `newbie${serial}`,
    email: `newbie${serial}@example.com`,
    password: "a fine passphrase",
    agreement: "true",
    locale: "en",
    ...extra,
  };
}

function asForm(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
}

describe("POST /api/v1/accounts", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let app: RegisteredApp;
  let token: string;

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    app = await registerApp(server, "Sign-up client");
    token = await clientToken(server, app);
    await server.ctx.db.kysely
      .insertInto("email_domain_blocks")
      .values({ id: newId(), domain: "blocked.example", created_at: new Date().toISOString() })
      .execute();
  });
  after(() => server.close());

  const register = (fields: Record<string, unknown>, bearer: string | null = token) =>
    request(server.app, "POST", "/api/v1/accounts", { token: bearer ?? undefined, form: asForm(fields) });
  const registerJson = (fields: Record<string, unknown>) =>
    request(server.app, "POST", "/api/v1/accounts", { token, json: fields });

  /** The `details` of a refused sign-up (asserting the 422 body's shape). */
  async function details(
    res: LightMyRequestResponse,
  ): Promise<Record<string, Array<{ error: string; description: string }>>> {
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ["error", "details"]);
    assert.match(body.error, /^Validation failed: \S/);
    for (const [field, list] of Object.entries(
      body.details as Record<string, Array<{ error: string; description: string }>>,
    )) {
      assert.ok(list.length > 0, field);
      for (const entry of list) {
        assert.deepEqual(Object.keys(entry), ["error", "description"], field);
        assert.match(entry.error, /^ERR_[A-Z_]+$/);
        assert.ok(entry.description.length > 0);
      }
    }
    return body.details;
  }
  const codes = async (res: LightMyRequestResponse, field: string) => (await details(res))[field]?.map((e) => e.error);

  test("signs up: a Token for an unconfirmed user, a confirmation mail, and the link confirms", async () => {
    const mailsBefore = mailFiles(server).length;
    const res = await register({
      username: "Newcomer",
      email: "Newcomer@Example.com",
      password: "a fine passphrase",
      agreement: "true",
      locale: "de",
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers["cache-control"], "no-store");
    const body = res.json();
    assert.deepEqual(Object.keys(body), ["access_token", "token_type", "scope", "created_at"]);
    assert.equal(body.token_type, "Bearer");
    assert.equal(body.scope, "read write", "the app's registered scopes");
    assert.ok(Number.isInteger(body.created_at));
    assert.match(body.access_token, /^[\w-]{43}$/);

    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .innerJoin("accounts", "accounts.id", "users.account_id")
      .select([
        "users.id",
        "users.email",
        "users.confirmed_at",
        "users.approved",
        "users.locale",
        "users.created_by_application_id",
        "users.sign_up_ip",
        "accounts.username",
        "accounts.domain",
      ])
      .where("accounts.username", "=", "Newcomer")
      .executeTakeFirstOrThrow();
    assert.equal(user.email, "Newcomer@Example.com");
    assert.equal(user.confirmed_at, null);
    assert.equal(Boolean(user.approved), true);
    assert.equal(user.locale, "de");
    assert.equal(user.created_by_application_id, app.id);
    assert.equal(user.sign_up_ip, "127.0.0.1");
    assert.equal(user.domain, null);

    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", body.access_token)), [
      403,
      "Your login is missing a confirmed e-mail address",
    ]);

    const mail = await newestMail(server);
    assert.equal(mailFiles(server).length, mailsBefore + 1, "one mail");
    assert.equal(mail.to.toLowerCase(), "newcomer@example.com");
    assert.equal(mail.subject, "Rookery: Confirmation instructions for rookery.test");
    assert.ok(mail.link, `a confirmation link in:\n${mail.text}`);

    const confirmed = await get(server.app, mail.link);
    assert.equal(confirmed.statusCode, 200);
    assert.match(confirmed.headers["content-type"] as string, /^text\/html/);
    assert.ok(confirmed.body.includes("Your e-mail address has been confirmed."));
    const me = await get(server.app, "/api/v1/accounts/verify_credentials", body.access_token);
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().username, "Newcomer");
    assert.equal(me.json().acct, "Newcomer");

    const reused = await get(server.app, mail.link);
    assert.equal(reused.statusCode, 404, "a link confirms once");
    assert.equal(alertOf(reused.body), "This confirmation link is not valid.");
    const bogus = await get(server.app, "/auth/confirmation?confirmation_token=bogus");
    assert.equal(bogus.statusCode, 404);
  });

  test("an expired confirmation link is refused", async () => {
    const res = await register(signUp({ username: "slowpoke" }));
    assert.equal(res.statusCode, 200);
    const mail = await newestMail(server);
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ confirmation_sent_at: new Date(Date.now() - 3 * 24 * 60 * 60 * 1000).toISOString() })
      .where("email", "=", mail.to)
      .execute();
    const page = await get(server.app, mail.link!);
    assert.equal(page.statusCode, 410);
    assert.equal(alertOf(page.body), "This confirmation link has expired. Sign in to get a new one.");
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", res.json().access_token)), [
      403,
      "Your login is missing a confirmed e-mail address",
    ]);
  });

  test("a JSON body works, with agreement as a boolean", async () => {
    const res = await registerJson(signUp({ username: "jsonuser", agreement: true }));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().token_type, "Bearer");
  });

  test("the 422 body: error text and details per parameter (ERR_BLANK)", async () => {
    const res = await register({});
    assert.deepEqual(await details(res), {
      username: [{ error: "ERR_BLANK", description: "can't be blank" }],
      email: [{ error: "ERR_BLANK", description: "can't be blank" }],
      password: [{ error: "ERR_BLANK", description: "can't be blank" }],
      agreement: [{ error: "ERR_ACCEPTED", description: "must be accepted" }],
    });
    assert.ok(res.json().error.includes("Username can't be blank"), res.json().error);
    assert.ok(res.json().error.includes("Password can't be blank"), res.json().error);
    assert.deepEqual(await codes(await register(signUp({ username: "   " })), "username"), ["ERR_BLANK"]);
    assert.deepEqual(await codes(await register(signUp({ email: "" })), "email"), ["ERR_BLANK"]);
    assert.deepEqual(await codes(await register(signUp({ password: "" })), "password"), ["ERR_BLANK"]);
  });

  test("ERR_INVALID: username characters, malformed e-mail", async () => {
    for (const username of ["bad name", "bad!", "dotted.name", "dash-name", "héllo"]) {
      const d = await details(await register(signUp({ username })));
      assert.deepEqual(
        d.username,
        [{ error: "ERR_INVALID", description: "must contain only letters, numbers and underscores" }],
        username,
      );
    }
    for (const email of ["not-an-email", "two@@example.com", "nohost@", "@nouser.example", "spaces in@example.com"]) {
      const d = await details(await register(signUp({ email })));
      assert.deepEqual(d.email, [{ error: "ERR_INVALID", description: "is invalid" }], email);
    }
    const ok = await register(signUp({ username: "Under_Score_9" }));
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test("ERR_TAKEN: username case-insensitively, e-mail case-insensitively", async () => {
    for (const username of ["alice", "ALICE", "Alice"])
      assert.deepEqual(await codes(await register(signUp({ username })), "username"), ["ERR_TAKEN"], username);
    for (const email of ["bob@rookery.test", "BOB@Rookery.Test"])
      assert.deepEqual(await codes(await register(signUp({ email })), "email"), ["ERR_TAKEN"], email);
    // Remote accounts do not hold local names.
    assert.equal((await register(signUp({ username: "rita" }))).statusCode, 200);
  });

  test("ERR_RESERVED: administrative names", async () => {
    for (const username of ["root", "Root", "postmaster", "webmaster"]) {
      const d = await details(await register(signUp({ username })));
      assert.deepEqual(d.username, [{ error: "ERR_RESERVED", description: "is reserved" }], username);
    }
    // "admin" is reserved (and also held by the kit's admin).
    assert.ok((await codes(await register(signUp({ username: "admin" })), "username"))?.includes("ERR_RESERVED"));
  });

  test('ERR_ACCEPTED unless agreement is true, "true" or "1"', async () => {
    for (const agreement of [undefined, "on", "false", "0", "yes", ""]) {
      assert.deepEqual(
        (await details(await register(signUp({ agreement })))).agreement,
        [{ error: "ERR_ACCEPTED", description: "must be accepted" }],
        String(agreement),
      );
    }
    assert.deepEqual(
      (await details(await registerJson(signUp({ agreement: false })))).agreement?.[0].error,
      "ERR_ACCEPTED",
    );
    for (const agreement of ["true", "1"])
      assert.equal((await register(signUp({ agreement }))).statusCode, 200, agreement);
    assert.equal((await registerJson(signUp({ agreement: true }))).statusCode, 200);
  });

  test("ERR_TOO_LONG and ERR_TOO_SHORT: username over 30, password under 8 or over 72", async () => {
    assert.deepEqual((await details(await register(signUp({ username: "u".repeat(31) })))).username, [
      { error: "ERR_TOO_LONG", description: "is too long (maximum is 30 characters)" },
    ]);
    assert.deepEqual((await details(await register(signUp({ password: "p".repeat(73) })))).password, [
      { error: "ERR_TOO_LONG", description: "is too long (maximum is 72 characters)" },
    ]);
    assert.deepEqual((await details(await register(signUp({ password: "1234567" })))).password, [
      { error: "ERR_TOO_SHORT", description: "is too short (minimum is 8 characters)" },
    ]);
    assert.equal((await register(signUp({ username: "u".repeat(30) }))).statusCode, 200);
    assert.equal((await register(signUp({ password: "12345678" }))).statusCode, 200);
    assert.equal((await register(signUp({ password: "p".repeat(72) }))).statusCode, 200);
  });

  test("ERR_INCLUSION: an unsupported locale", async () => {
    assert.deepEqual((await details(await register(signUp({ locale: "xx-nope" })))).locale, [
      { error: "ERR_INCLUSION", description: "is not included in the list" },
    ]);
    assert.deepEqual(await codes(await register(signUp({ locale: "klingon" })), "locale"), ["ERR_INCLUSION"]);
    assert.equal((await register(signUp({ locale: "pt-BR" }))).statusCode, 200);
  });

  test("ERR_BLOCKED: a blocked e-mail domain and its subdomains", async () => {
    for (const email of ["someone@blocked.example", "someone@mail.blocked.example", "someone@BLOCKED.example"]) {
      assert.deepEqual(await codes(await register(signUp({ email })), "email"), ["ERR_BLOCKED"], email);
    }
    assert.equal(
      (await register(signUp({ email: "someone@notblocked.example" }))).statusCode,
      200,
      "a different domain that merely ends the same way",
    );
  });

  test("ERR_UNREACHABLE: a domain that cannot receive mail", async () => {
    assert.deepEqual((await details(await register(signUp({ email: "someone@nowhere.invalid" })))).email, [
      { error: "ERR_UNREACHABLE", description: "does not seem to exist" },
    ]);
  });

  test("several problems at once are all reported", async () => {
    const d = await details(
      await register({
        username: "bad name",
        email: "bob@rookery.test",
        password: "short",
        agreement: "on",
        locale: "xx-nope",
      }),
    );
    assert.deepEqual(Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.map((e) => e.error)])), {
      username: ["ERR_INVALID"],
      email: ["ERR_TAKEN"],
      password: ["ERR_TOO_SHORT"],
      agreement: ["ERR_ACCEPTED"],
      locale: ["ERR_INCLUSION"],
    });
  });

  test("nothing is stored for a refused sign-up", async () => {
    await register(signUp({ username: "refused_one", agreement: "on" }));
    const row = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("id")
      .where("username", "=", "refused_one")
      .executeTakeFirst();
    assert.equal(row, undefined);
  });

  test("needs an app token: a user token is 403, no token is 401, a token without write is 403", async () => {
    assert.deepEqual(errorOf(await register(signUp(), accounts.alice.token)), [
      403,
      "This method requires an client credentials authentication",
    ]);
    assert.deepEqual(errorOf(await register(signUp(), null)), [401, "The access token is invalid"]);
    assert.deepEqual(errorOf(await register(signUp(), "bogus")), [401, "The access token is invalid"]);
    const readOnly = await clientToken(server, app, "read");
    assert.deepEqual(errorOf(await register(signUp(), readOnly)), [
      403,
      "This action is outside the authorized scopes",
    ]);
    const writeAccounts = await clientToken(
      server,
      await registerApp(server, "Narrow", "read write:accounts"),
      "write:accounts",
    );
    assert.equal((await register(signUp(), writeAccounts)).statusCode, 200);
  });

  test("staff who manage users get an admin.sign_up notification; others do not", async () => {
    const res = await register(signUp({ username: "notified" }));
    assert.equal(res.statusCode, 200);
    await server.ctx.jobs.drain();
    const account = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("id")
      .where("username", "=", "notified")
      .executeTakeFirstOrThrow();
    const rows = await server.ctx.db.kysely
      .selectFrom("notifications")
      .selectAll()
      .where("from_account_id", "=", account.id)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.account_id),
      [accounts.admin.account.id],
    );
    assert.equal(rows[0].type, "admin.sign_up");
    assert.equal(rows[0].activity_type, "Account");
    assert.equal(rows[0].activity_id, account.id);
    const aliceRows = await server.ctx.db.kysely
      .selectFrom("notifications")
      .select("id")
      .where("account_id", "=", accounts.alice.account.id)
      .where("type", "=", "admin.sign_up")
      .execute();
    assert.equal(aliceRows.length, 0);
  });
});

describe("POST /api/v1/accounts: registration modes", () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await createTestServer();
    await standardAccounts(server.ctx);
    token = await clientToken(server, await registerApp(server, "Modes"));
  });
  after(() => server.close());

  const register = (fields: Record<string, unknown>) =>
    request(server.app, "POST", "/api/v1/accounts", { token, form: asForm(fields) });

  test("registrations closed: 403 Forbidden", async () => {
    await saveSetting(server.ctx.db.kysely, "registrations_mode", "none");
    try {
      assert.deepEqual(errorOf(await register(signUp({ username: "closed_out" }))), [403, "Forbidden"]);
      const row = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select("id")
        .where("username", "=", "closed_out")
        .executeTakeFirst();
      assert.equal(row, undefined);
    } finally {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
    }
  });

  test("approval required: the user is pending after confirming", async () => {
    await saveSetting(server.ctx.db.kysely, "registrations_mode", "approved");
    try {
      const res = await register(signUp({ username: "hopeful", reason: "I like birds" }));
      assert.equal(res.statusCode, 200, res.body);
      const user = await server.ctx.db.kysely
        .selectFrom("users")
        .selectAll()
        .where("email", "=", `newbie${serial}@example.com`)
        .executeTakeFirstOrThrow();
      assert.equal(Boolean(user.approved), false);
      assert.equal(user.reason, "I like birds");
      const mail = await newestMail(server);
      assert.equal((await get(server.app, mail.link!)).statusCode, 200);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", res.json().access_token)), [
        403,
        "Your login is currently pending approval",
      ]);
    } finally {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
    }
  });

  test("approval required with require_invite_text: reason ERR_BLANK", async () => {
    await saveSetting(server.ctx.db.kysely, "registrations_mode", "approved");
    await saveSetting(server.ctx.db.kysely, "require_invite_text", true);
    try {
      const res = await register(signUp({ reason: "   " }));
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json().details, { reason: [{ error: "ERR_BLANK", description: "can't be blank" }] });
      assert.equal((await register(signUp({ reason: "Please let me in" }))).statusCode, 200);
    } finally {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
      await saveSetting(server.ctx.db.kysely, "require_invite_text", false);
    }
  });

  test("require_invite_text alone does not apply to open registrations", async () => {
    await saveSetting(server.ctx.db.kysely, "require_invite_text", true);
    try {
      assert.equal((await register(signUp())).statusCode, 200);
    } finally {
      await saveSetting(server.ctx.db.kysely, "require_invite_text", false);
    }
  });
});

describe("POST /api/v1/accounts rate limit", () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await createTestServer();
    token = await clientToken(server, await registerApp(server, "Throttled"));
  });
  after(() => server.close());

  const registerFrom = (remoteAddress: string, fields: Record<string, unknown>) =>
    server.app.inject({
      method: "POST",
      url: "/api/v1/accounts",
      remoteAddress,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: JSON.stringify(fields),
    });

  test("5 sign-ups per IP per 30 minutes, then 429 Too many requests", async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await registerFrom("203.0.113.7", signUp());
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers["x-ratelimit-limit"], "5");
      assert.equal(res.headers["x-ratelimit-remaining"], String(5 - i));
      const reset = res.headers["x-ratelimit-reset"] as string;
      assert.match(reset, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      assert.equal(Date.parse(reset) % (30 * 60_000), 0);
    }
    const refused = await registerFrom("203.0.113.7", signUp({ username: "sixth" }));
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    assert.equal(
      await server.ctx.db.kysely.selectFrom("accounts").select("id").where("username", "=", "sixth").executeTakeFirst(),
      undefined,
    );
    assert.equal((await registerFrom("198.51.100.1", signUp())).statusCode, 200, "another address is not affected");
    for (let i = 0; i < 6; i++)
      assert.equal((await registerFrom("127.0.0.1", signUp())).statusCode, 200, "loopback is exempt");
  });
});

describe("POST /api/v1/emails/confirmations", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let app: RegisteredApp;
  let otherApp: RegisteredApp;
  let appTokenValue: string;

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    app = await registerApp(server, "Origin app");
    otherApp = await registerApp(server, "Other app");
    appTokenValue = await clientToken(server, app);
    await server.ctx.db.kysely
      .insertInto("email_domain_blocks")
      .values({ id: newId(), domain: "blocked.example", created_at: new Date().toISOString() })
      .execute();
  });
  after(() => server.close());

  /** Signs up through `app`; returns the user's token and the first confirmation mail. */
  async function newUser(username: string) {
    const res = await request(server.app, "POST", "/api/v1/accounts", {
      token: appTokenValue,
      form: asForm(signUp({ username, email: `${username}@example.com` })),
    });
    assert.equal(res.statusCode, 200, res.body);
    return { token: res.json().access_token as string, mail: await newestMail(server) };
  }
  const resend = (bearer: string, form: Record<string, string> = {}) =>
    request(server.app, "POST", "/api/v1/emails/confirmations", { token: bearer, form });

  test("resends the confirmation: a new mail, and the old link no longer works", async () => {
    const { token, mail: first } = await newUser("resender");
    assert.equal(first.to, "resender@example.com");
    const res = await resend(token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
    const second = await newestMail(server);
    assert.notEqual(second.file, first.file);
    assert.equal(second.to, "resender@example.com");
    assert.notEqual(second.link, first.link);
    const old = await get(server.app, first.link!);
    assert.equal(old.statusCode, 404);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", token)).statusCode, 403);
    assert.equal((await get(server.app, second.link!)).statusCode, 200);
    assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", token)).statusCode, 200);
  });

  test("the email parameter changes the address; the mail goes to the new one", async () => {
    const { token } = await newUser("mover");
    const res = await resend(token, { email: "moved@example.net" });
    assert.equal(res.statusCode, 200, res.body);
    const mail = await newestMail(server);
    assert.equal(mail.to, "moved@example.net");
    assert.equal((await get(server.app, mail.link!)).statusCode, 200);
    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .select(["email", "confirmed_at"])
      .where("email", "=", "moved@example.net")
      .executeTakeFirstOrThrow();
    assert.ok(user.confirmed_at);
    const login = async (username: string) =>
      request(server.app, "POST", "/oauth/token", {
        form: {
          grant_type: "password",
          username,
          password: "a fine passphrase",
          client_id: app.client_id,
          client_secret: app.client_secret,
        },
      });
    assert.equal((await login("moved@example.net")).statusCode, 200);
    assert.equal((await login("mover@example.com")).json().error, "invalid_grant");
  });

  test("a malformed or taken new address is refused", async () => {
    const { token } = await newUser("picky");
    assert.deepEqual(errorOf(await resend(token, { email: "nope" })), [422, "Validation failed: Email is invalid"]);
    assert.deepEqual(errorOf(await resend(token, { email: "ALICE@rookery.test" })), [
      422,
      "Validation failed: Email has already been taken",
    ]);
    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .select("email")
      .where("email", "=", "picky@example.com")
      .executeTakeFirst();
    assert.ok(user, "the address is unchanged");
  });

  test("a new address on a blocked or unreachable domain is refused like at sign-up", {}, async () => {
    const { token } = await newUser("sneaky");
    assert.equal((await resend(token, { email: "sneaky@blocked.example" })).statusCode, 422);
    assert.equal((await resend(token, { email: "sneaky@nowhere.invalid" })).statusCode, 422);
    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .select("email")
      .where("email", "=", "sneaky@example.com")
      .executeTakeFirst();
    assert.ok(user, "the address is unchanged");
  });

  test("403 for a token of another app, even the same user's", async () => {
    const { mail } = await newUser("elsewhere");
    const other = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "password",
        username: mail.to,
        password: "a fine passphrase",
        scope: "write",
        client_id: otherApp.client_id,
        client_secret: otherApp.client_secret,
      },
    });
    assert.equal(other.statusCode, 200);
    const filesBefore = mailFiles(server).length;
    assert.deepEqual(errorOf(await resend(other.json().access_token)), [
      403,
      "This method is only available to the application the user originally signed-up with",
    ]);
    // Users who did not sign up through the API (the kit's) have no such app at all.
    const unconfirmed = await request(server.app, "POST", "/oauth/token", {
      form: {
        grant_type: "password",
        username: "alice@rookery.test",
        password: KIT_PASSWORD,
        scope: "write",
        client_id: app.client_id,
        client_secret: app.client_secret,
      },
    });
    assert.deepEqual(errorOf(await resend(unconfirmed.json().access_token)), [
      403,
      "This method is only available to the application the user originally signed-up with",
    ]);
    await server.ctx.jobs.drain();
    assert.equal(mailFiles(server).length, filesBefore, "no mail sent");
  });

  test("403 once the e-mail is confirmed", async () => {
    const { token, mail } = await newUser("already");
    assert.equal((await get(server.app, mail.link!)).statusCode, 200);
    assert.deepEqual(errorOf(await resend(token)), [
      403,
      "This method is only available while the e-mail is awaiting confirmation",
    ]);
    assert.deepEqual(errorOf(await resend(token, { email: "changed@example.com" })), [
      403,
      "This method is only available while the e-mail is awaiting confirmation",
    ]);
  });

  test("an app token is 422; no token is 401", async () => {
    assert.deepEqual(errorOf(await resend(appTokenValue)), [422, "This method requires an authenticated user"]);
    assert.deepEqual(errorOf(await request(server.app, "POST", "/api/v1/emails/confirmations")), [
      401,
      "The access token is invalid",
    ]);
    assert.equal(accounts.alice.user.confirmed_at !== null, true);
  });
});
