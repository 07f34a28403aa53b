/**
 * A suspended or frozen user's browser sessions end at once: the next page is the sign-in page,
 * whatever page it is (the settings, the export, the admin area), and the sign-in page then says
 * the account is disabled. Lifting the suspension lets them sign in again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, Browser } from "../browser.ts";
import { createTestServer, createUser, request, tokenFor, type TestServer, type TestUser } from "../kit.ts";

describe("sessions of a suspended or frozen user", () => {
  let server: TestServer;
  let adminToken: string;

  before(async () => {
    server = await createTestServer();
    const admin = await createUser(server.ctx, "sessionmod", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  async function act(user: TestUser, path: string, json?: object) {
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${user.account.id}${path}`, {
      token: adminToken,
      json,
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  for (const type of ["suspend", "disable"] as const) {
    test(`${type}: every page sends the signed-in browser to sign in, which refuses`, async () => {
      const user = await createUser(server.ctx, `session${type}`, type === "suspend" ? { role: "Moderator" } : {});
      const browser = new Browser(server.app);
      assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
      assert.equal((await browser.get("/settings")).statusCode, 200);

      await act(user, "/action", { type });
      for (const path of ["/settings", "/settings/export", "/settings/delete", "/disputes/strikes"]) {
        const res = await browser.get(path);
        assert.equal(res.statusCode, 303, `${path}: ${res.body.slice(0, 200)}`);
        assert.match(String(res.headers.location), /^\/auth\/sign_in/);
      }
      if (type === "suspend") {
        const admin = await browser.get("/admin/reports");
        assert.equal(admin.statusCode, 303, "a suspended moderator's admin area closes too");
      }
      const again = await browser.signIn(user.user.email);
      assert.equal(again.statusCode, 403);
      assert.equal(alertOf(again.body), "Your account is disabled.");

      await act(user, type === "suspend" ? "/unsuspend" : "/enable");
      assert.equal((await new Browser(server.app).signIn(user.user.email)).statusCode, 303);
    });
  }
});
