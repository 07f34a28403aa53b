/**
 * Who may call an admin endpoint, checked the same way for every admin list (Mastodon's answers):
 * no token, an unknown or a revoked one, an app's own token → 403 `This action is not allowed`; a token without the
 * list's scope (the other half of it, another list's, a user's scopes) → 403 `This action is
 * outside the authorized scopes`; a user without the permission (a plain user, a Moderator) →
 * 403 `This action is not allowed`; an Admin and an Owner may.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { appToken, createUser, errorOf, revokeToken, tokenFor, type TestServer, type TestUser } from "./kit.ts";

export type AdminMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

const NOT_ALLOWED = "This action is not allowed";
const OUTSIDE_SCOPES = "This action is outside the authorized scopes";

export interface AdminAccessOptions<M extends AdminMethod> {
  server: () => TestServer;
  /** A user with the Admin role. */
  admin: () => TestUser;
  /** The scope subject, e.g. `ip_blocks` for `admin:read:ip_blocks` / `admin:write:ip_blocks`. */
  subject: string;
  /** Another subject, whose scopes must not do. */
  otherSubject: string;
  /** The permission's name, for the tests' titles. */
  permission: string;
  /** Usernames made for the checks start with this (unique within the server). */
  prefix: string;
  /** Every route of the list; made afresh for each use (DELETE consumes its target). */
  routes: () => Promise<Array<[M, string, object?]>>;
  call: (method: M, path: string, token: string | undefined, json?: object) => Promise<LightMyRequestResponse>;
  /** Whether a route reads (takes the read scope); GETs by default. */
  reads?: (method: M, path: string) => boolean;
}

export function describeAdminAccess<M extends AdminMethod>(options: AdminAccessOptions<M>): void {
  const { subject, call } = options;
  const reads = options.reads ?? ((method: M) => method === "GET");

  describe("who may call it", () => {
    test("403 This action is not allowed without a token, with an unknown or a revoked one", async () => {
      const revoked = await tokenFor(options.server().ctx, options.admin(), "admin:read admin:write");
      await revokeToken(options.server().ctx, revoked);
      for (const [method, path, json] of await options.routes())
        for (const t of [undefined, "not-a-token", revoked])
          assert.deepEqual(errorOf(await call(method, path, t, json)), [403, NOT_ALLOWED], `${method} ${path} ${t}`);
    });

    test("403 outside the scopes: the other half, another list's scopes, a user's scopes", async () => {
      const ctx = options.server().ctx;
      const admin = options.admin();
      const read = await tokenFor(ctx, admin, `admin:read:${subject}`);
      const write = await tokenFor(ctx, admin, `admin:write:${subject}`);
      const others = await tokenFor(
        ctx,
        admin,
        `admin:read:${options.otherSubject} admin:write:${options.otherSubject}`,
      );
      const user = await tokenFor(ctx, admin, "read write follow push");
      for (const [method, path, json] of await options.routes())
        for (const t of reads(method, path) ? [write, others, user] : [read, others, user])
          assert.deepEqual(errorOf(await call(method, path, t, json)), [403, OUTSIDE_SCOPES], `${method} ${path}`);
    });

    test("403 This action is not allowed for an app's own token, even with the admin scopes (it has no user, so no role)", async () => {
      const t = await appToken(options.server().ctx, "admin:read admin:write");
      for (const [method, path, json] of await options.routes())
        assert.deepEqual(errorOf(await call(method, path, t, json)), [403, NOT_ALLOWED], `${method} ${path}`);
    });

    test(`403 without ${options.permission} (a plain user, a Moderator); an Admin and an Owner may`, async () => {
      const ctx = options.server().ctx;
      for (const user of [
        await createUser(ctx, `${options.prefix}plain`),
        await createUser(ctx, `${options.prefix}mod`, { role: "Moderator" }),
      ]) {
        const t = await tokenFor(ctx, user, "admin:read admin:write");
        for (const [method, path, json] of await options.routes())
          assert.deepEqual(errorOf(await call(method, path, t, json)), [403, NOT_ALLOWED], `${method} ${path}`);
      }
      const owner = await createUser(ctx, `${options.prefix}owner`, { role: "Owner" });
      for (const [user, scopes] of [
        [owner, `admin:read:${subject} admin:write:${subject}`],
        [options.admin(), "admin:read admin:write"],
      ] as const) {
        const t = await tokenFor(ctx, user, scopes);
        for (const [method, path, json] of await options.routes()) {
          const res = await call(method, path, t, json);
          assert.equal(res.statusCode, 200, `${user.account.username} ${method} ${path}: ${res.body}`);
        }
      }
    });
  });
}
