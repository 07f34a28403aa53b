/**
 * The admin area's accounts: who may open them (Manage Users: a Moderator, not a plain user), the
 * list with Mastodon's filters and its paging, one account (profile, e-mail and sign-up, strikes,
 * reports, notes; nothing of the sort for a remote account), the one-button changes (approve,
 * reject, enable, unsilence, unsuspend, unsensitive, delete data with Delete User Data), the action
 * form (warn, sensitive, freeze, limit, suspend; from a report, with a preset, with or without the
 * e-mail), moderators' notes — each change checked as the admin API checks it (a Moderator cannot
 * act on an Admin), recorded in the audit log as the API records it, 422 pages for forms without
 * their CSRF token or with bad input that change nothing, 404 pages for unknown IDs, and escaped
 * user-supplied text.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../../src/db/ids.ts";
import { alertOf, findForm, locationOf, type Browser } from "../../browser.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const LIST = "/admin/accounts";
const NOT_ALLOWED = "This action is not allowed";
const NOT_FOUND = "Record not found";
const BLANK_NOTE = "Validation failed: Content can't be blank";
const LONG_NOTE = "Validation failed: Content is too long (maximum is 2000 characters)";
const NO_TYPE = "Choose what to do.";
const BAD_TYPE = "Validation failed: Type is not included in the list";

/** The account every staff-only page check opens (made with this ID before the checks run). */
const FIXED_ID = newId();

