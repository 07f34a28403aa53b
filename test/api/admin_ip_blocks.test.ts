/**
 * Admin IP blocks: every endpoint and its errors (403 without a token, outside the scopes, without
 * Manage Blocks; 404; 422 for a missing or bad ip, severity or expiry, and a network blocked
 * twice), the network as stored (CIDR, host bits cleared), Link paging, the audit log; and what the
 * blocks do: `sign_up_requires_approval` leaves a new account pending, `sign_up_block` refuses the
 * sign-up (API and web page), `no_access` answers every request 403 (the API, OAuth's password
 * grant, the sign-in page) except from this machine, at once after the change and no longer once
 * the block is lifted or has expired.
 */
import { describeAdminAccess } from "../admin_access.ts";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Browser, findForm, KIT_PASSWORD } from "../browser.ts";
import { newId } from "../../src/db/ids.ts";
import {
  appToken,
  createTestServer,
  createUser,
  errorOf,
  request,
  testApplication,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface IpBlock {
  id: string;
  ip: string;
  severity: string;
  comment: string;
  created_at: string;
  expires_at: string | null;
}

const NOT_FOUND = "Record not found";
const BLOCKS = "/api/v1/admin/ip_blocks";
type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

describe("admin IP blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "ipadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read:ip_blocks admin:write:ip_blocks");
  });
  after(() => server.close());

  const call = (method: Method, path: string, t: string | undefined, json?: object, from?: string) =>
    request(server.app, method, path, { token: t, json, headers: from ? { "x-forwarded-for": from } : {} });

  let networks = 0;
  /** A fresh /24 in 10.x for tests that need one. */
  const network = () => `10.${Math.floor(++networks / 250)}.${networks % 250}.0/24`;

  async function block(json: object): Promise<IpBlock> {
    const res = await call("POST", BLOCKS, token, json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as IpBlock;
  }

  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier", "detail"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();

  test("POST blocks, GET shows it, PUT changes it, DELETE answers {}; each step is in the audit log", async () => {
    const created = await block({ ip: "192.0.2.77/24", severity: "sign_up_block", comment: "spam wave" });
    assert.equal(created.ip, "192.0.2.0/24");
    assert.equal(created.severity, "sign_up_block");
    assert.equal(created.comment, "spam wave");
    assert.equal(created.expires_at, null);
    assert.deepEqual(Object.keys(created).sort(), ["comment", "created_at", "expires_at", "id", "ip", "severity"]);
    assert.deepEqual((await call("GET", `${BLOCKS}/${created.id}`, token)).json(), created);
    assert.ok(((await call("GET", BLOCKS, token)).json() as IpBlock[]).some((b) => b.id === created.id));

    const updated = await call("PUT", `${BLOCKS}/${created.id}`, token, { severity: "no_access", expires_in: 3600 });
    assert.equal(updated.statusCode, 200, updated.body);
    const changed = updated.json() as IpBlock;
    assert.equal(changed.severity, "no_access");
    assert.equal(changed.comment, "spam wave", "what is not sent stays");
    const expires = Date.parse(changed.expires_at!) - Date.now();
    assert.ok(expires > 3500_000 && expires <= 3600_000, changed.expires_at!);
    const patched = await call("PATCH", `${BLOCKS}/${created.id}`, token, { expires_in: "", comment: "" });
    assert.deepEqual([patched.json().expires_at, patched.json().comment], [null, ""]);

    const removed = await call("DELETE", `${BLOCKS}/${created.id}`, token);
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), {});
    assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await call("PUT", `${BLOCKS}/${created.id}`, token, { comment: "x" })), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);

    const entry = (action: string, detail: string) => ({
      account_id: admin.account.id,
      action,
      target_type: "IpBlock",
      human_identifier: "192.0.2.0/24",
      detail,
    });
    assert.deepEqual(await logOf(created.id), [
      entry("create", "sign_up_block"),
      entry("update", "no_access"),
      entry("update", "no_access"),
      entry("destroy", "no_access"),
    ]);
  });

  test("networks are stored in CIDR with the host bits cleared; a bare address is one host", async () => {
    const cases: Array<[string, string]> = [
      ["198.51.100.9", "198.51.100.9/32"],
      [" 198.51.100.130/25 ", "198.51.100.128/25"],
      ["2001:DB8:0:0:1::1/64", "2001:db8::/64"],
      ["2001:db8:aa::1", "2001:db8:aa::1/128"],
      ["::ffff:198.51.99.1", "198.51.99.1/32"],
    ];
    for (const [sent, stored] of cases)
      assert.equal((await block({ ip: sent, severity: "sign_up_requires_approval" })).ip, stored, sent);
  });

  test("422 for a missing or bad ip or severity, a bad expiry, and a network already blocked", async () => {
    const v = (text: string) => `Validation failed: ${text}`;
    const cases: Array<[object, string]> = [
      [{ severity: "no_access" }, v("Ip can't be blank")],
      [{ ip: "", severity: "no_access" }, v("Ip can't be blank")],
      [{ ip: "not an ip", severity: "no_access" }, v("Ip is invalid")],
      [{ ip: "192.0.2.300", severity: "no_access" }, v("Ip is invalid")],
      [{ ip: "192.0.2.1/33", severity: "no_access" }, v("Ip is invalid")],
      [{ ip: "fe80::1%eth0", severity: "no_access" }, v("Ip is invalid")],
      [{ ip: "192.0.2.1" }, v("Severity can't be blank")],
      [{ ip: "192.0.2.1", severity: "suspend" }, v("Severity is not included in the list")],
      [{ ip: "192.0.2.1", severity: "no_access", expires_in: -5 }, v("Expires in must be greater than 0")],
      [{ ip: "192.0.2.1", severity: "no_access", expires_in: "soon" }, v("Expires in must be greater than 0")],
      [{ ip: "192.0.2.1", severity: "no_access", expires_in: 0 }, v("Expires in must be greater than 0")],
      [{ ip: "192.0.2.1", severity: "no_access", expires_in: 1e15 }, v("Expires in is too long")],
    ];
    for (const [json, message] of cases)
      assert.deepEqual(errorOf(await call("POST", BLOCKS, token, json)), [422, message], JSON.stringify(json));
    const first = await block({ ip: "203.0.113.0/24", severity: "sign_up_block" });
    assert.deepEqual(errorOf(await call("POST", BLOCKS, token, { ip: "203.0.113.5/24", severity: "no_access" })), [
      422,
      v("Ip has already been taken"),
    ]);
    const other = await block({ ip: "203.0.114.0/24", severity: "sign_up_block" });
    assert.deepEqual(errorOf(await call("PUT", `${BLOCKS}/${other.id}`, token, { ip: "203.0.113.0/24" })), [
      422,
      v("Ip has already been taken"),
    ]);
    assert.deepEqual(errorOf(await call("PUT", `${BLOCKS}/${first.id}`, token, { severity: "silence" })), [
      422,
      v("Severity is not included in the list"),
    ]);
    assert.equal((await call("PUT", `${BLOCKS}/${first.id}`, token, { ip: "203.0.113.0/24" })).statusCode, 200);
  });

  test("unknown IDs, words and IDs beyond 64 bits: 404; IDs are strings; form parameters work", async () => {
    for (const id of [newId(), "abc", "9223372036854775808"]) {
      assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
      assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
    }
    const res = await request(server.app, "POST", BLOCKS, {
      token,
      form: { ip: network(), severity: "sign_up_block", expires_in: "60" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /"id":"\d+"/);
  });

  test("pages of 100 by default and at most 200, newest first, with a Link header", async () => {
    const fresh = await createTestServer();
    try {
      const user = await createUser(fresh.ctx, "ippager", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, user, "admin:read:ip_blocks");
      const now = new Date().toISOString();
      const rows = Array.from({ length: 205 }, (_, i) => ({
        id: newId(),
        ip: `10.9.${i}.0/24`,
        severity: "sign_up_block" as const,
        comment: "",
        created_at: now,
        updated_at: now,
      }));
      await fresh.ctx.db.kysely.insertInto("ip_blocks").values(rows).execute();
      const page = (q: string) => request(fresh.app, "GET", `${BLOCKS}${q}`, { token: t });
      assert.equal(((await page("")).json() as IpBlock[]).length, 100);
      assert.equal(((await page("?limit=500")).json() as IpBlock[]).length, 200);
      const first = await page("?limit=2");
      assert.deepEqual(
        (first.json() as IpBlock[]).map((b) => b.ip),
        ["10.9.204.0/24", "10.9.203.0/24"],
      );
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
      assert.ok(next);
      assert.deepEqual(
        ((await page(new URL(next).search)).json() as IpBlock[]).map((b) => b.ip),
        ["10.9.202.0/24", "10.9.201.0/24"],
      );
    } finally {
      await fresh.close();
    }
  });

  describeAdminAccess<Method>({
    server: () => server,
    admin: () => admin,
    subject: "ip_blocks",
    otherSubject: "email_domain_blocks",
    permission: "Manage Blocks",
    prefix: "ip",
    call,
    routes: async () => {
      const target = await block({ ip: network(), severity: "sign_up_block" });
      return [
        ["GET", BLOCKS],
        ["GET", `${BLOCKS}/${target.id}`],
        ["POST", BLOCKS, { ip: network(), severity: "sign_up_block" }],
        ["PUT", `${BLOCKS}/${target.id}`, { comment: "changed" }],
        ["DELETE", `${BLOCKS}/${target.id}`],
      ];
    },
  });

  describe("what the blocks do", () => {
    const signUp = async (from: string, username: string) =>
      request(server.app, "POST", "/api/v1/accounts", {
        token: await appToken(server.ctx),
        json: { username, email: `${username}@example.com`, password: "a fine passphrase", agreement: true },
        headers: { "x-forwarded-for": from },
      });
    const approved = async (username: string) =>
      (
        await server.ctx.db.kysely
          .selectFrom("users")
          .innerJoin("accounts", "accounts.id", "users.account_id")
          .select("users.approved")
          .where("accounts.username", "=", username)
          .executeTakeFirstOrThrow()
      ).approved;

    test("sign_up_requires_approval: the account waits for approval; other addresses sign up as usual", async () => {
      await block({ ip: "198.18.1.0/24", severity: "sign_up_requires_approval" });
      assert.equal((await signUp("198.18.1.20", "ipwaiting")).statusCode, 200);
      assert.equal(await approved("ipwaiting"), false);
      assert.equal((await signUp("198.18.2.20", "ipwelcome")).statusCode, 200);
      assert.equal(await approved("ipwelcome"), true);
    });

    test("sign_up_block: the API answers 403 Forbidden, the web page says no; no user is made", async () => {
      await block({ ip: "198.18.3.0/24", severity: "sign_up_block" });
      assert.deepEqual(errorOf(await signUp("198.18.3.20", "ipblocked")), [403, "Forbidden"]);
      const browser = new Browser(server.app, { remoteAddress: "198.18.3.21" });
      const page = await browser.get("/auth/sign_up");
      const posted = await browser.submit(page, "/auth/sign_up", {
        username: "ipblockedweb",
        email: "ipblockedweb@example.com",
        password: "a fine passphrase",
        password_confirmation: "a fine passphrase",
        agreement: "1",
      });
      assert.equal(posted.statusCode, 403);
      assert.match(posted.body, /not accepting new accounts/);
      const made = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select("id")
        .where("username", "in", ["ipblocked", "ipblockedweb"])
        .execute();
      assert.deepEqual(made, []);
    });

    test("an expired block no longer applies", async () => {
      const expiring = await block({ ip: "198.18.4.0/24", severity: "sign_up_block", expires_in: 1 });
      assert.deepEqual(errorOf(await signUp("198.18.4.20", "ipexpiring")), [403, "Forbidden"]);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assert.equal((await signUp("198.18.4.21", "ipexpired")).statusCode, 200);
      assert.ok((await call("GET", `${BLOCKS}/${expiring.id}`, token)).statusCode === 200, "still listed");
    });

    test("no_access: every request from the network is 403 at once, this machine never; lifting it lets them in", async () => {
      const user = await createUser(server.ctx, "ipnoaccess");
      const blocked = "198.18.5.9";
      const before = await call("GET", "/api/v1/accounts/verify_credentials", user.token, undefined, blocked);
      assert.equal(before.statusCode, 200);

      const b = await block({ ip: "198.18.5.0/24", severity: "no_access" });
      const refused = await call("GET", "/api/v1/accounts/verify_credentials", user.token, undefined, blocked);
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.body, "Forbidden\n");
      assert.equal((await signUp(blocked, "ipnoaccessnew")).body, "Forbidden\n");
      for (const path of ["/api/v1/instance", "/auth/sign_in", "/nothing/here"])
        assert.equal((await call("GET", path, undefined, undefined, blocked)).statusCode, 403, path);

      // OAuth's password grant and the web sign-in are refused before they look at the password.
      const application = await testApplication(server.ctx);
      const grant = await request(server.app, "POST", "/oauth/token", {
        form: {
          grant_type: "password",
          username: "ipnoaccess@rookery.test",
          password: KIT_PASSWORD,
          client_id: application.client_id,
          client_secret: application.client_secret,
          scope: "read",
        },
        headers: { "x-forwarded-for": blocked },
      });
      assert.equal(grant.statusCode, 403);
      const browser = new Browser(server.app, { remoteAddress: blocked });
      const signIn = await browser.post("/auth/sign_in", { email: "ipnoaccess@rookery.test", password: KIT_PASSWORD });
      assert.equal(signIn.statusCode, 403);
      assert.equal(browser.cookies.size, 0, "no session");

      // This machine (a proxy's own address, an admin's shell) is never locked out; other networks pass.
      assert.equal((await call("GET", "/api/v1/accounts/verify_credentials", user.token)).statusCode, 200);
      const page = await new Browser(server.app, { remoteAddress: "198.18.6.1" }).get("/auth/sign_in");
      assert.equal(page.statusCode, 200);
      assert.ok(findForm(page.body, "/auth/sign_in"));
      assert.equal(
        (await call("GET", "/api/v1/accounts/verify_credentials", user.token, undefined, "198.18.6.1")).statusCode,
        200,
      );
      // IPv4 written in IPv6 by a dual-stack socket is the same address.
      const mapped = await new Browser(server.app, { remoteAddress: `::ffff:${blocked}` }).get("/auth/sign_in");
      assert.equal(mapped.statusCode, 403);

      assert.equal((await call("DELETE", `${BLOCKS}/${b.id}`, token)).statusCode, 200);
      assert.equal(
        (await call("GET", "/api/v1/accounts/verify_credentials", user.token, undefined, blocked)).statusCode,
        200,
      );
    });

    test("a block made or lifted by another process applies here once it hears of it", async () => {
      // Another process writes to the same database and announces the change on the bus.
      const now = new Date().toISOString();
      const probe = () => call("GET", "/api/v1/instance", undefined, undefined, "198.18.7.7");
      assert.equal((await probe()).statusCode, 200);
      await server.ctx.db.kysely
        .insertInto("ip_blocks")
        .values({
          id: newId(),
          ip: "198.18.7.0/24",
          severity: "no_access",
          comment: "",
          created_at: now,
          updated_at: now,
        })
        .execute();
      assert.equal((await probe()).statusCode, 200, "not yet heard of");
      await server.ctx.events.publish("admin:ip_blocks", { event: "changed" });
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal((await probe()).statusCode, 403);
    });
  });

  test("Admin::IpBlock matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    assert.deepEqual(validateSchema("AdminIpBlock", await block({ ip: network(), severity: "no_access" })), []);
    const expiring = await block({ ip: network(), severity: "sign_up_block", expires_in: 86400, comment: "c" });
    assert.deepEqual(validateSchema("AdminIpBlock", expiring), []);
  });
});
