import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  appToken,
  createTestServer,
  createUser,
  errorOf,
  get,
  standardAccounts,
  tokenFor,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

describe("GET /api/v1/accounts/verify_credentials", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("returns the CredentialAccount of the token's user", async () => {
    const res = await get(server.app, "/api/v1/accounts/verify_credentials", accounts.alice.token);
    assert.equal(res.statusCode, 200);
    assert.match(res.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
    const body = res.json();
    assert.equal(body.id, accounts.alice.account.id);
    assert.equal(body.username, "alice");
    assert.equal(body.acct, "alice");
    assert.equal(body.url, "https://rookery.test/@alice");
    assert.equal(body.source.privacy, "public");
    assert.deepEqual(body.role, { id: "-99", name: "", permissions: "65536", color: "", highlighted: false });
  });

  test("shows the admin's role", async () => {
    const body = (await get(server.app, "/api/v1/accounts/verify_credentials", accounts.admin.token)).json();
    assert.equal(body.role.name, "Admin");
    assert.deepEqual(body.roles, [{ id: body.role.id, name: "Admin", color: "" }]);
  });

  test("401 without a token, with an unknown token, and with a revoked one", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials")), [
      401,
      "The access token is invalid",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", "nope")), [
      401,
      "The access token is invalid",
    ]);
    const token = await tokenFor(server.ctx, accounts.bob, "read");
    await server.ctx.db.kysely
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: new Date().toISOString() })
      .where("user_id", "=", accounts.bob.user.id)
      .where("scopes", "=", "read")
      .execute();
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", token)), [
      401,
      "The access token was revoked",
    ]);
  });

  test("422 for an app token", async () => {
    const token = await appToken(server.ctx, "read");
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", token)), [
      422,
      "This method requires an authenticated user",
    ]);
  });

  test("403 for a token whose scopes do not cover read:accounts", async () => {
    for (const scopes of ["write", "read:statuses", "follow", "push", "admin:read"]) {
      const token = await tokenFor(server.ctx, accounts.carol, scopes);
      assert.deepEqual(
        errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", token)),
        [403, "This action is outside the authorized scopes"],
        scopes,
      );
    }
    for (const scopes of ["read", "read:accounts", "profile", "write read:accounts"]) {
      const token = await tokenFor(server.ctx, accounts.carol, scopes);
      assert.equal((await get(server.app, "/api/v1/accounts/verify_credentials", token)).statusCode, 200, scopes);
    }
  });

  test("403 texts for unconfirmed, pending, disabled and suspended users", async () => {
    const unconfirmed = await createUser(server.ctx, "unconfirmed", { confirmed: false });
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", unconfirmed.token)), [
      403,
      "Your login is missing a confirmed e-mail address",
    ]);
    const pending = await createUser(server.ctx, "pending", { approved: false });
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", pending.token)), [
      403,
      "Your login is currently pending approval",
    ]);
    const disabled = await createUser(server.ctx, "disabled");
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: true })
      .where("id", "=", disabled.user.id)
      .execute();
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", disabled.token)), [
      403,
      "Your login is currently disabled",
    ]);
    const suspended = await createUser(server.ctx, "suspended");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.account.id)
      .execute();
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/verify_credentials", suspended.token)), [
      403,
      "Your login is currently disabled",
    ]);
  });

  test("accepts the token as an access_token parameter too", async () => {
    const res = await get(server.app, `/api/v1/accounts/verify_credentials?access_token=${accounts.alice.token}`);
    assert.equal(res.statusCode, 200);
  });
});
