/**
 * A user's strikes in the browser (/disputes/strikes): only one's own strikes (another user's is a
 * 404 page), newest first, each with the decision in words, the moderator's text (escaped) and
 * the posts concerned; an appeal once, within 20 days, of at most 2,000 characters, with a 422
 * page that keeps the text otherwise; the staff who handle appeals are mailed. A suspended or
 * frozen user cannot sign in but gets a disputes pass that opens these pages and nothing else.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, Browser, cookieSetBy, decodeEntities, findForm, findForms } from "../browser.ts";
import { createTestServer, createUser, postStatus, request, tokenFor, type TestServer, type TestUser } from "../kit.ts";
import { EXPIRED } from "./admin/kit.ts";

const TAKEN = "You have already appealed this decision.";
const TOO_LATE = "It is too late to appeal this decision: appeals are possible for 20 days.";
const BLANK = "Please write why the decision should be reconsidered.";
const TOO_LONG = "Your appeal is too long (the most is 2000 characters).";
const NO_SUCH = "There is no such strike on your account.";

describe("/disputes: a user's strikes and appeals", () => {
  let server: TestServer;
  let adminToken: string;
  let moderator: TestUser;
  let names = 0;

  before(async () => {
    server = await createTestServer();
    const admin = await createUser(server.ctx, "boss", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
    moderator = await createUser(server.ctx, "appealmod", { role: "Moderator" });
  });
  after(() => server.close());

  /** A user and a browser signed in as them. */
  const signedIn = async (prefix = "user") => {
    const user = await createUser(server.ctx, `${prefix}${++names}`);
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
    return { user, browser };
  };
  /** Takes a moderation action on `target` through the admin API; returns the new strike's ID. */
  const strike = async (target: TestUser, json: object): Promise<string> => {
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, {
      token: adminToken,
      json,
    });
    assert.equal(res.statusCode, 200, res.body);
    const row = await server.ctx.db.kysely
      .selectFrom("account_warnings")
      .select("id")
      .where("target_account_id", "=", target.account.id)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    return row.id;
  };
  const appealsOf = (warningId: string) =>
    server.ctx.db.kysely.selectFrom("appeals").selectAll().where("account_warning_id", "=", warningId).execute();
  const mailsTo = async (email: string) =>
    (await server.ctx.db.kysely.selectFrom("jobs").select("payload").where("name", "=", "mail.deliver").execute())
      .map((j) => JSON.parse(j.payload) as { to: string; subject: string; text: string })
      .filter((m) => m.to === email);

  test("not signed in: the browser is sent to sign in and comes back", async () => {
    const res = await new Browser(server.app).get("/disputes/strikes/1");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/auth/sign_in?return_to=%2Fdisputes%2Fstrikes%2F1");
  });

  test("the settings link to the strikes; none yet says so", async () => {
    const { browser } = await signedIn();
    assert.match((await browser.get("/settings")).body, /<a href="\/disputes\/strikes">Your strikes<\/a>/);
    const res = await browser.get("/disputes/strikes");
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /there are no strikes against it/);
  });

  test("the list shows one's own strikes, newest first, and nobody else's", async () => {
    const { user, browser } = await signedIn();
    const other = await createUser(server.ctx, `other${++names}`);
    const first = await strike(user, { type: "none", text: "First warning." });
    const second = await strike(user, { type: "silence" });
    const theirs = await strike(other, { type: "none", text: "Not yours." });
    const res = await browser.get("/disputes/strikes");
    assert.equal(res.statusCode, 200);
    const links = [...res.body.matchAll(/href="\/disputes\/strikes\/(\d+)"/g)].map((m) => m[1]);
    assert.deepEqual(links, [second, first]);
    assert.match(res.body, /Account limited/);
    assert.match(res.body, /Warning/);
    assert.match(res.body, /You can appeal until \d{4}-\d\d-\d\d/);
    for (const path of [`/disputes/strikes/${theirs}`, "/disputes/strikes/99999999", "/disputes/strikes/nonsense"]) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 404, path);
      assert.match(String(page.headers["content-type"]), /^text\/html/);
      assert.equal(alertOf(page.body), NO_SUCH);
      assert.doesNotMatch(page.body, /Not yours/);
    }
    // Nor can one appeal another's strike.
    const token = findForm((await browser.get(`/disputes/strikes/${first}`)).body, /\/appeal$/).fields
      .authenticity_token;
    const post = await browser.post(`/disputes/strikes/${theirs}/appeal`, { authenticity_token: token, text: "Mine?" });
    assert.equal(post.statusCode, 404);
    assert.deepEqual(await appealsOf(theirs), []);
  });

  test("a strike's page: the decision in words, the moderator's text escaped, the reported posts", async () => {
    const { user, browser } = await signedIn();
    const post = await postStatus(server, user, { status: "the reported words" });
    const reporter = await createUser(server.ctx, `reporter${++names}`);
    const report = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: user.account.id, status_ids: [post.id], category: "spam" },
    });
    const id = await strike(user, {
      type: "sensitive",
      report_id: (report.json() as { id: string }).id,
      text: "<script>alert(1)</script>\nSecond line",
    });
    const res = await browser.get(`/disputes/strikes/${id}`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<h1>Media marked as sensitive on \d{4}-\d\d-\d\d<\/h1>/);
    assert.match(res.body, /Media you post are shown behind a warning/);
    assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;<br>Second line/);
    assert.doesNotMatch(res.body, /<script>alert/);
    assert.match(res.body, /the reported words/);
    assert.match(res.body, /Spam/);
    const form = findForm(res.body, `/disputes/strikes/${id}/appeal`);
    assert.ok(form.names.includes("text"));
    assert.match(form.html, /<label for="appeal_text">/);
    assert.match(form.html, /maxlength="2000"/);
  });

  test("an appeal is sent once; the staff who handle appeals are mailed", async () => {
    const { user, browser } = await signedIn();
    const id = await strike(user, { type: "none", text: "Careful." });
    const page = await browser.get(`/disputes/strikes/${id}`);
    const res = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "I was <b>quoting</b> someone." });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `/disputes/strikes/${id}?notice=appealed`);
    const after = await browser.follow(res);
    assert.match(after.body, /Your appeal has been sent to the moderators\./);
    assert.match(after.body, /I was &lt;b&gt;quoting&lt;\/b&gt; someone\./);
    assert.match(after.body, /have not decided on it yet/);
    assert.equal(findForms(after.body).filter((f) => f.action.endsWith("/appeal")).length, 0);
    const [appeal, ...more] = await appealsOf(id);
    assert.deepEqual(more, []);
    assert.equal(appeal.text, "I was <b>quoting</b> someone.");
    assert.equal(appeal.account_id, user.account.id);
    const staffMail = await mailsTo(moderator.user.email);
    assert.ok(staffMail.some((m) => m.text.includes("I was <b>quoting</b> someone.")));
    // Again (a second tab): refused, nothing added.
    const again = await browser.post(`/disputes/strikes/${id}/appeal`, {
      authenticity_token: findForm(page.body, /\/appeal$/).fields.authenticity_token,
      text: "And again.",
    });
    assert.equal(again.statusCode, 422);
    assert.equal(alertOf(again.body), TAKEN);
    assert.equal((await appealsOf(id)).length, 1);
    assert.match((await browser.get("/disputes/strikes")).body, /Appeal pending/);
  });

  test("after 20 days a strike can no longer be appealed", async () => {
    const { user, browser } = await signedIn();
    const id = await strike(user, { type: "none", text: "Old." });
    const page = await browser.get(`/disputes/strikes/${id}`);
    const old = new Date(Date.now() - 21 * 24 * 60 * 60 * 1000).toISOString();
    await server.ctx.db.kysely.updateTable("account_warnings").set({ created_at: old }).where("id", "=", id).execute();
    const late = await browser.get(`/disputes/strikes/${id}`);
    assert.match(late.body, /can no longer be appealed/);
    assert.equal(findForms(late.body).filter((f) => f.action.endsWith("/appeal")).length, 0);
    const res = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "Please." });
    assert.equal(res.statusCode, 422);
    assert.equal(alertOf(res.body), TOO_LATE);
    assert.deepEqual(await appealsOf(id), []);
  });

  test("a blank or too long appeal, or one without the CSRF token, is a 422 page that keeps the text", async () => {
    const { user, browser } = await signedIn();
    const id = await strike(user, { type: "none", text: "Hm." });
    const page = await browser.get(`/disputes/strikes/${id}`);
    const blank = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "   " });
    assert.equal(blank.statusCode, 422);
    assert.equal(alertOf(blank.body), BLANK);
    const long = "é".repeat(2001);
    const tooLong = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: long });
    assert.equal(tooLong.statusCode, 422);
    assert.equal(alertOf(tooLong.body), TOO_LONG);
    assert.equal(decodeEntities(findForm(tooLong.body, /\/appeal$/).fields.text), long);
    const csrfless = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "Fine." }, [
      "authenticity_token",
    ]);
    assert.equal(csrfless.statusCode, 422);
    assert.equal(alertOf(csrfless.body), EXPIRED);
    assert.deepEqual(await appealsOf(id), []);
    // Exactly 2,000 characters is fine.
    const ok = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "é".repeat(2000) });
    assert.equal(ok.statusCode, 303);
  });

  for (const [type, what] of [
    ["suspend", "Account suspended"],
    ["disable", "Account frozen"],
  ] as const) {
    test(`a ${type === "suspend" ? "suspended" : "frozen"} user cannot sign in, but can read the strike and appeal it`, async () => {
      const user = await createUser(server.ctx, `${type}ed${++names}`);
      const id = await strike(user, { type, text: "Enough." });
      const browser = new Browser(server.app);
      const signIn = await browser.signIn(user.user.email, undefined, "/settings");
      assert.equal(signIn.statusCode, 403);
      assert.equal(alertOf(signIn.body), "Your account is disabled.");
      assert.equal(cookieSetBy(signIn, "_rookery_session"), undefined);
      const pass = cookieSetBy(signIn, "_rookery_disputes");
      assert.ok(pass, "a disputes pass");
      assert.equal(pass.attributes.path, "/disputes");
      assert.match(signIn.body, /<a href="\/disputes\/strikes">Your strikes<\/a>/);
      // The pass opens the strikes and nothing else.
      const list = await browser.get("/disputes/strikes");
      assert.equal(list.statusCode, 200);
      assert.match(list.body, new RegExp(what));
      assert.equal((await browser.get("/settings")).statusCode, 303);
      const page = await browser.get(`/disputes/strikes/${id}`);
      const res = await browser.submit(page, `/disputes/strikes/${id}/appeal`, { text: "It was a mistake." });
      assert.equal(res.statusCode, 303);
      assert.equal((await appealsOf(id)).length, 1);
      // Signing out ends the pass.
      const out = await browser.submit(await browser.get("/disputes/strikes"), "/disputes/sign_out");
      assert.equal(out.statusCode, 303);
      assert.equal((await browser.get("/disputes/strikes")).statusCode, 303);
    });
  }

  test("a wrong password gets no pass", async () => {
    const user = await createUser(server.ctx, `suspendedwrong${++names}`);
    await strike(user, { type: "suspend" });
    const res = await new Browser(server.app).signIn(user.user.email, "not the password");
    assert.equal(res.statusCode, 401);
    assert.equal(cookieSetBy(res, "_rookery_disputes"), undefined);
  });
});