describe("admin: accounts", () => {
  let server: TestServer;
  let admin: TestUser;
  let adminBrowser: Browser;
  let moderator: TestUser;
  let modBrowser: Browser;
  let names = 0;
  const user = (prefix: string, options: Parameters<typeof createUser>[2] = {}) =>
    createUser(server.ctx, `${prefix}${++names}`, options);
  const db = () => server.ctx.db.kysely;

  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser: adminBrowser } = await staffBrowser(server, "Admin"));
    ({ user: moderator, browser: modBrowser } = await staffBrowser(server, "Moderator"));
    const now = new Date().toISOString();
    await db()
      .insertInto("accounts")
      .values({
        id: FIXED_ID,
        username: "fixed",
        domain: "fixed.example",
        uri: "https://fixed.example/users/fixed",
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
  after(() => server.close());

  const accountRow = (id: string) => db().selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
  const userRow = (accountId: string) =>
    db().selectFrom("users").selectAll().where("account_id", "=", accountId).executeTakeFirst();
  const logOf = (targetId: string) =>
    db()
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  const strikesOf = (accountId: string) =>
    db().selectFrom("account_warnings").selectAll().where("target_account_id", "=", accountId).orderBy("id").execute();
  const mailsTo = async (username: string) =>
    (await db().selectFrom("jobs").select("payload").where("name", "=", "mail.deliver").execute())
      .map((j) => j.payload)
      .filter((p) => p.includes(`${username}@rookery.test`));
  /** The admin's CSRF token (any admin page's form carries it). */
  const tokenOf = async (browser: Browser, accountId: string) =>
    findForm((await browser.get(`${LIST}/${accountId}`)).body, `${LIST}/${accountId}/notes`).fields.authenticity_token;
  /** Posts a one-button form of the account page as `browser` would. */
  const press = async (browser: Browser, accountId: string, path: string) =>
    browser.post(`${LIST}/${accountId}/${path}`, { authenticity_token: await tokenOf(browser, accountId) });
  const fileReport = async (reporter: TestUser, target: TestUser, extra: object = {}) => {
    const res = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: target.account.id, comment: "spam", ...extra },
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { id: string }).id;
  };

  describeStaffOnly({
    server: () => server,
    pages: [LIST, `${LIST}/${FIXED_ID}`, `${LIST}/${FIXED_ID}/action`],
    allowed: "Moderator",
    refused: undefined,
  });

  describe("the list", () => {
    test("each account with its handle, display name, state, role and (local) e-mail; display names escaped", async () => {
      const local = await user("listed");
      await db()
        .updateTable("accounts")
        .set({ display_name: "<script>alert(1)</script>" })
        .where("id", "=", local.account.id)
        .execute();
      const remote = await createRemoteAccount(server.ctx, "faraway", "far.example");
      const body = (await modBrowser.get(LIST)).body;
      assert.match(body, new RegExp(`<a href="/admin/accounts/${local.account.id}">@${local.username}</a>`));
      assert.match(body, new RegExp(`${local.username}@rookery.test`));
      assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
      assert.doesNotMatch(body, /<script>alert/);
      assert.match(body, new RegExp(`@faraway@far\\.example`));
      assert.match(body, new RegExp(`<a href="/admin/accounts/${remote.id}">`));
      assert.match(body, /<td>Admin<\/td>/);
      assert.match(body, /<th scope="col">Last active<\/th>/);
    });

    test("filters: origin, status, username, display name, e-mail, IP, role", async () => {
      const a = await user("filterme");
      const b = await user("other");
      const remote = await createRemoteAccount(server.ctx, "filterremote", "filter.example");
      await db().updateTable("users").set({ sign_up_ip: "198.51.100.9" }).where("id", "=", b.user.id).execute();
      await db()
        .updateTable("accounts")
        .set({ display_name: "Zebra Crossing", silenced_at: new Date().toISOString() })
        .where("id", "=", a.account.id)
        .execute();
      const shown = async (query: string) => {
        const res = await modBrowser.get(`${LIST}?${query}`);
        assert.equal(res.statusCode, 200, query);
        return [a.account.id, b.account.id, remote.id].filter((id) =>
          res.body.includes(`href="/admin/accounts/${id}"`),
        );
      };
      assert.deepEqual(await shown("origin=remote"), [remote.id]);
      assert.deepEqual(await shown("origin=local&username=filter"), [a.account.id]);
      assert.deepEqual(await shown("status=silenced"), [a.account.id]);
      assert.deepEqual(await shown("display_name=zebra"), [a.account.id]);
      assert.deepEqual(await shown(`email=${b.username}%40`), [b.account.id]);
      assert.deepEqual(await shown("ip=198.51.100.9"), [b.account.id]);
      const role = await db()
        .selectFrom("user_roles")
        .select("id")
        .where("name", "=", "Admin")
        .executeTakeFirstOrThrow();
      const byRole = (await modBrowser.get(`${LIST}?role_ids=${role.id}`)).body;
      assert.match(byRole, new RegExp(`href="/admin/accounts/${admin.account.id}"`));
      assert.doesNotMatch(byRole, new RegExp(`href="/admin/accounts/${a.account.id}"`));
      // The form keeps what was asked.
      assert.match((await modBrowser.get(`${LIST}?status=silenced`)).body, /<option value="silenced" selected>/);
    });

    test("an unknown status or origin: 422, the form again with the reason", async () => {
      const res = await modBrowser.get(`${LIST}?status=bogus`);
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), "Unknown status: bogus");
      findForm(res.body, (f) => f.action === LIST && f.method === "get");
      assert.equal(alertOf((await modBrowser.get(`${LIST}?origin=mars`)).body), "Unknown origin: mars");
    });

    test("paged: Older by max_id, Newer by min_id, the filters kept", async () => {
      for (let i = 0; i < 3; i++) await createRemoteAccount(server.ctx, `pager${i}`, "pager.example");
      const handles = (body: string) => [...body.matchAll(/@(pager\d)@pager\.example/g)].map((m) => m[1]);
      const first = await modBrowser.get(`${LIST}?username=pager&limit=2`);
      assert.deepEqual(handles(first.body), ["pager2", "pager1"]);
      assert.doesNotMatch(first.body, />Newer</);
      const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body)![1].replace(/&amp;/g, "&");
      assert.match(older, /username=pager/);
      const second = await modBrowser.get(older);
      assert.deepEqual(handles(second.body), ["pager0"]);
      const newer = /<a href="([^"]+)" rel="prev">Newer<\/a>/.exec(second.body)![1].replace(/&amp;/g, "&");
      assert.deepEqual(handles((await modBrowser.get(newer)).body), ["pager2", "pager1"]);
    });
  });

  describe("one account", () => {
    test("a local account: profile, counts, e-mail and its confirmation, sign-up IP and reason, role; text escaped", async () => {
      const alice = await user("shown", { confirmed: false });
      await db()
        .updateTable("users")
        .set({ sign_up_ip: "192.0.2.44", reason: "<b>let me in</b>" })
        .where("id", "=", alice.user.id)
        .execute();
      await db()
        .updateTable("accounts")
        .set({
          display_name: "Alice <img src=x onerror=alert(1)>",
          note: '<p>Hello <script>alert(2)</script><a href="https://example.com">there</a></p>',
          fields: JSON.stringify([{ name: "Web<site>", value: "<i>plain</i>" }]),
          statuses_count: 7,
          followers_count: 3,
          following_count: 5,
        })
        .where("id", "=", alice.account.id)
        .execute();
      const res = await modBrowser.get(`${LIST}/${alice.account.id}`);
      assert.equal(res.statusCode, 200);
      const body = res.body;
      assert.match(body, new RegExp(`<h1>@${alice.username}</h1>`));
      assert.match(body, /Alice &lt;img src=x onerror=alert\(1\)&gt;/);
      assert.doesNotMatch(body, /<script>alert\(2\)/);
      assert.match(body, /<a href="https:\/\/example.com"/);
      assert.match(body, /<dt>Web&lt;site&gt;<\/dt><dd>&lt;i&gt;plain&lt;\/i&gt;<\/dd>/);
      assert.match(body, /<th scope="row">Posts<\/th><td>7<\/td>/);
      assert.match(body, /<th scope="row">Followers<\/th><td>3<\/td>/);
      assert.match(body, /<th scope="row">Following<\/th><td>5<\/td>/);
      assert.match(body, new RegExp(`<td>${alice.username}@rookery.test</td>`));
      assert.match(body, /<th scope="row">E-mail confirmed<\/th><td>No<\/td>/);
      assert.match(body, /192\.0\.2\.44 <a href="\/admin\/accounts\?ip=192\.0\.2\.44">/);
      assert.match(body, /&lt;b&gt;let me in&lt;\/b&gt;/);
      assert.match(body, /E-mail not confirmed/);
      assert.match(
        body,
        new RegExp(`<a class="button" href="/admin/accounts/${alice.account.id}/action">Take action</a>`),
      );
      const adminPage = (await modBrowser.get(`${LIST}/${admin.account.id}`)).body;
      assert.match(adminPage, /<th scope="row">Role<\/th><td>Admin<\/td>/);
    });

    test("a remote account: no e-mail or sign-in section, no freeze in the action form", async () => {
      const rita = await createRemoteAccount(server.ctx, "ritaview", "view.example");
      const body = (await modBrowser.get(`${LIST}/${rita.id}`)).body;
      assert.match(body, /<h1>@ritaview@view\.example<\/h1>/);
      assert.doesNotMatch(body, /Sign-in and e-mail/);
      assert.doesNotMatch(body, /Sign-up IP/);
      const form = (await modBrowser.get(`${LIST}/${rita.id}/action`)).body;
      assert.doesNotMatch(form, /value="disable"/);
      assert.doesNotMatch(form, /name="send_email_notification"/);
      assert.match(form, /value="suspend"/);
    });

    test("strikes newest first, reports against it and by it linked to their pages", async () => {
      const target = await user("struck");
      const reporter = await user("reporter");
      const against = await fileReport(reporter, target);
      const by = await fileReport(target, reporter);
      for (const text of ["first <warning>", "second warning"]) {
        const page = await adminBrowser.get(`${LIST}/${target.account.id}/action?type=none`);
        const res = await adminBrowser.submit(page, `${LIST}/${target.account.id}/action`, { text });
        assert.equal(res.statusCode, 303, res.body);
      }
      const body = (await modBrowser.get(`${LIST}/${target.account.id}`)).body;
      const second = body.indexOf("second warning");
      const first = body.indexOf("first &lt;warning&gt;");
      assert.ok(second > 0 && first > second, "newest strike first, text escaped");
      assert.match(body, new RegExp(`@${admin.username}`));
      assert.match(body, new RegExp(`<a href="/admin/reports/${against}">Report #${against}</a>`));
      assert.match(body, new RegExp(`<a href="/admin/reports/${by}">Report #${by}</a>`));
      assert.ok(body.indexOf(`Reports against @${target.username}`) < body.indexOf(`/admin/reports/${against}"`));
      assert.ok(body.indexOf(`Reports by @${target.username}`) < body.indexOf(`/admin/reports/${by}"`));
    });

    test("unknown IDs: 404 pages", async () => {
      for (const path of [`${LIST}/${newId()}`, `${LIST}/abc`, `${LIST}/${newId()}/action`]) {
        const res = await modBrowser.get(path);
        assert.equal(res.statusCode, 404, path);
        assert.equal(alertOf(res.body), NOT_FOUND);
      }
      const token = await tokenOf(modBrowser, FIXED_ID);
      const res = await modBrowser.post(`${LIST}/${newId()}/unsilence`, { authenticity_token: token });
      assert.equal(res.statusCode, 404);
    });
  });

  describe("the one-button changes", () => {
    test("approve and reject a pending sign-up, each in the audit log", async () => {
      const waiting = await user("waiting", { approved: false });
      const page = (await modBrowser.get(`${LIST}/${waiting.account.id}`)).body;
      assert.match(page, /Approve sign-up/);
      const res = await press(modBrowser, waiting.account.id, "approve");
      assert.equal(res.statusCode, 303);
      assert.equal(locationOf(res).pathname, `${LIST}/${waiting.account.id}`);
      assert.equal((await userRow(waiting.account.id))!.approved, true);
      assert.match((await modBrowser.follow(res)).body, /The sign-up was approved\./);
      assert.deepEqual(
        (await logOf(waiting.user.id)).map((l) => [l.action, l.target_type, l.account_id]),
        [["approve", "User", moderator.account.id]],
      );

      const unwanted = await user("unwanted", { approved: false });
      const rejected = await press(modBrowser, unwanted.account.id, "reject");
      assert.equal(rejected.statusCode, 303);
      assert.equal(locationOf(rejected).pathname, "/admin/pending_accounts");
      assert.equal(await accountRow(unwanted.account.id), undefined);
      assert.deepEqual(
        (await logOf(unwanted.user.id)).map((l) => l.action),
        ["reject"],
      );
      // Approving someone already approved is refused, as by the API.
      assert.equal((await press(modBrowser, waiting.account.id, "approve")).statusCode, 403);
    });

    test("enable, unsilence, unsensitive, unsuspend lift what the action form did; each logged", async () => {
      const target = await user("lifted");
      const id = target.account.id;
      for (const type of ["disable", "silence", "sensitive", "suspend"]) {
        const page = await modBrowser.get(`${LIST}/${id}/action?type=${type}`);
        const res = await modBrowser.submit(page, `${LIST}/${id}/action`, {}, ["send_email_notification"]);
        assert.equal(res.statusCode, 303, `${type}: ${res.body}`);
      }
      const before = (await modBrowser.get(`${LIST}/${id}`)).body;
      for (const badge of ["Suspended", "Limited", "Media marked sensitive", "Frozen"])
        assert.match(before, new RegExp(`<span class="badge">${badge}</span>`));
      for (const [path, notice] of [
        ["enable", "The account can sign in again."],
        ["unsilence", "The limit on the account was lifted."],
        ["unsensitive", "The account's media are no longer marked as sensitive."],
        ["unsuspend", "The suspension was lifted."],
      ]) {
        const res = await press(modBrowser, id, path);
        assert.equal(res.statusCode, 303, path);
        assert.equal(alertOf((await modBrowser.follow(res)).body), undefined);
        assert.ok((await modBrowser.follow(res)).body.includes(notice.replace(/'/g, "&#39;")), path);
      }
      const row = (await accountRow(id))!;
      assert.equal(row.suspended_at, null);
      assert.equal(row.silenced_at, null);
      assert.equal(row.sensitized_at, null);
      assert.equal((await userRow(id))!.disabled, false);
      assert.deepEqual(
        (await logOf(id)).map((l) => l.action),
        ["silence", "sensitive", "suspend", "unsilence", "unsensitive", "unsuspend"],
      );
      assert.deepEqual(
        (await logOf(target.user.id)).map((l) => l.action),
        ["disable", "enable"],
      );
    });

    test("delete data: offered for a suspended account to those with Delete User Data; a Moderator gets 403", async () => {
      const target = await user("erased");
      const id = target.account.id;
      assert.doesNotMatch((await adminBrowser.get(`${LIST}/${id}`)).body, /delete_data/);
      // Not suspended: refused as by the API.
      assert.equal((await press(adminBrowser, id, "delete_data")).statusCode, 403);
      const page = await adminBrowser.get(`${LIST}/${id}/action?type=suspend`);
      assert.equal((await adminBrowser.submit(page, `${LIST}/${id}/action`)).statusCode, 303);
      assert.doesNotMatch((await modBrowser.get(`${LIST}/${id}`)).body, /delete_data/);
      const refused = await press(modBrowser, id, "delete_data");
      assert.equal(refused.statusCode, 403);
      assert.equal(alertOf(refused.body), "You are not allowed to open this page.");
      assert.equal((await accountRow(id))!.deleted_at, null);
      assert.match((await adminBrowser.get(`${LIST}/${id}`)).body, /class="danger">Delete the account&#39;s data</);
      const res = await press(adminBrowser, id, "delete_data");
      assert.equal(res.statusCode, 303);
      assert.match((await adminBrowser.follow(res)).body, /The account&#39;s data is being deleted\./);
      assert.notEqual((await accountRow(id))!.deleted_at, null);
      assert.deepEqual(
        (await logOf(id)).map((l) => [l.action, l.account_id]),
        [
          ["suspend", admin.account.id],
          ["destroy", admin.account.id],
        ],
      );
    });

    test("without the CSRF token: 422, nothing changed", async () => {
      const waiting = await user("nocsrf", { approved: false });
      for (const path of ["approve", "reject", "action", "notes"]) {
        const res = await modBrowser.post(`${LIST}/${waiting.account.id}/${path}`, { type: "suspend", content: "x" });
        assert.equal(res.statusCode, 422, path);
        assert.equal(alertOf(res.body), EXPIRED);
      }
      assert.equal((await userRow(waiting.account.id))!.approved, false);
      assert.equal((await accountRow(waiting.account.id))!.suspended_at, null);
      assert.deepEqual(await logOf(waiting.account.id), []);
      assert.deepEqual(await logOf(waiting.user.id), []);
    });
  });

  describe("the action form", () => {
    test("a Moderator cannot act on an Admin: no offer, a 403 page, nothing changed or logged", async () => {
      const page = (await modBrowser.get(`${LIST}/${admin.account.id}`)).body;
      assert.doesNotMatch(page, /Take action<\/a>/);
      assert.match(page, /you cannot take action on it/);
      const token = await tokenOf(modBrowser, admin.account.id);
      const res = await modBrowser.post(`${LIST}/${admin.account.id}/action`, {
        authenticity_token: token,
        type: "suspend",
        text: "no",
      });
      assert.equal(res.statusCode, 403);
      assert.equal(alertOf(res.body), NOT_ALLOWED);
      assert.equal((await accountRow(admin.account.id))!.suspended_at, null);
      assert.deepEqual(await strikesOf(admin.account.id), []);
      assert.deepEqual(await logOf(admin.account.id), []);
    });

    test("the type comes from ?type=; limit with text: strike, audit log, e-mail, back to the account with a notice", async () => {
      const target = await user("limited");
      const page = await modBrowser.get(`${LIST}/${target.account.id}/action?type=silence`);
      assert.equal(page.statusCode, 200);
      const form = findForm(page.body, `${LIST}/${target.account.id}/action`);
      assert.equal(form.fields.type, "silence");
      assert.equal(form.fields.send_email_notification, "1");
      for (const name of ["type", "text", "send_email_notification", "authenticity_token"])
        assert.ok(form.names.includes(name), name);
      const res = await modBrowser.submit(page, `${LIST}/${target.account.id}/action`, { text: "Calm down." });
      assert.equal(res.statusCode, 303);
      assert.equal(locationOf(res).pathname, `${LIST}/${target.account.id}`);
      assert.match((await modBrowser.follow(res)).body, /The action was taken\./);
      assert.notEqual((await accountRow(target.account.id))!.silenced_at, null);
      const [strike] = await strikesOf(target.account.id);
      assert.equal(strike.action, "silence");
      assert.equal(strike.text, "Calm down.");
      assert.equal(strike.account_id, moderator.account.id);
      assert.deepEqual(
        (await logOf(target.account.id)).map((l) => [l.action, l.target_type, l.account_id]),
        [["silence", "Account", moderator.account.id]],
      );
      const mails = await mailsTo(target.username);
      assert.equal(mails.length, 1);
      assert.match(mails[0], /Calm down\./);
    });

    test("the e-mail box unticked: no e-mail", async () => {
      const target = await user("quiet");
      const page = await modBrowser.get(`${LIST}/${target.account.id}/action?type=sensitive`);
      const res = await modBrowser.submit(page, `${LIST}/${target.account.id}/action`, {}, ["send_email_notification"]);
      assert.equal(res.statusCode, 303);
      assert.notEqual((await accountRow(target.account.id))!.sensitized_at, null);
      assert.deepEqual(await mailsTo(target.username), []);
    });

    test("a preset's text comes first, then the moderator's", async () => {
      const target = await user("preset");
      const now = new Date().toISOString();
      const presetId = newId();
      await db()
        .insertInto("account_warning_presets")
        .values({ id: presetId, title: "Be kind", text: "Please be kind.", created_at: now, updated_at: now })
        .execute();
      const page = await modBrowser.get(`${LIST}/${target.account.id}/action?type=none`);
      assert.match(page.body, /<option value="\d+">Be kind – Please be kind\.<\/option>/);
      const res = await modBrowser.submit(page, `${LIST}/${target.account.id}/action`, {
        warning_preset_id: presetId,
        text: "Last time.",
      });
      assert.equal(res.statusCode, 303);
      const [strike] = await strikesOf(target.account.id);
      assert.equal(strike.action, "none");
      assert.equal(strike.text, "Please be kind.\n\nLast time.");
      // A warning with words is logged, as by the API.
      assert.deepEqual(
        (await logOf(strike.id)).map((l) => [l.action, l.target_type]),
        [["create", "AccountWarning"]],
      );
    });

    test("from a report: the report is named and linked; suspending resolves it, logs it and returns to it", async () => {
      const reporter = await user("snitch");
      const spammer = await user("spammer");
      const post = await postStatus(server, spammer, { status: "buy now", visibility: "public" });
      const reportId = await fileReport(reporter, spammer, { status_ids: [post.id], comment: "<b>spam</b>" });
      const other = await fileReport(reporter, spammer);
      const page = await modBrowser.get(`${LIST}/${spammer.account.id}/action?type=suspend&report_id=${reportId}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(`<a href="/admin/reports/${reportId}">report #${reportId}</a>`));
      assert.match(page.body, new RegExp(`by @${reporter.username}`));
      assert.match(page.body, /&lt;b&gt;spam&lt;\/b&gt;/);
      const form = findForm(page.body, `${LIST}/${spammer.account.id}/action`);
      assert.equal(form.fields.report_id, reportId);
      assert.equal(form.fields.type, "suspend");
      assert.match(
        form.html,
        /<input id="include_statuses" type="checkbox" name="include_statuses" value="1" checked[^>]*> <label for="include_statuses" class="inline">Attach the reported post to the strike<\/label>/,
      );

      const res = await modBrowser.submit(page, `${LIST}/${spammer.account.id}/action`, { text: "Spam." });
      assert.equal(res.statusCode, 303);
      assert.equal(locationOf(res).pathname, `/admin/reports/${reportId}`);
      assert.equal(locationOf(res).searchParams.get("notice"), "action_taken");
      assert.match((await modBrowser.follow(res)).body, /The action was taken, and the report is resolved\./);
      assert.notEqual((await accountRow(spammer.account.id))!.suspended_at, null);
      const [strike] = await strikesOf(spammer.account.id);
      assert.equal(strike.report_id, reportId);
      assert.deepEqual(JSON.parse(strike.status_ids!), [post.id]);
      const reports = await db()
        .selectFrom("reports")
        .select(["id", "action_taken_at", "action_taken_by_account_id"])
        .where("id", "in", [reportId, other])
        .execute();
      assert.ok(reports.every((r) => r.action_taken_at && r.action_taken_by_account_id === moderator.account.id));
      assert.deepEqual(
        (await logOf(reportId)).map((l) => [l.action, l.target_type, l.account_id]),
        [["resolve", "Report", moderator.account.id]],
      );
      assert.deepEqual(
        (await logOf(spammer.account.id)).map((l) => l.action),
        ["suspend"],
      );
    });

    test("from a report, the reported posts unticked: the strike names none; the API always attaches them", async () => {
      const reporter = await user("tattler");
      const poster = await user("poster");
      const post = await postStatus(server, poster, { status: "borderline", visibility: "public" });
      const reportId = await fileReport(reporter, poster, { status_ids: [post.id] });
      const page = await modBrowser.get(`${LIST}/${poster.account.id}/action?type=none&report_id=${reportId}`);
      const res = await modBrowser.submit(page, `${LIST}/${poster.account.id}/action`, { text: "Careful." }, [
        "include_statuses",
      ]);
      assert.equal(res.statusCode, 303);
      const [strike] = await strikesOf(poster.account.id);
      assert.equal(strike.report_id, reportId);
      assert.equal(strike.status_ids, null);

      // Mastodon's API takes no include_statuses: the posts come with the strike whatever is sent.
      const again = await fileReport(reporter, poster, { status_ids: [post.id] });
      const api = await request(server.app, "POST", `/api/v1/admin/accounts/${poster.account.id}/action`, {
        token: await tokenFor(server.ctx, moderator, "admin:write:accounts"),
        json: { type: "none", report_id: again, include_statuses: false },
      });
      assert.equal(api.statusCode, 200, api.body);
      const [, second] = await strikesOf(poster.account.id);
      assert.deepEqual(JSON.parse(second.status_ids!), [post.id]);
    });

    test("without a report, or a report without posts, the form offers no such box", async () => {
      const target = await user("plain");
      const bare = await modBrowser.get(`${LIST}/${target.account.id}/action`);
      assert.doesNotMatch(bare.body, /include_statuses/);
      const reportId = await fileReport(await user("noposts"), target);
      const noPosts = await modBrowser.get(`${LIST}/${target.account.id}/action?report_id=${reportId}`);
      assert.match(noPosts.body, new RegExp(`report #${reportId}`));
      assert.doesNotMatch(noPosts.body, /include_statuses/);
    });

    test("bad input: no type or an unknown one is a 422 page with the form kept; unknown report or preset 404; nothing changed", async () => {
      const target = await user("untouched");
      const id = target.account.id;
      const page = await modBrowser.get(`${LIST}/${id}/action`);
      const blank = await modBrowser.submit(page, `${LIST}/${id}/action`, { text: "keep me" });
      assert.equal(blank.statusCode, 422);
      assert.equal(alertOf(blank.body), NO_TYPE);
      assert.equal(findForm(blank.body, `${LIST}/${id}/action`).fields.text, "keep me");
      const unknown = await modBrowser.submit(page, `${LIST}/${id}/action`, { type: "explode" });
      assert.equal(unknown.statusCode, 422);
      assert.equal(alertOf(unknown.body), BAD_TYPE);
      for (const extra of [{ report_id: newId() }, { warning_preset_id: newId() }] as Array<Record<string, string>>) {
        const res = await modBrowser.submit(page, `${LIST}/${id}/action`, { type: "suspend", ...extra });
        assert.equal(res.statusCode, 404);
      }
      assert.equal((await modBrowser.get(`${LIST}/${id}/action?report_id=${newId()}`)).statusCode, 404);
      assert.equal((await accountRow(id))!.suspended_at, null);
      assert.deepEqual(await strikesOf(id), []);
      assert.deepEqual(await logOf(id), []);
    });
  });

  describe("moderation notes", () => {
    test("written and listed oldest first with author and time, escaped; not in the audit log", async () => {
      const target = await user("noted");
      const id = target.account.id;
      for (const [browser, content] of [
        [modBrowser, "First <script>alert(1)</script>"],
        [adminBrowser, "Second note"],
      ] as const) {
        const page = await browser.get(`${LIST}/${id}`);
        const res = await browser.submit(page, `${LIST}/${id}/notes`, { content });
        assert.equal(res.statusCode, 303);
        assert.match((await browser.follow(res)).body, /Your note was saved\./);
      }
      const body = (await modBrowser.get(`${LIST}/${id}`)).body;
      const first = body.indexOf("First &lt;script&gt;alert(1)&lt;/script&gt;");
      const second = body.indexOf("Second note");
      assert.ok(first > 0 && second > first, "oldest first, escaped");
      assert.doesNotMatch(body, /<script>alert\(1\)/);
      assert.match(body, new RegExp(`<strong>@${moderator.username}</strong>`));
      assert.match(body, new RegExp(`<strong>@${admin.username}</strong>`));
      assert.deepEqual(await logOf(id), []);
    });

    test("blank or over 500 characters: 422, the account page with the text kept, nothing saved", async () => {
      const target = await user("nonote");
      const id = target.account.id;
      const page = await modBrowser.get(`${LIST}/${id}`);
      const blank = await modBrowser.submit(page, `${LIST}/${id}/notes`, { content: "   " });
      assert.equal(blank.statusCode, 422);
      assert.equal(alertOf(blank.body), BLANK_NOTE);
      const long = await modBrowser.submit(page, `${LIST}/${id}/notes`, { content: "é".repeat(2001) });
      assert.equal(long.statusCode, 422);
      assert.equal(alertOf(long.body), LONG_NOTE);
      assert.equal(findForm(long.body, `${LIST}/${id}/notes`).fields.content, "é".repeat(2001));
      const fits = await modBrowser.submit(page, `${LIST}/${id}/notes`, { content: "é".repeat(2000) });
      assert.equal(fits.statusCode, 303);
      const notes = await db()
        .selectFrom("account_moderation_notes")
        .selectAll()
        .where("target_account_id", "=", id)
        .execute();
      assert.equal(notes.length, 1);
      const unknown = await modBrowser.post(`${LIST}/${newId()}/notes`, {
        authenticity_token: findForm(page.body, `${LIST}/${id}/notes`).fields.authenticity_token,
        content: "x",
      });
      assert.equal(unknown.statusCode, 404);
    });

    test("the author deletes their note, an Admin a Moderator's; a Moderator cannot delete an Admin's", async () => {
      const target = await user("notes");
      const id = target.account.id;
      const write = async (browser: Browser, content: string) => {
        const res = await browser.submit(await browser.get(`${LIST}/${id}`), `${LIST}/${id}/notes`, { content });
        assert.equal(res.statusCode, 303);
        return (
          await db()
            .selectFrom("account_moderation_notes")
            .select("id")
            .where("content", "=", content)
            .executeTakeFirstOrThrow()
        ).id;
      };
      const mine = await write(modBrowser, "mod's own");
      const adminsNote = await write(adminBrowser, "admin's");
      const modsNote = await write(modBrowser, "mod's other");
      const deleteForm = (noteId: string) => `/admin/account_moderation_notes/${noteId}/delete`;
      const modPage = (await modBrowser.get(`${LIST}/${id}`)).body;
      assert.ok(modPage.includes(deleteForm(mine)));
      assert.ok(!modPage.includes(deleteForm(adminsNote)));
      const token = findForm(modPage, deleteForm(mine)).fields.authenticity_token;
      const refused = await modBrowser.post(deleteForm(adminsNote), { authenticity_token: token });
      assert.equal(refused.statusCode, 403);
      assert.equal(alertOf(refused.body), NOT_ALLOWED);
      const own = await modBrowser.submit(modPage, deleteForm(mine));
      assert.equal(own.statusCode, 303);
      assert.equal(locationOf(own).pathname, `${LIST}/${id}`);
      assert.match((await modBrowser.follow(own)).body, /The note was deleted\./);
      const adminPage = (await adminBrowser.get(`${LIST}/${id}`)).body;
      assert.equal((await adminBrowser.submit(adminPage, deleteForm(modsNote))).statusCode, 303);
      const left = await db()
        .selectFrom("account_moderation_notes")
        .select("id")
        .where("target_account_id", "=", id)
        .execute();
      assert.deepEqual(
        left.map((n) => n.id),
        [adminsNote],
      );
      assert.equal((await modBrowser.post(deleteForm(newId()), { authenticity_token: token })).statusCode, 404);
      assert.equal((await modBrowser.post(deleteForm(adminsNote), {})).statusCode, 422);
    });
  });
});
