/**
 * The admin area's e-mail domain blocks and blocked addresses: who may open them (Manage Blocks:
 * an Admin, not a Moderator), blocking a domain through the form (its mail servers too, listed
 * under its name) and lifting it — seen by the admin API, recorded in the audit log —, the
 * refused sign-ups each block counts, blocking, checking and unblocking an address, 422 pages for
 * bad input and for forms without their CSRF token, and 404 pages for unknown blocks.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import { canonicalEmailHash } from "../../../src/services/admin/canonical_email_blocks.ts";
import { emailDomainBlockMatching } from "../../../src/services/admin/email_domain_blocks.ts";
import { createTestServer, request, TEST_MAIL_DOMAINS, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface Block {
  id: string;
  domain: string;
}

const LIST = "/admin/email_domain_blocks";
const ADDRESSES = "/admin/canonical_email_blocks";

describe("admin: e-mail domain blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  let token: string;
  /** The mail servers the fake DNS answers, by domain. */
  const mx = new Map<string, string[]>();
  before(async () => {
    server = await createTestServer();
    server.ctx.mailDomains = { ...TEST_MAIL_DOMAINS, mailServers: async (domain) => mx.get(domain) ?? [] };
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    token = await tokenFor(
      server.ctx,
      admin,
      "admin:read:email_domain_blocks admin:write:email_domain_blocks admin:read:canonical_email_blocks admin:write:canonical_email_blocks",
    );
  });
  after(() => server.close());

  const apiList = async () =>
    (await request(server.app, "GET", "/api/v1/admin/email_domain_blocks?limit=200", { token })).json() as Block[];
  const apiBlockOf = async (domain: string) => (await apiList()).find((b) => b.domain === domain);
  const apiAddresses = async () =>
    (await request(server.app, "GET", "/api/v1/admin/canonical_email_blocks?limit=200", { token })).json() as Array<{
      id: string;
      canonical_email_hash: string;
    }>;
  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  const blockThroughForm = async (domain: string) => browser.submit(await browser.get(`${LIST}/new`), LIST, { domain });

  describeStaffOnly({
    server: () => server,
    pages: [LIST, `${LIST}/new`, ADDRESSES],
    allowed: "Admin",
    refused: "Moderator",
  });

  test("blocking a domain through the form blocks its mail servers too; the API and the audit log show both", async () => {
    mx.set("throwaway.example", ["mx1.mailhost.example", "mx2.mailhost.example"]);
    assert.match((await browser.get(`${LIST}/new`)).body, /mail servers \(its MX records\) are looked up/);
    const res = await blockThroughForm("@Throwaway.Example");
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=created`);
    const list = await browser.follow(res);
    assert.match(list.body, /The domain is blocked\./);
    assert.match(list.body, /<td>mx1\.mailhost\.example<\/td><td>Mail server of throwaway\.example<\/td>/);
    const parent = await apiBlockOf("throwaway.example");
    const child = await apiBlockOf("mx1.mailhost.example");
    assert.ok(parent && child && (await apiBlockOf("mx2.mailhost.example")));
    assert.deepEqual(await logOf(parent.id), [
      {
        account_id: admin.account.id,
        action: "create",
        target_type: "EmailDomainBlock",
        human_identifier: "throwaway.example",
      },
    ]);
    assert.equal((await logOf(child.id))[0].action, "create");
  });

  test("lifting a block lifts its mail servers' blocks; the audit log records it", async () => {
    mx.set("gone.example", ["mx.gonehost.example"]);
    assert.equal((await blockThroughForm("gone.example")).statusCode, 303);
    const parent = (await apiBlockOf("gone.example"))!;
    const res = await browser.submit(await browser.get(LIST), `${LIST}/${parent.id}/remove`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=removed`);
    assert.match((await browser.follow(res)).body, /The block is lifted\./);
    assert.equal(await apiBlockOf("gone.example"), undefined);
    assert.equal(await apiBlockOf("mx.gonehost.example"), undefined);
    assert.deepEqual(
      (await logOf(parent.id)).map((l) => l.action),
      ["create", "destroy"],
    );
  });

  test("the list counts the sign-ups each block refused", async () => {
    assert.equal((await blockThroughForm("counted.example")).statusCode, 303);
    await emailDomainBlockMatching(server.ctx, ["counted.example"], "192.0.2.1");
    await emailDomainBlockMatching(server.ctx, ["mail.counted.example"], "192.0.2.2");
    const list = (await browser.get(LIST)).body;
    assert.match(list, /<td>counted\.example<\/td><td>Domain<\/td>\s*<td>2<\/td>/);
  });

  test("a blank, invalid or already blocked domain: 422 with the form, nothing blocked", async () => {
    assert.equal((await blockThroughForm("twice.example")).statusCode, 303);
    const before = (await apiList()).length;
    for (const [domain, alert] of [
      ["", "Validation failed: Domain can't be blank"],
      ['"><script>alert(1)</script>', "Validation failed: Domain is not a valid domain name"],
      ["twice.example", "Validation failed: Domain has already been taken"],
    ]) {
      const res = await blockThroughForm(domain);
      assert.equal(res.statusCode, 422, domain);
      assert.equal(alertOf(res.body), alert);
      assert.doesNotMatch(res.body, /<script>alert/);
      assert.equal(findForm(res.body, LIST).fields.domain, domain);
    }
    assert.equal((await apiList()).length, before);
  });

  test("forms without their CSRF token: 422, nothing changed", async () => {
    const created = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: "sneaky.example" }, [
      "authenticity_token",
    ]);
    assert.equal(created.statusCode, 422);
    assert.equal(alertOf(created.body), EXPIRED);
    assert.equal(await apiBlockOf("sneaky.example"), undefined);

    assert.equal((await blockThroughForm("stays.example")).statusCode, 303);
    const kept = (await apiBlockOf("stays.example"))!;
    const removed = await browser.submit(await browser.get(LIST), `${LIST}/${kept.id}/remove`, {}, [
      "authenticity_token",
    ]);
    assert.equal(removed.statusCode, 422);
    assert.ok(await apiBlockOf("stays.example"));
  });

  test("unknown blocks: 404 pages", async () => {
    const csrf = findForm((await browser.get(`${LIST}/new`)).body, LIST).fields.authenticity_token;
    for (const path of [`${LIST}/999999999999/remove`, `${LIST}/x/remove`, `${ADDRESSES}/999999999999/remove`]) {
      const res = await browser.post(path, { authenticity_token: csrf });
      assert.equal(res.statusCode, 404, path);
      assert.equal(alertOf(res.body), "Record not found");
    }
  });

  describe("blocked e-mail addresses", () => {
    test("blocking an address through the form: the API shows its hash, the audit log records it", async () => {
      const res = await browser.submit(await browser.get(ADDRESSES), ADDRESSES, { email: "Spam.Mer+x@mail.example" });
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `${ADDRESSES}?notice=created`);
      const hash = canonicalEmailHash("spammer@mail.example");
      const page = await browser.follow(res);
      assert.match(page.body, /The address is blocked\./);
      assert.match(page.body, new RegExp(`<code>${hash}</code>`));
      const row = (await apiAddresses()).find((b) => b.canonical_email_hash === hash);
      assert.ok(row);
      assert.deepEqual(
        (await logOf(row.id)).map((l) => [l.action, l.target_type]),
        [["create", "CanonicalEmailBlock"]],
      );
    });

    test("checking an address says whether it is blocked, and changes nothing", async () => {
      const before = (await apiAddresses()).length;
      const page = await browser.get(ADDRESSES);
      const blocked = await browser.submit(page, `${ADDRESSES}/test`, { email: "spam.mer@mail.example" });
      assert.equal(blocked.statusCode, 200);
      assert.match(blocked.body, /<strong>spam\.mer@mail\.example is blocked<\/strong>/);
      const free = await browser.submit(page, `${ADDRESSES}/test`, { email: "<b>someone</b>@mail.example" });
      assert.equal(free.statusCode, 200);
      assert.match(free.body, /<strong>&lt;b&gt;someone&lt;\/b&gt;@mail\.example is not blocked\.<\/strong>/);
      const blank = await browser.submit(page, `${ADDRESSES}/test`, { email: "" });
      assert.equal(blank.statusCode, 422);
      assert.equal(alertOf(blank.body), "Enter the e-mail address to check.");
      assert.equal((await apiAddresses()).length, before);
    });

    test("a blank or already blocked address: 422, nothing blocked", async () => {
      const before = (await apiAddresses()).length;
      const blank = await browser.submit(await browser.get(ADDRESSES), ADDRESSES, { email: "" });
      assert.equal(blank.statusCode, 422);
      assert.equal(alertOf(blank.body), "Enter the e-mail address to block.");
      const twice = await browser.submit(await browser.get(ADDRESSES), ADDRESSES, { email: "spammer@mail.example" });
      assert.equal(twice.statusCode, 422);
      assert.equal(alertOf(twice.body), "Validation failed: Canonical email hash has already been taken");
      const stale = await browser.submit(await browser.get(ADDRESSES), ADDRESSES, { email: "new@mail.example" }, [
        "authenticity_token",
      ]);
      assert.equal(stale.statusCode, 422);
      assert.equal(alertOf(stale.body), EXPIRED);
      assert.equal((await apiAddresses()).length, before);
    });

    test("lifting the block of an address: gone from the API, the audit log records it", async () => {
      const hash = canonicalEmailHash("spammer@mail.example");
      const row = (await apiAddresses()).find((b) => b.canonical_email_hash === hash)!;
      const res = await browser.submit(await browser.get(ADDRESSES), `${ADDRESSES}/${row.id}/remove`);
      assert.equal(res.statusCode, 303);
      assert.match((await browser.follow(res)).body, /The block of the address is lifted\./);
      assert.equal(
        (await apiAddresses()).find((b) => b.id === row.id),
        undefined,
      );
      assert.deepEqual(
        (await logOf(row.id)).map((l) => l.action),
        ["create", "destroy"],
      );
    });
  });
});
