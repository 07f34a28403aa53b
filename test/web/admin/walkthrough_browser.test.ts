/**
 * A moderator handles a report in headless Chromium, as issue 26 asks: a user reports another
 * account's post (through the API); the moderator signs in, opens /admin, finds the report in the
 * queue, opens it, takes it, follows its "Suspend" link to the account action form, submits it —
 * which suspends the account and resolves the report, as Mastodon's account action does — and
 * reads each step in the audit log. No page may meet a console error, a script error, a CSP
 * violation or a failed request. Screenshots of the queue, the report, the action form, the
 * resolved report and the audit log are kept in `test-artifacts/` (or TEST_ARTIFACTS_DIR).
 *
 * As in test/web/public_pages_browser.test.ts (both set up by test/chromium.ts), the server is
 * http://rookery.test on an ephemeral port, which Chromium's host resolver maps to; every other
 * host resolves to nothing.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { KIT_PASSWORD } from "../../browser.ts";
import { launchChromium, openPage, ORIGIN, screenshot, SKIP } from "../../chromium.ts";
import {
  createTestServer,
  createUser,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../../kit.ts";

const SPAM = "Cheap followers, 1000 for $5! Visit my profile #deals";
const COMMENT = "This account posts the same advert under every post of mine.";
const WARNING = "Your account was suspended for repeated spam.";

describe("a moderator handles a report in Chromium", { skip: SKIP }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let moderator: TestUser;
  let spammer: TestUser;
  let reportId: string;
  /** Console errors, page errors, failed requests and error answers, as they came. */
  let problems: string[] = [];

  before(async () => {
    server = await createTestServer({ env: { LOCAL_HTTPS: "false" } });
    moderator = await createUser(server.ctx, "maria", { role: "Moderator" });
    spammer = await createUser(server.ctx, "spammer");
    const reporter = await createUser(server.ctx, "rosa");
    const post = await postStatus(server, spammer, { status: SPAM });
    const res = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: spammer.account.id, status_ids: [post.id], comment: COMMENT, category: "spam" },
    });
    assert.equal(res.statusCode, 200, res.body);
    reportId = (res.json() as { id: string }).id;

    browser = await launchChromium(server);
    ({ context, page, problems } = await openPage(browser, { width: 1200, height: 900 }));
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
  });

  const shot = (name: string) => screenshot(page, `admin-${name}`);

  /** The path and query the browser is on. */
  const where = () => {
    const url = new URL(page.url());
    return `${url.pathname}${url.search}`;
  };

  async function assertVisible(text: string | RegExp, what = String(text)) {
    assert.ok(await page.getByText(text).first().isVisible(), `${what} is not visible on ${where()}`);
  }

  // The steps run in order, each on the page the one before left.

  test("signing in from /admin leads to the reports queue, where the report waits", async () => {
    await page.goto(`${ORIGIN}/admin`);
    assert.equal(where(), "/auth/sign_in?return_to=%2Fadmin");
    await page.getByLabel("E-mail address").fill(moderator.user.email);
    await page.getByLabel("Password").fill(KIT_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${ORIGIN}/admin/reports`);
    await assertVisible(`#${reportId}`, "the report's number");
    const row = page.getByRole("row", { name: new RegExp(`#${reportId}`) });
    assert.ok(await row.getByText("@spammer").first().isVisible(), "the reported account");
    assert.ok(await row.getByText("@rosa").isVisible(), "the reporter");
    assert.ok(await row.getByText("Spam", { exact: true }).isVisible(), "the category");
    await shot("reports-queue");
  });

  test("the report's page shows the reported post and the comment; the moderator takes it", async () => {
    await page.getByRole("link", { name: `#${reportId}` }).click();
    await page.waitForURL(`${ORIGIN}/admin/reports/${reportId}`);
    assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), `Report #${reportId}`);
    await assertVisible("Cheap followers, 1000 for $5!", "the reported post");
    await assertVisible(COMMENT, "the reporter's comment");
    await page.getByRole("button", { name: "Assign to me" }).click();
    await page.waitForURL(`${ORIGIN}/admin/reports/${reportId}?notice=assigned`);
    await assertVisible("You took this report.");
    assert.ok(await page.getByRole("button", { name: "Unassign" }).isVisible());
    await shot("report");
  });

  test("its Suspend link opens the account action form, which suspends the account and resolves the report", async () => {
    await page.getByRole("link", { name: "Suspend", exact: true }).click();
    await page.waitForURL(`${ORIGIN}/admin/accounts/${spammer.account.id}/action?report_id=${reportId}&type=suspend`);
    assert.ok(await page.getByRole("radio", { name: "Suspend" }).isChecked(), "Suspend is chosen");
    await assertVisible(`report #${reportId}`, "the report the action answers");
    await page.getByLabel(/Warning text/).fill(WARNING);
    await shot("account-action");
    await page.getByRole("button", { name: "Take action" }).click();
    await page.waitForURL(`${ORIGIN}/admin/reports/${reportId}?notice=action_taken`);
    await assertVisible("The action was taken, and the report is resolved.");
    const state = page.getByRole("row", { name: /^State/ });
    assert.match((await state.textContent()) ?? "", /^State\s*Resolved by @maria/);
    assert.ok(await page.getByText("suspended", { exact: true }).first().isVisible(), "the account's suspended badge");
    // Taking the action resolved the report (Mastodon's Admin::AccountAction): only reopening is left.
    assert.ok(await page.getByRole("button", { name: "Reopen the report" }).isVisible());
    assert.equal(await page.getByRole("button", { name: "Resolve with no action" }).count(), 0);
    await shot("report-resolved");

    // What the API sees.
    const token = await tokenFor(server.ctx, moderator, "admin:read");
    const account = await request(server.app, "GET", `/api/v1/admin/accounts/${spammer.account.id}`, { token });
    assert.equal((account.json() as { suspended: boolean }).suspended, true);
    const report = await request(server.app, "GET", `/api/v1/admin/reports/${reportId}`, { token });
    assert.equal((report.json() as { action_taken: boolean }).action_taken, true);
  });

  test("the audit log shows each step, newest first", async () => {
    await page.getByRole("navigation", { name: "Administration" }).getByRole("link", { name: "Audit log" }).click();
    await page.waitForURL(`${ORIGIN}/admin/action_logs`);
    const rows = page.locator("tbody tr td:first-child");
    const lines = (await rows.allTextContents()).map((t) => t.replace(/\s+/g, " ").trim());
    assert.deepEqual(lines, [
      `@maria resolved report #${reportId}`,
      "@maria suspended @spammer",
      `@maria took report #${reportId}`,
    ]);
    await shot("audit-log");
    // The report's own page lists the same history beside its notes.
    await page.goto(`${ORIGIN}/admin/reports/${reportId}`);
    await assertVisible(`@maria resolved report #${reportId}`);
    await assertVisible("@maria suspended @spammer");
    assert.deepEqual(problems, []);
  });
});
