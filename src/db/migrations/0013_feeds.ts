import type { Kysely } from "kysely";
import { newId } from "../ids.ts";
import { columnTypes, type ColumnTypes, type Engine, type RookeryMigration } from "./types.ts";

// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;

/**
 * One stored feed: which statuses a home timeline (keyed by account) or a list timeline (keyed by
 * list) shows, written when a status is posted (services/timelines/feeds.ts). The primary key is
 * the page order, so a page is one backward range scan; `group_id` (the boosted status, or the
 * status itself) lets a boost of something already near the top of the feed be left out; the
 * `status_id` index serves deletions (cascade) and the retention sweep.
 */
async function createFeed(db: AnyDb, t: ColumnTypes, table: string, owner: string, ownerTable: string) {
  await db.schema
    .createTable(table)
    .addColumn(owner, t.id, (c) => c.notNull().references(`${ownerTable}.id`).onDelete("cascade"))
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("group_id", t.id, (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pkey`, [owner, "status_id"])
    .execute();
  await db.schema
    .createIndex(`index_${table}_on_${owner}_and_group_id`)
    .on(table)
    .columns([owner, "group_id", "status_id"])
    .execute();
  await db.schema.createIndex(`index_${table}_on_status_id`).on(table).column("status_id").execute();
}

/**
 * Stored home and list feeds. Servers that already have follows get their feeds built by one
 * `feeds.rebuild` job enqueued here (it enqueues one rebuild per local account).
 */
export const feeds: RookeryMigration = {
  name: "0013_feeds",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await createFeed(db, t, "home_feed_entries", "account_id", "accounts");
    await createFeed(db, t, "list_feed_entries", "list_id", "lists");
    const followed = await db.selectFrom("follows").select("id").limit(1).executeTakeFirst();
    if (!followed) return;
    const now = new Date().toISOString();
    await db
      .insertInto("jobs")
      .values({
        id: newId(),
        name: "feeds.rebuild",
        payload: JSON.stringify({ all: true }),
        run_at: now,
        max_attempts: 5,
        attempts: 0,
        created_at: now,
      })
      .execute();
  },
};
