import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/** Announcements from the server's staff to every user, who may mark them read and react to them. */
export const announcements: RookeryMigration = {
  name: "0023_announcements",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("announcements")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("text", "text", (c) => c.notNull())
      .addColumn("content", "text", (c) => c.notNull())
      /** JSON arrays: mentioned account IDs, hashtag names, linked local status IDs. */
      .addColumn("mention_ids", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("tag_names", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("status_ids", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("all_day", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("starts_at", t.timestamp)
      .addColumn("ends_at", t.timestamp)
      .addColumn("published", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      /** When a scheduled announcement is to be published. */
      .addColumn("scheduled_at", t.timestamp)
      .addColumn("published_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("announcement_reads")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("announcement_id", t.id, (c) => c.notNull().references("announcements.id").onDelete("cascade"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("announcement_reads_unique", ["account_id", "announcement_id"])
      .execute();
    await db.schema
      .createTable("announcement_reactions")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("announcement_id", t.id, (c) => c.notNull().references("announcements.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("custom_emoji_id", t.id, (c) => c.references("custom_emojis.id").onDelete("cascade"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("announcement_reactions_unique", ["account_id", "announcement_id", "name"])
      .execute();
    await db.schema
      .createIndex("index_announcement_reactions_on_announcement_id")
      .on("announcement_reactions")
      .columns(["announcement_id", "name"])
      .execute();
  },
};
