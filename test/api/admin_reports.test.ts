/**
 * The admin reports API (Mastodon's Api::V1::Admin::ReportsController): the queue and its filters
 * and Link paging, one report as Admin::Report (OpenAPI shape, nested Admin::Account, statuses,
 * rules), assigning, unassigning, resolving, reopening and updating (PUT and PATCH) with their
 * audit log entries, validation (422), unknown IDs (404), and each refusal: no or a bad token,
 * the wrong scope, a user without Manage Reports (403 with Mastodon's texts).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  OUTSIDE_SCOPES,
  postStatus,
  request,
  revokeToken,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface AdminAccountJson {
  id: string;
  username: string;
  domain: string | null;
  email: string | null;
  role: { id: string; name: string; permissions: string } | null;
  account: { id: string; acct: string };
}

interface AdminReportJson {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  created_at: string;
  updated_at: string;
  account: AdminAccountJson;
  target_account: AdminAccountJson;
  assigned_account: AdminAccountJson | null;
  action_taken_by_account: AdminAccountJson | null;
  statuses: Array<{ id: string }>;
  rules: Array<{ id: string; text: string }>;
}

const NOT_ALLOWED = "This action is not allowed";
const NOT_FOUND = "Record not found";
const MUST_BE_BLANK = "Validation failed: Rule ids must be blank";
const INVALID_RULES = "Validation failed: Rule ids contains invalid rule IDs";
const BAD_CATEGORY = "Validation failed: Category is not included in the list";
const REPORTS = "/api/v1/admin/reports";
const SCOPES = "admin:read:reports admin:write:reports";

type Method = "GET" | "POST" | "PUT" | "PATCH";

describe("admin reports", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "reportadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, SCOPES);
    await saveSetting(server.ctx.db.kysely, "rules", [
      { text: "Be kind", hint: "No insults" },
      { text: "No spam", hint: "" },
      { text: "No ads", hint: "" },
    ]);
  });
  after(() => server.close());

  let users = 0;
  const user = (name: string) => createUser(server.ctx, `${name}${++users}`);
  const call = (method: Method, path: string, t: string | undefined, json?: unknown) =>
    request(server.app, method, path, { token: t, json });
  const ok = async (method: Method, path: string, json?: unknown, t: string = token) => {
    const res = await call(method, path, t, json);
    assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
    return res.json() as AdminReportJson;
  };
  const list = async (query = "") => {
    const res = await call("GET", `${REPORTS}${query}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return { ids: (res.json() as AdminReportJson[]).map((r) => r.id), link: String(res.headers.link ?? "") };
  };

  /** `reporter` reports `target` through the user API; answers the report's ID. */
  async function fileReport(reporter: TestUser, target: TestUser, json: object = {}): Promise<string> {
    const res = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: target.account.id, ...json },
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { id: string }).id;
  }

  async function logOf(reportId: string) {
    return server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "target_id", "human_identifier"])
      .where("target_type", "=", "Report")
      .where("target_id", "=", reportId)
      .orderBy("id")
      .execute();
  }

  test("one report: Admin::Report with both accounts, the statuses and the rules, as the OpenAPI says", async () => {
    const [reporter, target] = await Promise.all([user("reporter"), user("target")]);
    const bad = await postStatus(server, target, { status: "bad post" });
    const id = await fileReport(reporter, target, { status_ids: [bad.id], rule_ids: ["2"], comment: "spammy" });
    const report = await ok("GET", `${REPORTS}/${id}`);
    assert.equal(report.id, id);
    assert.equal(report.category, "violation");
    assert.equal(report.comment, "spammy");
    assert.equal(report.action_taken, false);
    assert.equal(report.action_taken_at, null);
    assert.equal(report.forwarded, false);
    assert.equal(report.account.id, reporter.account.id);
    assert.equal(report.account.account.id, reporter.account.id);
    assert.equal(report.account.email, `${reporter.username}@rookery.test`);
    assert.equal(report.target_account.id, target.account.id);
    assert.equal(report.target_account.username, target.username);
    assert.equal(report.target_account.domain, null);
    assert.equal(report.assigned_account, null);
    assert.equal(report.action_taken_by_account, null);
    assert.deepEqual(
      report.statuses.map((s) => s.id),
      [bad.id],
    );
    assert.deepEqual(report.rules, [{ id: "2", text: "No spam", hint: "", translations: {} }]);
    assert.match((await call("GET", `${REPORTS}/${id}`, token)).body, new RegExp(`"id":"${id}"`));
  });

  test(
    "the Admin::Report and its Admin::Accounts match Mastodon's OpenAPI description",
    { skip: openApiSkip },
    async () => {
      const [reporter, target] = await Promise.all([user("shapereporter"), user("shapetarget")]);
      const bad = await postStatus(server, target, { status: "shape post" });
      const id = await fileReport(reporter, target, { status_ids: [bad.id], rule_ids: ["1"] });
      // The description wants a string where Mastodon writes null for a user who never chose a language.
      await server.ctx.db.kysely
        .updateTable("users")
        .set({ locale: "en" })
        .where("id", "in", [reporter.user.id, target.user.id, admin.user.id])
        .execute();
      await ok("POST", `${REPORTS}/${id}/assign_to_self`);
      const resolved = await ok("POST", `${REPORTS}/${id}/resolve`);
      assert.deepEqual(validateSchema("AdminReport", resolved), []);
      assert.deepEqual(validateSchema("AdminAccount", resolved.assigned_account), []);
      assert.deepEqual(validateSchema("AdminAccount", resolved.action_taken_by_account), []);
      const listed = (await call("GET", `${REPORTS}?resolved=true&account_id=${reporter.account.id}`, token)).json();
      assert.deepEqual(validateSchema("AdminReport", (listed as unknown[])[0]), []);
    },
  );

  test("a report from another server: the remote reporter has no e-mail, role or IPs", async () => {
    const target = await user("remotetarget");
    const remote = await createRemoteAccount(server.ctx, "flagger", "other.example");
    const now = new Date().toISOString();
    const id = newId();
    await server.ctx.db.kysely
      .insertInto("reports")
      .values({
        id,
        account_id: remote.id,
        target_account_id: target.account.id,
        status_ids: null,
        rule_ids: null,
        comment: "from afar",
        forward_to_domains: null,
        action_taken_by_account_id: null,
        assigned_account_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const report = await ok("GET", `${REPORTS}/${id}`);
    assert.equal(report.account.domain, "other.example");
    assert.equal(report.account.email, null);
    assert.equal(report.account.role, null);
    assert.equal(report.account.account.acct, "flagger@other.example");
    assert.deepEqual(report.statuses, []);
    assert.deepEqual(report.rules, []);
  });

  // Mastodon keeps a deleted status for the reports that name it; Rookery removes the row, so the
  // report answers without it (docs/compatibility.md).
  test("a reported status deleted since: the report still answers, without it", async () => {
    const [reporter, target] = await Promise.all([user("delreporter"), user("deltarget")]);
    const post = await postStatus(server, target, { status: "soon gone" });
    assert.deepEqual(
      (await ok("GET", `${REPORTS}/${await fileReport(reporter, target, { status_ids: [post.id] })}`)).statuses.map(
        (s) => s.id,
      ),
      [post.id],
    );
    const id = await fileReport(reporter, target, { status_ids: [post.id] });
    const deleted = await request(server.app, "DELETE", `/api/v1/statuses/${post.id}`, { token: target.token });
    assert.equal(deleted.statusCode, 200, deleted.body);
    const report = await ok("GET", `${REPORTS}/${id}`);
    assert.deepEqual(report.statuses, []);
    assert.equal(report.target_account.id, target.account.id);
  });

  test("assign to self, unassign, resolve, reopen: each changes the report and is in the audit log", async () => {
    const [reporter, target] = await Promise.all([user("flowreporter"), user("flowtarget")]);
    const id = await fileReport(reporter, target);
    const moderator = await createUser(server.ctx, "flowmod", { role: "Moderator" });
    const modToken = await tokenFor(server.ctx, moderator, "admin:read admin:write");

    const assigned = await ok("POST", `${REPORTS}/${id}/assign_to_self`, undefined, modToken);
    assert.equal(assigned.assigned_account?.id, moderator.account.id);
    assert.equal(assigned.assigned_account?.role?.name, "Moderator");
    assert.ok(Date.parse(assigned.updated_at) >= Date.parse(assigned.created_at));

    const unassigned = await ok("POST", `${REPORTS}/${id}/unassign`);
    assert.equal(unassigned.assigned_account, null);

    const resolved = await ok("POST", `${REPORTS}/${id}/resolve`);
    assert.equal(resolved.action_taken, true);
    assert.ok(resolved.action_taken_at && !Number.isNaN(Date.parse(resolved.action_taken_at)));
    assert.equal(resolved.action_taken_by_account?.id, admin.account.id);
    assert.equal(resolved.action_taken_by_account?.role?.name, "Admin");

    const reopened = await ok("POST", `${REPORTS}/${id}/reopen`, undefined, modToken);
    assert.equal(reopened.action_taken, false);
    assert.equal(reopened.action_taken_at, null);
    assert.equal(reopened.action_taken_by_account, null);

    assert.deepEqual(await logOf(id), [
      {
        account_id: moderator.account.id,
        action: "assigned_to_self",
        target_type: "Report",
        target_id: id,
        human_identifier: id,
      },
      {
        account_id: admin.account.id,
        action: "unassigned",
        target_type: "Report",
        target_id: id,
        human_identifier: id,
      },
      { account_id: admin.account.id, action: "resolve", target_type: "Report", target_id: id, human_identifier: id },
      {
        account_id: moderator.account.id,
        action: "reopen",
        target_type: "Report",
        target_id: id,
        human_identifier: id,
      },
    ]);
  });

  test("PUT and PATCH change category and rules (IDs as JSON numbers too), logged as update", async () => {
    const [reporter, target] = await Promise.all([user("upreporter"), user("uptarget")]);
    const id = await fileReport(reporter, target, { category: "spam" });

    const violation = await ok("PUT", `${REPORTS}/${id}`, { category: "violation", rule_ids: [1, 3] });
    assert.equal(violation.category, "violation");
    assert.deepEqual(
      violation.rules.map((r) => r.id),
      ["1", "3"],
    );
    // Rules alone, as a form would send them.
    const form = await request(server.app, "PATCH", `${REPORTS}/${id}`, {
      token,
      form: [["rule_ids[]", "2"]],
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual(
      (form.json() as AdminReportJson).rules.map((r) => r.id),
      ["2"],
    );
    const other = await ok("PATCH", `${REPORTS}/${id}`, { category: "legal", rule_ids: [] });
    assert.equal(other.category, "legal");
    assert.deepEqual(other.rules, []);
    // Nothing changes: answered, not logged.
    await ok("PUT", `${REPORTS}/${id}`, {});
    await ok("PUT", `${REPORTS}/${id}`, { category: "legal" });
    assert.deepEqual(
      (await logOf(id)).map((e) => e.action),
      ["update", "update", "update"],
    );
  });

  test("PUT with a bad category or rules: 422 with Mastodon's texts, nothing stored", async () => {
    const [reporter, target] = await Promise.all([user("badreporter"), user("badtarget")]);
    const id = await fileReport(reporter, target, { rule_ids: ["1"] });
    const cases: Array<[unknown, string]> = [
      [{ category: "nonsense" }, BAD_CATEGORY],
      [{ category: "" }, BAD_CATEGORY],
      [{ category: "spam" }, MUST_BE_BLANK],
      [{ category: "other", rule_ids: ["2"] }, MUST_BE_BLANK],
      [{ rule_ids: ["4"] }, INVALID_RULES],
      [{ rule_ids: ["0"] }, INVALID_RULES],
      [{ rule_ids: ["abc"] }, INVALID_RULES],
    ];
    for (const [json, message] of cases)
      assert.deepEqual(
        errorOf(await call("PUT", `${REPORTS}/${id}`, token, json)),
        [422, message],
        JSON.stringify(json),
      );
    // A rule ID beyond what a JSON number holds exactly.
    const huge = await request(server.app, "PUT", `${REPORTS}/${id}`, {
      token,
      body: '{"rule_ids":[99999999999999999999]}',
      headers: { "content-type": "application/json" },
    });
    assert.deepEqual(errorOf(huge), [422, INVALID_RULES]);
    const report = await ok("GET", `${REPORTS}/${id}`);
    assert.equal(report.category, "violation");
    assert.deepEqual(
      report.rules.map((r) => r.id),
      ["1"],
    );
    assert.deepEqual(await logOf(id), []);
    // A body that is no JSON object is refused without a 500.
    const broken = await request(server.app, "PUT", `${REPORTS}/${id}`, {
      token,
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    assert.equal(broken.statusCode, 400, broken.body);
  });

  test("unknown IDs, words and IDs beyond 64 bits: 404 on every route", async () => {
    for (const id of [newId(), "abc", "9223372036854775808"]) {
      const routes: Array<[Method, string]> = [
        ["GET", `${REPORTS}/${id}`],
        ["PUT", `${REPORTS}/${id}`],
        ["PATCH", `${REPORTS}/${id}`],
        ["POST", `${REPORTS}/${id}/assign_to_self`],
        ["POST", `${REPORTS}/${id}/unassign`],
        ["POST", `${REPORTS}/${id}/resolve`],
        ["POST", `${REPORTS}/${id}/reopen`],
      ];
      for (const [method, path] of routes)
        assert.deepEqual(errorOf(await call(method, path, token, {})), [404, NOT_FOUND], `${method} ${path}`);
    }
  });

  describe("the queue", () => {
    let fresh: TestServer;
    let t: string;
    let reporter: TestUser;
    let other: TestUser;
    let target: TestUser;
    let second: TestUser;
    const ids: Record<string, string> = {};
    before(async () => {
      fresh = await createTestServer();
      const boss = await createUser(fresh.ctx, "queueadmin", { role: "Admin" });
      t = await tokenFor(fresh.ctx, boss, SCOPES);
      [reporter, other, target, second] = await Promise.all(
        ["qreporter", "qother", "qtarget", "qsecond"].map((n) => createUser(fresh.ctx, n)),
      );
      const file = async (from: TestUser, about: TestUser) => {
        const res = await request(fresh.app, "POST", "/api/v1/reports", {
          token: from.token,
          json: { account_id: about.account.id },
        });
        assert.equal(res.statusCode, 200, res.body);
        return (res.json() as { id: string }).id;
      };
      ids.a = await file(reporter, target);
      ids.b = await file(other, target);
      ids.c = await file(reporter, second);
      ids.d = await file(other, second);
      const resolved = await request(fresh.app, "POST", `${REPORTS}/${ids.d}/resolve`, { token: t });
      assert.equal(resolved.statusCode, 200, resolved.body);
    });
    after(() => fresh.close());

    const queue = async (query = "") => {
      const res = await request(fresh.app, "GET", `${REPORTS}${query}`, { token: t });
      assert.equal(res.statusCode, 200, res.body);
      return { ids: (res.json() as AdminReportJson[]).map((r) => r.id), link: String(res.headers.link ?? "") };
    };

    test("unresolved reports by default, newest first; resolved=true for the resolved ones", async () => {
      assert.deepEqual((await queue()).ids, [ids.c, ids.b, ids.a]);
      assert.deepEqual((await queue("?resolved=false")).ids, [ids.c, ids.b, ids.a]);
      assert.deepEqual((await queue("?resolved=true")).ids, [ids.d]);
    });

    test("account_id and target_account_id filter, together with resolved; a word matches nothing", async () => {
      assert.deepEqual((await queue(`?account_id=${reporter.account.id}`)).ids, [ids.c, ids.a]);
      assert.deepEqual((await queue(`?target_account_id=${target.account.id}`)).ids, [ids.b, ids.a]);
      assert.deepEqual(
        (await queue(`?account_id=${other.account.id}&target_account_id=${second.account.id}&resolved=true`)).ids,
        [ids.d],
      );
      assert.deepEqual((await queue(`?account_id=${other.account.id}&target_account_id=${second.account.id}`)).ids, []);
      assert.deepEqual((await queue("?account_id=abc")).ids, []);
      assert.deepEqual((await queue(`?target_account_id=${newId()}`)).ids, []);
    });

    test("Link paging keeps the filters; limit is 100 by default", async () => {
      const first = await queue(`?limit=1&account_id=${reporter.account.id}`);
      assert.deepEqual(first.ids, [ids.c]);
      const next = /<([^>]+)>; rel="next"/.exec(first.link)?.[1];
      const prev = /<([^>]+)>; rel="prev"/.exec(first.link)?.[1];
      assert.ok(next && prev, first.link);
      const url = new URL(next);
      assert.equal(url.pathname, REPORTS);
      assert.equal(url.searchParams.get("account_id"), reporter.account.id);
      assert.equal(url.searchParams.get("max_id"), ids.c);
      assert.equal(new URL(prev).searchParams.get("min_id"), ids.c);
      assert.deepEqual((await queue(url.search)).ids, [ids.a]);
      assert.deepEqual((await queue(`?min_id=${ids.a}`)).ids, [ids.c, ids.b]);
      assert.equal((await queue("?limit=2")).ids.length, 2);
      assert.doesNotMatch((await queue()).link, /rel="next"/);
    });
  });

  describe("refusals", () => {
    let target: string;
    before(async () => {
      const [reporter, reported] = await Promise.all([user("refreporter"), user("reftarget")]);
      target = await fileReport(reporter, reported);
    });
    const routes = (): Array<[Method, string]> => [
      ["GET", REPORTS],
      ["GET", `${REPORTS}/${target}`],
      ["PUT", `${REPORTS}/${target}`],
      ["PATCH", `${REPORTS}/${target}`],
      ["POST", `${REPORTS}/${target}/assign_to_self`],
      ["POST", `${REPORTS}/${target}/unassign`],
      ["POST", `${REPORTS}/${target}/resolve`],
      ["POST", `${REPORTS}/${target}/reopen`],
    ];

    test("403 This action is not allowed without a token, with an unknown or a revoked one", async () => {
      const revoked = await tokenFor(server.ctx, admin, "admin:read admin:write");
      await revokeToken(server.ctx, revoked);
      for (const [method, path] of routes())
        for (const t of [undefined, "not-a-token", revoked])
          assert.deepEqual(errorOf(await call(method, path, t, {})), [403, NOT_ALLOWED], `${method} ${path} ${t}`);
    });

    test("403 outside the scopes: the other half, another admin area's scopes, a user's scopes", async () => {
      const tokens = {
        read: await tokenFor(server.ctx, admin, "admin:read:reports"),
        write: await tokenFor(server.ctx, admin, "admin:write:reports"),
        accounts: await tokenFor(server.ctx, admin, "admin:read:accounts admin:write:accounts"),
        user: await tokenFor(server.ctx, admin, "read write follow push"),
      };
      for (const [method, path] of routes()) {
        const wrong =
          method === "GET" ? [tokens.write, tokens.accounts, tokens.user] : [tokens.read, tokens.accounts, tokens.user];
        for (const t of wrong)
          assert.deepEqual(errorOf(await call(method, path, t, {})), [403, OUTSIDE_SCOPES], `${method} ${path}`);
      }
    });

    test("403 for a user without Manage Reports, whatever their scopes", async () => {
      const plain = await user("refplain");
      const t = await tokenFor(server.ctx, plain, "admin:read admin:write");
      for (const [method, path] of routes())
        assert.deepEqual(errorOf(await call(method, path, t, {})), [403, NOT_ALLOWED], `${method} ${path}`);
    });

    test("a moderator, an admin and an owner may, with the scopes or admin:read / admin:write", async () => {
      const moderator = await createUser(server.ctx, "refmod", { role: "Moderator" });
      const owner = await createUser(server.ctx, "refowner", { role: "Owner" });
      const cases: Array<[TestUser, string]> = [
        [moderator, SCOPES],
        [admin, "admin:read admin:write"],
        [owner, "admin:read admin:write"],
      ];
      for (const [who, scopes] of cases) {
        const t = await tokenFor(server.ctx, who, scopes);
        for (const [method, path] of routes()) {
          const res = await call(method, path, t, {});
          assert.equal(res.statusCode, 200, `${who.username} ${scopes} ${method} ${path}: ${res.body}`);
        }
      }
    });
  });

  test("the list includes a new report from the user API at once", async () => {
    const [reporter, target] = await Promise.all([user("newreporter"), user("newtarget")]);
    const id = await fileReport(reporter, target);
    assert.ok((await list(`?account_id=${reporter.account.id}`)).ids.includes(id));
  });
});
