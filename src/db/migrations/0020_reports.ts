import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/** Reports of accounts (and their statuses) to the moderators. */
export const reports: RookeryMigration = {
  name: "0020_reports",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("reports")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      /** JSON arrays of status IDs and rule IDs (null: none). */
      .addColumn("status_ids", "text")
      .addColumn("rule_ids", "text")
      .addColumn("comment", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("category", "text", (c) => c.notNull().defaultTo("other"))
      /** Asked to be forwarded to the target's server (federation sends it). */
      .addColumn("forward", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      /** JSON array of further domains to forward to (null: none). */
      .addColumn("forward_to_domains", "text")
      .addColumn("action_taken_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_reports_on_target_account_id")
      .on("reports")
      .columns(["target_account_id", "id"])
      .execute();
    await db.schema.createIndex("index_reports_on_account_id").on("reports").columns(["account_id", "id"]).execute();
  },
};
