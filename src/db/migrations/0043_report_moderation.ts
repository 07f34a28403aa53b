import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Handling reports (Mastodon's Report#assigned_account and #action_taken_by_account): the
 * moderator a report is assigned to and the one who resolved it. Both are forgotten, not the
 * report, when that moderator's account goes away.
 */
export const reportModeration: RookeryMigration = {
  name: "0043_report_moderation",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .alterTable("reports")
      .addColumn("assigned_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .execute();
    await db.schema
      .alterTable("reports")
      .addColumn("action_taken_by_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .execute();
    await db.schema
      .createIndex("index_reports_on_assigned_account_id")
      .on("reports")
      .column("assigned_account_id")
      .execute();
    await db.schema
      .createIndex("index_reports_on_action_taken_by_account_id")
      .on("reports")
      .column("action_taken_by_account_id")
      .execute();
    // The queue moderators read: unresolved reports, newest first.
    await db.schema
      .createIndex("index_reports_on_action_taken_at_and_id")
      .on("reports")
      .columns(["action_taken_at", "id"])
      .execute();
  },
};
