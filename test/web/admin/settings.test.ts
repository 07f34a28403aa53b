/**
 * /admin/settings: Manage Settings (Admin, not Moderator) edits the settings `rookery settings`
 * changes, but the rules; a save shows in /api/v1/instance and /api/v2/instance at once, logs
 * each changed setting, and is all or nothing: a refused value shows the form again (422) with
 * the reason beside it and saves nothing. Forms without their CSRF token change nothing.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { DEFAULT_SETTINGS, loadSettings, saveSetting } from "../../../src/services/instance/settings.ts";
import type { InstanceSettings } from "../../../src/db/schema.ts";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import { createTestServer, get, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

const NOT_SAVED = "Nothing was saved: please correct the settings marked below.";

interface InstanceV2 {
  title: string;
  description: string;
  registrations: { enabled: boolean; approval_required: boolean; reason_required: boolean; message: string | null };
  contact: { email: string; account: { id: string } | null };
  configuration: { timelines_access: { live_feeds: { local: string } } };
}

describe("/admin/settings", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
  });
  beforeEach(async () => {
    for (const [key, value] of Object.entries(DEFAULT_SETTINGS))
      await saveSetting(server.ctx.db.kysely, key as keyof InstanceSettings, value);
  });
  after(() => server.close());

  describeStaffOnly({ server: () => server, pages: ["/admin/settings"], allowed: "Admin", refused: "Moderator" });

  const instanceV2 = async () => (await get(server.app, "/api/v2/instance")).json() as InstanceV2;
  const stored = async () => (await loadSettings(server.ctx.db.kysely)).values;
  const auditRows = () =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "target_id", "human_identifier", "detail"])
      .where("target_type", "=", "Setting")
      .orderBy("id")
      .execute();

  test("the form holds every setting but the rules, each with its label and the input of its type", async () => {
    const page = await browser.get("/admin/settings");
    assert.equal(page.statusCode, 200);
    const form = findForm(page.body, "/admin/settings");
    const expected = Object.keys(DEFAULT_SETTINGS).filter((key) => key !== "rules");
    for (const key of expected) {
      assert.match(form.html, new RegExp(`<label for="${key}"`), key);
      assert.match(form.html, new RegExp(`id="${key}" name="${key}"`), key);
    }
    assert.doesNotMatch(form.html, /name="rules"/);
    assert.match(form.html, /<input type="checkbox" id="timeline_preview" name="timeline_preview" value="1" checked/);
    assert.match(form.html, /<select id="registrations_mode" name="registrations_mode"/);
    assert.match(form.html, /<option value="open" selected>/);
    assert.match(form.html, /<textarea id="site_extended_description"/);
    assert.match(form.html, /<input type="email" id="site_contact_email"/);
  });

  test("saving: the API shows the new settings at once, and each change is in the audit log", async () => {
    const page = await browser.get("/admin/settings");
    const res = await browser.submit(
      page,
      "/admin/settings",
      {
        site_title: "Birds of a Feather",
        site_short_description: "A place for birders.",
        site_extended_description: "First paragraph.\r\n\r\nSecond paragraph.",
        site_contact_username: admin.username,
        site_contact_email: "team@rookery.test",
        registrations_mode: "approved",
        require_invite_text: "1",
        show_domain_blocks: "all",
      },
      ["timeline_preview"],
    );
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/settings?notice=saved");
    const shown = await browser.follow(res);
    assert.match(shown.body, /The settings were saved\./);
    assert.match(shown.body, /value="Birds of a Feather"/);

    const v2 = await instanceV2();
    assert.equal(v2.title, "Birds of a Feather");
    assert.equal(v2.description, "A place for birders.");
    assert.deepEqual(
      [v2.registrations.enabled, v2.registrations.approval_required, v2.registrations.reason_required],
      [true, true, true],
    );
    assert.equal(v2.contact.email, "team@rookery.test");
    assert.equal(v2.contact.account?.id, admin.account.id);
    assert.equal(v2.configuration.timelines_access.live_feeds.local, "authenticated");
    const v1 = (await get(server.app, "/api/v1/instance")).json() as { title: string; approval_required: boolean };
    assert.deepEqual([v1.title, v1.approval_required], ["Birds of a Feather", true]);
    const extended = (await get(server.app, "/api/v1/instance/extended_description")).json() as { content: string };
    assert.equal(extended.content, "<p>First paragraph.</p><p>Second paragraph.</p>");
    assert.equal((await get(server.app, "/api/v1/instance/domain_blocks")).statusCode, 200);
    assert.equal((await stored()).site_extended_description, "First paragraph.\n\nSecond paragraph.");

    const rows = await auditRows();
    const byKey = new Map(rows.map((r) => [r.human_identifier, r]));
    assert.deepEqual(
      [...byKey.keys()].sort(),
      [
        "registrations_mode",
        "require_invite_text",
        "show_domain_blocks",
        "site_contact_email",
        "site_contact_username",
        "site_extended_description",
        "site_short_description",
        "site_title",
        "timeline_preview",
      ].sort(),
    );
    assert.deepEqual(byKey.get("registrations_mode"), {
      account_id: admin.account.id,
      action: "update",
      target_type: "Setting",
      target_id: null,
      human_identifier: "registrations_mode",
      detail: "approved",
    });
    assert.equal(byKey.get("timeline_preview")?.detail, "false");
    assert.equal(byKey.get("site_title")?.detail, null);
  });

  test("saving the form as it is changes nothing and logs nothing", async () => {
    const before = (await auditRows()).length;
    const res = await browser.submit(await browser.get("/admin/settings"), "/admin/settings");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/settings?notice=unchanged");
    assert.deepEqual(await stored(), DEFAULT_SETTINGS);
    assert.equal((await auditRows()).length, before);
  });

  test("closing sign-ups with a message", async () => {
    const res = await browser.submit(await browser.get("/admin/settings"), "/admin/settings", {
      registrations_mode: "none",
      closed_registrations_message: "Come back in spring.",
    });
    assert.equal(res.statusCode, 303);
    const v2 = await instanceV2();
    assert.deepEqual([v2.registrations.enabled, v2.registrations.message], [false, "<p>Come back in spring.</p>"]);
  });

  test("refused values: 422, the form again with what was typed and each reason beside its setting; nothing saved", async () => {
    const before = (await auditRows()).length;
    const res = await browser.submit(await browser.get("/admin/settings"), "/admin/settings", {
      site_title: "x".repeat(201),
      site_short_description: "This valid change is not saved either.",
      registrations_mode: "everyone",
      site_contact_username: "nobody_here",
    });
    assert.equal(res.statusCode, 422);
    assert.equal(alertOf(res.body), NOT_SAVED);
    assert.match(
      res.body,
      /<p id="site_title_error"><strong>This is too long \(maximum is 200 characters\)\.<\/strong><\/p>/,
    );
    assert.match(
      res.body,
      /<p id="registrations_mode_error"><strong>This must be one of open, approved, none\.<\/strong>/,
    );
    assert.match(
      res.body,
      /<p id="site_contact_username_error"><strong>This must be the username of a local account\./,
    );
    assert.match(
      res.body,
      /id="site_title" name="site_title" value="x{201}"[^>]*aria-describedby="site_title_hint site_title_error" aria-invalid="true"/,
    );
    assert.match(res.body, />This valid change is not saved either\.<\/textarea>/);
    assert.deepEqual(await stored(), DEFAULT_SETTINGS);
    assert.equal((await instanceV2()).title, "Rookery");
    assert.equal((await auditRows()).length, before);
  });

  test("a form without its CSRF token: 422 and nothing saved", async () => {
    const res = await browser.submit(
      await browser.get("/admin/settings"),
      "/admin/settings",
      { site_title: "Hijacked", registrations_mode: "open" },
      ["authenticity_token"],
    );
    assert.equal(res.statusCode, 422);
    assert.equal(alertOf(res.body), EXPIRED);
    assert.deepEqual(await stored(), DEFAULT_SETTINGS);
  });

  test("settings are shown escaped", async () => {
    await saveSetting(server.ctx.db.kysely, "site_title", '<script>alert("t")</script>');
    await saveSetting(server.ctx.db.kysely, "site_short_description", "</textarea><script>alert(1)</script>");
    const page = await browser.get("/admin/settings");
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /<script>/);
    assert.match(page.body, /value="&lt;script&gt;alert\(&quot;t&quot;\)&lt;\/script&gt;"/);
    assert.match(page.body, />&lt;\/textarea&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/textarea>/);
  });
});
