/**
 * The admin area's pending sign-ups: who may open them (Manage Users), what each row shows (e-mail
 * and its confirmation, the reason given, the address, when; all escaped), approving and rejecting
 * one or everyone on the page — through the admin API's services, so each is in the audit log and
 * an approval is e-mailed — 422 for forms without their CSRF token (nothing changed) and 404 for
 * unknown accounts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../../src/db/ids.ts";
import { alertOf, findForm, locationOf, type Browser } from "../../browser.ts";
import { createTestServer, createUser, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const PAGE = "/admin/pending_accounts";

describe("admin: pending sign-ups", () => {
  let server: TestServer;
  let moderator: TestUser;
  let browser: Browser;
  let names = 0;
  const db = () => server.ctx.db.kysely;

  before(async () => {
    server = await createTestServer();
    ({ user: moderator, browser } = await staffBrowser(server, "Moderator"));
  });
  after(() => server.close());

  /** A sign-up waiting for approval, with the reason and address it came with. */
  const pending = async (prefix: string, reason = "I like birds", ip = "192.0.2.10") => {
    const waiting = await createUser(server.ctx, `${prefix}${++names}`, { approved: false });
    await db().updateTable("users").set({ reason, sign_up_ip: ip }).where("id", "=", waiting.user.id).execute();
    return waiting;
  };
  const approved = async (who: TestUser) =>
    (await db().selectFrom("users").select("approved").where("id", "=", who.user.id).executeTakeFirst())?.approved;
  const logOf = (who: TestUser) =>
    db()
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type"])
      .where("target_id", "=", who.user.id)
      .orderBy("id")
      .execute();
  const approvalMails = async (who: TestUser) =>
    (await db().selectFrom("jobs").select("payload").where("name", "=", "mail.deliver").execute())
      .map((j) => j.payload)
      .filter((p) => p.includes(`${who.username}@rookery.test`));
  /** Handles everyone pending, so each test starts from an empty queue. */
  const clearQueue = async () => {
    await db().updateTable("users").set({ approved: true }).where("approved", "=", false).execute();
  };

  describeStaffOnly({ server: () => server, pages: [PAGE], allowed: "Moderator", refused: undefined });

  test("each sign-up with its e-mail, confirmation, reason, address and time; approved users are not listed; text escaped", async () => {
    await clearQueue();
    const shown = await pending("hopeful", "<script>alert(1)</script> please", "198.51.100.3");
    const unconfirmed = await createUser(server.ctx, `unconfirmed${++names}`, { approved: false, confirmed: false });
    const body = (await browser.get(PAGE)).body;
    assert.match(body, new RegExp(`<a href="/admin/accounts/${shown.account.id}">@${shown.username}</a>`));
    assert.match(body, new RegExp(`${shown.username}@rookery.test`));
    assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt; please/);
    assert.doesNotMatch(body, /<script>alert/);
    assert.match(body, /198\.51\.100\.3/);
    assert.match(body, new RegExp(`${unconfirmed.username}@rookery.test <span class="badge">not confirmed</span>`));
    assert.doesNotMatch(body, new RegExp(`@${moderator.username}<`));
    assert.match(body, new RegExp(`aria-label="Approve @${shown.username}"`));
    assert.match(body, /<th scope="col">Reason given<\/th>/);
  });

  test("nobody waiting: says so", async () => {
    await clearQueue();
    assert.match((await browser.get(PAGE)).body, /Nobody is waiting for approval\./);
  });

  test("approve one: approved, logged, e-mailed; reject one: removed, logged", async () => {
    await clearQueue();
    const yes = await pending("yes");
    const no = await pending("no");
    const page = await browser.get(PAGE);
    const res = await browser.submit(page, `${PAGE}/${yes.account.id}/approve`);
    assert.equal(res.statusCode, 303);
    assert.equal(locationOf(res).pathname, PAGE);
    assert.match((await browser.follow(res)).body, /The sign-up was approved\./);
    assert.equal(await approved(yes), true);
    assert.deepEqual(
      (await logOf(yes)).map((l) => [l.action, l.target_type, l.account_id]),
      [["approve", "User", moderator.account.id]],
    );
    assert.equal((await approvalMails(yes)).length, 1);

    const rejected = await browser.submit(page, `${PAGE}/${no.account.id}/reject`);
    assert.equal(rejected.statusCode, 303);
    assert.match((await browser.follow(rejected)).body, /The sign-up was rejected and the account removed\./);
    assert.equal(await approved(no), undefined);
    assert.deepEqual(
      (await logOf(no)).map((l) => l.action),
      ["reject"],
    );
    // Already handled: refused as by the API, nothing logged twice.
    const again = await browser.submit(page, `${PAGE}/${yes.account.id}/approve`);
    assert.equal(again.statusCode, 403);
    assert.equal((await logOf(yes)).length, 1);
  });

  test("approve all on this page: only the page's sign-ups; each logged", async () => {
    await clearQueue();
    const oldest = await pending("oldest");
    const middle = await pending("middle");
    const newest = await pending("newest");
    const page = await browser.get(`${PAGE}?limit=2`);
    assert.match(page.body, />Older</);
    const form = findForm(page.body, `${PAGE}/approve`);
    assert.match(form.html, new RegExp(`value="${newest.account.id}"`));
    assert.match(form.html, new RegExp(`value="${middle.account.id}"`));
    const res = await browser.submit(page, `${PAGE}/approve`);
    assert.equal(res.statusCode, 303);
    assert.match((await browser.follow(res)).body, /The sign-ups on the page were approved\./);
    assert.equal(await approved(newest), true);
    assert.equal(await approved(middle), true);
    assert.equal(await approved(oldest), false);
    assert.deepEqual(
      (await logOf(middle)).map((l) => l.action),
      ["approve"],
    );
  });

  test("reject all on this page: removed and logged; one handled meanwhile by someone else is skipped", async () => {
    await clearQueue();
    const first = await pending("spam");
    const second = await pending("spam");
    const page = await browser.get(PAGE);
    await db().updateTable("users").set({ approved: true }).where("id", "=", first.user.id).execute();
    const res = await browser.submit(page, `${PAGE}/reject`);
    assert.equal(res.statusCode, 303);
    assert.equal(await approved(second), undefined);
    assert.equal(await approved(first), true);
    assert.deepEqual(
      (await logOf(second)).map((l) => l.action),
      ["reject"],
    );
    assert.deepEqual(await logOf(first), []);
  });

  test("without the CSRF token: 422, nothing changed; unknown accounts: 404", async () => {
    await clearQueue();
    const waiting = await pending("kept");
    const page = await browser.get(PAGE);
    for (const path of [
      `${PAGE}/${waiting.account.id}/approve`,
      `${PAGE}/${waiting.account.id}/reject`,
      `${PAGE}/approve`,
    ]) {
      const res = await browser.submit(page, path, {}, ["authenticity_token"]);
      assert.equal(res.statusCode, 422, path);
      assert.equal(alertOf(res.body), EXPIRED);
    }
    assert.equal(await approved(waiting), false);
    assert.deepEqual(await logOf(waiting), []);
    const token = findForm(page.body, `${PAGE}/approve`).fields.authenticity_token;
    const unknown = await browser.post(`${PAGE}/${newId()}/approve`, { authenticity_token: token });
    assert.equal(unknown.statusCode, 404);
    assert.equal(alertOf(unknown.body), "Record not found");
  });
});
