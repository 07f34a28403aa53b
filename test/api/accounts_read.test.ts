/**
 * Reading accounts: GET /api/v1/accounts/:id, GET /api/v1/accounts?id[]=… and
 * GET /api/v1/accounts/lookup (spec/server-api.md Accounts; reference/behaviour.md §7).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import {
  appToken,
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  standardAccounts,
  tokenFor,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

const MISSING_AVATAR = "https://rookery.test/avatars/original/missing.png";
const MISSING_HEADER = "https://rookery.test/headers/original/missing.png";

describe("reading accounts", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  let unconfirmed: TestUser;
  let pending: TestUser;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    unconfirmed = await createUser(server.ctx, "unconfirmed", { confirmed: false });
    pending = await createUser(server.ctx, "pending", { approved: false });
  });
  after(() => server.close());

  const db = () => server.ctx.db.kysely;

  describe("GET /api/v1/accounts/:id", () => {
    test("a local account, anonymously", async () => {
      await db()
        .updateTable("accounts")
        .set({ created_at: "2023-03-04T15:16:17.123Z" })
        .where("id", "=", accounts.alice.account.id)
        .execute();
      const res = await get(server.app, `/api/v1/accounts/${accounts.alice.account.id}`);
      assert.equal(res.statusCode, 200);
      assert.match(res.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
      const body = res.json();
      assert.equal(body.id, accounts.alice.account.id);
      assert.equal(body.username, "alice");
      assert.equal(body.acct, "alice");
      assert.equal(body.url, "https://rookery.test/@alice");
      assert.equal(body.uri, "https://rookery.test/users/alice");
      assert.equal(body.created_at, "2023-03-04T00:00:00.000Z");
      assert.equal(body.last_status_at, null);
      assert.deepEqual(body.emojis, []);
      assert.deepEqual(body.fields, []);
      assert.equal(body.locked, false);
      assert.equal(body.bot, false);
      assert.equal(body.group, false);
      assert.equal(body.avatar, MISSING_AVATAR);
      assert.equal(body.avatar_static, MISSING_AVATAR);
      assert.equal(body.header, MISSING_HEADER);
      assert.equal(body.header_static, MISSING_HEADER);
      assert.equal(body.note, "");
      assert.equal(body.followers_count, 0);
      assert.equal(body.following_count, 0);
      assert.equal(body.statuses_count, 0);
      assert.equal(typeof body.noindex, "boolean");
      assert.deepEqual(body.roles, []);
      assert.equal("suspended" in body, false);
      assert.equal("source" in body, false, "source is only for the owner's CredentialAccount");
      assert.equal("role" in body, false);
    });

    test("a local account matches the Account schema", { skip: openApiSkip }, async () => {
      const body = (await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`)).json();
      assert.deepEqual(validateSchema("Account", body), []);
    });

    test("last_status_at is a date; the admin's highlighted role is listed", async () => {
      await db()
        .updateTable("accounts")
        .set({ last_status_at: "2024-05-06T23:59:58.000Z" })
        .where("id", "=", accounts.admin.account.id)
        .execute();
      const body = (await get(server.app, `/api/v1/accounts/${accounts.admin.account.id}`)).json();
      assert.equal(body.last_status_at, "2024-05-06");
      assert.equal(body.roles.length, 1);
      assert.equal(body.roles[0].name, "Admin");
      assert.deepEqual(Object.keys(body.roles[0]).sort(), ["color", "id", "name"]);
    });

    test("a remote account: acct with the domain, url = their profile URL, no noindex or roles", async () => {
      const res = await get(server.app, `/api/v1/accounts/${accounts.rita.id}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.username, "rita");
      assert.equal(body.acct, "rita@remote.example");
      assert.equal(body.url, "https://remote.example/@rita");
      assert.equal(body.uri, "https://remote.example/users/rita");
      assert.equal("noindex" in body, false);
      assert.equal("roles" in body, false);
    });

    test("a remote account without url falls back to its uri; Service is a bot, Group a group", async () => {
      const bot = await createRemoteAccount(server.ctx, "robot", "bots.example");
      await db().updateTable("accounts").set({ url: null, actor_type: "Service" }).where("id", "=", bot.id).execute();
      let body = (await get(server.app, `/api/v1/accounts/${bot.id}`)).json();
      assert.equal(body.url, "https://bots.example/users/robot");
      assert.equal(body.bot, true);
      assert.equal(body.group, false);
      const group = await createRemoteAccount(server.ctx, "club", "groups.example");
      await db().updateTable("accounts").set({ actor_type: "Group" }).where("id", "=", group.id).execute();
      body = (await get(server.app, `/api/v1/accounts/${group.id}`)).json();
      assert.equal(body.group, true);
      assert.equal(body.bot, false);
    });

    test("a suspended account is 200 with suspended true, emptied texts and placeholder images, counts kept", async () => {
      const sam = await createUser(server.ctx, "sam");
      await db()
        .updateTable("accounts")
        .set({
          suspended_at: new Date().toISOString(),
          display_name: "Sam",
          note: "<p>bio</p>",
          locked: true,
          actor_type: "Service",
          discoverable: true,
          indexable: true,
          avatar_file: "accounts/avatars/1/original/abc.png",
          header_file: "accounts/headers/1/original/abc.png",
          fields: JSON.stringify([
            { name: "Web", value: "https://sam.example", value_html: "<a>x</a>", verified_at: null },
          ]),
          followers_count: 3,
          following_count: 2,
          statuses_count: 7,
        })
        .where("id", "=", sam.account.id)
        .execute();
      const res = await get(server.app, `/api/v1/accounts/${sam.account.id}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.suspended, true);
      assert.equal(body.display_name, "");
      assert.equal(body.note, "");
      assert.equal(body.avatar, MISSING_AVATAR);
      assert.equal(body.avatar_static, MISSING_AVATAR);
      assert.equal(body.header, MISSING_HEADER);
      assert.equal(body.header_static, MISSING_HEADER);
      assert.equal(body.locked, false);
      assert.equal(body.bot, false);
      assert.equal(body.discoverable, false);
      assert.equal(body.indexable, false);
      assert.deepEqual(body.fields, []);
      assert.deepEqual(body.emojis, []);
      assert.deepEqual(body.roles, []);
      assert.equal(body.acct, "sam");
      assert.equal(body.followers_count, 3);
      assert.equal(body.following_count, 2);
      assert.equal(body.statuses_count, 7);
    });

    test("a suspended remote account is rendered the same way", async () => {
      const gone = await createRemoteAccount(server.ctx, "gone", "remote.example");
      await db()
        .updateTable("accounts")
        .set({ suspended_at: new Date().toISOString(), avatar_remote_url: "https://remote.example/a.png" })
        .where("id", "=", gone.id)
        .execute();
      const body = (await get(server.app, `/api/v1/accounts/${gone.id}`)).json();
      assert.equal(body.suspended, true);
      assert.equal(body.acct, "gone@remote.example");
      assert.equal(body.display_name, "");
      assert.equal(body.avatar, MISSING_AVATAR);
    });

    test("unconfirmed and not-yet-approved local users' accounts are 404", async () => {
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${unconfirmed.account.id}`)), [
        404,
        "Record not found",
      ]);
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${pending.account.id}`)), [
        404,
        "Record not found",
      ]);
      assert.deepEqual(
        errorOf(await get(server.app, `/api/v1/accounts/${unconfirmed.account.id}`, accounts.alice.token)),
        [404, "Record not found"],
      );
    });

    test("unknown and non-numeric ids are 404 Record not found", async () => {
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${newId()}`)), [404, "Record not found"]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/1")), [404, "Record not found"]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/abc")), [404, "Record not found"]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/99999999999999999999999")), [
        404,
        "Record not found",
      ]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/1e5")), [404, "Record not found"]);
    });

    test("user and app tokens work; a revoked token is 401; a token without read:accounts is 403", async () => {
      assert.equal(
        (await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`, accounts.alice.token)).statusCode,
        200,
      );
      assert.equal(
        (
          await get(
            server.app,
            `/api/v1/accounts/${accounts.bob.account.id}`,
            await tokenFor(server.ctx, accounts.alice, "read:accounts"),
          )
        ).statusCode,
        200,
      );
      assert.equal(
        (await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`, await appToken(server.ctx, "read")))
          .statusCode,
        200,
      );
      const revoked = await tokenFor(server.ctx, accounts.carol, "read");
      await db()
        .updateTable("oauth_access_tokens")
        .set({ revoked_at: new Date().toISOString() })
        .where("user_id", "=", accounts.carol.user.id)
        .execute();
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`, revoked)), [
        401,
        "The access token was revoked",
      ]);
      const writeOnly = await tokenFor(server.ctx, accounts.alice, "write");
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`, writeOnly)), [
        403,
        "This action is outside the authorized scopes",
      ]);
    });
  });

  describe("GET /api/v1/accounts?id[]=", () => {
    test("several ids come back in the order asked", async () => {
      const ids = [accounts.carol.account.id, accounts.rita.id, accounts.alice.account.id];
      const res = await get(server.app, `/api/v1/accounts?${ids.map((id) => `id[]=${id}`).join("&")}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().map((a: { id: string }) => a.id),
        ids,
      );
      assert.deepEqual(
        res.json().map((a: { acct: string }) => a.acct),
        ["carol", "rita@remote.example", "alice"],
      );
    });

    test("unknown, unconfirmed, unapproved and malformed ids are dropped; duplicates come once", async () => {
      const ids = [
        newId(),
        accounts.bob.account.id,
        unconfirmed.account.id,
        "abc",
        accounts.bob.account.id,
        pending.account.id,
        accounts.lucy.account.id,
      ];
      const res = await get(server.app, `/api/v1/accounts?${ids.map((id) => `id[]=${id}`).join("&")}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().map((a: { id: string }) => a.id),
        [accounts.bob.account.id, accounts.lucy.account.id],
      );
    });

    test("a scalar id= is accepted; no id gives []", async () => {
      const res = await get(server.app, `/api/v1/accounts?id=${accounts.bob.account.id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(
        res.json().map((a: { acct: string }) => a.acct),
        ["bob"],
      );
      const none = await get(server.app, "/api/v1/accounts");
      assert.equal(none.statusCode, 200);
      assert.deepEqual(none.json(), []);
    });

    test("40 ids are accepted, 41 are 422", async () => {
      const forty = [accounts.alice.account.id, ...Array.from({ length: 39 }, () => newId())];
      const ok = await get(server.app, `/api/v1/accounts?${forty.map((id) => `id[]=${id}`).join("&")}`);
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(
        ok.json().map((a: { acct: string }) => a.acct),
        ["alice"],
      );
      const tooMany = await get(
        server.app,
        `/api/v1/accounts?${[...forty, newId()].map((id) => `id[]=${id}`).join("&")}`,
      );
      assert.equal(tooMany.statusCode, 422);
      assert.equal(typeof tooMany.json().error, "string");
    });

    test("each entry is a full Account", { skip: openApiSkip }, async () => {
      const res = await get(server.app, `/api/v1/accounts?id[]=${accounts.alice.account.id}&id[]=${accounts.rita.id}`);
      for (const account of res.json()) assert.deepEqual(validateSchema("Account", account), [], account.acct);
    });
  });

  describe("GET /api/v1/accounts/lookup", () => {
    const lookup = (acct: string, token?: string) =>
      get(server.app, `/api/v1/accounts/lookup?acct=${encodeURIComponent(acct)}`, token);

    test("a local account by username, @username, any case, or with this server's domain", async () => {
      for (const acct of [
        "alice",
        "@alice",
        "ALICE",
        "Alice",
        "alice@rookery.test",
        "@alice@rookery.test",
        "alice@ROOKERY.TEST",
      ]) {
        const res = await lookup(acct);
        assert.equal(res.statusCode, 200, acct);
        assert.equal(res.json().id, accounts.alice.account.id, acct);
        assert.equal(res.json().acct, "alice", acct);
      }
    });

    test("a remote account by user@domain", async () => {
      for (const acct of ["rita@remote.example", "@rita@remote.example", "RITA@Remote.Example"]) {
        const res = await lookup(acct);
        assert.equal(res.statusCode, 200, acct);
        assert.equal(res.json().id, accounts.rita.id, acct);
        assert.equal(res.json().acct, "rita@remote.example", acct);
        assert.equal(res.json().url, "https://remote.example/@rita", acct);
      }
    });

    test("unknown accounts are 404 (a remote username is not found without its domain, nor a local one with another domain)", async () => {
      for (const acct of [
        "nobody",
        "rita",
        "alice@remote.example",
        "nobody@remote.example",
        "rita@elsewhere.example",
      ]) {
        assert.deepEqual(errorOf(await lookup(acct)), [404, "Record not found"], acct);
      }
    });

    test("an unconfirmed or unapproved local user is 404 by username and by full handle alike", async () => {
      await createUser(server.ctx, "pendingmail", { confirmed: false });
      await createUser(server.ctx, "waitlisted", { approved: false });
      for (const acct of ["pendingmail", "pendingmail@rookery.test", "@Waitlisted@ROOKERY.test", "waitlisted"])
        assert.deepEqual(errorOf(await lookup(acct)), [404, "Record not found"], acct);
    });

    test("a missing or empty acct is 400", async () => {
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/lookup")), [
        400,
        "param is missing or the value is empty or invalid: acct",
      ]);
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/lookup?acct=")), [
        400,
        "param is missing or the value is empty or invalid: acct",
      ]);
    });

    test("works with a token too, and matches the Account schema", { skip: openApiSkip }, async () => {
      const res = await lookup("bob", accounts.alice.token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(validateSchema("Account", res.json()), []);
    });
  });
});

describe("with DISALLOW_UNAUTHENTICATED_API_ACCESS=true", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer({ env: { DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" } });
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const paths = () => [
    `/api/v1/accounts/${accounts.bob.account.id}`,
    `/api/v1/accounts?id[]=${accounts.bob.account.id}`,
    "/api/v1/accounts/lookup?acct=bob",
  ];

  test("anonymous callers and app tokens get 401 This API requires an authenticated user", async () => {
    const app = await appToken(server.ctx, "read");
    for (const path of paths()) {
      assert.deepEqual(errorOf(await get(server.app, path)), [401, "This API requires an authenticated user"], path);
      assert.deepEqual(
        errorOf(await get(server.app, path, app)),
        [401, "This API requires an authenticated user"],
        path,
      );
    }
  });

  test("a user token works", async () => {
    for (const path of paths()) {
      const res = await get(server.app, path, accounts.alice.token);
      assert.equal(res.statusCode, 200, path);
      const body = res.json();
      assert.equal(Array.isArray(body) ? body[0].acct : body.acct, "bob", path);
    }
  });
});
