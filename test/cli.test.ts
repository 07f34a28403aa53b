import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, writeFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { COMMANDS } from "../src/cli/main.ts";
import { cli, type CliResult } from "./cli_run.ts";
import { openDatabase } from "../src/db/connect.ts";
import { verifyPassword } from "../src/services/accounts/passwords.ts";
import { SETTING_DEFINITIONS } from "../src/services/instance/settings.ts";
import { newId } from "../src/db/ids.ts";
import { createRemoteAccount, createTestServer, createUser, errorOf, get, type TestServer } from "./kit.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const VERIFY = "/api/v1/accounts/verify_credentials";

/** The password a command printed on its `New password: …` line. */
function printedPassword(result: CliResult): string {
  const line = result.out.find((l) => l.startsWith("New password: "));
  assert.ok(line, `no "New password:" line in ${JSON.stringify(result.out)}`);
  const password = line.slice("New password: ".length);
  assert.match(password, /^\S{16,}$/);
  return password;
}

async function userRow(server: TestServer, username: string) {
  const account = await server.ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("username", "=", username)
    .where("domain", "is", null)
    .executeTakeFirstOrThrow();
  const user = await server.ctx.db.kysely
    .selectFrom("users")
    .selectAll()
    .where("account_id", "=", account.id)
    .executeTakeFirstOrThrow();
  return { account, user };
}

async function counts(server: TestServer): Promise<[number, number]> {
  const accounts = await server.ctx.db.kysely
    .selectFrom("accounts")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  const users = await server.ctx.db.kysely
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return [Number(accounts.n), Number(users.n)];
}

