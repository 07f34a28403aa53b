/**
 * Self-healing and housekeeping: overdue scheduled statuses and polls whose jobs were lost are
 * recovered exactly once; unused preview cards go with their images; translations are kept per
 * status, language and version; the pin and scheduling limits hold under concurrent requests;
 * bulk writes bring a statistics check soon.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../src/db/ids.ts";
import { recoverOverdueWork, removeUnusedCards } from "../src/services/housekeeping.ts";
import {
  afterBulkWrite,
  BULK_WRITE_ROWS,
  STATISTICS_CHECK_DELAY_MS,
  STATISTICS_JOB,
} from "../src/services/maintenance.ts";
import {
  translationProvider,
  useTranslationProvider,
  type TranslationProvider,
} from "../src/services/translation/provider.ts";
import { createTestServer, createUser, errorOf, postStatus, request, type TestServer, type TestUser } from "./kit.ts";

describe("housekeeping", () => {
  let server: TestServer;
  let user: TestUser;
  before(async () => {
    server = await createTestServer();
    user = await createUser(server.ctx, "keeper");
  });
  after(() => server.close());

  const db = () => server.ctx.db.kysely;
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

  test("a scheduled status whose job was lost is published by the sweep, once", async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: user.token,
      json: { status: "lost job", scheduled_at: later },
    });
    assert.equal(res.statusCode, 200, res.body);
    const id = (res.json() as { id: string }).id;
    // The job ran out of attempts and is gone; the time has passed.
    await db().deleteFrom("jobs").where("name", "=", "scheduled_statuses.publish").execute();
    await db()
      .updateTable("scheduled_statuses")
      .set({ scheduled_at: minutesAgo(10) })
      .where("id", "=", id)
      .execute();
    const first = await recoverOverdueWork(server.ctx);
    assert.equal(first.published, 1);
    const again = await recoverOverdueWork(server.ctx);
    assert.equal(again.published, 0);
    const posted = await db()
      .selectFrom("statuses")
      .select("text")
      .where("account_id", "=", user.account.id)
      .where("text", "=", "lost job")
      .execute();
    assert.equal(posted.length, 1);
  });

  test("a scheduled status not yet overdue is left to its job", async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: user.token,
      json: { status: "on time", scheduled_at: later },
    });
    const id = (res.json() as { id: string }).id;
    await db()
      .updateTable("scheduled_statuses")
      .set({ scheduled_at: minutesAgo(1) })
      .where("id", "=", id)
      .execute();
    assert.equal((await recoverOverdueWork(server.ctx)).published, 0);
  });

  test("a poll past its end whose job was lost is closed by the sweep", async () => {
    const status = await postStatus(server, user, { status: "vote", poll: { options: ["a", "b"], expires_in: 600 } });
    const pollId = status.poll!.id;
    await db().deleteFrom("jobs").where("name", "=", "polls.close").execute();
    await db()
      .updateTable("polls")
      .set({ expires_at: minutesAgo(10) })
      .where("id", "=", pollId)
      .execute();
    assert.equal((await recoverOverdueWork(server.ctx)).pollsClosed, 1);
    const poll = await db().selectFrom("polls").select("closed_at").where("id", "=", pollId).executeTakeFirstOrThrow();
    assert.ok(poll.closed_at);
    assert.equal((await recoverOverdueWork(server.ctx)).pollsClosed, 0);
  });

  test("preview cards no status uses for a day go, with their images; used and recent ones stay", async () => {
    const status = await postStatus(server, user, { status: "a card" });
    const card = async (name: string, updatedAt: string) => {
      const id = newId();
      const image = `cards/${name}.png`;
      await server.ctx.media.put(image, Buffer.from("png"));
      await db()
        .insertInto("preview_cards")
        .values({
          id,
          url: `https://example.com/${name}`,
          image_file: image,
          created_at: updatedAt,
          updated_at: updatedAt,
        })
        .execute();
      return { id, image };
    };
    const unused = await card("unused", minutesAgo(60 * 25));
    const used = await card("used", minutesAgo(60 * 25));
    const recent = await card("recent", minutesAgo(5));
    await db()
      .insertInto("preview_cards_statuses")
      .values({ status_id: status.id, preview_card_id: used.id, url: null })
      .execute();
    assert.equal(await removeUnusedCards(server.ctx), 1);
    const left = (await db().selectFrom("preview_cards").select("id").execute()).map((r) => r.id);
    assert.deepEqual(
      left.filter((id) => [unused.id, used.id, recent.id].includes(id)).sort(),
      [used.id, recent.id].sort(),
    );
    assert.equal(await server.ctx.media.get(unused.image), undefined);
    assert.ok(await server.ctx.media.get(used.image));
  });

  test("a translation is kept per status, language and version: the provider is asked once, again after an edit", async () => {
    let calls = 0;
    const provider: TranslationProvider = {
      name: "Counting",
      translate: async (texts) => {
        calls++;
        return { texts: texts.map((t) => t.toUpperCase()), detectedSourceLanguage: "de" };
      },
      languages: async () => ({ de: ["en", "fr"], und: ["en"] }),
    };
    const original = translationProvider(server.ctx);
    useTranslationProvider(server.ctx, provider);
    try {
      const status = await postStatus(server, user, { status: "hallo welt", language: "de" });
      const translate = (lang: string) =>
        request(server.app, "POST", `/api/v1/statuses/${status.id}/translate`, { token: user.token, json: { lang } });
      const first = await translate("en");
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await translate("en")).body, first.body);
      assert.equal(calls, 1);
      assert.equal((await translate("fr")).statusCode, 200);
      assert.equal(calls, 2);
      const edit = await request(server.app, "PUT", `/api/v1/statuses/${status.id}`, {
        token: user.token,
        json: { status: "hallo neue welt" },
      });
      assert.equal(edit.statusCode, 200, edit.body);
      const edited = await translate("en");
      assert.match(edited.body, /HALLO NEUE WELT/);
      assert.equal(calls, 3);
      await request(server.app, "DELETE", `/api/v1/statuses/${status.id}`, { token: user.token });
      assert.deepEqual(
        await db().selectFrom("status_translations").select("id").where("status_id", "=", status.id).execute(),
        [],
      );
    } finally {
      useTranslationProvider(server.ctx, original);
    }
  });

  test("the pin limit holds under concurrent pins: five, not more", async () => {
    const pinner = await createUser(server.ctx, "pinner");
    const posts = [];
    for (let i = 0; i < 14; i++) posts.push(await postStatus(server, pinner, { status: `pin me ${i}` }));
    for (const post of posts.slice(0, 4))
      await request(server.app, "POST", `/api/v1/statuses/${post.id}/pin`, { token: pinner.token });
    const results = await Promise.all(
      posts
        .slice(4)
        .map((post) => request(server.app, "POST", `/api/v1/statuses/${post.id}/pin`, { token: pinner.token })),
    );
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
    for (const refused of results.filter((r) => r.statusCode !== 200)) {
      assert.deepEqual(errorOf(refused), [
        422,
        "Validation failed: You have already pinned the maximum number of posts",
      ]);
    }
    const pinned = await db()
      .selectFrom("status_pins")
      .select("id")
      .where("account_id", "=", pinner.account.id)
      .execute();
    assert.equal(pinned.length, 5);
  });

  test("the daily scheduling limit holds under concurrent requests: 25, not more", async () => {
    const planner = await createUser(server.ctx, "planner");
    const day = new Date(Date.now() + 2 * 86_400_000);
    day.setUTCHours(12, 0, 0, 0);
    const at = (i: number) => new Date(day.getTime() + i * 60_000).toISOString();
    for (let i = 0; i < 22; i++) {
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: planner.token,
        json: { status: `plan ${i}`, scheduled_at: at(i) },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(server.app, "POST", "/api/v1/statuses", {
          token: planner.token,
          json: { status: `burst ${i}`, scheduled_at: at(100 + i) },
        }),
      ),
    );
    assert.equal(burst.filter((r) => r.statusCode === 200).length, 3);
    const rows = await db()
      .selectFrom("scheduled_statuses")
      .select("id")
      .where("account_id", "=", planner.account.id)
      .execute();
    assert.equal(rows.length, 25);
  });

  test("jobs that wrote many rows ask for one statistics check half a minute later; small ones add up", async () => {
    const soon = () => new Date(Date.now() + 2 * STATISTICS_CHECK_DELAY_MS);
    const pending = () =>
      db().selectFrom("jobs").select("run_at").where("unique_key", "=", `${STATISTICS_JOB}:after-writes`).execute();
    // What earlier tests left to run adds its own rows first.
    await server.ctx.jobs.drain(soon);
    await afterBulkWrite(server.ctx, BULK_WRITE_ROWS);
    await afterBulkWrite(server.ctx, BULK_WRITE_ROWS);
    const checks = await pending();
    assert.equal(checks.length, 1);
    const delay = Date.parse(checks[0]!.run_at) - Date.now();
    assert.ok(delay > 0 && delay <= STATISTICS_CHECK_DELAY_MS, `runs in ${delay} ms`);
    assert.equal(await server.ctx.jobs.drain(soon), 1);
    assert.deepEqual(await pending(), []);
    await afterBulkWrite(server.ctx, BULK_WRITE_ROWS - 1);
    assert.deepEqual(await pending(), []);
    await afterBulkWrite(server.ctx, 1);
    assert.equal((await pending()).length, 1);
  });
});
