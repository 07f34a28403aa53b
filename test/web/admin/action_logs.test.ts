/**
 * The admin area's audit log: who may open it (View Audit Log: a Moderator, not a plain user);
 * actions taken through the admin API shown newest first as sentences with the moderator and the
 * target linked where they have a page; a sentence for every action the services record and one
 * for an action nobody wrote a sentence for; filters by moderator, by a target's name (as typed:
 * `@alice@rookery.test`, `#12`, a domain) and by a record's type and ID; paging; escaping.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeEntities, findForm, type Browser } from "../../browser.ts";
import { recordAction, type AuditTarget } from "../../../src/services/admin/audit.ts";
import { createTestServer, createUser, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, staffBrowser } from "./kit.ts";

const LOG = "/admin/action_logs";

/** Every action the services record today, by target type (grep `recordAction` / `action:` in src/services). */
const RECORDED: Array<[string, AuditTarget]> = [
  ["suspend", "Account"],
  ["unsuspend", "Account"],
  ["silence", "Account"],
  ["unsilence", "Account"],
  ["sensitive", "Account"],
  ["unsensitive", "Account"],
  ["destroy", "Account"],
  ["approve", "User"],
  ["reject", "User"],
  ["disable", "User"],
  ["enable", "User"],
  ["create", "AccountWarning"],
  ["assigned_to_self", "Report"],
  ["unassigned", "Report"],
  ["resolve", "Report"],
  ["reopen", "Report"],
  ["update", "Report"],
  ["create", "DomainBlock"],
  ["update", "DomainBlock"],
  ["destroy", "DomainBlock"],
  ["create", "DomainAllow"],
  ["destroy", "DomainAllow"],
  ["create", "EmailDomainBlock"],
  ["destroy", "EmailDomainBlock"],
  ["create", "IpBlock"],
  ["update", "IpBlock"],
  ["destroy", "IpBlock"],
  ["create", "CanonicalEmailBlock"],
  ["destroy", "CanonicalEmailBlock"],
  ["approve", "Tag"],
  ["reject", "Tag"],
  ["approve", "Status"],
  ["reject", "Status"],
  ["approve", "PreviewCard"],
  ["reject", "PreviewCard"],
  ["approve", "PreviewCardProvider"],
  ["reject", "PreviewCardProvider"],
  ["create", "Announcement"],
  ["update", "Announcement"],
  ["destroy", "Announcement"],
  ["create", "Rule"],
  ["update", "Rule"],
  ["destroy", "Rule"],
  ["update", "Setting"],
  ["approve", "Appeal"],
  ["reject", "Appeal"],
];

/** The log's lines as text: "sentence | time". */
function lines(body: string): string[] {
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(body)?.[1] ?? "";
  return [...tbody.matchAll(/<tr><td>([\s\S]*?)<\/td><td>/g)].map((m) => decodeEntities(m[1].replace(/<[^>]*>/g, "")));
}

