import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Cached translations (one per status, target language and version of the status), and the
 * indexes the housekeeping sweeps read: overdue scheduled statuses, open polls past their end,
 * preview cards no status uses.
 */
export const housekeeping: RookeryMigration = {
  name: "0012_housekeeping",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("status_translations")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
      .addColumn("language", "text", (c) => c.notNull())
      .addColumn("provider", "text", (c) => c.notNull())
      // The version translated: the status's edited_at, or its created_at before any edit.
      .addColumn("version", "text", (c) => c.notNull())
      .addColumn("translation", "text", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("status_translations_status_language_unique", ["status_id", "language"])
      .execute();
    await db.schema
      .createIndex("index_status_translations_on_created_at")
      .on("status_translations")
      .column("created_at")
      .execute();
    await sql`CREATE INDEX index_polls_open_on_expires_at ON polls (expires_at) WHERE closed_at IS NULL`.execute(db);
    await db.schema
      .createIndex("index_preview_cards_statuses_on_preview_card_id")
      .on("preview_cards_statuses")
      .column("preview_card_id")
      .execute();
    await db.schema.createIndex("index_preview_cards_on_updated_at").on("preview_cards").column("updated_at").execute();
  },
};
