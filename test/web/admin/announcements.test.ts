/**
 * /admin/announcements: Manage Announcements (Admin, not Moderator) lists announcements, writes
 * one (now or at a set time), edits, publishes, unpublishes and removes them through the service
 * the CLI uses: users see each change in GET /api/v1/announcements and on their streams, and the
 * audit log records it as Mastodon does (create, update — publish and unpublish too — destroy).
 * Bad input and forms without their CSRF token change nothing; unknown IDs are 404.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { allAnnouncements, createAnnouncement } from "../../../src/services/announcements/announcements.ts";
import { alertOf, type Browser } from "../../browser.ts";
import { createTestServer, createUser, get, type TestServer, type TestUser } from "../../kit.ts";
import { listen, WsClient } from "../../streaming_clients.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface AnnouncementJson {
  id: string;
  content: string;
  starts_at: string | null;
  ends_at: string | null;
  all_day: boolean;
  published_at: string;
}

const SECTION = "/admin/announcements";

/** A `datetime-local` value (UTC) `minutes` from now. */
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString().slice(0, 16);

describe("/admin/announcements", () => {
  let server: TestServer;
  let host: string;
  let admin: TestUser;
  let reader: TestUser;
  let browser: Browser;
  const pages = [SECTION, `${SECTION}/new`];
  before(async () => {
    server = await createTestServer();
    host = await listen(server);
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    reader = await createUser(server.ctx, "newsreader");
    const first = await createAnnouncement(server.ctx, { text: "Welcome to the server" });
    pages.push(`${SECTION}/${first.id}/edit`);
  });
  after(() => server.close());

  describeStaffOnly({ server: () => server, pages, allowed: "Admin", refused: "Moderator" });

  const visible = async () => {
    const res = await get(server.app, "/api/v1/announcements", reader.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as AnnouncementJson[];
  };
  const visibleIds = async () => (await visible()).map((a) => a.id);
  const auditOf = (id: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier", "detail"])
      .where("target_type", "=", "Announcement")
      .where("target_id", "=", id)
      .orderBy("id")
      .execute();
  const allAudit = () =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select("id")
      .where("target_type", "=", "Announcement")
      .execute();
  const entry = (action: string, text: string, detail: string | null = null) => ({
    account_id: admin.account.id,
    action,
    target_type: "Announcement",
    human_identifier: text,
    detail,
  });
  /** Writes one through the new page; answers the response and the newest announcement's ID. */
  const write = async (values: Record<string, string>) => {
    const res = await browser.submit(await browser.get(`${SECTION}/new`), SECTION, values);
    const [newest] = await allAnnouncements(server.ctx);
    return { res, id: newest!.id };
  };
  const pendingJobs = (id: string) =>
    server.ctx.db.kysely
      .selectFrom("jobs")
      .select("id")
      .where("name", "=", "announcements.publish")
      .where("payload", "=", JSON.stringify({ id }))
      .execute();
  /** A user's stream, ready (its subscription answered a round trip). */
  const stream = async () => {
    const client = await WsClient.connect(host, reader.token, { query: "stream=user" });
    client.send({ type: "unsubscribe", stream: "round-trip" });
    await client.frames.next((f) => f.error === "Unknown stream type");
    return client;
  };

  test("writing one publishes it: users see it in the API and on their stream; logged as create", async () => {
    const client = await stream();
    try {
      const { res, id } = await write({
        text: "Maintenance tonight, sorry & thanks",
        starts_at: "2026-12-01T20:00",
        ends_at: "2026-12-01T22:00",
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${SECTION}?notice=published`);
      const announced = await client.event("announcement", (payload) => payload?.includes(`"id":"${id}"`) ?? false);
      assert.match(announced.payload!, /Maintenance tonight/);
      const found = (await visible()).find((a) => a.id === id);
      assert.ok(found);
      assert.match(found.content, /Maintenance tonight, sorry &amp; thanks/);
      assert.deepEqual(
        [found.starts_at, found.ends_at, found.all_day],
        ["2026-12-01T20:00:00.000Z", "2026-12-01T22:00:00.000Z", false],
      );
      assert.deepEqual(await auditOf(id), [entry("create", "Maintenance tonight, sorry & thanks")]);
      const list = await browser.follow(res);
      assert.match(list.body, /The announcement was published\./);
      assert.match(list.body, /Maintenance tonight, sorry &amp; thanks/);
      assert.match(list.body, /2026-12-01 20:00 – 2026-12-01 22:00/);
    } finally {
      client.close();
    }
  });

  test("all-day events are shown by their dates", async () => {
    const { res, id } = await write({
      text: "Holiday",
      starts_at: "2026-12-24T00:00",
      ends_at: "2026-12-26T00:00",
      all_day: "1",
    });
    assert.equal(res.statusCode, 303);
    assert.equal((await visible()).find((a) => a.id === id)?.all_day, true);
    assert.match((await browser.get(SECTION)).body, /2026-12-24 – 2026-12-26 \(all day\)/);
  });

  test("scheduled for later: users see nothing yet; Publish now publishes it and withdraws the schedule", async () => {
    const { res, id } = await write({ text: "Coming soon", publish_at: inMinutes(60) });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${SECTION}?notice=scheduled`);
    assert.ok(!(await visibleIds()).includes(id));
    assert.equal((await pendingJobs(id)).length, 1);
    const list = await browser.get(SECTION);
    assert.match(list.body, /To be published \d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    const published = await browser.submit(list, `${SECTION}/${id}/publish`);
    assert.equal(published.statusCode, 303);
    assert.equal(published.headers.location, `${SECTION}?notice=published`);
    assert.ok((await visibleIds()).includes(id));
    assert.equal((await pendingJobs(id)).length, 0);
    assert.deepEqual(await auditOf(id), [entry("create", "Coming soon"), entry("update", "Coming soon", "published")]);
  });

  test("editing a published one: users get the new text at once; logged as update", async () => {
    const { id } = await write({ text: "Old words" });
    const client = await stream();
    try {
      const edit = await browser.get(`${SECTION}/${id}/edit`);
      assert.equal(edit.statusCode, 200);
      assert.match(edit.body, />Old words<\/textarea>/);
      assert.doesNotMatch(edit.body, /name="publish_at"/);
      const res = await browser.submit(edit, `${SECTION}/${id}`, {
        text: "New words",
        starts_at: "2027-01-01T10:00",
        ends_at: "2027-01-01T12:00",
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${SECTION}?notice=updated`);
      const announced = await client.event("announcement", (payload) => payload?.includes(`"id":"${id}"`) ?? false);
      assert.match(announced.payload!, /New words/);
      const found = (await visible()).find((a) => a.id === id);
      assert.match(found?.content ?? "", /New words/);
      assert.equal(found?.starts_at, "2027-01-01T10:00:00.000Z");
      assert.deepEqual(await auditOf(id), [entry("create", "Old words"), entry("update", "New words")]);
    } finally {
      client.close();
    }
  });

  test("unpublish takes it from users (announcement.delete on their stream); publish brings it back", async () => {
    const { id } = await write({ text: "Now you see me" });
    const client = await stream();
    try {
      const res = await browser.submit(await browser.get(SECTION), `${SECTION}/${id}/unpublish`);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${SECTION}?notice=unpublished`);
      assert.equal((await client.event("announcement.delete", (payload) => payload === id)).payload, id);
      assert.ok(!(await visibleIds()).includes(id));
      const list = await browser.follow(res);
      assert.match(list.body, /Not published/);
      assert.match(list.body, /The announcement was taken back/);
      await browser.submit(list, `${SECTION}/${id}/publish`);
      await client.event("announcement", (payload) => payload?.includes(`"id":"${id}"`) ?? false);
      assert.ok((await visibleIds()).includes(id));
      assert.deepEqual(await auditOf(id), [
        entry("create", "Now you see me"),
        entry("update", "Now you see me", "unpublished"),
        entry("update", "Now you see me", "published"),
      ]);
    } finally {
      client.close();
    }
  });

  test("editing one not published: a time schedules it, an empty time leaves it unpublished", async () => {
    const { id } = await write({ text: "Draft" });
    await browser.submit(await browser.get(SECTION), `${SECTION}/${id}/unpublish`);
    const edit = await browser.get(`${SECTION}/${id}/edit`);
    assert.match(edit.body, /name="publish_at"/);
    const later = inMinutes(120);
    assert.equal((await browser.submit(edit, `${SECTION}/${id}`, { publish_at: later })).statusCode, 303);
    assert.equal((await pendingJobs(id)).length, 1);
    assert.ok(!(await visibleIds()).includes(id));
    const again = await browser.get(`${SECTION}/${id}/edit`);
    assert.match(again.body, new RegExp(`name="publish_at" value="${later}"`));
    assert.equal((await browser.submit(again, `${SECTION}/${id}`, { publish_at: "" })).statusCode, 303);
    assert.equal((await pendingJobs(id)).length, 0, "the schedule is withdrawn");
    assert.ok(!(await visibleIds()).includes(id));
    assert.match((await browser.get(SECTION)).body, /Not published/);
  });

  test("remove: gone for users (announcement.delete), logged as destroy", async () => {
    const { id } = await write({ text: "Short-lived" });
    const client = await stream();
    try {
      const res = await browser.submit(await browser.get(SECTION), `${SECTION}/${id}/delete`);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${SECTION}?notice=removed`);
      await client.event("announcement.delete", (payload) => payload === id);
      assert.ok(!(await visibleIds()).includes(id));
      assert.ok(!(await allAnnouncements(server.ctx)).some((a) => a.id === id));
      assert.deepEqual(await auditOf(id), [entry("create", "Short-lived"), entry("destroy", "Short-lived")]);
    } finally {
      client.close();
    }
  });

  test("bad input: 422, the form again with what was typed, nothing written", async () => {
    const count = (await allAnnouncements(server.ctx)).length;
    const logged = (await allAudit()).length;
    const cases: Array<[Record<string, string>, string]> = [
      [{ text: "   " }, "The announcement was not published: Text can't be blank."],
      [
        { text: "Backwards", starts_at: "2026-12-02T10:00", ends_at: "2026-12-01T10:00" },
        "The announcement was not published: Ends at must be after the start.",
      ],
      [
        { text: "Half", starts_at: "2026-12-02T10:00" },
        "The announcement was not published: Starts at and ends at must be given together.",
      ],
      [
        { text: "When?", starts_at: "tomorrow", ends_at: "2026-12-01T10:00" },
        "The announcement was not published: Starts at is not a date and time.",
      ],
    ];
    for (const [values, alert] of cases) {
      const res = await browser.submit(await browser.get(`${SECTION}/new`), SECTION, values);
      assert.equal(res.statusCode, 422, JSON.stringify(values));
      assert.equal(alertOf(res.body), alert);
      assert.ok(res.body.includes(`>${values.text}</textarea>`), "the text is kept");
    }
    const { id } = await write({ text: "Keep me" });
    const edit = await browser.submit(await browser.get(`${SECTION}/${id}/edit`), `${SECTION}/${id}`, { text: "" });
    assert.equal(edit.statusCode, 422);
    assert.equal(alertOf(edit.body), "The announcement was not saved: Text can't be blank.");
    assert.equal((await allAnnouncements(server.ctx)).length, count + 1);
    assert.equal((await allAudit()).length, logged + 1);
    assert.match((await visible()).find((a) => a.id === id)?.content ?? "", /Keep me/);
  });

  test("forms without their CSRF token: 422 and nothing changed", async () => {
    const { id } = await write({ text: "Guarded" });
    const count = (await allAnnouncements(server.ctx)).length;
    const logged = (await allAudit()).length;
    const list = await browser.get(SECTION);
    for (const res of [
      await browser.submit(await browser.get(`${SECTION}/new`), SECTION, { text: "Forged" }, ["authenticity_token"]),
      await browser.submit(await browser.get(`${SECTION}/${id}/edit`), `${SECTION}/${id}`, { text: "Forged" }, [
        "authenticity_token",
      ]),
      await browser.submit(list, `${SECTION}/${id}/unpublish`, {}, ["authenticity_token"]),
      await browser.submit(list, `${SECTION}/${id}/delete`, {}, ["authenticity_token"]),
    ]) {
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), EXPIRED);
    }
    assert.equal((await allAnnouncements(server.ctx)).length, count);
    assert.equal((await allAudit()).length, logged);
    assert.match((await visible()).find((a) => a.id === id)?.content ?? "", /Guarded/);
  });

  test("unknown announcements are 404", async () => {
    const page = await browser.get(SECTION);
    const token = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1]!;
    for (const path of [`${SECTION}/123456789/edit`, `${SECTION}/abc/edit`])
      assert.equal((await browser.get(path)).statusCode, 404, path);
    for (const action of ["", "/publish", "/unpublish", "/delete"]) {
      const res = await browser.post(`${SECTION}/123456789${action}`, { authenticity_token: token, text: "x" });
      assert.equal(res.statusCode, 404, action);
    }
  });

  test("texts are shown escaped", async () => {
    const { id } = await write({ text: "<script>alert(1)</script> & <b>bold</b>" });
    for (const path of [SECTION, `${SECTION}/${id}/edit`]) {
      const page = await browser.get(path);
      assert.doesNotMatch(page.body, /<script>|<b>bold/, path);
      assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &lt;b&gt;bold&lt;\/b&gt;/, path);
    }
  });

  test("the list is paged, newest first", async () => {
    for (let i = 0; i < 41; i++) await createAnnouncement(server.ctx, { text: `Bulk ${i}` });
    const first = await browser.get(SECTION);
    assert.match(first.body, /Bulk 40/);
    assert.doesNotMatch(first.body, /Welcome to the server/);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body);
    assert.ok(older, "an Older link");
    const next = await browser.get(older[1]!.replace(/&amp;/g, "&"));
    assert.equal(next.statusCode, 200);
    assert.match(next.body, /Welcome to the server/);
    assert.match(next.body, /rel="prev">Newer<\/a>/);
  });
});