describe("rookery accounts create / tokens create", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("creates an Owner whose CLI token passes verify_credentials (acceptance)", async () => {
    const created = await cli(
      server,
      "accounts",
      "create",
      "admin",
      "--email",
      "admin@localhost",
      "--password",
      "mastodonadmin",
      "--role",
      "Owner",
      "--confirmed",
      "--approved",
    );
    assert.deepEqual([created.code, created.out, created.err], [0, ["OK"], []]);

    const { user } = await userRow(server, "admin");
    assert.equal(user.email, "admin@localhost");
    assert.equal(await verifyPassword("mastodonadmin", user.encrypted_password), true);
    assert.ok(user.confirmed_at);
    assert.equal(user.approved, true);

    const issued = await cli(server, "tokens", "create", "admin", "--scopes", "read write", "--json");
    assert.equal(issued.code, 0);
    assert.deepEqual(issued.err, []);
    assert.equal(issued.out.length, 1);
    assert.match(issued.out[0], /^\{"access_token":"[A-Za-z0-9_-]+"\}$/);
    const { access_token: token } = JSON.parse(issued.out[0]) as { access_token: string };

    const res = await get(server.app, VERIFY, token);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.username, "admin");
    assert.equal(body.acct, "admin");
    assert.equal(body.role.name, "Owner");
    assert.deepEqual(body.roles, [{ id: body.role.id, name: "Owner", color: body.role.color }]);

    const row = await server.ctx.db.kysely
      .selectFrom("oauth_access_tokens")
      .selectAll()
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.scopes, "read write");
  });

  test("without --password prints a generated password that verifies", async () => {
    const result = await cli(server, "accounts", "create", "generated", "--email", "generated@localhost");
    assert.equal(result.code, 0);
    assert.equal(result.out[0], "OK");
    assert.equal(result.out.length, 2);
    const password = printedPassword(result);
    const { user } = await userRow(server, "generated");
    assert.equal(await verifyPassword(password, user.encrypted_password), true);
    assert.equal(await verifyPassword(`${password}x`, user.encrypted_password), false);
    // Without --confirmed the address is unconfirmed; open registrations need no approval.
    assert.equal(user.confirmed_at, null);
    assert.equal(user.approved, true);
    assert.equal(user.role_id, null);
    // Two generated passwords differ.
    const other = await cli(server, "accounts", "create", "generated2", "--email", "generated2@localhost");
    assert.notEqual(printedPassword(other), password);
  });

  test("role names are case-insensitive", async () => {
    const result = await cli(
      server,
      "accounts",
      "create",
      "moddy",
      "--email",
      "moddy@localhost",
      "--password",
      "password123",
      "--role",
      "moderator",
      "--confirmed",
    );
    assert.equal(result.code, 0, result.err.join("\n"));
    const { user } = await userRow(server, "moddy");
    const role = await server.ctx.db.kysely
      .selectFrom("user_roles")
      .selectAll()
      .where("id", "=", user.role_id!)
      .executeTakeFirstOrThrow();
    assert.equal(role.name, "Moderator");
  });

  test("validation failures exit 1 with a message on err and create nothing", async () => {
    await cli(server, "accounts", "create", "taken", "--email", "taken@localhost", "--password", "password123");
    const before = await counts(server);
    const cases: Array<[string[], RegExp]> = [
      [["TAKEN", "--email", "other@localhost", "--password", "password123"], /^Username is already taken$/],
      [
        ["bad-name!", "--email", "other@localhost", "--password", "password123"],
        /^Username must contain only letters, numbers and underscores$/,
      ],
      [["a".repeat(31), "--email", "other@localhost", "--password", "password123"], /^Username is too long/],
      [
        ["shorty", "--email", "other@localhost", "--password", "short"],
        /^Password is too short \(minimum is 8 characters\)$/,
      ],
      [["mailer", "--email", "TAKEN@localhost", "--password", "password123"], /^E-mail is already taken$/],
      [["mailer", "--email", "not-an-address", "--password", "password123"], /^E-mail is invalid$/],
    ];
    for (const [args, message] of cases) {
      const result = await cli(server, "accounts", "create", ...args);
      assert.equal(result.code, 1, args.join(" "));
      assert.deepEqual(result.out, [], args.join(" "));
      assert.equal(result.err.length, 1, `${args.join(" ")}: ${JSON.stringify(result.err)}`);
      assert.match(result.err[0], message, args.join(" "));
    }
    // Several problems are all reported, one per line.
    const many = await cli(server, "accounts", "create", "Taken", "--email", "taken@LOCALHOST", "--password", "short");
    assert.equal(many.code, 1);
    assert.deepEqual(many.err, [
      "Username is already taken",
      "E-mail is already taken",
      "Password is too short (minimum is 8 characters)",
    ]);
    assert.deepEqual(await counts(server), before);
  });

  test("an unknown role or a missing --email is a usage error and creates nothing", async () => {
    const before = await counts(server);
    const role = await cli(server, "accounts", "create", "wizard", "--email", "wizard@localhost", "--role", "Wizard");
    assert.equal(role.code, 1);
    assert.deepEqual(role.out, []);
    assert.match(
      role.err.join("\n"),
      /^rookery accounts create: unknown role "Wizard" \(use Owner, Admin, Moderator or User\)/,
    );
    assert.match(role.err.join("\n"), /Usage: rookery accounts create USERNAME/);

    const email = await cli(server, "accounts", "create", "wizard");
    assert.equal(email.code, 1);
    assert.match(email.err.join("\n"), /^rookery accounts create: --email is required/);
    assert.deepEqual(await counts(server), before);
  });

  test("tokens create: bare token by default (scope read), unknown scope or user exit 1", async () => {
    await createUser(server.ctx, "tokenuser");
    const bare = await cli(server, "tokens", "create", "tokenuser");
    assert.equal(bare.code, 0);
    assert.equal(bare.out.length, 1);
    assert.match(bare.out[0], /^[A-Za-z0-9_-]{20,}$/);
    assert.equal((await get(server.app, VERIFY, bare.out[0])).statusCode, 200);
    const row = await server.ctx.db.kysely
      .selectFrom("oauth_access_tokens")
      .select("scopes")
      .where("user_id", "=", (await userRow(server, "tokenuser")).user.id)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    assert.equal(row.scopes, "read");

    // The scopes are honoured: a write-only token cannot read the account.
    const writeOnly = await cli(server, "tokens", "create", "TokenUser", "--scopes", "write");
    assert.equal(writeOnly.code, 0);
    assert.deepEqual(errorOf(await get(server.app, VERIFY, writeOnly.out[0])), [
      403,
      "This action is outside the authorized scopes",
    ]);

    const tokensBefore = await server.ctx.db.kysely.selectFrom("oauth_access_tokens").select("id").execute();
    const unknownScope = await cli(server, "tokens", "create", "tokenuser", "--scopes", "read bogus");
    assert.equal(unknownScope.code, 1);
    assert.deepEqual(unknownScope.out, []);
    assert.match(unknownScope.err.join("\n"), /^rookery tokens create: unknown scope bogus/);

    const noScope = await cli(server, "tokens", "create", "tokenuser", "--scopes", " ");
    assert.equal(noScope.code, 1);
    assert.match(noScope.err.join("\n"), /--scopes must name at least one scope/);

    const nobody = await cli(server, "tokens", "create", "nobody", "--json");
    assert.deepEqual([nobody.code, nobody.out, nobody.err], [1, [], ["No user with the username nobody"]]);
    assert.equal(
      (await server.ctx.db.kysely.selectFrom("oauth_access_tokens").select("id").execute()).length,
      tokensBefore.length,
    );
  });
});

