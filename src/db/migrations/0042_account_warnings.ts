import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Moderation of accounts (Mastodon's AccountWarning, AccountWarningPreset, Account#sensitized_at):
 * every action a moderator takes on an account leaves a warning (a strike) the user can read and
 * appeal; presets hold texts moderators reuse; a sensitized account's media are shown behind a
 * warning. A strike outlives the moderator (set null) but not its target.
 */
export const accountWarnings: RookeryMigration = {
  name: "0042_account_warnings",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema.alterTable("accounts").addColumn("sensitized_at", t.timestamp).execute();
    await db.schema
      .createTable("account_warnings")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** The moderator. */
      .addColumn("account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      /** none, disable, mark_statuses_as_sensitive, delete_statuses, sensitive, silence, suspend. */
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("report_id", t.id, (c) => c.references("reports.id").onDelete("set null"))
      /** JSON array of the reported status IDs the warning is about, or null. */
      .addColumn("status_ids", "text")
      /** When an appeal was granted and the action undone. */
      .addColumn("overruled_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_account_warnings_on_target_account_id")
      .on("account_warnings")
      .columns(["target_account_id", "id"])
      .execute();
    await db.schema
      .createIndex("index_account_warnings_on_account_id")
      .on("account_warnings")
      .column("account_id")
      .execute();
    await db.schema
      .createTable("account_warning_presets")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
