import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Filters (Mastodon's v2 custom filters): a titled filter with its contexts, action and expiry,
 * and its keywords and statuses. v1 filters are views of the same rows (one per keyword).
 */
export const filters: RookeryMigration = {
  name: "0019_filters",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("custom_filters")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("title", "text", (c) => c.notNull())
      /** JSON array of contexts. */
      .addColumn("context", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull().defaultTo("warn"))
      .addColumn("expires_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_custom_filters_on_account_id")
      .on("custom_filters")
      .columns(["account_id", "id"])
      .execute();
    await db.schema
      .createTable("custom_filter_keywords")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("custom_filter_id", t.id, (c) => c.notNull().references("custom_filters.id").onDelete("cascade"))
      .addColumn("keyword", "text", (c) => c.notNull())
      .addColumn("whole_word", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.true)))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_custom_filter_keywords_on_filter")
      .on("custom_filter_keywords")
      .columns(["custom_filter_id", "id"])
      .execute();
    await db.schema
      .createTable("custom_filter_statuses")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("custom_filter_id", t.id, (c) => c.notNull().references("custom_filters.id").onDelete("cascade"))
      .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("custom_filter_statuses_unique", ["custom_filter_id", "status_id"])
      .execute();
    await db.schema
      .createIndex("index_custom_filter_statuses_on_status_id")
      .on("custom_filter_statuses")
      .column("status_id")
      .execute();
  },
};