describe("rookery accounts modify", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("--role Moderator, then --role User removes it; an unknown role changes nothing", async () => {
    const target = await createUser(server.ctx, "rolly");
    const moderator = await cli(server, "accounts", "modify", "rolly", "--role", "Moderator");
    assert.deepEqual([moderator.code, moderator.out, moderator.err], [0, ["OK"], []]);
    assert.equal((await get(server.app, VERIFY, target.token)).json().role.name, "Moderator");

    const unknown = await cli(server, "accounts", "modify", "rolly", "--role", "Janitor");
    assert.equal(unknown.code, 1);
    assert.match(unknown.err.join("\n"), /unknown role "Janitor"/);
    assert.equal((await get(server.app, VERIFY, target.token)).json().role.name, "Moderator");

    const user = await cli(server, "accounts", "modify", "rolly", "--role", "User");
    assert.equal(user.code, 0);
    assert.equal((await userRow(server, "rolly")).user.role_id, null);
    const role = (await get(server.app, VERIFY, target.token)).json().role;
    assert.equal(role.id, "-99");
    assert.equal(role.name, "");
  });

  test("--confirm and --approve let a new user in", async () => {
    const target = await createUser(server.ctx, "newbie", { confirmed: false, approved: false });
    assert.deepEqual(errorOf(await get(server.app, VERIFY, target.token)), [
      403,
      "Your login is missing a confirmed e-mail address",
    ]);
    assert.equal((await cli(server, "accounts", "modify", "newbie", "--confirm")).code, 0);
    assert.ok((await userRow(server, "newbie")).user.confirmed_at);
    assert.deepEqual(errorOf(await get(server.app, VERIFY, target.token)), [
      403,
      "Your login is currently pending approval",
    ]);
    assert.equal((await cli(server, "accounts", "modify", "newbie", "--approve")).code, 0);
    assert.equal((await get(server.app, VERIFY, target.token)).statusCode, 200);

    // Confirming again keeps the first confirmation time.
    const { confirmed_at } = (await userRow(server, "newbie")).user;
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await cli(server, "accounts", "modify", "newbie", "--confirm")).code, 0);
    assert.equal((await userRow(server, "newbie")).user.confirmed_at, confirmed_at);
  });

  test("--disable and --enable", async () => {
    const target = await createUser(server.ctx, "toggly");
    assert.equal((await cli(server, "accounts", "modify", "toggly", "--disable")).code, 0);
    assert.deepEqual(errorOf(await get(server.app, VERIFY, target.token)), [403, "Your login is currently disabled"]);
    assert.equal((await userRow(server, "toggly")).user.disabled, true);
    assert.equal((await cli(server, "accounts", "modify", "toggly", "--enable")).code, 0);
    assert.equal((await get(server.app, VERIFY, target.token)).statusCode, 200);

    const both = await cli(server, "accounts", "modify", "toggly", "--disable", "--enable");
    assert.equal(both.code, 1);
    assert.match(both.err.join("\n"), /--disable and --enable contradict each other/);
    assert.equal((await userRow(server, "toggly")).user.disabled, false);
  });

  test("--suspend and --unsuspend", async () => {
    const target = await createUser(server.ctx, "suspendy");
    assert.equal((await cli(server, "accounts", "modify", "suspendy", "--suspend")).code, 0);
    const { suspended_at } = (await userRow(server, "suspendy")).account;
    assert.ok(suspended_at);
    assert.deepEqual(errorOf(await get(server.app, VERIFY, target.token)), [403, "Your login is currently disabled"]);
    // Suspending again keeps the original time.
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await cli(server, "accounts", "modify", "suspendy", "--suspend")).code, 0);
    assert.equal((await userRow(server, "suspendy")).account.suspended_at, suspended_at);

    assert.equal((await cli(server, "accounts", "modify", "suspendy", "--unsuspend")).code, 0);
    assert.equal((await userRow(server, "suspendy")).account.suspended_at, null);
    assert.equal((await get(server.app, VERIFY, target.token)).statusCode, 200);

    const both = await cli(server, "accounts", "modify", "suspendy", "--suspend", "--unsuspend");
    assert.equal(both.code, 1);
    assert.match(both.err.join("\n"), /--suspend and --unsuspend contradict each other/);
  });

  test("--email changes the address; a taken or invalid one exits 1", async () => {
    await createUser(server.ctx, "mailme");
    await createUser(server.ctx, "mailother");
    const changed = await cli(server, "accounts", "modify", "mailme", "--email", " new@mail.example ");
    assert.deepEqual([changed.code, changed.out], [0, ["OK"]]);
    assert.equal((await userRow(server, "mailme")).user.email, "new@mail.example");

    const taken = await cli(server, "accounts", "modify", "mailme", "--email", "MAILOTHER@rookery.test");
    assert.deepEqual([taken.code, taken.out, taken.err], [1, [], ["E-mail is already taken"]]);
    const invalid = await cli(server, "accounts", "modify", "mailme", "--email", "nope");
    assert.deepEqual([invalid.code, invalid.out, invalid.err], [1, [], ["E-mail is invalid"]]);
    assert.equal((await userRow(server, "mailme")).user.email, "new@mail.example");

    // The user's own address in another case is not "taken".
    assert.equal((await cli(server, "accounts", "modify", "mailme", "--email", "NEW@mail.example")).code, 0);
    assert.equal((await userRow(server, "mailme")).user.email, "NEW@mail.example");
  });

  test("--reset-password prints a new password and revokes existing tokens", async () => {
    const target = await createUser(server.ctx, "forgetful");
    const bystander = await createUser(server.ctx, "bystander");
    const result = await cli(server, "accounts", "modify", "forgetful", "--reset-password");
    assert.equal(result.code, 0);
    assert.equal(result.out[0], "OK");
    const password = printedPassword(result);
    const { user } = await userRow(server, "forgetful");
    assert.equal(await verifyPassword(password, user.encrypted_password), true);
    assert.equal(await verifyPassword("correct horse battery staple", user.encrypted_password), false);
    assert.deepEqual(errorOf(await get(server.app, VERIFY, target.token)), [401, "The access token was revoked"]);
    assert.equal((await get(server.app, VERIFY, bystander.token)).statusCode, 200);
    // A token issued afterwards works.
    const fresh = await cli(server, "tokens", "create", "forgetful");
    assert.equal((await get(server.app, VERIFY, fresh.out[0])).statusCode, 200);
  });

  test("several changes at once, by a username in any case", async () => {
    const target = await createUser(server.ctx, "Multi", { confirmed: false });
    const result = await cli(
      server,
      "accounts",
      "modify",
      "mULTI",
      "--confirm",
      "--role",
      "Admin",
      "--email",
      "multi@new.example",
    );
    assert.equal(result.code, 0, result.err.join("\n"));
    const body = (await get(server.app, VERIFY, target.token)).json();
    assert.equal(body.role.name, "Admin");
    assert.equal((await userRow(server, "Multi")).user.email, "multi@new.example");
  });

  test("an unknown user exits 1", async () => {
    const result = await cli(server, "accounts", "modify", "ghost", "--disable");
    assert.deepEqual([result.code, result.out, result.err], [1, [], ["No user with the username ghost"]]);
  });
});

