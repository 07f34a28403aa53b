/**
 * /admin/warning_presets: Manage Settings (an Admin, not a Moderator) adds, edits and removes the
 * texts moderators reuse in warnings. What is written here is what the account action form's
 * preset menu offers and what the admin API's `warning_preset_id` puts in a strike; each change is
 * in the audit log. Blank texts and forms without their CSRF token change nothing (422); unknown
 * presets are 404; titles and texts are shown escaped.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import { createTestServer, createUser, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const LIST = "/admin/warning_presets";
const BLANK_ADDED = "The preset was not added: Text can't be blank.";
const BLANK_SAVED = "The preset was not saved: Text can't be blank.";
const NOT_FOUND = "Record not found";
const NO_PRESETS_LINK = /No warning presets yet: <a href="\/admin\/warning_presets">write presets<\/a>/;

describe("admin: warning presets", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  let moderatorBrowser: Browser;
  let apiToken: string;
  let names = 0;
  const db = () => server.ctx.db.kysely;

  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    ({ browser: moderatorBrowser } = await staffBrowser(server, "Moderator"));
    apiToken = await tokenFor(server.ctx, admin, "admin:read:accounts admin:write:accounts");
  });
  after(() => server.close());

  const presets = () => db().selectFrom("account_warning_presets").selectAll().orderBy("id").execute();
  const presetBy = async (text: string) => (await presets()).find((p) => p.text === text);
  const logOf = (targetId: string) =>
    db()
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  /** Adds a preset through the list page's form; returns its row. */
  const add = async (title: string, text: string) => {
    const res = await browser.submit(await browser.get(LIST), LIST, { title, text });
    assert.equal(res.statusCode, 303, res.body);
    const row = await presetBy(text.trim());
    assert.ok(row, text);
    return row;
  };
  const target = () => createUser(server.ctx, `warned${++names}`);
  const actionForm = (accountId: string, as = browser) => as.get(`/admin/accounts/${accountId}/action?type=none`);
  const strikeTextsOf = async (accountId: string) =>
    (
      await db()
        .selectFrom("account_warnings")
        .select("text")
        .where("target_account_id", "=", accountId)
        .orderBy("id")
        .execute()
    ).map((w) => w.text);

  describeStaffOnly({ server: () => server, pages: [LIST], allowed: "Admin", refused: "Moderator" });

  test("with no presets, the action form links here for those who may open it, and only for them", async () => {
    assert.deepEqual(await presets(), []);
    const account = await target();
    const forAdmin = await actionForm(account.account.id);
    assert.equal(forAdmin.statusCode, 200);
    assert.match(forAdmin.body, NO_PRESETS_LINK);
    assert.doesNotMatch(forAdmin.body, /<select id="warning_preset_id"/);
    const forModerator = await actionForm(account.account.id, moderatorBrowser);
    assert.equal(forModerator.statusCode, 200);
    assert.doesNotMatch(forModerator.body, NO_PRESETS_LINK);
    assert.doesNotMatch(forModerator.body, /\/admin\/warning_presets/);
    const list = await browser.get(LIST);
    assert.match(list.body, /There are no warning presets yet\./);
    assert.match(list.body, /<a href="\/admin\/warning_presets" aria-current="page">Warning presets<\/a>/);
  });

  test("adding a preset: listed, offered by the action form, usable by the API, in the audit log", async () => {
    const page = await browser.get(LIST);
    const form = findForm(page.body, LIST);
    assert.deepEqual([form.fields.title, form.fields.text], ["", ""]);
    const res = await browser.submit(page, LIST, { title: "  Spam  ", text: "  Please stop posting ads.  " });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=created`);
    const list = await browser.follow(res);
    assert.match(list.body, /The preset was added\./);
    const preset = await presetBy("Please stop posting ads.");
    assert.ok(preset);
    assert.equal(preset.title, "Spam");
    assert.match(list.body, new RegExp(`<a href="${LIST}/${preset.id}/edit">Spam</a>`));
    assert.match(list.body, /aria-label="Remove the preset “Spam”"/);
    assert.deepEqual(await logOf(preset.id), [
      { account_id: admin.account.id, action: "create", target_type: "AccountWarningPreset", human_identifier: "Spam" },
    ]);
    const log = await browser.get("/admin/action_logs");
    assert.match(log.body, /added the warning preset <strong>“Spam”<\/strong>/);

    const account = await target();
    const actionPage = await actionForm(account.account.id);
    assert.match(
      actionPage.body,
      new RegExp(`<option value="${preset.id}">Spam – Please stop posting ads\\.</option>`),
    );
    assert.doesNotMatch(actionPage.body, NO_PRESETS_LINK);

    // Chosen on the form, the strike starts with the preset's text.
    const warned = await browser.submit(actionPage, `/admin/accounts/${account.account.id}/action`, {
      warning_preset_id: preset.id,
      text: "Last time.",
    });
    assert.equal(warned.statusCode, 303, warned.body);
    // Given to the admin API, the same.
    const other = await target();
    const api = await request(server.app, "POST", `/api/v1/admin/accounts/${other.account.id}/action`, {
      token: apiToken,
      json: { type: "none", warning_preset_id: preset.id },
    });
    assert.equal(api.statusCode, 200, api.body);
    assert.deepEqual(await strikeTextsOf(account.account.id), ["Please stop posting ads.\n\nLast time."]);
    assert.deepEqual(await strikeTextsOf(other.account.id), ["Please stop posting ads."]);
  });

  test("a preset without a title goes by the start of its text", async () => {
    const text = "You posted graphic content without a content warning, which this server asks for.";
    const preset = await add("", text);
    assert.equal(preset.title, "");
    const label = "You posted graphic content wi…";
    assert.deepEqual(
      (await logOf(preset.id)).map((l) => l.human_identifier),
      [label],
    );
    const list = await browser.get(LIST);
    assert.match(list.body, new RegExp(`aria-label="Edit the preset “${label}”"`));
    assert.match(list.body, new RegExp(`aria-label="Remove the preset “${label}”"`));
    const actionPage = await actionForm((await target()).account.id);
    assert.match(actionPage.body, new RegExp(`<option value="${preset.id}">You posted graphic content`));
  });

  test("presets are listed by title, then text, as the action form offers them", async () => {
    const ids = [
      (await add("order b", "order two")).id,
      (await add("order a", "order zed")).id,
      (await add("order b", "order one")).id,
    ];
    const [b2, a, b1] = ids;
    const positions = (body: string, marker: (id: string) => string) =>
      [a, b1, b2].map((id) => body.indexOf(marker(id)));
    const list = (await browser.get(LIST)).body;
    const inList = positions(list, (id) => `${LIST}/${id}/remove`);
    assert.ok(inList.every((p) => p > 0));
    assert.deepEqual(
      [...inList].sort((x, y) => x - y),
      inList,
    );
    const form = (await actionForm((await target()).account.id)).body;
    const inMenu = positions(form, (id) => `<option value="${id}"`);
    assert.ok(inMenu.every((p) => p > 0));
    assert.deepEqual(
      [...inMenu].sort((x, y) => x - y),
      inMenu,
    );
  });

  test("editing a preset: the form shows it, saving changes what the action form and the API use", async () => {
    const preset = await add("Rude", "Be kind.");
    const edit = await browser.get(`${LIST}/${preset.id}/edit`);
    assert.equal(edit.statusCode, 200);
    const form = findForm(edit.body, `${LIST}/${preset.id}`);
    assert.deepEqual([form.fields.title, form.fields.text], ["Rude", "Be kind."]);
    const res = await browser.submit(edit, `${LIST}/${preset.id}`, {
      title: "Insults",
      text: "Please be kind to others.",
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=updated`);
    assert.match((await browser.follow(res)).body, /The preset was saved\./);
    const saved = (await presets()).find((p) => p.id === preset.id);
    assert.equal(saved?.title, "Insults");
    assert.equal(saved?.text, "Please be kind to others.");
    assert.deepEqual(
      (await logOf(preset.id)).map((l) => [l.action, l.human_identifier]),
      [
        ["create", "Rude"],
        ["update", "Insults"],
      ],
    );
    const account = await target();
    assert.match(
      (await actionForm(account.account.id)).body,
      new RegExp(`<option value="${preset.id}">Insults – Please be kind to others\\.</option>`),
    );
    const api = await request(server.app, "POST", `/api/v1/admin/accounts/${account.account.id}/action`, {
      token: apiToken,
      json: { type: "none", warning_preset_id: preset.id, text: "Thanks." },
    });
    assert.equal(api.statusCode, 200, api.body);
    assert.deepEqual(await strikeTextsOf(account.account.id), ["Please be kind to others.\n\nThanks."]);
  });

  test("removing a preset: gone from the list, the action form and the API; strikes keep their text", async () => {
    const preset = await add("Temporary", "A warning for a while.");
    const account = await target();
    const given = await request(server.app, "POST", `/api/v1/admin/accounts/${account.account.id}/action`, {
      token: apiToken,
      json: { type: "none", warning_preset_id: preset.id },
    });
    assert.equal(given.statusCode, 200, given.body);

    const res = await browser.submit(await browser.get(LIST), `${LIST}/${preset.id}/remove`);
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=removed`);
    const list = await browser.follow(res);
    assert.match(list.body, /The preset was removed\./);
    assert.doesNotMatch(list.body, /A warning for a while\./);
    assert.equal(await presetBy("A warning for a while."), undefined);
    assert.deepEqual(
      (await logOf(preset.id)).map((l) => [l.action, l.target_type, l.human_identifier]),
      [
        ["create", "AccountWarningPreset", "Temporary"],
        ["destroy", "AccountWarningPreset", "Temporary"],
      ],
    );
    assert.match((await browser.get("/admin/action_logs")).body, /removed the warning preset <strong>“Temporary”/);
    assert.doesNotMatch((await actionForm(account.account.id)).body, new RegExp(`<option value="${preset.id}"`));
    const api = await request(server.app, "POST", `/api/v1/admin/accounts/${account.account.id}/action`, {
      token: apiToken,
      json: { type: "none", warning_preset_id: preset.id },
    });
    assert.equal(api.statusCode, 404);
    assert.deepEqual(await strikeTextsOf(account.account.id), ["A warning for a while."]);
  });

  test("the edit page's remove button works too", async () => {
    const preset = await add("From the edit page", "Removed from its own page.");
    const edit = await browser.get(`${LIST}/${preset.id}/edit`);
    assert.match(edit.body, /class="danger">Remove the preset “From the edit page”<\/button>/);
    const res = await browser.submit(edit, `${LIST}/${preset.id}/remove`);
    assert.equal(res.statusCode, 303);
    assert.equal(await presetBy("Removed from its own page."), undefined);
  });

  test("a Moderator can neither open a preset nor change one", async () => {
    const preset = await add("Admins only", "Only admins change this.");
    const csrf = findForm((await actionForm((await target()).account.id, moderatorBrowser)).body, /\/action$/).fields
      .authenticity_token;
    assert.ok(csrf);
    const edit = await moderatorBrowser.get(`${LIST}/${preset.id}/edit`);
    assert.equal(edit.statusCode, 403);
    for (const [path, form] of [
      [LIST, { text: "Sneaked in." }],
      [`${LIST}/${preset.id}`, { text: "Sneaked in." }],
      [`${LIST}/${preset.id}/remove`, {}],
    ] as const) {
      const res = await moderatorBrowser.post(path, { authenticity_token: csrf, ...form });
      assert.equal(res.statusCode, 403, path);
    }
    assert.equal(await presetBy("Sneaked in."), undefined);
    assert.equal((await presets()).find((p) => p.id === preset.id)?.text, "Only admins change this.");
  });

  describe("refused input: a 422 page with the form, nothing changed", () => {
    test("a new preset without text", async () => {
      const before = await presets();
      const logged = await db().selectFrom("admin_action_logs").select("id").execute();
      for (const text of ["", "   \n  "]) {
        const res = await browser.submit(await browser.get(LIST), LIST, { title: "<kept>", text });
        assert.equal(res.statusCode, 422, JSON.stringify(text));
        assert.equal(alertOf(res.body), BLANK_ADDED);
        assert.equal(findForm(res.body, LIST).fields.title, "<kept>");
      }
      const missing = await browser.submit(await browser.get(LIST), LIST, { title: "No text field" }, ["text"]);
      assert.equal(missing.statusCode, 422);
      assert.equal(alertOf(missing.body), BLANK_ADDED);
      assert.deepEqual(await presets(), before);
      assert.equal((await db().selectFrom("admin_action_logs").select("id").execute()).length, logged.length);
    });

    test("an edit that blanks the text", async () => {
      const preset = await add("Stays", "Stays as it is.");
      const edit = await browser.get(`${LIST}/${preset.id}/edit`);
      const res = await browser.submit(edit, `${LIST}/${preset.id}`, { title: "Changed", text: " " });
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), BLANK_SAVED);
      assert.equal(findForm(res.body, `${LIST}/${preset.id}`).fields.title, "Changed");
      const row = (await presets()).find((p) => p.id === preset.id);
      assert.deepEqual([row?.title, row?.text], ["Stays", "Stays as it is."]);
      assert.deepEqual(
        (await logOf(preset.id)).map((l) => l.action),
        ["create"],
      );
    });

    test("forms without their CSRF token", async () => {
      const created = await browser.submit(await browser.get(LIST), LIST, { text: "Never added." }, [
        "authenticity_token",
      ]);
      assert.equal(created.statusCode, 422);
      assert.equal(alertOf(created.body), EXPIRED);
      assert.equal(await presetBy("Never added."), undefined);

      const preset = await add("Guarded", "Guarded text.");
      const edit = await browser.get(`${LIST}/${preset.id}/edit`);
      const updated = await browser.submit(edit, `${LIST}/${preset.id}`, { text: "Changed text." }, [
        "authenticity_token",
      ]);
      assert.equal(updated.statusCode, 422);
      assert.equal(alertOf(updated.body), EXPIRED);
      const removed = await browser.submit(edit, `${LIST}/${preset.id}/remove`, {}, ["authenticity_token"]);
      assert.equal(removed.statusCode, 422);
      assert.equal(alertOf(removed.body), EXPIRED);
      const row = (await presets()).find((p) => p.id === preset.id);
      assert.equal(row?.text, "Guarded text.");
      assert.deepEqual(
        (await logOf(preset.id)).map((l) => l.action),
        ["create"],
      );
    });
  });

  test("unknown presets: 404 pages", async () => {
    const csrf = findForm((await browser.get(LIST)).body, LIST).fields.authenticity_token;
    for (const id of ["999999999999", "x", "99999999999999999999999"]) {
      const edit = await browser.get(`${LIST}/${id}/edit`);
      assert.equal(edit.statusCode, 404, id);
      assert.equal(alertOf(edit.body), NOT_FOUND);
      const update = await browser.post(`${LIST}/${id}`, { authenticity_token: csrf, text: "Anything." });
      assert.equal(update.statusCode, 404, id);
      const remove = await browser.post(`${LIST}/${id}/remove`, { authenticity_token: csrf });
      assert.equal(remove.statusCode, 404, id);
    }
    assert.equal(await presetBy("Anything."), undefined);
  });

  test("titles and texts are shown escaped", async () => {
    const title = '<script>alert(1)</script>"><img src=x>';
    const text = "<b>bold</b> & <i>sly</i>";
    const preset = await add(title, text);
    const pages = [
      (await browser.get(LIST)).body,
      (await browser.get(`${LIST}/${preset.id}/edit`)).body,
      (await actionForm((await target()).account.id)).body,
      (await browser.get("/admin/action_logs")).body,
    ];
    for (const body of pages) {
      assert.doesNotMatch(body, /<script>alert/);
      assert.doesNotMatch(body, /<img src=x>/);
      assert.doesNotMatch(body, /<b>bold<\/b>/);
      assert.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    }
    const form = findForm(pages[1]!, `${LIST}/${preset.id}`);
    assert.deepEqual([form.fields.title, form.fields.text], [title, text]);
  });
});
