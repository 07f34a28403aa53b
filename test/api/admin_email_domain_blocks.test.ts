/**
 * Admin e-mail domain blocks: every endpoint and its errors (403 without a token, outside the
 * scopes, without Manage Blocks; 404; 422 for a blank, invalid or already blocked domain), the
 * domain as stored, Link paging, the audit log; the MX lookup that blocks the domain's mail servers
 * too (only where the sign-up DNS check runs), removed with their parent; and what a block does at
 * sign-up: addresses at the domain, under it, or served by a blocked mail server are refused, and
 * each refusal counts in the block's history (uses, distinct addresses, the last 7 days).
 */
import { describeAdminAccess } from "../admin_access.ts";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import { acceptAllMailDomains, dnsMailDomainChecker } from "../../src/services/mail/domains.ts";
import {
  appToken,
  createTestServer,
  createUser,
  errorOf,
  request,
  TEST_MAIL_DOMAINS,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Day {
  day: string;
  accounts: string;
  uses: string;
}
interface Block {
  id: string;
  domain: string;
  created_at: string;
  history: Day[];
}

const NOT_FOUND = "Record not found";
const BLOCKS = "/api/v1/admin/email_domain_blocks";
type Method = "GET" | "POST" | "DELETE";

describe("admin e-mail domain blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  /** The mail servers the fake DNS answers, by domain. */
  const mx = new Map<string, string[]>();
  before(async () => {
    server = await createTestServer();
    server.ctx.mailDomains = { ...TEST_MAIL_DOMAINS, mailServers: async (domain) => mx.get(domain) ?? [] };
    admin = await createUser(server.ctx, "mailadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read:email_domain_blocks admin:write:email_domain_blocks");
  });
  after(() => server.close());

  const call = (method: Method, path: string, t: string | undefined, json?: object) =>
    request(server.app, method, path, { token: t, json });
  let domains = 0;
  const domain = () => `spam${++domains}.example`;

  async function block(name: unknown): Promise<Block> {
    const res = await call("POST", BLOCKS, token, { domain: name });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Block;
  }
  const domainsOnList = async () =>
    ((await call("GET", `${BLOCKS}?limit=200`, token)).json() as Block[]).map((b) => b.domain);
  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();

  test("POST blocks, GET shows it with a week of empty history, DELETE answers {}; the log has both", async () => {
    const name = domain();
    const created = await block(name);
    assert.equal(created.domain, name);
    assert.deepEqual(Object.keys(created).sort(), ["created_at", "domain", "history", "id"]);
    assert.equal(created.history.length, 7);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    assert.deepEqual(
      created.history.map((d) => d.day),
      [0, 1, 2, 3, 4, 5, 6].map((i) => String(today - i * 86_400)),
    );
    assert.ok(created.history.every((d) => d.accounts === "0" && d.uses === "0"));
    assert.deepEqual((await call("GET", `${BLOCKS}/${created.id}`, token)).json(), created);
    assert.ok((await domainsOnList()).includes(name));

    const removed = await call("DELETE", `${BLOCKS}/${created.id}`, token);
    assert.deepEqual([removed.statusCode, removed.json()], [200, {}]);
    assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);
    const entry = (action: string) => ({
      account_id: admin.account.id,
      action,
      target_type: "EmailDomainBlock",
      human_identifier: name,
    });
    assert.deepEqual(await logOf(created.id), [entry("create"), entry("destroy")]);
  });

  test("the domain is stored lowercase, in punycode, without a trailing dot or a leading @", async () => {
    const cases: Array<[string, string]> = [
      ["Mixed.CASE.Example", "mixed.case.example"],
      ["trailing.example.", "trailing.example"],
      ["bücher.example", "xn--bcher-kva.example"],
      ["@at.example", "at.example"],
      ["xyz", "xyz"],
    ];
    for (const [sent, stored] of cases) assert.equal((await block(sent)).domain, stored, sent);
  });

  test("422 for a blank or invalid domain and for one blocked already", async () => {
    for (const json of [{}, { domain: "" }, { domain: "  " }, { domain: null }, { domain: ["a.example"] }])
      assert.deepEqual(
        errorOf(await call("POST", BLOCKS, token, json)),
        [422, "Validation failed: Domain can't be blank"],
        JSON.stringify(json),
      );
    for (const bad of ["not a domain", "a..b.example", "under_score.example", "-dash.example"])
      assert.deepEqual(
        errorOf(await call("POST", BLOCKS, token, { domain: bad })),
        [422, "Validation failed: Domain is not a valid domain name"],
        bad,
      );
    const name = domain();
    await block(name);
    assert.deepEqual(errorOf(await call("POST", BLOCKS, token, { domain: name.toUpperCase() })), [
      422,
      "Validation failed: Domain has already been taken",
    ]);
  });

  test("unknown IDs, words and IDs beyond 64 bits: 404; IDs are strings; form parameters work", async () => {
    for (const id of [newId(), "abc", "9223372036854775808"]) {
      assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
      assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
    }
    const res = await request(server.app, "POST", BLOCKS, { token, form: { domain: domain() } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /"id":"\d+"/);
  });

  test("blocking a domain blocks its mail servers too; removing it removes them", async () => {
    await block("mx.shared-provider.example");
    mx.set("throwaway.example", [
      "mx1.throwaway-mail.example",
      "MX1.throwaway-mail.example",
      "mx2.throwaway-mail.example",
      "mx.shared-provider.example",
      "throwaway.example",
      "not a host",
    ]);
    const parent = await block("throwaway.example");
    assert.equal(parent.domain, "throwaway.example");
    const rows = await server.ctx.db.kysely
      .selectFrom("email_domain_blocks")
      .select(["id", "domain", "parent_id"])
      .where("parent_id", "=", parent.id)
      .orderBy("domain")
      .execute();
    assert.deepEqual(
      rows.map((r) => r.domain),
      ["mx1.throwaway-mail.example", "mx2.throwaway-mail.example"],
    );
    const listed = await domainsOnList();
    for (const name of ["throwaway.example", "mx1.throwaway-mail.example", "mx2.throwaway-mail.example"])
      assert.ok(listed.includes(name), name);
    assert.deepEqual(
      (await logOf(rows[0]!.id)).map((e) => [e.action, e.human_identifier]),
      [["create", "mx1.throwaway-mail.example"]],
    );

    // Another domain served by the same mail servers is refused at sign-up.
    mx.set("fresh-throwaway.example", ["mx2.throwaway-mail.example"]);
    const res = await signUp("viamx", "fresh-throwaway.example", "192.0.2.40");
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json().details.email, [{ error: "ERR_BLOCKED", description: "is not allowed" }]);

    assert.equal((await call("DELETE", `${BLOCKS}/${parent.id}`, token)).statusCode, 200);
    const after = await domainsOnList();
    assert.ok(!after.some((d) => d.includes("throwaway")), after.join(","));
    assert.ok(after.includes("mx.shared-provider.example"), "a block made before is not the parent's");
  });

  test("where DNS is not asked (EMAIL_DOMAIN_DNS_CHECK=false, loopback), no mail server is looked up", async () => {
    assert.equal(acceptAllMailDomains.mailServers, undefined);
    assert.equal(typeof dnsMailDomainChecker().mailServers, "function");
    const fresh = await createTestServer();
    try {
      const user = await createUser(fresh.ctx, "nodnsadmin", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, user, "admin:write:email_domain_blocks");
      const res = await request(fresh.app, "POST", BLOCKS, { token: t, json: { domain: "nodns.example" } });
      assert.equal(res.statusCode, 200, res.body);
      const count = await fresh.ctx.db.kysely.selectFrom("email_domain_blocks").select("id").execute();
      assert.equal(count.length, 1);
    } finally {
      await fresh.close();
    }
  });

  const signUp = async (username: string, at: string, from: string) =>
    request(server.app, "POST", "/api/v1/accounts", {
      token: await appToken(server.ctx),
      json: { username, email: `${username}@${at}`, password: "a fine passphrase", agreement: true },
      headers: { "x-forwarded-for": from },
    });

  test("sign-ups at the domain or under it are refused; each refusal counts in today's history", async () => {
    const blocked = await block("history.example");
    const attempts: Array<[string, string, string]> = [
      ["hist1", "history.example", "192.0.2.10"],
      ["hist2", "mail.history.example", "192.0.2.10"],
      ["hist3", "HISTORY.example", "192.0.2.11"],
    ];
    for (const [username, at, from] of attempts) {
      const res = await signUp(username, at, from);
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().details.email, [{ error: "ERR_BLOCKED", description: "is not allowed" }], at);
    }
    assert.equal((await signUp("histok", "nothistory.example", "192.0.2.12")).statusCode, 200);
    const shown = (await call("GET", `${BLOCKS}/${blocked.id}`, token)).json() as Block;
    assert.deepEqual(shown.history[0], {
      day: String(Math.floor(Date.now() / 86_400_000) * 86_400),
      accounts: "2",
      uses: "3",
    });
    assert.ok(shown.history.slice(1).every((d) => d.uses === "0"));
  });

  test("a block of a top-level domain covers every address under it, as Mastodon's does", async () => {
    await block("zzz");
    const res = await signUp("tldcase", "anything.zzz", "192.0.2.20");
    assert.deepEqual(res.json().details.email, [{ error: "ERR_BLOCKED", description: "is not allowed" }]);
  });

  test("pages of 100 by default and at most 200, newest first, with a Link header", async () => {
    const fresh = await createTestServer();
    try {
      const user = await createUser(fresh.ctx, "mailpager", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, user, "admin:read:email_domain_blocks");
      const now = new Date().toISOString();
      await fresh.ctx.db.kysely
        .insertInto("email_domain_blocks")
        .values(Array.from({ length: 205 }, (_, i) => ({ id: newId(), domain: `p${i}.example`, created_at: now })))
        .execute();
      const page = (q: string) => request(fresh.app, "GET", `${BLOCKS}${q}`, { token: t });
      assert.equal(((await page("")).json() as Block[]).length, 100);
      assert.equal(((await page("?limit=500")).json() as Block[]).length, 200);
      const first = await page("?limit=2");
      assert.deepEqual(
        (first.json() as Block[]).map((b) => b.domain),
        ["p204.example", "p203.example"],
      );
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
      assert.ok(next);
      assert.deepEqual(
        ((await page(new URL(next).search)).json() as Block[]).map((b) => b.domain),
        ["p202.example", "p201.example"],
      );
    } finally {
      await fresh.close();
    }
  });

  describeAdminAccess<Method>({
    server: () => server,
    admin: () => admin,
    subject: "email_domain_blocks",
    otherSubject: "ip_blocks",
    permission: "Manage Blocks",
    prefix: "mail",
    call,
    routes: async () => {
      const target = await block(domain());
      return [
        ["GET", BLOCKS],
        ["GET", `${BLOCKS}/${target.id}`],
        ["POST", BLOCKS, { domain: domain() }],
        ["DELETE", `${BLOCKS}/${target.id}`],
      ];
    },
  });

  test("Admin::EmailDomainBlock matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const created = await block(domain());
    assert.deepEqual(validateSchema("AdminEmailDomainBlock", created), []);
    const list = (await call("GET", BLOCKS, token)).json() as Block[];
    for (const item of list) assert.deepEqual(validateSchema("AdminEmailDomainBlock", item), []);
  });
});

