/**
 * The admin area's reports: who may open them (Manage Reports: a Moderator, not a plain user); the
 * queue — unresolved by default, the resolved ones, by the reported account's origin and handle,
 * by reporter, paged; a report's page with both accounts, the category and rules, the comment, the
 * reported posts (content, warning, media, visibility) and the links to the account action form;
 * assigning, unassigning, resolving with no action, reopening and correcting the category through
 * the forms, each seen by the admin API and in the audit log; notes (Mastodon's ReportNote): added,
 * added with resolve or reopen, deleted by their author or an outranking moderator only, not
 * logged themselves; 422 pages that change nothing (no CSRF token, a blank or too long note, an
 * unknown category or rule); 404 pages for unknown reports and notes; user text escaped.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, findForms, type Browser } from "../../browser.ts";
import { saveSetting } from "../../../src/services/instance/settings.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  follow,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const QUEUE = "/admin/reports";
const NOTE_BLANK = "Write something in the note first.";
const NOTE_TOO_LONG = "A note can be at most 2000 characters long.";
const NOT_FOUND = "Record not found";
const NOT_ALLOWED = "This action is not allowed";

interface AdminReportJson {
  id: string;
  action_taken: boolean;
  category: string;
  assigned_account: { id: string } | null;
  action_taken_by_account: { id: string } | null;
  rules: Array<{ id: string }>;
}

/** The report numbers a queue page lists, in its order. */
const listed = (body: string) =>
  [...body.matchAll(/<td class="nowrap"><a href="\/admin\/reports\/(\d+)">#\d+<\/a><\/td>/g)].map((m) => m[1]);

describe("admin: reports", () => {
  let server: TestServer;
  let moderator: TestUser;
  let browser: Browser;
  let token: string;
  const pages = [QUEUE, `${QUEUE}?resolved=1`];
  before(async () => {
    server = await createTestServer();
    ({ user: moderator, browser } = await staffBrowser(server, "Moderator"));
    token = await tokenFor(server.ctx, moderator, "admin:read admin:write");
    await saveSetting(server.ctx.db.kysely, "rules", [
      { text: "Be kind", hint: "" },
      { text: "No spam", hint: "" },
      { text: "No ads", hint: "" },
    ]);
    const id = await fileReport(await user("someone"), (await user("other")).account);
    pages.push(`${QUEUE}/${id}`);
  });
  after(() => server.close());

  let users = 0;
  const user = (name: string) => createUser(server.ctx, `${name}${++users}`);

  /** `reporter` reports `target` through the user API; answers the report's ID. */
  async function fileReport(reporter: TestUser, target: { id: string }, json: object = {}): Promise<string> {
    const res = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: target.id, ...json },
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { id: string }).id;
  }

  const apiReport = async (id: string) => {
    const res = await request(server.app, "GET", `/api/v1/admin/reports/${id}`, { token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as AdminReportJson;
  };

  const logOf = (reportId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type"])
      .where("target_type", "=", "Report")
      .where("target_id", "=", reportId)
      .orderBy("id")
      .execute();

  const notesOf = (reportId: string) =>
    server.ctx.db.kysely
      .selectFrom("report_notes")
      .selectAll()
      .where("report_id", "=", reportId)
      .orderBy("id")
      .execute();

  /** A fresh report (a post attached, a comment) and its page in the moderator's browser. */
  async function freshReport(json: object = {}) {
    const [reporter, target] = await Promise.all([user("reporter"), user("target")]);
    const post = await postStatus(server, target, { status: "Buy cheap followers at #spamshop" });
    const id = await fileReport(reporter, target.account, { status_ids: [post.id], comment: "Spam again", ...json });
    return { id, reporter, target, post, page: await browser.get(`${QUEUE}/${id}`) };
  }

  describeStaffOnly({ server: () => server, pages, allowed: "Moderator", refused: undefined });

  test("a plain user's posts to a report are refused and change nothing", async () => {
    const { id } = await freshReport();
    const { browser: plain } = await staffBrowser(server, undefined, "plain");
    const settings = await plain.get("/settings");
    const csrf = findForms(settings.body).find((f) => f.fields.authenticity_token)?.fields.authenticity_token ?? "";
    for (const action of ["assign_to_self", "resolve", "notes"]) {
      const res = await plain.post(`${QUEUE}/${id}/${action}`, { authenticity_token: csrf, content: "hello" });
      assert.equal(res.statusCode, 403, action);
    }
    assert.equal((await apiReport(id)).action_taken, false);
    assert.deepEqual(await logOf(id), []);
    assert.deepEqual(await notesOf(id), []);
  });

  describe("the queue", () => {
    test("unresolved by default: number, both accounts, category, posts, comment, assignee, date", async () => {
      const { id, reporter, target } = await freshReport({
        comment: "This account posts the same advert every minute of the day, and nothing else",
      });
      const res = await browser.get(QUEUE);
      assert.equal(res.statusCode, 200);
      assert.ok(listed(res.body).includes(id));
      const row = new RegExp(
        `<tr><td class="nowrap"><a href="/admin/reports/${id}">#${id}</a></td>[\\s\\S]*?</tr>`,
      ).exec(res.body)![0];
      assert.match(row, new RegExp(`<a href="/admin/accounts/${target.account.id}">`));
      assert.match(row, new RegExp(`@${target.username}`));
      assert.match(row, new RegExp(`<a href="/admin/accounts/${reporter.account.id}">@${reporter.username}</a>`));
      assert.match(row, /<td>Other<\/td>/);
      assert.match(row, /<td>1 post<\/td>/);
      assert.match(row, /<td>This account posts the same advert every minute of the day,…<\/td>/);
      assert.match(row, /No one/);
      assert.match(row, /<time datetime="\d{4}-/);
    });

    test("resolved reports leave it and show under the resolved filter, with who resolved them", async () => {
      const { id } = await freshReport();
      await request(server.app, "POST", `/api/v1/admin/reports/${id}/resolve`, { token });
      assert.ok(!listed((await browser.get(QUEUE)).body).includes(id));
      const resolved = await browser.get(`${QUEUE}?resolved=1`);
      assert.equal(resolved.statusCode, 200);
      assert.match(resolved.body, /<h1>Resolved reports<\/h1>/);
      assert.ok(listed(resolved.body).includes(id));
      assert.match(resolved.body, /<th scope="col">Resolved by<\/th>/);
      assert.match(resolved.body, new RegExp(`@${moderator.username}`));
    });

    test("by the reported account's origin and handle, by reporter and by target ID", async () => {
      const reporter = await user("originreporter");
      const rita = await createRemoteAccount(server.ctx, `rita${++users}`, "remote.example");
      const local = await user("localtarget");
      const remoteId = await fileReport(reporter, rita);
      const localId = await fileReport(reporter, local.account);
      const remote = listed((await browser.get(`${QUEUE}?target_origin=remote`)).body);
      assert.ok(remote.includes(remoteId));
      assert.ok(!remote.includes(localId));
      const locals = listed((await browser.get(`${QUEUE}?target_origin=local`)).body);
      assert.ok(locals.includes(localId));
      assert.ok(!locals.includes(remoteId));
      assert.deepEqual(listed((await browser.get(`${QUEUE}?target=${rita.username}@remote.example`)).body), [remoteId]);
      assert.deepEqual(listed((await browser.get(`${QUEUE}?target=%40${local.username}`)).body), [localId]);
      assert.deepEqual(listed((await browser.get(`${QUEUE}?account_id=${reporter.account.id}`)).body), [
        localId,
        remoteId,
      ]);
      const byId = await browser.get(`${QUEUE}?target_account_id=${rita.id}`);
      assert.deepEqual(listed(byId.body), [remoteId]);
      assert.match(byId.body, /Showing only the reports about one account/);
      // The filter form says what it filters by.
      const form = findForm((await browser.get(`${QUEUE}?target_origin=remote`)).body, (f) => f.method === "get");
      assert.match(form.html, /<label for="resolved">Show<\/label><select id="resolved" name="resolved">/);
      assert.match(
        form.html,
        /<label for="target_origin">Reported account from<\/label><select id="target_origin" name="target_origin">/,
      );
      assert.match(form.html, /<option value="remote" selected>/);
      assert.deepEqual(form.names, ["target"]);
    });

    test("an unknown handle or a reporter that is no ID matches nothing, and says so", async () => {
      const unknown = await browser.get(`${QUEUE}?target=nobody-here`);
      assert.equal(unknown.statusCode, 200);
      assert.deepEqual(listed(unknown.body), []);
      assert.equal(alertOf(unknown.body), "No account nobody-here is known here.");
      const notAnId = await browser.get(`${QUEUE}?account_id=abc`);
      assert.deepEqual(listed(notAnId.body), []);
      assert.match(notAnId.body, /No report matches this filter\./);
    });

    test("paged: Older and Newer links keep the filter", async () => {
      const reporter = await user("pager");
      const target = await createRemoteAccount(server.ctx, `paged${++users}`, "paging.example");
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) ids.push(await fileReport(reporter, target));
      const first = await browser.get(`${QUEUE}?target_account_id=${target.id}`);
      assert.deepEqual(listed(first.body), ids.slice(3).reverse());
      const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body);
      assert.ok(older, "an Older link");
      assert.doesNotMatch(first.body, /rel="prev"/);
      const second = await browser.get(older[1].replace(/&amp;/g, "&"));
      assert.deepEqual(listed(second.body), ids.slice(0, 3).reverse());
      assert.doesNotMatch(second.body, /rel="next"/);
      const newer = /<a href="([^"]+)" rel="prev">Newer<\/a>/.exec(second.body);
      assert.ok(newer, "a Newer link");
      assert.match(newer[1], new RegExp(`target_account_id=${target.id}`));
      assert.deepEqual(listed((await browser.get(newer[1].replace(/&amp;/g, "&"))).body), ids.slice(3).reverse());
    });
  });

  describe("a report's page", () => {
    test("shows both accounts, the category and rules, the comment and the reported posts", async () => {
      const [reporter, target] = await Promise.all([user("showreporter"), user("showtarget")]);
      // A follower may report a followers-only post.
      await follow(server, reporter, target);
      const plain = await postStatus(server, target, { status: "Visit #spamshop now", visibility: "unlisted" });
      const warned = await postStatus(server, target, {
        status: "the hidden part",
        spoiler_text: "Spoilers ahead",
        visibility: "private",
      });
      const id = await fileReport(reporter, target.account, {
        status_ids: [plain.id, warned.id],
        rule_ids: ["2"],
        comment: "Line one\nLine two",
      });
      const page = await browser.get(`${QUEUE}/${id}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(`<h1>Report #${id}</h1>`));
      assert.match(
        page.body,
        new RegExp(`<th scope="row">Reported account</th><td><a href="/admin/accounts/${target.account.id}">`),
      );
      assert.match(
        page.body,
        new RegExp(`<th scope="row">Reported by</th><td><a href="/admin/accounts/${reporter.account.id}">`),
      );
      assert.match(page.body, /<th scope="row">Category<\/th><td>Breaks server rules<\/td>/);
      assert.match(page.body, /<li value="2">No spam<\/li>/);
      assert.match(page.body, /<blockquote><p>Line one<br>Line two<\/p><\/blockquote>/);
      assert.match(page.body, /<h2>Reported posts \(2\)<\/h2>/);
      // Content is the post's sanitized HTML, shown as such: the hashtag is a link.
      assert.match(page.body, /<a href="[^"]*\/tags\/spamshop"[^>]*>#<span>spamshop<\/span><\/a>/);
      assert.match(page.body, /Quiet public/);
      assert.match(page.body, /Followers only/);
      assert.match(page.body, /<strong>Content warning:<\/strong> Spoilers ahead/);
      assert.match(page.body, /the hidden part/);
      assert.match(page.body, /<th scope="row">State<\/th><td>Unresolved<\/td>/);
      assert.doesNotMatch(page.body, /Forwarded to/);
    });

    test("links to the account action form with the report, for each action; Freeze only for local accounts", async () => {
      const { id, target, page } = await freshReport();
      const links = [...page.body.matchAll(/<a class="(button(?: danger)?)" href="([^"]+)"/g)].map((m) => [
        m[2].replace(/&amp;/g, "&"),
        m[1],
      ]);
      // Limiting and suspending are red.
      assert.deepEqual(
        links,
        ["none", "sensitive", "disable", "silence", "suspend"].map((type) => [
          `/admin/accounts/${target.account.id}/action?report_id=${id}&type=${type}`,
          type === "silence" || type === "suspend" ? "button danger" : "button",
        ]),
      );
      const rita = await createRemoteAccount(server.ctx, `ritaf${++users}`, "forward.example");
      const remoteId = await fileReport(await user("fwd"), rita, { forward: true });
      const remote = await browser.get(`${QUEUE}/${remoteId}`);
      assert.doesNotMatch(remote.body, /type=disable/);
      assert.match(remote.body, /type=suspend/);
      assert.match(remote.body, /<th scope="row">Forwarded to forward\.example<\/th><td>(Yes|No)<\/td>/);
    });

    test("assign to me and unassign: seen by the API and in the audit log", async () => {
      const { id, page } = await freshReport();
      const assigned = await browser.submit(page, `${QUEUE}/${id}/assign_to_self`);
      assert.equal(assigned.statusCode, 303);
      assert.equal(assigned.headers.location, `${QUEUE}/${id}?notice=assigned`);
      assert.equal((await apiReport(id)).assigned_account?.id, moderator.account.id);
      const after = await browser.follow(assigned);
      assert.match(after.body, /You took this report\./);
      assert.match(
        after.body,
        new RegExp(
          `<th scope="row">Assigned to</th><td><a href="/admin/accounts/${moderator.account.id}">@${moderator.username}</a>`,
        ),
      );
      const unassigned = await browser.submit(after, `${QUEUE}/${id}/unassign`);
      assert.equal(unassigned.headers.location, `${QUEUE}/${id}?notice=unassigned`);
      assert.equal((await apiReport(id)).assigned_account, null);
      assert.deepEqual(
        (await logOf(id)).map((e) => [e.account_id, e.action]),
        [
          [moderator.account.id, "assigned_to_self"],
          [moderator.account.id, "unassigned"],
        ],
      );
    });

    test("resolve with no action goes back to the queue; reopen puts it back in", async () => {
      const { id, page } = await freshReport();
      const resolved = await browser.submit(page, `${QUEUE}/${id}/resolve`);
      assert.equal(resolved.statusCode, 303);
      assert.equal(resolved.headers.location, `${QUEUE}?notice=resolved`);
      assert.match((await browser.follow(resolved)).body, /The report is resolved\./);
      const report = await apiReport(id);
      assert.equal(report.action_taken, true);
      assert.equal(report.action_taken_by_account?.id, moderator.account.id);
      const now = await browser.get(`${QUEUE}/${id}`);
      assert.match(
        now.body,
        new RegExp(`<th scope="row">State</th><td>Resolved by <a href="/admin/accounts/${moderator.account.id}">`),
      );
      assert.doesNotMatch(now.body, /\/action\?report_id=/);
      const reopened = await browser.submit(now, `${QUEUE}/${id}/reopen`);
      assert.equal(reopened.headers.location, `${QUEUE}/${id}?notice=reopened`);
      assert.equal((await apiReport(id)).action_taken, false);
      assert.deepEqual(
        (await logOf(id)).map((e) => e.action),
        ["resolve", "reopen"],
      );
      // The page's history lists both.
      const history = (await browser.get(`${QUEUE}/${id}`)).body;
      assert.match(
        history,
        new RegExp(`@${moderator.username}</a> resolved report <a href="/admin/reports/${id}">#${id}</a>`),
      );
      assert.match(history, new RegExp(`@${moderator.username}</a> reopened report`));
    });

    test("the category and rules: changed and logged; rules cleared for other categories", async () => {
      const { id, page } = await freshReport();
      const form = findForm(page.body, `${QUEUE}/${id}/category`);
      assert.deepEqual(form.names.sort(), ["authenticity_token", "rules[1]", "rules[2]", "rules[3]"]);
      assert.match(form.html, /<label for="category">Category<\/label><select id="category" name="category">/);
      const changed = await browser.submit(page, `${QUEUE}/${id}/category`, {
        category: "violation",
        "rules[1]": "1",
        "rules[3]": "1",
      });
      assert.equal(changed.statusCode, 303);
      assert.equal(changed.headers.location, `${QUEUE}/${id}?notice=updated`);
      let report = await apiReport(id);
      assert.equal(report.category, "violation");
      assert.deepEqual(
        report.rules.map((r) => r.id),
        ["1", "3"],
      );
      const again = await browser.follow(changed);
      assert.match(again.body, /<input type="checkbox" id="rule_3" name="rules\[3\]" value="1" checked>/);
      // Another category: its rules go, even if boxes were left ticked.
      await browser.submit(again, `${QUEUE}/${id}/category`, { category: "spam" });
      report = await apiReport(id);
      assert.equal(report.category, "spam");
      assert.deepEqual(report.rules, []);
      assert.deepEqual(
        (await logOf(id)).map((e) => e.action),
        ["update", "update"],
      );
    });

    test("an unknown category or rule: a 422 page that says why, nothing changed", async () => {
      const { id, page } = await freshReport();
      const badCategory = await browser.submit(page, `${QUEUE}/${id}/category`, { category: "nonsense" });
      assert.equal(badCategory.statusCode, 422);
      assert.equal(alertOf(badCategory.body), "Choose one of the categories.");
      assert.ok(findForm(badCategory.body, `${QUEUE}/${id}/category`));
      const badRule = await browser.submit(page, `${QUEUE}/${id}/category`, { category: "violation", "rules[9]": "1" });
      assert.equal(badRule.statusCode, 422);
      assert.equal(alertOf(badRule.body), "Choose rules from this server's rules.");
      assert.equal((await apiReport(id)).category, "other");
      assert.deepEqual(await logOf(id), []);
    });

    test("forms without the CSRF token: 422 pages, nothing changed", async () => {
      const { id, page } = await freshReport();
      for (const action of ["assign_to_self", "resolve", "category"]) {
        const res = await browser.submit(page, `${QUEUE}/${id}/${action}`, { category: "spam" }, [
          "authenticity_token",
        ]);
        assert.equal(res.statusCode, 422, action);
        assert.equal(alertOf(res.body), EXPIRED);
      }
      const note = await browser.submit(page, `${QUEUE}/${id}/notes`, { content: "sneaky" }, ["authenticity_token"]);
      assert.equal(note.statusCode, 422);
      const report = await apiReport(id);
      assert.equal(report.action_taken, false);
      assert.equal(report.assigned_account, null);
      assert.equal(report.category, "other");
      assert.deepEqual(await logOf(id), []);
      assert.deepEqual(await notesOf(id), []);
    });

    test("unknown reports and notes: 404 pages", async () => {
      const { id, page } = await freshReport();
      for (const path of [`${QUEUE}/999999999`, `${QUEUE}/abc`]) {
        const res = await browser.get(path);
        assert.equal(res.statusCode, 404, path);
        assert.equal(alertOf(res.body), NOT_FOUND);
      }
      const csrf = findForm(page.body, `${QUEUE}/${id}/resolve`).fields.authenticity_token;
      for (const path of [
        `${QUEUE}/999999999/resolve`,
        `${QUEUE}/999999999/notes`,
        `${QUEUE}/${id}/notes/999999999/delete`,
        `${QUEUE}/${id}/notes/abc/delete`,
      ]) {
        const res = await browser.post(path, { authenticity_token: csrf, content: "a note" });
        assert.equal(res.statusCode, 404, path);
      }
    });

    test("user-supplied text is escaped: display names, the comment, posts' warnings", async () => {
      const [reporter, target] = await Promise.all([user("xssreporter"), user("xsstarget")]);
      const name = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
        token: target.token,
        json: { display_name: "<script>alert(1)</script>" },
      });
      assert.equal(name.statusCode, 200, name.body);
      const post = await postStatus(server, target, { status: "hi", spoiler_text: "<img src=x onerror=alert(2)>" });
      const id = await fileReport(reporter, target.account, {
        status_ids: [post.id],
        comment: "<script>alert(3)</script>",
      });
      for (const path of [QUEUE, `${QUEUE}/${id}`]) {
        const body = (await browser.get(path)).body;
        assert.doesNotMatch(body, /<script/i, path);
        assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, path);
        assert.match(body, /&lt;script&gt;alert\(3\)&lt;\/script&gt;/, path);
      }
      const page = (await browser.get(`${QUEUE}/${id}`)).body;
      assert.doesNotMatch(page, /<img src=x/);
      assert.match(page, /&lt;img src=x onerror=alert\(2\)&gt;/);
    });
  });

  describe("notes", () => {
    test("a note is shown with its author and time, newest last; writing one is not logged", async () => {
      const { id, page } = await freshReport();
      const form = findForm(page.body, `${QUEUE}/${id}/notes`);
      assert.match(
        form.html,
        /<label for="content">New note<\/label><textarea id="content" name="content" rows="4" maxlength="2000" required/,
      );
      assert.match(form.html, /name="follow_up" value="resolve"[^>]*>Add note and resolve</);
      const first = await browser.submit(page, `${QUEUE}/${id}/notes`, {
        content: "Checked their other posts:\nall spam.",
      });
      assert.equal(first.statusCode, 303);
      assert.equal(first.headers.location, `${QUEUE}/${id}?notice=note_added`);
      const again = await browser.follow(first);
      assert.match(again.body, /Your note is added\./);
      await browser.submit(again, `${QUEUE}/${id}/notes`, { content: "Second thought <b>bold</b>" });
      const shown = (await browser.get(`${QUEUE}/${id}`)).body;
      const notes = [
        ...shown.matchAll(
          /<li class="note" id="note-\d+"><p><strong>@([^<]+)<\/strong> noted · <time[^>]*>[^<]+<\/time><\/p><p>((?:[^<]|<br>)*)<\/p>/g,
        ),
      ].map((m) => [m[1], m[2]]);
      assert.deepEqual(notes, [
        [moderator.username, "Checked their other posts:<br>all spam."],
        [moderator.username, "Second thought &lt;b&gt;bold&lt;/b&gt;"],
      ]);
      assert.deepEqual(await logOf(id), []);
      assert.equal((await apiReport(id)).action_taken, false);
    });

    test("add note and resolve: back to the queue, resolved and logged; add note and reopen", async () => {
      const { id, page } = await freshReport();
      const res = await browser.submit(page, `${QUEUE}/${id}/notes`, {
        content: "Not a violation.",
        follow_up: "resolve",
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${QUEUE}?notice=resolved`);
      assert.equal((await apiReport(id)).action_taken, true);
      const resolvedPage = await browser.get(`${QUEUE}/${id}`);
      assert.match(
        findForm(resolvedPage.body, `${QUEUE}/${id}/notes`).html,
        /name="follow_up" value="reopen"[^>]*>Add note and reopen</,
      );
      const reopened = await browser.submit(resolvedPage, `${QUEUE}/${id}/notes`, {
        content: "Actually, look again.",
        follow_up: "reopen",
      });
      assert.equal(reopened.headers.location, `${QUEUE}/${id}?notice=note_added_reopened`);
      assert.equal((await apiReport(id)).action_taken, false);
      assert.equal((await notesOf(id)).length, 2);
      assert.deepEqual(
        (await logOf(id)).map((e) => e.action),
        ["resolve", "reopen"],
      );
    });

    test("a blank or too long note: a 422 page that keeps what was typed, nothing saved", async () => {
      const { id, page } = await freshReport();
      const blank = await browser.submit(page, `${QUEUE}/${id}/notes`, { content: "   \n ", follow_up: "resolve" });
      assert.equal(blank.statusCode, 422);
      assert.equal(alertOf(blank.body), NOTE_BLANK);
      const long = "x".repeat(2001);
      const tooLong = await browser.submit(page, `${QUEUE}/${id}/notes`, { content: long });
      assert.equal(tooLong.statusCode, 422);
      assert.equal(alertOf(tooLong.body), NOTE_TOO_LONG);
      assert.equal(findForm(tooLong.body, `${QUEUE}/${id}/notes`).fields.content, long);
      // Exactly the limit, in characters (not bytes), is fine.
      const ok = await browser.submit(page, `${QUEUE}/${id}/notes`, { content: "é".repeat(2000) });
      assert.equal(ok.statusCode, 303);
      assert.equal((await notesOf(id)).length, 1);
      assert.equal((await apiReport(id)).action_taken, false);
    });

    test("deleting: the author may, an outranking moderator may, an equal one may not", async () => {
      const { id } = await freshReport();
      const other = await staffBrowser(server, "Moderator", "othermod");
      const admin = await staffBrowser(server, "Admin", "notesadmin");
      await browser.submit(await browser.get(`${QUEUE}/${id}`), `${QUEUE}/${id}/notes`, { content: "mine" });
      const [note] = await notesOf(id);
      const deletePath = `${QUEUE}/${id}/notes/${note.id}/delete`;
      // Another moderator of the same rank sees no button and is refused.
      const seenByOther = await other.browser.get(`${QUEUE}/${id}`);
      assert.throws(() => findForm(seenByOther.body, deletePath));
      const csrf = findForm(seenByOther.body, `${QUEUE}/${id}/resolve`).fields.authenticity_token;
      const refused = await other.browser.post(deletePath, { authenticity_token: csrf });
      assert.equal(refused.statusCode, 403);
      assert.equal(alertOf(refused.body), NOT_ALLOWED);
      assert.equal((await notesOf(id)).length, 1);
      // The author may.
      const own = await browser.get(`${QUEUE}/${id}`);
      // Every note has such a button: its name says whose note of when it deletes.
      assert.match(
        findForm(own.body, deletePath).html,
        new RegExp(
          `<button type="submit" class="danger" aria-label="Delete the note by @${moderator.username} of \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d">Delete note</button>`,
        ),
      );
      const removed = await browser.submit(own, deletePath);
      assert.equal(removed.statusCode, 303);
      assert.equal(removed.headers.location, `${QUEUE}/${id}?notice=note_deleted`);
      assert.deepEqual(await notesOf(id), []);
      // An Admin outranks a Moderator: may delete the moderator's note; the moderator may not delete the Admin's.
      await other.browser.submit(await other.browser.get(`${QUEUE}/${id}`), `${QUEUE}/${id}/notes`, {
        content: "other's",
      });
      await admin.browser.submit(await admin.browser.get(`${QUEUE}/${id}`), `${QUEUE}/${id}/notes`, {
        content: "admin's",
      });
      const [otherNote, adminNote] = await notesOf(id);
      const adminPage = await admin.browser.get(`${QUEUE}/${id}`);
      assert.equal(
        (await admin.browser.submit(adminPage, `${QUEUE}/${id}/notes/${otherNote.id}/delete`)).statusCode,
        303,
      );
      const byModerator = await browser.post(`${QUEUE}/${id}/notes/${adminNote.id}/delete`, {
        authenticity_token: findForm(own.body, `${QUEUE}/${id}/resolve`).fields.authenticity_token,
      });
      assert.equal(byModerator.statusCode, 403);
      assert.deepEqual(
        (await notesOf(id)).map((n) => n.content),
        ["admin's"],
      );
      // Notes are not logged, as in Mastodon.
      assert.deepEqual(await logOf(id), []);
    });

    test("a note's delete path must name its own report", async () => {
      const a = await freshReport();
      const b = await freshReport();
      await browser.submit(a.page, `${QUEUE}/${a.id}/notes`, { content: "on a" });
      const [note] = await notesOf(a.id);
      const csrf = findForm(b.page.body, `${QUEUE}/${b.id}/resolve`).fields.authenticity_token;
      const res = await browser.post(`${QUEUE}/${b.id}/notes/${note.id}/delete`, { authenticity_token: csrf });
      assert.equal(res.statusCode, 404);
      assert.equal((await notesOf(a.id)).length, 1);
    });
  });
});
