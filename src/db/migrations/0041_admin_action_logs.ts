import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * The audit log of moderation (Mastodon's Admin::ActionLog): who did what to which record, when.
 * `human_identifier` keeps a readable name of the target (a handle, a domain) after it is gone.
 */
export const adminActionLogs: RookeryMigration = {
  name: "0041_admin_action_logs",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("admin_action_logs")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** The moderator's account. */
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("target_type", "text", (c) => c.notNull())
      .addColumn("target_id", t.id)
      .addColumn("human_identifier", "text")
      /** A short note of what changed (e.g. a block's severity), shown beside the entry. */
      .addColumn("detail", "text")
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_admin_action_logs_on_account_id")
      .on("admin_action_logs")
      .column("account_id")
      .execute();
    await db.schema
      .createIndex("index_admin_action_logs_on_target")
      .on("admin_action_logs")
      .columns(["target_type", "target_id"])
      .execute();
  },
};