describe("admin: the audit log", () => {
  let server: TestServer;
  let admin: TestUser;
  let moderator: TestUser;
  let browser: Browser;
  let adminToken: string;
  let modToken: string;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin", "logadmin"));
    moderator = await createUser(server.ctx, "logmod", { role: "Moderator" });
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
    modToken = await tokenFor(server.ctx, moderator, "admin:read admin:write");
  });
  after(() => server.close());

  let users = 0;
  const user = (name: string) => createUser(server.ctx, `${name}${++users}`);
  const ok = async (token: string, method: "POST" | "PUT", path: string, json: object = {}) => {
    const res = await request(server.app, method, path, { token, json });
    assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
    return res.json() as { id: string };
  };

  describeStaffOnly({ server: () => server, pages: [LOG], allowed: "Moderator", refused: undefined });

  test("actions taken through the admin API, newest first, as sentences with links", async () => {
    const [reporter, target] = await Promise.all([user("logreporter"), user("logtarget")]);
    const report = await ok(reporter.token, "POST", "/api/v1/reports", { account_id: target.account.id });
    await ok(modToken, "POST", `/api/v1/admin/reports/${report.id}/assign_to_self`);
    await ok(adminToken, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, {
      type: "suspend",
      report_id: report.id,
    });
    await ok(adminToken, "POST", "/api/v1/admin/domain_blocks", { domain: "spam.example", severity: "silence" });
    const page = await browser.get(LOG);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Audit log<\/h1>/);
    assert.match(page.body, /<th scope="col">What happened<\/th><th scope="col">When<\/th>/);
    assert.deepEqual(lines(page.body).slice(0, 4), [
      `@${admin.username} blocked the domain spam.example (limit)`,
      `@${admin.username} resolved report #${report.id}`,
      `@${admin.username} suspended @${target.username}`,
      `@${moderator.username} took report #${report.id}`,
    ]);
    assert.match(
      page.body,
      new RegExp(
        `<a href="/admin/accounts/${admin.account.id}">@${admin.username}</a> suspended <a href="/admin/accounts/${target.account.id}">@${target.username}</a>`,
      ),
    );
    assert.match(page.body, new RegExp(`resolved report <a href="/admin/reports/${report.id}">#${report.id}</a>`));
    assert.match(page.body, /<time datetime="\d{4}-\d\d-\d\dT[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
  });

  test("every action the services record reads as a sentence of its own", async () => {
    const actor = await createUser(server.ctx, "sentences", { role: "Admin" });
    for (const [action, targetType] of RECORDED)
      await recordAction(server.ctx.db.kysely, {
        actorId: actor.account.id,
        action,
        targetType,
        targetId: "1",
        humanIdentifier: "thing",
      });
    const first = await browser.get(`${LOG}?account_id=${actor.account.id}`);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body)![1].replace(/&amp;/g, "&");
    const shown = [...lines(first.body), ...lines((await browser.get(older)).body)];
    assert.equal(shown.length, RECORDED.length);
    for (const line of shown) {
      assert.doesNotMatch(line, /did “/, line);
      assert.match(line, /^@sentences /, line);
      assert.match(line, /thing/, line);
    }
    assert.equal(new Set(shown).size, shown.length, "no two actions read alike");
  });

  test("an action without a sentence of its own still reads as one", async () => {
    const actor = await createUser(server.ctx, "fallback", { role: "Admin" });
    await recordAction(server.ctx.db.kysely, {
      actorId: actor.account.id,
      action: "frobnicate_all",
      targetType: "CustomEmoji",
      targetId: "5",
      humanIdentifier: "blobcat",
    });
    assert.deepEqual(lines((await browser.get(`${LOG}?account_id=${actor.account.id}`)).body), [
      "@fallback did “frobnicate all” to the custom emoji blobcat",
    ]);
  });

  test("filtered by moderator: a select of those in the log", async () => {
    const target = await user("modfilter");
    await ok(modToken, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, { type: "silence" });
    const page = await browser.get(LOG);
    const form = findForm(page.body, (f) => f.method === "get");
    assert.match(
      form.html,
      /<label for="account_id">Moderator<\/label><select id="account_id" name="account_id"><option value="">Everyone<\/option>/,
    );
    assert.match(form.html, new RegExp(`<option value="${moderator.account.id}">@${moderator.username}</option>`));
    assert.match(form.html, /<label for="target">Target<\/label><input type="text" id="target" name="target"/);
    const filtered = await browser.submit(page, (f) => f.method === "get", { account_id: moderator.account.id });
    const shown = lines(filtered.body);
    assert.ok(shown.length > 0);
    for (const line of shown) assert.match(line, new RegExp(`^@${moderator.username} `));
    assert.ok(shown.includes(`@${moderator.username} limited @${target.username}`));
    assert.match(filtered.body, new RegExp(`<option value="${moderator.account.id}" selected>`));
  });

  test("filtered by target, named as typed: a handle, a domain, a report's number", async () => {
    const target = await user("targetfilter");
    await ok(adminToken, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, { type: "sensitive" });
    await ok(adminToken, "POST", `/api/v1/admin/accounts/${target.account.id}/unsensitive`);
    await ok(adminToken, "POST", "/api/v1/admin/domain_blocks", { domain: "filtered.example" });
    const reporter = await user("targetreporter");
    const report = await ok(reporter.token, "POST", "/api/v1/reports", { account_id: target.account.id });
    await ok(modToken, "POST", `/api/v1/admin/reports/${report.id}/resolve`);
    const expected = [
      `@${admin.username} stopped marking the media of @${target.username} as sensitive`,
      `@${admin.username} marked the media of @${target.username} as sensitive`,
    ];
    for (const typed of [target.username, `@${target.username}`, `@${target.username.toUpperCase()}@rookery.test`])
      assert.deepEqual(lines((await browser.get(`${LOG}?target=${encodeURIComponent(typed)}`)).body), expected, typed);
    assert.deepEqual(lines((await browser.get(`${LOG}?target=filtered.example`)).body), [
      `@${admin.username} blocked the domain filtered.example (limit)`,
    ]);
    assert.deepEqual(lines((await browser.get(`${LOG}?target=${encodeURIComponent(`#${report.id}`)}`)).body), [
      `@${moderator.username} resolved report #${report.id}`,
    ]);
  });

  test("a record's own history: by type and ID, as the report page links it", async () => {
    const [reporter, target] = await Promise.all([user("histreporter"), user("histtarget")]);
    const report = await ok(reporter.token, "POST", "/api/v1/reports", { account_id: target.account.id });
    await ok(modToken, "POST", `/api/v1/admin/reports/${report.id}/assign_to_self`);
    await ok(modToken, "POST", `/api/v1/admin/reports/${report.id}/resolve`);
    const reportPage = await browser.get(`/admin/reports/${report.id}`);
    const link = /<a href="([^"]+)">This report in the audit log<\/a>/.exec(reportPage.body)![1].replace(/&amp;/g, "&");
    const page = await browser.get(link);
    assert.deepEqual(lines(page.body), [
      `@${moderator.username} resolved report #${report.id}`,
      `@${moderator.username} took report #${report.id}`,
    ]);
    assert.match(page.body, new RegExp(`Showing only what was done to the report #${report.id}\\.`));
    // The filter form keeps the record while filtering by moderator.
    const form = findForm(page.body, (f) => f.method === "get");
    assert.equal(form.fields.target_type, "Report");
    assert.equal(form.fields.target_id, report.id);
  });

  test("a filter that names nothing shows nothing, and says so", async () => {
    for (const query of ["account_id=abc", "target=nobody.example", "target_type=Report&target_id=xyz"]) {
      const page = await browser.get(`${LOG}?${query}`);
      assert.equal(page.statusCode, 200, query);
      assert.deepEqual(lines(page.body), [], query);
      assert.match(page.body, /Nothing in the log matches this filter\./, query);
    }
  });

  test("paged: forty a page, Older and Newer links keep the filter", async () => {
    const actor = await createUser(server.ctx, "pager", { role: "Admin" });
    for (let i = 1; i <= 45; i++)
      await recordAction(server.ctx.db.kysely, {
        actorId: actor.account.id,
        action: "create",
        targetType: "DomainBlock",
        targetId: String(i),
        humanIdentifier: `d${i}.example`,
      });
    const first = await browser.get(`${LOG}?account_id=${actor.account.id}`);
    const firstLines = lines(first.body);
    assert.equal(firstLines.length, 40);
    assert.equal(firstLines[0], "@pager blocked the domain d45.example");
    assert.doesNotMatch(first.body, /rel="prev"/);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body)![1].replace(/&amp;/g, "&");
    assert.match(older, new RegExp(`account_id=${actor.account.id}`));
    const second = await browser.get(older);
    assert.deepEqual(
      lines(second.body),
      [5, 4, 3, 2, 1].map((i) => `@pager blocked the domain d${i}.example`),
    );
    assert.doesNotMatch(second.body, /rel="next"/);
    const newer = /<a href="([^"]+)" rel="prev">Newer<\/a>/.exec(second.body)![1].replace(/&amp;/g, "&");
    assert.deepEqual(lines((await browser.get(newer)).body), firstLines);
  });

  test("names in the log are escaped", async () => {
    const actor = await createUser(server.ctx, "escaper", { role: "Admin" });
    await recordAction(server.ctx.db.kysely, {
      actorId: actor.account.id,
      action: "create",
      targetType: "Announcement",
      targetId: "1",
      humanIdentifier: "<script>alert(1)</script>",
      detail: "<b>publish</b>",
    });
    const page = await browser.get(`${LOG}?account_id=${actor.account.id}`);
    assert.doesNotMatch(page.body, /<script/i);
    assert.doesNotMatch(page.body, /<b>publish/);
    assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    const typed = await browser.get(`${LOG}?target=${encodeURIComponent('"><script>x</script>')}`);
    assert.doesNotMatch(typed.body, /<script/i);
  });
});
