import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Moderators' review of trends (Mastodon's `trendable` and `reviewed_at` of tags, statuses and
 * preview cards, and its PreviewCardProvider): one row per reviewed item, kept apart from the
 * items' own tables so that a review neither widens `statuses` nor waits on its writers; and the
 * publishers (domains) of links, whose review covers every link from them that has none of its own.
 */
export const trendReviews: RookeryMigration = {
  name: "0045_trend_reviews",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("trend_reviews")
      // `tags`, `statuses` or `links`, as in `trends.kind`.
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("item_id", t.id, (c) => c.notNull())
      // Approved (true) or rejected (false).
      .addColumn("trendable", t.boolean, (c) => c.notNull())
      .addColumn("reviewed_at", t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint("trend_reviews_pkey", ["kind", "item_id"])
      .execute();
    await db.schema
      .createTable("preview_card_providers")
      .addColumn("id", t.id, (c) => c.primaryKey())
      // Lowercase host; covers its subdomains too (the longest matching domain wins).
      .addColumn("domain", "text", (c) => c.notNull().unique())
      // Null until reviewed.
      .addColumn("trendable", t.boolean)
      .addColumn("reviewed_at", t.timestamp)
      // When one of its links first trended unreviewed.
      .addColumn("requested_review_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