describe("rookery settings", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const instance = async () => (await get(server.app, "/api/v2/instance")).json();

  test("list shows every setting with its value and description", async () => {
    const result = await cli(server, "settings", "list");
    assert.equal(result.code, 0);
    const keys = Object.keys(SETTING_DEFINITIONS);
    assert.equal(result.out.length, keys.length);
    for (const [i, key] of keys.entries()) {
      assert.ok(result.out[i].startsWith(`${key} = `), result.out[i]);
      assert.ok(result.out[i].includes(SETTING_DEFINITIONS[key as keyof typeof SETTING_DEFINITIONS].description), key);
    }
    assert.ok(result.out.some((l) => l.startsWith("registrations_mode = open\n")));
    assert.ok(result.out.some((l) => l.startsWith("site_title = Rookery\n")));
    assert.ok(result.out.some((l) => l.startsWith("timeline_preview = true\n")));
    assert.ok(result.out.some((l) => l.startsWith("rules = []\n")));
  });

  test("registrations_mode approved shows in /api/v2/instance and makes new CLI accounts pending", async () => {
    assert.deepEqual((await cli(server, "settings", "get", "registrations_mode")).out, ["open"]);
    assert.equal((await instance()).registrations.approval_required, false);

    const set = await cli(server, "settings", "set", "registrations_mode", "approved");
    assert.deepEqual([set.code, set.out, set.err], [0, ["OK"], []]);
    assert.deepEqual((await cli(server, "settings", "get", "registrations_mode")).out, ["approved"]);
    const body = await instance();
    assert.equal(body.registrations.approval_required, true);
    assert.equal(body.registrations.enabled, true);

    // While sign-ups need review, CLI accounts are pending unless --approved says otherwise.
    await cli(server, "accounts", "create", "pendingone", "--email", "pendingone@localhost");
    assert.equal((await userRow(server, "pendingone")).user.approved, false);
    await cli(server, "accounts", "create", "approvedone", "--email", "approvedone@localhost", "--approved");
    assert.equal((await userRow(server, "approvedone")).user.approved, true);

    const invalid = await cli(server, "settings", "set", "registrations_mode", "sometimes");
    assert.deepEqual(
      [invalid.code, invalid.out, invalid.err],
      [1, [], ["registrations_mode must be one of open, approved, none"]],
    );
    assert.deepEqual((await cli(server, "settings", "get", "registrations_mode")).out, ["approved"]);

    assert.equal((await cli(server, "settings", "set", "registrations_mode", "none")).code, 0);
    assert.equal((await instance()).registrations.enabled, false);
    assert.equal((await cli(server, "settings", "set", "registrations_mode", "open")).code, 0);
    assert.equal((await instance()).registrations.approval_required, false);
  });

  test("rules as a JSON array and as lines", async () => {
    const json = await cli(
      server,
      "settings",
      "set",
      "rules",
      '["Be kind", {"text": " No spam ", "hint": "Ads count"}]',
    );
    assert.equal(json.code, 0, json.err.join("\n"));
    assert.deepEqual(JSON.parse((await cli(server, "settings", "get", "rules")).out[0]), [
      { text: "Be kind", hint: "" },
      { text: "No spam", hint: "Ads count" },
    ]);
    assert.deepEqual((await instance()).rules, [
      { id: "1", text: "Be kind", hint: "", translations: {} },
      { id: "2", text: "No spam", hint: "Ads count", translations: {} },
    ]);

    const lines = await cli(server, "settings", "set", "rules", "First rule\n\n  Second rule  \r\nThird rule\n");
    assert.equal(lines.code, 0);
    assert.deepEqual(
      (await instance()).rules.map((r: { text: string }) => r.text),
      ["First rule", "Second rule", "Third rule"],
    );

    for (const bad of ["[oops", '[""]', "[42]", '[{"hint": "no text"}]']) {
      const result = await cli(server, "settings", "set", "rules", bad);
      assert.equal(result.code, 1, bad);
      assert.equal(result.err.length, 1, bad);
      assert.match(result.err[0], /^(Rules must be a JSON array|Each rule needs a non-empty text)/, bad);
    }
    assert.equal((await instance()).rules.length, 3);

    assert.equal((await cli(server, "settings", "set", "rules", "")).code, 0);
    assert.deepEqual((await instance()).rules, []);
  });

  test("booleans and strings", async () => {
    for (const [text, value] of [
      ["false", false],
      ["on", true],
      ["0", false],
      ["YES", true],
    ] as const) {
      const result = await cli(server, "settings", "set", "timeline_preview", text);
      assert.equal(result.code, 0, text);
      assert.deepEqual((await cli(server, "settings", "get", "timeline_preview")).out, [String(value)], text);
    }
    assert.equal((await cli(server, "settings", "set", "timeline_preview", "false")).code, 0);
    assert.equal((await instance()).configuration.timelines_access.live_feeds.local, "authenticated");

    const bad = await cli(server, "settings", "set", "timeline_preview", "maybe");
    assert.deepEqual([bad.code, bad.err], [1, ["timeline_preview must be true or false"]]);
    assert.deepEqual((await cli(server, "settings", "get", "timeline_preview")).out, ["false"]);

    assert.equal((await cli(server, "settings", "set", "site_title", "My Rookery")).code, 0);
    assert.equal((await instance()).title, "My Rookery");
    const long = await cli(server, "settings", "set", "site_title", "x".repeat(201));
    assert.deepEqual([long.code, long.err], [1, ["site_title is too long (maximum is 200 characters)"]]);
    assert.equal((await instance()).title, "My Rookery");
  });

  test("an unknown key is a usage error", async () => {
    for (const argv of [
      ["get", "colour"],
      ["set", "colour", "blue"],
    ]) {
      const result = await cli(server, "settings", ...argv);
      assert.equal(result.code, 1);
      assert.match(result.err.join("\n"), /unknown setting "colour"/);
    }
  });
});

