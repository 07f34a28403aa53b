/**
 * `GET /api/v1/accounts/:id/identity_proofs`: retired in Mastodon 3.5, which still answers `[]` to
 * a signed-in user (any scope) for an account it knows, with a Deprecation header.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  appToken,
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  revokeToken,
  REVOKED_TOKEN,
  tokenFor,
  USER_REQUIRED,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateResponse } from "../openapi.ts";

describe("identity proofs", () => {
  let server: TestServer;
  let reader: TestUser;
  let subject: TestUser;
  before(async () => {
    server = await createTestServer();
    [reader, subject] = await Promise.all([createUser(server.ctx, "reader"), createUser(server.ctx, "subject")]);
  });
  after(() => server.close());

  const path = (id: string) => `/api/v1/accounts/${id}/identity_proofs`;

  test("an empty list for a known account, local, remote or suspended, marked deprecated", async () => {
    const remote = await createRemoteAccount(server.ctx, "faraway", "remote.example");
    const suspended = await createUser(server.ctx, "suspendedone");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.account.id)
      .execute();
    for (const id of [subject.account.id, reader.account.id, remote.id, suspended.account.id]) {
      const res = await get(server.app, path(id), reader.token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), []);
      assert.equal(res.headers.deprecation, "@1648598400");
    }
  });

  test("an unknown account is 404", async () => {
    for (const id of ["1", "999999999999999999", "nope"])
      assert.deepEqual(errorOf(await get(server.app, path(id), reader.token)), [404, "Record not found"], id);
  });

  test("any scope will do, but a user is required: no token or an app token is 422, a revoked token 401", async () => {
    const push = await tokenFor(server.ctx, reader, "push");
    assert.equal((await get(server.app, path(subject.account.id), push)).statusCode, 200);
    assert.deepEqual(errorOf(await get(server.app, path(subject.account.id))), [422, USER_REQUIRED]);
    assert.deepEqual(errorOf(await get(server.app, path(subject.account.id), "not-a-token")), [422, USER_REQUIRED]);
    const app = await appToken(server.ctx, "read");
    assert.deepEqual(errorOf(await get(server.app, path(subject.account.id), app)), [422, USER_REQUIRED]);
    const revoked = await tokenFor(server.ctx, reader, "read");
    await revokeToken(server.ctx, revoked);
    assert.deepEqual(errorOf(await get(server.app, path(subject.account.id), revoked)), [401, REVOKED_TOKEN]);
  });

  test("the answer matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const res = await get(server.app, path(subject.account.id), reader.token);
    assert.deepEqual(validateResponse("get", "/api/v1/accounts/{id}/identity_proofs", res.json()), []);
  });
});
