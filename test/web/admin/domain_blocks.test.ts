/**
 * The admin area's domain blocks: who may open them (Manage Federation: an Admin, not a
 * Moderator), blocking, editing and lifting through the forms — each seen by the admin API and
 * recorded in the audit log —, the confirmation a suspension asks first with what it would cut,
 * 422 pages that keep the form and change nothing (blank, invalid or already blocked domains, an
 * unknown severity, a form without its CSRF token), 404 pages for unknown blocks, escaped
 * comments, and the list's paging.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  follow,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface Block {
  id: string;
  domain: string;
  severity: string;
  reject_media: boolean;
  reject_reports: boolean;
  obfuscate: boolean;
  private_comment: string | null;
  public_comment: string | null;
}

const LIST = "/admin/domain_blocks";
const BLANK = "Validation failed: Domain can't be blank";
const INVALID = "Validation failed: Domain is not a valid domain name";
const BAD_SEVERITY = "Validation failed: Severity is not included in the list";

describe("admin: domain blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    token = await tokenFor(server.ctx, admin, "admin:read:domain_blocks admin:write:domain_blocks");
  });
  after(() => server.close());

  let domains = 0;
  const domain = () => `blocked${++domains}.example`;

  const apiList = async () =>
    (await request(server.app, "GET", "/api/v1/admin/domain_blocks?limit=200", { token })).json() as Block[];
  const apiBlockOf = async (name: string) => (await apiList()).find((b) => b.domain === name);
  const apiCreate = async (json: object) => {
    const res = await request(server.app, "POST", "/api/v1/admin/domain_blocks", { token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Block;
  };
  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  const csrf = async () => findForm((await browser.get(`${LIST}/new`)).body, LIST).fields.authenticity_token;

  describeStaffOnly({ server: () => server, pages: [LIST, `${LIST}/new`], allowed: "Admin", refused: "Moderator" });

  test("the Moderator's navigation does not offer the section; the Admin's does", async () => {
    const moderator = await staffBrowser(server, "Moderator");
    assert.doesNotMatch((await moderator.browser.get("/admin/reports")).body, /href="\/admin\/domain_blocks"/);
    assert.match((await browser.get(LIST)).body, /<a href="\/admin\/domain_blocks" aria-current="page">/);
  });

  test("blocking a domain through the form: the list and the API show it, the audit log records it", async () => {
    const name = domain();
    const form = await browser.get(`${LIST}/new`);
    assert.equal(form.statusCode, 200);
    const res = await browser.submit(form, LIST, {
      domain: ` ${name.toUpperCase()} `,
      severity: "silence",
      reject_media: "1",
      private_comment: "spam source",
      public_comment: "Spam",
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=created`);
    const list = await browser.follow(res);
    assert.match(list.body, /<div class="flash notice" role="status">The domain is blocked\.<\/div>/);
    assert.match(list.body, new RegExp(`>${name}</a>`));
    const block = await apiBlockOf(name);
    assert.ok(block);
    assert.equal(block.severity, "silence");
    assert.equal(block.reject_media, true);
    assert.equal(block.reject_reports, false);
    assert.equal(block.obfuscate, false);
    assert.equal(block.private_comment, "spam source");
    assert.equal(block.public_comment, "Spam");
    assert.deepEqual(await logOf(block.id), [
      { account_id: admin.account.id, action: "create", target_type: "DomainBlock", human_identifier: name },
    ]);
  });

  test("/new?_domain= fills the domain in", async () => {
    const page = await browser.get(`${LIST}/new?_domain=prefilled.example`);
    assert.equal(findForm(page.body, LIST).fields.domain, "prefilled.example");
  });

  test("suspending asks first, saying what it would cut; confirming suspends the accounts there", async () => {
    const name = domain();
    const remote = await createRemoteAccount(server.ctx, "far", `social.${name}`);
    const local = await createUser(server.ctx, `local${domains}`);
    await follow(server, local, remote);
    await follow(server, remote, local);
    const res = await browser.submit(await browser.get(`${LIST}/new`), LIST, {
      domain: name,
      severity: "suspend",
      public_comment: "Harassment",
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, new RegExp(`<h1>Suspend ${name.replaceAll(".", "\\.")}\\?</h1>`));
    assert.match(
      res.body,
      /This will remove the content of 1 account, and break 1 follow of them by people here and 1 follow of people here by them\./,
    );
    assert.equal(await apiBlockOf(name), undefined, "nothing is blocked before the confirmation");

    const confirmed = await browser.submit(res, LIST);
    assert.equal(confirmed.statusCode, 303, confirmed.body);
    const block = await apiBlockOf(name);
    assert.equal(block?.severity, "suspend");
    assert.equal(block?.public_comment, "Harassment");
    const account = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("suspended_at")
      .where("id", "=", remote.id)
      .executeTakeFirstOrThrow();
    assert.ok(account.suspended_at);
  });

  test("editing a block: the form shows it, saving changes it, the audit log records the update", async () => {
    const name = domain();
    const block = await apiCreate({ domain: name, severity: "silence", reject_media: true, private_comment: "old" });
    const edit = await browser.get(`${LIST}/${block.id}/edit`);
    assert.equal(edit.statusCode, 200);
    const form = findForm(edit.body, `${LIST}/${block.id}`);
    assert.equal(form.fields.reject_media, "1");
    assert.equal(form.fields.private_comment, "old");
    assert.match(form.html, /<option value="silence" selected>/);
    assert.ok(!form.names.includes("domain"), "the domain of a block cannot be changed");

    const res = await browser.submit(
      edit,
      `${LIST}/${block.id}`,
      {
        severity: "noop",
        reject_reports: "1",
        obfuscate: "1",
        private_comment: "",
        public_comment: "Reports only",
      },
      ["reject_media"],
    );
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=updated`);
    const changed = await apiBlockOf(name);
    assert.equal(changed?.severity, "noop");
    assert.equal(changed?.reject_media, false);
    assert.equal(changed?.reject_reports, true);
    assert.equal(changed?.obfuscate, true);
    assert.equal(changed?.private_comment, null);
    assert.equal(changed?.public_comment, "Reports only");
    assert.deepEqual(
      (await logOf(block.id)).map((l) => l.action),
      ["create", "update"],
    );
  });

  test("raising a block to suspend asks first; keeping it suspended does not", async () => {
    const name = domain();
    const block = await apiCreate({ domain: name, severity: "silence" });
    const res = await browser.submit(await browser.get(`${LIST}/${block.id}/edit`), `${LIST}/${block.id}`, {
      severity: "suspend",
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /This will remove the content of 0 accounts/);
    assert.equal((await apiBlockOf(name))?.severity, "silence");
    assert.equal((await browser.submit(res, `${LIST}/${block.id}`)).statusCode, 303);
    assert.equal((await apiBlockOf(name))?.severity, "suspend");

    const again = await browser.submit(await browser.get(`${LIST}/${block.id}/edit`), `${LIST}/${block.id}`, {
      severity: "suspend",
      public_comment: "Still",
    });
    assert.equal(again.statusCode, 303);
    assert.equal((await apiBlockOf(name))?.public_comment, "Still");
  });

  test("lifting a block: it is gone from the API, the audit log records it", async () => {
    const name = domain();
    const block = await apiCreate({ domain: name, severity: "silence" });
    const res = await browser.submit(await browser.get(LIST), `${LIST}/${block.id}/remove`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=removed`);
    assert.match((await browser.follow(res)).body, /The block is lifted\./);
    assert.equal(await apiBlockOf(name), undefined);
    assert.deepEqual(
      (await logOf(block.id)).map((l) => l.action),
      ["create", "destroy"],
    );
  });

  describe("refused input: a 422 page with the form, nothing changed", () => {
    for (const [label, value, alert] of [
      ["a blank domain", "", BLANK],
      ["an invalid domain", "not a domain!", INVALID],
    ] as const) {
      test(label, async () => {
        const before = (await apiList()).length;
        const res = await browser.submit(await browser.get(`${LIST}/new`), LIST, {
          domain: value,
          private_comment: "kept",
        });
        assert.equal(res.statusCode, 422);
        assert.equal(alertOf(res.body), alert);
        assert.equal(findForm(res.body, LIST).fields.private_comment, "kept");
        assert.equal((await apiList()).length, before);
      });
    }

    test("a domain blocked already (or under a stricter block): the alert links to the existing block", async () => {
      const name = domain();
      const block = await apiCreate({ domain: name, severity: "suspend" });
      for (const typed of [name, `sub.${name}`]) {
        const res = await browser.submit(await browser.get(`${LIST}/new`), LIST, {
          domain: typed,
          severity: "silence",
        });
        assert.equal(res.statusCode, 422);
        assert.equal(alertOf(res.body), `You have already imposed stricter limits on ${name}.`);
        assert.match(res.body, new RegExp(`href="${LIST}/${block.id}/edit"`));
        findForm(res.body, LIST);
      }
      // The suspension's confirmation is not offered for a domain that cannot be blocked.
      const suspend = await browser.submit(await browser.get(`${LIST}/new`), LIST, {
        domain: name,
        severity: "suspend",
      });
      assert.equal(suspend.statusCode, 422);
      assert.equal((await apiList()).filter((b) => b.domain.endsWith(name)).length, 1);
    });

    test("an unknown severity, new or edited", async () => {
      const name = domain();
      const created = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: name, severity: "bogus" });
      assert.equal(created.statusCode, 422);
      assert.equal(alertOf(created.body), BAD_SEVERITY);
      assert.equal(await apiBlockOf(name), undefined);

      const block = await apiCreate({ domain: name, severity: "silence" });
      const edit = await browser.get(`${LIST}/${block.id}/edit`);
      const res = await browser.submit(edit, `${LIST}/${block.id}`, { severity: "bogus", public_comment: "x" });
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), BAD_SEVERITY);
      findForm(res.body, `${LIST}/${block.id}`);
      assert.equal((await apiBlockOf(name))?.public_comment, null);
    });

    test("forms without their CSRF token", async () => {
      const name = domain();
      const created = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: name }, [
        "authenticity_token",
      ]);
      assert.equal(created.statusCode, 422);
      assert.equal(alertOf(created.body), EXPIRED);
      assert.equal(await apiBlockOf(name), undefined);

      const block = await apiCreate({ domain: name, severity: "silence" });
      const edit = await browser.get(`${LIST}/${block.id}/edit`);
      const updated = await browser.submit(edit, `${LIST}/${block.id}`, { severity: "noop" }, ["authenticity_token"]);
      assert.equal(updated.statusCode, 422);
      const removed = await browser.submit(edit, `${LIST}/${block.id}/remove`, {}, ["authenticity_token"]);
      assert.equal(removed.statusCode, 422);
      assert.equal(alertOf(removed.body), EXPIRED);
      assert.equal((await apiBlockOf(name))?.severity, "silence");
    });
  });

  test("unknown blocks: 404 pages", async () => {
    const token = await csrf();
    for (const id of ["999999999999", "not-an-id"]) {
      const edit = await browser.get(`${LIST}/${id}/edit`);
      assert.equal(edit.statusCode, 404, id);
      assert.match(String(edit.headers["content-type"]), /^text\/html/);
      assert.equal(
        (await browser.post(`${LIST}/${id}`, { authenticity_token: token, severity: "noop" })).statusCode,
        404,
      );
      assert.equal((await browser.post(`${LIST}/${id}/remove`, { authenticity_token: token })).statusCode, 404);
    }
  });

  test("comments are shown escaped", async () => {
    const name = domain();
    await apiCreate({
      domain: name,
      severity: "noop",
      public_comment: "<script>alert(1)</script>",
      private_comment: '"><img src=x onerror=alert(2)>',
    });
    const list = (await browser.get(LIST)).body;
    assert.doesNotMatch(list, /<script>alert/);
    assert.doesNotMatch(list, /<img src=x/);
    assert.match(list, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    const block = await apiBlockOf(name);
    const edit = (await browser.get(`${LIST}/${block!.id}/edit`)).body;
    assert.doesNotMatch(edit, /<img src=x/);
    assert.equal(findForm(edit, `${LIST}/${block!.id}`).fields.private_comment, '"><img src=x onerror=alert(2)>');
  });

  test("the list pages with Older and Newer links", async () => {
    for (let i = 0; i < 3; i++) await apiCreate({ domain: domain(), severity: "noop" });
    const all = await apiList();
    const first = await browser.get(`${LIST}?limit=2`);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body);
    assert.ok(older, "an Older link");
    assert.doesNotMatch(first.body, />Newer</);
    const second = await browser.get(older[1].replaceAll("&amp;", "&"));
    assert.equal(second.statusCode, 200);
    assert.match(second.body, new RegExp(`>${all[2].domain}</a>`));
    assert.doesNotMatch(second.body, new RegExp(`>${all[0].domain}</a>`));
    const newer = /<a href="([^"]+)" rel="prev">Newer<\/a>/.exec(second.body);
    assert.ok(newer, "a Newer link");
    assert.ok(newer[1].startsWith(`${LIST}?`), newer[1]);
  });
});