describe("rookery db migrate and help", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("db migrate says the database is up to date", async () => {
    const result = await cli(server, "db", "migrate");
    assert.deepEqual([result.code, result.out, result.err], [0, ["Database is up to date"], []]);
  });

  test("--help on every command prints its usage and opens no database", async () => {
    assert.ok(COMMANDS.length >= 7);
    for (const command of COMMANDS) {
      const result = await cli(server, ...command.path, "--help");
      const name = command.path.join(" ");
      assert.equal(result.code, 0, name);
      assert.equal(result.opened, 0, name);
      assert.deepEqual(result.err, [], name);
      assert.ok(result.out.join("\n").startsWith(`Usage: rookery ${command.usage}\n`), name);
      assert.match(result.out.join("\n"), /--help +Show this help/, name);
      for (const option of Object.keys(command.options))
        assert.ok(result.out.join("\n").includes(`--${option}`), `${name} --${option}`);
      // (No positional was given: --help wins over a missing argument.) An unknown option is still an error.
      assert.equal((await cli(server, ...command.path, "-x", "--help")).code, 1, `${name}: unknown option with --help`);
    }
  });

  test("rookery --help, no arguments, and --version", async () => {
    for (const flag of ["--help", "-h", "help"]) {
      const result = await cli(server, flag);
      assert.equal(result.code, 0, flag);
      const text = result.out.join("\n");
      assert.ok(text.startsWith("Usage: rookery COMMAND [options]"), flag);
      for (const command of COMMANDS) assert.ok(text.includes(`  ${command.path.join(" ")}`), command.path.join(" "));
    }
    const bare = await cli(server);
    assert.equal(bare.code, 1);
    assert.ok(bare.out.join("\n").startsWith("Usage: rookery"));

    const version = await cli(server, "--version");
    assert.deepEqual([version.code, version.out], [0, [VERSION]]);
    assert.match(VERSION, /^\d+\.\d+\.\d+/);
    assert.deepEqual((await cli(server, "-v")).out, [VERSION]);
  });

  test("a command group alone lists its commands", async () => {
    const bare = await cli(server, "accounts");
    assert.equal(bare.code, 1);
    assert.match(bare.out.join("\n"), /rookery accounts create USERNAME/);
    assert.match(bare.out.join("\n"), /rookery accounts modify USERNAME/);
    assert.doesNotMatch(bare.out.join("\n"), /tokens create/);
    const help = await cli(server, "settings", "--help");
    assert.equal(help.code, 0);
    assert.match(help.out.join("\n"), /rookery settings set KEY VALUE/);
  });

  test("unknown commands, unknown options and wrong positionals exit 1 without opening the database", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["frobnicate"], /^rookery: unknown command "frobnicate"/],
      [["accounts", "remove", "alice"], /^rookery: unknown command "accounts remove"/],
      [
        ["accounts", "create", "x", "--email", "x@localhost", "--bogus"],
        /^rookery accounts create: Unknown option '--bogus'/,
      ],
      [["tokens", "create", "x", "--scopes"], /^rookery tokens create: Option '--scopes <value>' argument missing/],
      [["accounts", "create", "--email", "x@localhost"], /^rookery accounts create: missing argument/],
      [["accounts", "modify"], /^rookery accounts modify: missing argument/],
      [["settings", "get", "site_title", "extra"], /^rookery settings get: unexpected argument "extra"/],
      [["settings", "set", "site_title"], /^rookery settings set: missing argument/],
      [["db", "migrate", "now"], /^rookery db migrate: unexpected argument "now"/],
    ];
    for (const [argv, message] of cases) {
      const result = await cli(server, ...argv);
      assert.equal(result.code, 1, argv.join(" "));
      assert.equal(result.opened, 0, argv.join(" "));
      assert.deepEqual(result.out, [], argv.join(" "));
      assert.match(result.err.join("\n"), message, argv.join(" "));
      assert.match(result.err.join("\n"), /Usage: rookery/, argv.join(" "));
    }
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion (killed after 30 s so a hang fails instead of blocking the suite). */
function run(executable: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not finish in 30 s; stdout: ${stdout}; stderr: ${stderr}`));
    }, 30_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("bin/rookery.js", () => {
  const bin = join(ROOT, "bin", "rookery.js");
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "rookery-bin-"));
    // A minimal environment, run from the temp directory, so no developer .env or DATABASE_URL leaks in.
    env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ROOKERY_DATA_DIR: join(dir, "data") };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("--help and a real accounts create on a fresh SQLite database", async () => {
    const help = await run(process.execPath, [bin, "--help"], { cwd: dir, env });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: rookery COMMAND/);

    const created = await run(process.execPath, [bin, "accounts", "create", "x", "--email", "x@localhost"], {
      cwd: dir,
      env,
    });
    assert.equal(created.code, 0, created.stderr);
    const lines = created.stdout.trimEnd().split("\n");
    assert.equal(lines[0], "OK");
    assert.match(lines[1], /^New password: \S+$/);
    const password = lines[1].slice("New password: ".length);

    const file = join(dir, "data", "rookery.sqlite");
    assert.ok(existsSync(file), "the default SQLite file is created under ROOKERY_DATA_DIR");
    const db = await openDatabase(`sqlite:${file}`);
    try {
      const row = await db.kysely
        .selectFrom("users")
        .innerJoin("accounts", "accounts.id", "users.account_id")
        .select(["accounts.username", "users.email", "users.encrypted_password"])
        .executeTakeFirstOrThrow();
      assert.equal(row.username, "x");
      assert.equal(row.email, "x@localhost");
      assert.equal(await verifyPassword(password, row.encrypted_password), true);
    } finally {
      await db.close();
    }

    const again = await run(process.execPath, [bin, "accounts", "create", "x", "--email", "x2@localhost"], {
      cwd: dir,
      env,
    });
    assert.equal(again.code, 1);
    assert.equal(again.stdout, "");
    assert.equal(again.stderr, "Username is already taken\n");

    const token = await run(process.execPath, [bin, "tokens", "create", "x", "--json"], { cwd: dir, env });
    assert.equal(token.code, 0, token.stderr);
    assert.match(token.stdout, /^\{"access_token":"[A-Za-z0-9_-]+"\}\n$/);
  });

  test("--help opens no database and loads no driver or image library", async () => {
    // A database that cannot be opened: --help must not try.
    const broken = { ...env, DATABASE_URL: `sqlite:${join(dir, "missing", "deeper", "x.sqlite")}` };
    const hook = join(dir, "trace-packages.mjs");
    writeFileSync(
      hook,
      'import { registerHooks } from "node:module";\n' +
        "const seen = new Set();\n" +
        "registerHooks({ resolve(s, c, next) { const r = next(s, c); const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url); if (m) seen.add(m[1]); return r; } });\n" +
        'process.on("exit", () => process.stderr.write(`packages: ${[...seen].join(",")}\\n`));\n',
    );
    for (const args of [["--help"], ["accounts", "create", "--help"], ["emoji", "import", "--help"]]) {
      const result = await run(process.execPath, ["--import", hook, bin, ...args], { cwd: dir, env: broken });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Usage|rookery/);
      assert.equal(result.stderr.trim(), "packages:", args.join(" "));
    }
    assert.equal(existsSync(join(dir, "missing")), false);
  });

  test("a configuration error is one line on stderr and exit 1", async () => {
    const result = await run(process.execPath, [bin, "settings", "list"], { cwd: dir, env: { ...env, PORT: "abc" } });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, 'rookery: configuration error: PORT must be a whole number, got "abc"\n');
  });

  test(
    "on Node 20 (/usr/bin/node) it re-runs itself on Node 24",
    { skip: !existsSync("/usr/bin/node") && "/usr/bin/node does not exist" },
    async () => {
      const versionOf = await run("/usr/bin/node", ["--version"], { cwd: dir, env });
      const major = Number(versionOf.stdout.trim().replace(/^v/, "").split(".")[0]);
      const version = await run("/usr/bin/node", [bin, "--version"], { cwd: dir, env });
      assert.equal(version.code, 0, version.stderr);
      assert.equal(version.stdout, `${VERSION}\n`);
      // The exit status of the re-run comes through.
      const unknown = await run("/usr/bin/node", [bin, "frobnicate"], { cwd: dir, env });
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /unknown command "frobnicate"/);
      // And it really works with the database, not just --version.
      const settings = await run("/usr/bin/node", [bin, "settings", "get", "registrations_mode"], { cwd: dir, env });
      assert.deepEqual([settings.code, settings.stdout], [0, "open\n"], settings.stderr);
      assert.ok(major > 0, `could not read the version of /usr/bin/node: ${versionOf.stdout}`);
    },
  );
});

describe("rookery media remove", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  /** A remote account's attachment with a kept copy, made `days` days ago. */
  async function keptRemoteMedia(days: number) {
    const account = await createRemoteAccount(server.ctx, `far${days}`, "far.example");
    const id = newId();
    const file = `media_attachments/files/${id}/original/kept.png`;
    await server.ctx.media.put(file, Buffer.from("png"));
    const at = new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();
    await server.ctx.db.kysely
      .insertInto("media_attachments")
      .values({
        id,
        account_id: account.id,
        type: "image",
        file,
        remote_url: `https://far.example/${id}.png`,
        processing: "complete",
        created_at: at,
        updated_at: at,
      } as never)
      .execute();
    return { id, file };
  }

  test("drops kept copies older than --days, keeps newer ones and the links", async () => {
    const old = await keptRemoteMedia(10);
    const fresh = await keptRemoteMedia(1);
    const result = await cli(server, "media", "remove", "--days", "7");
    assert.equal(result.code, 0, result.err.join("\n"));
    assert.match(result.out.join("\n"), /Dropped 1 kept copy/);
    const rows = await server.ctx.db.kysely
      .selectFrom("media_attachments")
      .select(["id", "file", "remote_url"])
      .where("id", "in", [old.id, fresh.id])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(old.id)!.file, null);
    assert.ok(byId.get(old.id)!.remote_url);
    assert.equal(byId.get(fresh.id)!.file, fresh.file);
    assert.equal(await server.ctx.media.get(old.file), undefined);
    assert.ok(await server.ctx.media.get(fresh.file));
  });

  test("--days must be a number; --help explains", async () => {
    const bad = await cli(server, "media", "remove", "--days", "soon");
    assert.equal(bad.code, 1);
    assert.match(bad.err.join("\n"), /--days must be a whole number/);
    const help = await cli(server, "media", "remove", "--help");
    assert.equal(help.code, 0);
    assert.match(help.out.join("\n"), /--days/);
    for (const option of ["--prune-profiles", "--remove-headers", "--include-follows", "--dry-run"])
      assert.match(help.out.join("\n"), new RegExp(option));
  });

  test("--dry-run counts what would go and drops nothing; progress goes to stderr", async () => {
    const old = await keptRemoteMedia(30);
    await server.ctx.db.kysely
      .updateTable("media_attachments")
      .set({ file_size: 3 })
      .where("id", "=", old.id)
      .execute();
    const result = await cli(server, "media", "remove", "--days", "20", "--dry-run");
    assert.equal(result.code, 0, result.err.join("\n"));
    assert.match(
      result.out.join("\n"),
      /^Would drop 1 kept copy of remote media older than 20 days \(about 3 bytes\)\. \(dry run/,
    );
    assert.deepEqual(result.err, ["1 found…"]);
    assert.ok(await server.ctx.media.get(old.file));
    const real = await cli(server, "media", "remove", "--days", "20");
    assert.deepEqual(real.err, ["1 dropped…"]);
    assert.equal(await server.ctx.media.get(old.file), undefined);
  });

  test("--prune-profiles and --remove-headers exclude each other; --include-follows needs one of them", async () => {
    const both = await cli(server, "media", "remove", "--prune-profiles", "--remove-headers");
    assert.equal(both.code, 1);
    assert.match(both.err.join("\n"), /--prune-profiles and --remove-headers cannot be given together/);
    const alone = await cli(server, "media", "remove", "--include-follows");
    assert.equal(alone.code, 1);
    assert.match(alone.err.join("\n"), /--include-follows goes only with --prune-profiles or --remove-headers/);
  });

  /** A remote account with a kept avatar and header, last fetched `days` days ago. */
  async function keptRemoteProfile(username: string, days: number) {
    const account = await createRemoteAccount(server.ctx, username, "pictures.example");
    const avatar = `accounts/avatars/${account.id}/original/a.png`;
    const header = `accounts/headers/${account.id}/original/h.png`;
    await server.ctx.media.put(avatar, Buffer.from("png"));
    await server.ctx.media.put(header, Buffer.from("png"));
    const at = new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ avatar_file: avatar, header_file: header, fetched_at: at, updated_at: at })
      .where("id", "=", account.id)
      .execute();
    return { account, avatar, header };
  }

  const pictures = async (id: string) =>
    server.ctx.db.kysely
      .selectFrom("accounts")
      .select(["avatar_file", "header_file"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();

  test("--prune-profiles drops old remote avatars and headers, --remove-headers only headers; followed accounts keep theirs", async () => {
    const lonely = await keptRemoteProfile("lonely", 10);
    const recent = await keptRemoteProfile("recent", 1);
    const followed = await keptRemoteProfile("followed", 10);
    const reader = await createUser(server.ctx, "reader");
    await server.ctx.db.kysely
      .insertInto("follows")
      .values({
        id: newId(),
        account_id: reader.account.id,
        target_account_id: followed.account.id,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      } as never)
      .execute();

    const headers = await cli(server, "media", "remove", "--remove-headers", "--days", "7");
    assert.equal(headers.code, 0, headers.err.join("\n"));
    assert.match(headers.out.join("\n"), /^Dropped the kept headers of 1 remote account not fetched for 7 days\.$/);
    assert.deepEqual(await pictures(lonely.account.id), { avatar_file: lonely.avatar, header_file: null });
    assert.equal(await server.ctx.media.get(lonely.header), undefined);

    const profiles = await cli(server, "media", "remove", "--prune-profiles", "--days", "7");
    assert.match(profiles.out.join("\n"), /^Dropped the kept avatars and headers of 1 remote account/);
    assert.deepEqual(await pictures(lonely.account.id), { avatar_file: null, header_file: null });
    assert.equal(await server.ctx.media.get(lonely.avatar), undefined);
    assert.deepEqual(await pictures(recent.account.id), { avatar_file: recent.avatar, header_file: recent.header });
    assert.deepEqual(await pictures(followed.account.id), {
      avatar_file: followed.avatar,
      header_file: followed.header,
    });
    const shown = (await get(server.app, `/api/v1/accounts/${lonely.account.id}`)).json() as {
      avatar: string;
      header: string;
    };
    assert.equal(shown.avatar, "https://rookery.test/avatars/original/missing.png");
    assert.equal(shown.header, "https://rookery.test/headers/original/missing.png");

    const everyone = await cli(server, "media", "remove", "--prune-profiles", "--include-follows", "--days", "7");
    assert.match(everyone.out.join("\n"), /of 1 remote account /);
    assert.deepEqual(await pictures(followed.account.id), { avatar_file: null, header_file: null });
    assert.deepEqual(await pictures(recent.account.id), { avatar_file: recent.avatar, header_file: recent.header });
  });
});
