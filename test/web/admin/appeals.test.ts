/**
 * The admin area's appeals (/admin/disputes/appeals, Manage Appeals: a Moderator has it, a plain
 * user not): the pending appeals with their strikes and the users' texts (escaped), the filters;
 * approving undoes the strike's action (a limit, a suspension, a freeze, sensitive media), marks
 * the strike overruled, mails the user and is audited; rejecting leaves the action, mails and is
 * audited; a decided appeal cannot be decided again (403), unknown appeals are 404 pages, and a
 * form without its CSRF token changes nothing (422).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForms, type Browser } from "../../browser.ts";
import { createTestServer, createUser, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { appealStrike } from "../../../src/services/moderation/appeals.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const LIST = "/admin/disputes/appeals";
const DECIDED = "This appeal has already been decided.";

describe("admin: appeals", () => {
  let server: TestServer;
  let moderator: TestUser;
  let browser: Browser;
  let adminToken: string;
  let names = 0;

  before(async () => {
    server = await createTestServer();
    ({ user: moderator, browser } = await staffBrowser(server, "Moderator"));
    const admin = await createUser(server.ctx, "boss", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  describeStaffOnly({
    server: () => server,
    pages: [LIST, `${LIST}?status=all`],
    allowed: "Moderator",
    refused: undefined,
  });

  /** A user struck with `type` who appealed with `text`; returns the user, the strike and the appeal. */
  const appealed = async (type: string, text = "Please reconsider.") => {
    const user = await createUser(server.ctx, `appellant${++names}`);
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${user.account.id}/action`, {
      token: adminToken,
      json: { type, text: `Strike of ${user.username}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    const warning = await server.ctx.db.kysely
      .selectFrom("account_warnings")
      .selectAll()
      .where("target_account_id", "=", user.account.id)
      .executeTakeFirstOrThrow();
    const appeal = await appealStrike(server.ctx, user.account, warning.id, text);
    return { user, warning, appeal };
  };
  const accountOf = (id: string) =>
    server.ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const appealRow = (id: string) =>
    server.ctx.db.kysely.selectFrom("appeals").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const warningRow = (id: string) =>
    server.ctx.db.kysely.selectFrom("account_warnings").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const auditOf = (appealId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["action", "target_type", "account_id", "human_identifier"])
      .where("target_id", "=", appealId)
      .where("target_type", "=", "Appeal")
      .execute();
  const mailsTo = async (email: string) =>
    (await server.ctx.db.kysely.selectFrom("jobs").select("payload").where("name", "=", "mail.deliver").execute())
      .map((j) => JSON.parse(j.payload) as { to: string; subject: string; text: string })
      .filter((m) => m.to === email);
  /** Presses the button posting to `action` on the list page. */
  const press = async (action: string, omit: string[] = []) =>
    browser.submit(await browser.get(`${LIST}?status=all`), action, {}, omit);

  test("the pending appeals show the strike and the user's text, escaped; the filters narrow the list", async () => {
    const { user, appeal } = await appealed("silence", "<script>alert('hi')</script> I did nothing.");
    const page = await browser.get(LIST);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Appeals<\/h1>/);
    assert.match(page.body, new RegExp(`@${user.username}</a> appeals: Account limited`));
    assert.match(page.body, new RegExp(`Strike of ${user.username}`));
    assert.match(page.body, /&lt;script&gt;alert\(&#39;hi&#39;\)&lt;\/script&gt; I did nothing\./);
    assert.doesNotMatch(page.body, /<script>alert/);
    assert.match(page.body, /Pending \(\d+\)/);
    const actions = findForms(page.body).map((f) => f.action);
    assert.ok(actions.includes(`${LIST}/${appeal.id}/approve`));
    assert.ok(actions.includes(`${LIST}/${appeal.id}/reject`));
    assert.match(page.body, /<button type="submit" class="danger">Reject the appeal of @/);
    assert.doesNotMatch((await browser.get(`${LIST}?status=approved`)).body, new RegExp(`@${user.username}<`));
    assert.match((await browser.get(`${LIST}?status=all`)).body, new RegExp(`@${user.username}<`));
    // An unknown filter shows the pending ones.
    assert.match((await browser.get(`${LIST}?status=nonsense`)).body, new RegExp(`@${user.username}<`));
  });

  test("approving an appeal of a limit lifts it, overrules the strike, mails the user and is audited", async () => {
    const { user, warning, appeal } = await appealed("silence");
    assert.ok((await accountOf(user.account.id)).silenced_at);
    const res = await press(`${LIST}/${appeal.id}/approve`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=approved`);
    assert.match((await browser.follow(res)).body, /The appeal is approved/);
    assert.equal((await accountOf(user.account.id)).silenced_at, null);
    assert.ok((await warningRow(warning.id)).overruled_at);
    const row = await appealRow(appeal.id);
    assert.ok(row.approved_at);
    assert.equal(row.approved_by_account_id, moderator.account.id);
    assert.equal(row.rejected_at, null);
    assert.deepEqual(await auditOf(appeal.id), [
      { action: "approve", target_type: "Appeal", account_id: moderator.account.id, human_identifier: user.username },
    ]);
    const mails = await mailsTo(user.user.email);
    assert.ok(mails.some((m) => /Your appeal has been approved/.test(m.subject)));
    // The user's notification now carries the decided appeal.
    await server.ctx.jobs.drain();
    const notes = (await request(server.app, "GET", "/api/v1/notifications", { token: user.token })).json() as Array<{
      moderation_warning?: { appeal: { state: string } | null };
    }>;
    assert.equal(notes[0]?.moderation_warning?.appeal?.state, "approved");
    // Decided: no buttons any more, and deciding again is refused.
    const list = await browser.get(`${LIST}?status=approved`);
    assert.equal(findForms(list.body).filter((f) => f.action.startsWith(`${LIST}/${appeal.id}/`)).length, 0);
    // As a stale page of another moderator would send it: with this browser's CSRF token.
    const token = decodeURIComponent(browser.cookies.get("_rookery_csrf")!);
    const again = await browser.post(`${LIST}/${appeal.id}/reject`, { authenticity_token: token });
    assert.equal(again.statusCode, 403);
    assert.equal(alertOf(again.body), DECIDED);
    assert.equal((await appealRow(appeal.id)).rejected_at, null);
  });

  test("approving undoes a suspension, a freeze and sensitive media", async () => {
    const suspended = await appealed("suspend");
    const frozen = await appealed("disable");
    const sensitive = await appealed("sensitive");
    for (const { appeal } of [suspended, frozen, sensitive])
      assert.equal((await press(`${LIST}/${appeal.id}/approve`)).statusCode, 303);
    assert.equal((await accountOf(suspended.user.account.id)).suspended_at, null);
    assert.equal((await accountOf(sensitive.user.account.id)).sensitized_at, null);
    const user = await server.ctx.db.kysely
      .selectFrom("users")
      .select("disabled")
      .where("id", "=", frozen.user.user.id)
      .executeTakeFirstOrThrow();
    assert.equal(user.disabled, false);
    // The unsuspended user can use the API again.
    const me = await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: suspended.user.token });
    assert.equal(me.statusCode, 200, me.body);
  });

  test("rejecting leaves the action, mails the user and is audited", async () => {
    const { user, warning, appeal } = await appealed("silence");
    const res = await press(`${LIST}/${appeal.id}/reject`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=rejected`);
    assert.ok((await accountOf(user.account.id)).silenced_at);
    assert.equal((await warningRow(warning.id)).overruled_at, null);
    const row = await appealRow(appeal.id);
    assert.ok(row.rejected_at);
    assert.equal(row.rejected_by_account_id, moderator.account.id);
    assert.deepEqual(
      (await auditOf(appeal.id)).map((e) => e.action),
      ["reject"],
    );
    assert.ok((await mailsTo(user.user.email)).some((m) => /Your appeal has been rejected/.test(m.subject)));
    assert.match((await browser.get(`${LIST}?status=rejected`)).body, new RegExp(`@${user.username}<`));
  });

  test("a form without its CSRF token changes nothing; unknown appeals are 404 pages", async () => {
    const { user, appeal } = await appealed("silence");
    const res = await press(`${LIST}/${appeal.id}/approve`, ["authenticity_token"]);
    assert.equal(res.statusCode, 422);
    assert.equal(alertOf(res.body), EXPIRED);
    assert.ok((await accountOf(user.account.id)).silenced_at);
    assert.equal((await appealRow(appeal.id)).approved_at, null);
    assert.deepEqual(await auditOf(appeal.id), []);
    const token = findForms((await browser.get(LIST)).body).find((f) => f.fields.authenticity_token)!.fields
      .authenticity_token;
    for (const id of ["99999999", "nonsense"]) {
      const missing = await browser.post(`${LIST}/${id}/approve`, { authenticity_token: token });
      assert.equal(missing.statusCode, 404, id);
      assert.match(String(missing.headers["content-type"]), /^text\/html/);
    }
  });

  test("a plain user cannot decide an appeal", async () => {
    const { appeal } = await appealed("silence");
    const { browser: plain } = await staffBrowser(server, undefined, "plain");
    const token = findForms((await plain.get("/settings")).body).find((f) => f.fields.authenticity_token)!.fields
      .authenticity_token;
    const res = await plain.post(`${LIST}/${appeal.id}/approve`, { authenticity_token: token });
    assert.equal(res.statusCode, 403);
    assert.equal((await appealRow(appeal.id)).approved_at, null);
  });
});
