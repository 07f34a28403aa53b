import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Moderators' notes on a report (Mastodon's ReportNote): what they found out or decided, for the
 * next moderator to read. A note goes with its report, and with its author's account.
 */
export const reportNotes: RookeryMigration = {
  name: "0046_report_notes",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("report_notes")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("report_id", t.id, (c) => c.notNull().references("reports.id").onDelete("cascade"))
      // The moderator who wrote it.
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    // A report's notes in the order they were written.
    await db.schema
      .createIndex("index_report_notes_on_report_id_and_id")
      .on("report_notes")
      .columns(["report_id", "id"])
      .execute();
    await db.schema.createIndex("index_report_notes_on_account_id").on("report_notes").column("account_id").execute();
  },
};