// The older block lists of the admin API write the same audit log (the CLI has no account to name).
describe("admin domain blocks and domain allows write the audit log", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "fedadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  const log = () =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "target_id", "human_identifier", "detail"])
      .orderBy("id")
      .execute();

  test("creating, changing and lifting a domain block; allowing (once) and unallowing a domain", async () => {
    const call = (method: "POST" | "PUT" | "DELETE", path: string, json?: object) =>
      request(server.app, method, path, { token, json });
    const created = (await call("POST", "/api/v1/admin/domain_blocks", { domain: "bad.example" })).json();
    await call("PUT", `/api/v1/admin/domain_blocks/${created.id}`, { severity: "suspend" });
    await call("DELETE", `/api/v1/admin/domain_blocks/${created.id}`);
    const allowed = (await call("POST", "/api/v1/admin/domain_allows", { domain: "good.example" })).json();
    assert.equal((await call("POST", "/api/v1/admin/domain_allows", { domain: "good.example" })).statusCode, 200);
    await call("DELETE", `/api/v1/admin/domain_allows/${allowed.id}`);
    const entry = (action: string, type: string, id: string, name: string, detail: string | null) => ({
      account_id: admin.account.id,
      action,
      target_type: type,
      target_id: id,
      human_identifier: name,
      detail,
    });
    assert.deepEqual(await log(), [
      entry("create", "DomainBlock", created.id, "bad.example", "silence"),
      entry("update", "DomainBlock", created.id, "bad.example", "suspend"),
      entry("destroy", "DomainBlock", created.id, "bad.example", "suspend"),
      entry("create", "DomainAllow", allowed.id, "good.example", null),
      entry("destroy", "DomainAllow", allowed.id, "good.example", null),
    ]);
  });
});
