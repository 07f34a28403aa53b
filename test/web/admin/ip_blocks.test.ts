/**
 * The admin area's IP blocks: who may open them (Manage Blocks: an Admin, not a Moderator),
 * blocking, editing and lifting through the forms — seen by the admin API, recorded in the audit
 * log —, the expiry choices (an edit keeps the expiry unless another is chosen), 422 pages that
 * keep the form and change nothing (a blank or invalid address, a network blocked already, no
 * severity, a form without its CSRF token), 404 pages for unknown blocks, and escaped notes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import { createTestServer, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface IpBlock {
  id: string;
  ip: string;
  severity: string;
  comment: string;
  expires_at: string | null;
}

const LIST = "/admin/ip_blocks";
const DAY_MS = 86_400_000;

describe("admin: IP blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    token = await tokenFor(server.ctx, admin, "admin:read:ip_blocks admin:write:ip_blocks");
  });
  after(() => server.close());

  const apiList = async () =>
    (await request(server.app, "GET", "/api/v1/admin/ip_blocks?limit=200", { token })).json() as IpBlock[];
  const apiBlockOf = async (ip: string) => (await apiList()).find((b) => b.ip === ip);
  const apiCreate = async (json: object) => {
    const res = await request(server.app, "POST", "/api/v1/admin/ip_blocks", { token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as IpBlock;
  };
  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier", "detail"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  const newForm = () => browser.get(`${LIST}/new`);

  describeStaffOnly({ server: () => server, pages: [LIST, `${LIST}/new`], allowed: "Admin", refused: "Moderator" });

  test("blocking a range through the form: the API shows it, the audit log records it", async () => {
    const page = await newForm();
    assert.equal(findForm(page.body, LIST).fields.severity, "sign_up_requires_approval");
    const res = await browser.submit(page, LIST, {
      ip: "198.51.100.77/24",
      severity: "sign_up_block",
      comment: "sign-up spam",
      expires_in: "1209600",
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=created`);
    const list = await browser.follow(res);
    assert.match(list.body, /The block is added\./);
    assert.match(list.body, /<code>198\.51\.100\.0\/24<\/code>/);
    const block = await apiBlockOf("198.51.100.0/24");
    assert.ok(block);
    assert.equal(block.severity, "sign_up_block");
    assert.equal(block.comment, "sign-up spam");
    const inDays = (Date.parse(block.expires_at!) - Date.now()) / DAY_MS;
    assert.ok(inDays > 13.9 && inDays <= 14, String(inDays));
    assert.deepEqual(await logOf(block.id), [
      {
        account_id: admin.account.id,
        action: "create",
        target_type: "IpBlock",
        human_identifier: "198.51.100.0/24",
        detail: "sign_up_block",
      },
    ]);
  });

  test("a block without an expiry never expires", async () => {
    const res = await browser.submit(await newForm(), LIST, { ip: "203.0.113.5", expires_in: "" });
    assert.equal(res.statusCode, 303, res.body);
    const block = await apiBlockOf("203.0.113.5/32");
    assert.equal(block?.expires_at, null);
    assert.equal(block?.severity, "sign_up_requires_approval");
  });

  test("editing a block: the form shows it, saving changes it, the expiry is kept unless another is chosen", async () => {
    const block = await apiCreate({ ip: "192.0.2.0/28", severity: "no_access", comment: "old", expires_in: 86400 });
    const edit = await browser.get(`${LIST}/${block.id}/edit`);
    assert.equal(edit.statusCode, 200);
    const form = findForm(edit.body, `${LIST}/${block.id}`);
    assert.equal(form.fields.ip, "192.0.2.0/28");
    assert.equal(form.fields.severity, "no_access");
    assert.equal(form.fields.comment, "old");
    assert.match(form.html, /<option value="keep" selected>Keep the current expiry/);

    const kept = await browser.submit(edit, `${LIST}/${block.id}`, {
      expires_in: "keep",
      severity: "sign_up_block",
      comment: "",
    });
    assert.equal(kept.statusCode, 303, kept.body);
    assert.equal(kept.headers.location, `${LIST}?notice=updated`);
    const changed = await apiBlockOf("192.0.2.0/28");
    assert.equal(changed?.severity, "sign_up_block");
    assert.equal(changed?.comment, "");
    assert.equal(changed?.expires_at, block.expires_at);

    const never = await browser.submit(await browser.get(`${LIST}/${block.id}/edit`), `${LIST}/${block.id}`, {
      expires_in: "",
      ip: "192.0.2.0/27",
    });
    assert.equal(never.statusCode, 303);
    const widened = await apiBlockOf("192.0.2.0/27");
    assert.equal(widened?.id, block.id);
    assert.equal(widened?.expires_at, null);
    assert.deepEqual(
      (await logOf(block.id)).map((l) => l.action),
      ["create", "update", "update"],
    );
  });

  test("lifting a block: gone from the API, the audit log records it", async () => {
    const block = await apiCreate({ ip: "192.0.2.128/25", severity: "sign_up_block" });
    const res = await browser.submit(await browser.get(LIST), `${LIST}/${block.id}/remove`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=removed`);
    assert.match((await browser.follow(res)).body, /The block is lifted\./);
    assert.equal(await apiBlockOf("192.0.2.128/25"), undefined);
    assert.deepEqual(
      (await logOf(block.id)).map((l) => l.action),
      ["create", "destroy"],
    );
  });

  describe("refused input: a 422 page with the form, nothing changed", () => {
    test("a new block", async () => {
      await apiCreate({ ip: "100.64.0.0/10", severity: "sign_up_block" });
      const before = (await apiList()).length;
      for (const [values, alert] of [
        [{ ip: "" }, "Validation failed: Ip can't be blank"],
        [{ ip: "300.1.1.1" }, "Validation failed: Ip is invalid"],
        [{ ip: "100.64.0.1/10" }, "Validation failed: Ip has already been taken"],
        [{ ip: "10.0.0.1", expires_in: "-5" }, "Validation failed: Expires in must be greater than 0"],
      ] as const) {
        const res = await browser.submit(await newForm(), LIST, { comment: "<kept>", ...values });
        assert.equal(res.statusCode, 422, JSON.stringify(values));
        assert.equal(alertOf(res.body), alert);
        assert.equal(findForm(res.body, LIST).fields.comment, "<kept>");
      }
      const noSeverity = await browser.submit(await newForm(), LIST, { ip: "10.0.0.2" }, ["severity"]);
      assert.equal(noSeverity.statusCode, 422);
      assert.equal(alertOf(noSeverity.body), "Validation failed: Severity can't be blank");
      assert.equal((await apiList()).length, before);
    });

    test("an edit", async () => {
      const block = await apiCreate({ ip: "172.16.0.0/12", severity: "sign_up_block", comment: "keep me" });
      const edit = await browser.get(`${LIST}/${block.id}/edit`);
      for (const [values, alert] of [
        [{ ip: "nonsense" }, "Validation failed: Ip is invalid"],
        [{ ip: "100.64.0.0/10" }, "Validation failed: Ip has already been taken"],
        [{ severity: "bogus" }, "Validation failed: Severity is not included in the list"],
      ] as const) {
        const res = await browser.submit(edit, `${LIST}/${block.id}`, { comment: "changed", ...values });
        assert.equal(res.statusCode, 422, JSON.stringify(values));
        assert.equal(alertOf(res.body), alert);
        findForm(res.body, `${LIST}/${block.id}`);
      }
      const unchanged = await apiBlockOf("172.16.0.0/12");
      assert.equal(unchanged?.comment, "keep me");
      assert.equal(unchanged?.severity, "sign_up_block");
    });

    test("forms without their CSRF token", async () => {
      const created = await browser.submit(await newForm(), LIST, { ip: "10.9.9.9" }, ["authenticity_token"]);
      assert.equal(created.statusCode, 422);
      assert.equal(alertOf(created.body), EXPIRED);
      assert.equal(await apiBlockOf("10.9.9.9/32"), undefined);

      const block = await apiCreate({ ip: "10.8.0.0/16", severity: "sign_up_block" });
      const edit = await browser.get(`${LIST}/${block.id}/edit`);
      const updated = await browser.submit(edit, `${LIST}/${block.id}`, { severity: "no_access" }, [
        "authenticity_token",
      ]);
      assert.equal(updated.statusCode, 422);
      const removed = await browser.submit(edit, `${LIST}/${block.id}/remove`, {}, ["authenticity_token"]);
      assert.equal(removed.statusCode, 422);
      assert.equal((await apiBlockOf("10.8.0.0/16"))?.severity, "sign_up_block");
    });
  });

  test("unknown blocks: 404 pages", async () => {
    const csrf = findForm((await newForm()).body, LIST).fields.authenticity_token;
    for (const id of ["999999999999", "x"]) {
      const edit = await browser.get(`${LIST}/${id}/edit`);
      assert.equal(edit.statusCode, 404);
      assert.equal(alertOf(edit.body), "Record not found");
      assert.equal(
        (await browser.post(`${LIST}/${id}`, { authenticity_token: csrf, ip: "10.1.1.1", severity: "no_access" }))
          .statusCode,
        404,
      );
      assert.equal((await browser.post(`${LIST}/${id}/remove`, { authenticity_token: csrf })).statusCode, 404);
    }
  });

  test("notes are shown escaped", async () => {
    const block = await apiCreate({
      ip: "10.7.0.0/16",
      severity: "sign_up_block",
      comment: '<script>alert(1)</script>"><img src=x>',
    });
    const list = (await browser.get(LIST)).body;
    assert.doesNotMatch(list, /<script>alert/);
    assert.doesNotMatch(list, /<img src=x>/);
    assert.match(list, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    const edit = (await browser.get(`${LIST}/${block.id}/edit`)).body;
    assert.doesNotMatch(edit, /<img src=x>/);
    assert.equal(findForm(edit, `${LIST}/${block.id}`).fields.comment, '<script>alert(1)</script>"><img src=x>');
  });
});
