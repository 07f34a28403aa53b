/**
 * /admin/rules: Manage Rules (Admin, not Moderator) lists the server's rules, adds, edits, moves
 * and removes them; each change shows in /api/v1/instance/rules at once, is in the audit log, and
 * the reports that named rules keep naming the same rules. Bad input and forms without their
 * CSRF token change nothing; unknown rules are 404; a form of a rule that changed since is refused.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { saveSetting } from "../../../src/services/instance/settings.ts";
import { alertOf, type Browser } from "../../browser.ts";
import { createTestServer, createUser, get, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface RuleJson {
  id: string;
  text: string;
  hint: string;
}

const BLANK = "The rule was not added: Text can't be blank.";
const TOO_LONG = "The rule was not added: Text is too long (maximum is 300 characters).";
const CHANGED = "The rules were changed in the meantime. Please check them and try again.";

const STARTING_RULES = [
  { text: "Be kind", hint: "No insults" },
  { text: "No spam", hint: "" },
  { text: "No ads", hint: "" },
];

describe("/admin/rules", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
  });
  beforeEach(() => saveSetting(server.ctx.db.kysely, "rules", STARTING_RULES));
  after(() => server.close());

  describeStaffOnly({
    server: () => server,
    pages: ["/admin/rules", "/admin/rules/1/edit"],
    allowed: "Admin",
    refused: "Moderator",
  });

  const rules = async () => {
    const res = await get(server.app, "/api/v1/instance/rules");
    assert.equal(res.statusCode, 200);
    return (res.json() as RuleJson[]).map((r) => [r.id, r.text, r.hint]);
  };
  const ruleTexts = async () => (await rules()).map((r) => r[1]);
  const auditRows = () =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "target_id", "human_identifier", "detail"])
      .where("target_type", "=", "Rule")
      .orderBy("id")
      .execute();
  const lastAudit = async () => (await auditRows()).at(-1);

  test("adding a rule: it is numbered after the others, in the API and the audit log", async () => {
    const before = (await auditRows()).length;
    const page = await browser.get("/admin/rules");
    assert.equal(page.statusCode, 200);
    const res = await browser.submit(page, "/admin/rules", {
      text: "  Post in English  ",
      hint: "Or add a translation",
    });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/rules?notice=created");
    assert.match((await browser.follow(res)).body, /The rule was added\./);
    assert.deepEqual((await rules()).at(-1), ["4", "Post in English", "Or add a translation"]);
    const instance = (await get(server.app, "/api/v2/instance")).json() as { rules: RuleJson[] };
    assert.equal(instance.rules.at(-1)?.text, "Post in English");
    assert.equal((await auditRows()).length, before + 1);
    assert.deepEqual(await lastAudit(), {
      account_id: admin.account.id,
      action: "create",
      target_type: "Rule",
      target_id: "4",
      human_identifier: "Post in English",
      detail: null,
    });
  });

  test("editing a rule: same number, new text and hint, logged as update", async () => {
    const page = await browser.get("/admin/rules/2/edit");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /value="No spam"/);
    const res = await browser.submit(page, "/admin/rules/2", { text: "No spam, no scams", hint: "Links to shops too" });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/rules?notice=updated");
    assert.deepEqual(await rules(), [
      ["1", "Be kind", "No insults"],
      ["2", "No spam, no scams", "Links to shops too"],
      ["3", "No ads", ""],
    ]);
    assert.deepEqual(await lastAudit(), {
      account_id: admin.account.id,
      action: "update",
      target_type: "Rule",
      target_id: "2",
      human_identifier: "No spam, no scams",
      detail: null,
    });
  });

  test("moving rules up and down; the first has no Move up, the last no Move down", async () => {
    const page = await browser.get("/admin/rules");
    assert.doesNotMatch(page.body, /\/admin\/rules\/1\/move_up/);
    assert.doesNotMatch(page.body, /\/admin\/rules\/3\/move_down/);
    const up = await browser.submit(page, "/admin/rules/3/move_up");
    assert.equal(up.statusCode, 303);
    assert.equal(up.headers.location, "/admin/rules?notice=moved");
    assert.deepEqual(await ruleTexts(), ["Be kind", "No ads", "No spam"]);
    assert.deepEqual(await lastAudit(), {
      account_id: admin.account.id,
      action: "update",
      target_type: "Rule",
      target_id: "2",
      human_identifier: "No ads",
      detail: "moved from 3 to 2",
    });
    const down = await browser.submit(await browser.get("/admin/rules"), "/admin/rules/1/move_down");
    assert.equal(down.statusCode, 303);
    assert.deepEqual(await ruleTexts(), ["No ads", "Be kind", "No spam"]);
  });

  test("removing a rule: the ones after it move up; logged as destroy with its text", async () => {
    const res = await browser.submit(await browser.get("/admin/rules"), "/admin/rules/1/delete");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/rules?notice=removed");
    assert.deepEqual(await rules(), [
      ["1", "No spam", ""],
      ["2", "No ads", ""],
    ]);
    assert.deepEqual(await lastAudit(), {
      account_id: admin.account.id,
      action: "destroy",
      target_type: "Rule",
      target_id: "1",
      human_identifier: "Be kind",
      detail: null,
    });
  });

  test("reports keep naming the same rules when rules are moved or removed", async () => {
    const reporter = await createUser(server.ctx, "rulereporter");
    const target = await createUser(server.ctx, "ruletarget");
    const file = async (ruleIds: string[]) => {
      const res = await request(server.app, "POST", "/api/v1/reports", {
        token: reporter.token,
        json: { account_id: target.account.id, rule_ids: ruleIds },
      });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { id: string }).id;
    };
    const spamAndAds = await file(["2", "3"]);
    const kindness = await file(["1"]);
    const adminToken = await tokenFor(server.ctx, admin, "admin:read:reports");
    const namedRules = async (id: string) => {
      const res = await get(server.app, `/api/v1/admin/reports/${id}`, adminToken);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { rules: RuleJson[] }).rules.map((r) => [r.id, r.text]);
    };

    await browser.submit(await browser.get("/admin/rules"), "/admin/rules/3/move_up");
    assert.deepEqual(await namedRules(spamAndAds), [
      ["2", "No ads"],
      ["3", "No spam"],
    ]);
    await browser.submit(await browser.get("/admin/rules"), "/admin/rules/1/delete");
    assert.deepEqual(await namedRules(spamAndAds), [
      ["1", "No ads"],
      ["2", "No spam"],
    ]);
    assert.deepEqual(await namedRules(kindness), []);
  });

  test("a blank or too long rule: 422, the form again with what was typed, nothing changed", async () => {
    const before = await rules();
    const logged = (await auditRows()).length;
    const blank = await browser.submit(await browser.get("/admin/rules"), "/admin/rules", {
      text: "   ",
      hint: "kept",
    });
    assert.equal(blank.statusCode, 422);
    assert.equal(alertOf(blank.body), BLANK);
    assert.match(blank.body, />kept<\/textarea>/);
    const long = await browser.submit(await browser.get("/admin/rules"), "/admin/rules", { text: "x".repeat(301) });
    assert.equal(long.statusCode, 422);
    assert.equal(alertOf(long.body), TOO_LONG);
    const edit = await browser.submit(await browser.get("/admin/rules/1/edit"), "/admin/rules/1", { text: "" });
    assert.equal(edit.statusCode, 422);
    assert.equal(alertOf(edit.body), "The rule was not saved: Text can't be blank.");
    assert.deepEqual(await rules(), before);
    assert.equal((await auditRows()).length, logged);
  });

  test("two moderators adding rules at the same moment: both rules are kept", async () => {
    const other = (await staffBrowser(server, "Admin")).browser;
    const [a, b] = await Promise.all([
      browser.submit(await browser.get("/admin/rules"), "/admin/rules", { text: "From one" }),
      other.submit(await other.get("/admin/rules"), "/admin/rules", { text: "From another" }),
    ]);
    assert.deepEqual([a.statusCode, b.statusCode], [303, 303]);
    assert.deepEqual((await ruleTexts()).slice(3).sort(), ["From another", "From one"]);
  });

  test("exactly 300 characters is a rule", async () => {
    const text = "é".repeat(300);
    const res = await browser.submit(await browser.get("/admin/rules"), "/admin/rules", { text });
    assert.equal(res.statusCode, 303);
    assert.equal((await ruleTexts()).at(-1), text);
  });

  test("forms without their CSRF token: 422 and nothing changed", async () => {
    const before = await rules();
    const logged = (await auditRows()).length;
    const list = await browser.get("/admin/rules");
    const edit = await browser.get("/admin/rules/1/edit");
    for (const res of [
      await browser.submit(list, "/admin/rules", { text: "Sneaky" }, ["authenticity_token"]),
      await browser.submit(edit, "/admin/rules/1", { text: "Sneaky" }, ["authenticity_token"]),
      await browser.submit(list, "/admin/rules/2/move_up", {}, ["authenticity_token"]),
      await browser.submit(list, "/admin/rules/1/delete", {}, ["authenticity_token"]),
    ]) {
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), EXPIRED);
    }
    assert.deepEqual(await rules(), before);
    assert.equal((await auditRows()).length, logged);
  });

  test("unknown rules are 404", async () => {
    const list = await browser.get("/admin/rules");
    const token = /name="authenticity_token" value="([^"]+)"/.exec(list.body)![1];
    for (const path of ["/admin/rules/4/edit", "/admin/rules/0/edit", "/admin/rules/abc/edit"])
      assert.equal((await browser.get(path)).statusCode, 404, path);
    for (const path of ["/admin/rules/9", "/admin/rules/9/delete", "/admin/rules/9/move_up", "/admin/rules/x/delete"]) {
      const res = await browser.post(path, { authenticity_token: token, text: "Whatever" });
      assert.equal(res.statusCode, 404, path);
    }
    assert.deepEqual(await ruleTexts(), ["Be kind", "No spam", "No ads"]);
  });

  test("a page opened before another moderator changed the rules cannot change the wrong rule", async () => {
    const stale = await browser.get("/admin/rules");
    const staleEdit = await browser.get("/admin/rules/2/edit");
    // Someone else removes the first rule: "No spam" is now rule 1, "No ads" rule 2.
    await browser.submit(await browser.get("/admin/rules"), "/admin/rules/1/delete");
    const logged = (await auditRows()).length;
    for (const res of [
      await browser.submit(stale, "/admin/rules/2/delete"),
      await browser.submit(stale, "/admin/rules/2/move_up"),
      await browser.submit(staleEdit, "/admin/rules/2", { text: "Changed" }),
    ]) {
      assert.equal(res.statusCode, 409);
      assert.equal(alertOf(res.body), CHANGED);
    }
    assert.deepEqual(await ruleTexts(), ["No spam", "No ads"]);
    assert.equal((await auditRows()).length, logged);
  });

  test("rule texts and hints are shown escaped", async () => {
    await saveSetting(server.ctx.db.kysely, "rules", [{ text: "<script>alert(1)</script>", hint: "<b>bold</b>" }]);
    const list = await browser.get("/admin/rules");
    assert.doesNotMatch(list.body, /<script>alert/);
    assert.match(list.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(list.body, /&lt;b&gt;bold&lt;\/b&gt;/);
    const edit = await browser.get("/admin/rules/1/edit");
    assert.doesNotMatch(edit.body, /<script>alert/);
    assert.match(edit.body, /value="&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });
});
