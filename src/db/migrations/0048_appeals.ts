import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Appeals of strikes (Mastodon's Appeal): the user's text against one account warning — at most
 * one appeal per warning (the unique index settles two racing submissions) — and the moderator who
 * approved or rejected it. An appeal goes with its warning and its account; it outlives the
 * moderator who decided it (set null).
 */
export const appeals: RookeryMigration = {
  name: "0048_appeals",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("appeals")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** The appealing account (the warning's target). */
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("account_warning_id", t.id, (c) => c.notNull().references("account_warnings.id").onDelete("cascade"))
      .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("approved_at", t.timestamp)
      .addColumn("approved_by_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .addColumn("rejected_at", t.timestamp)
      .addColumn("rejected_by_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_appeals_on_account_warning_id")
      .on("appeals")
      .column("account_warning_id")
      .unique()
      .execute();
    await db.schema.createIndex("index_appeals_on_account_id").on("appeals").column("account_id").execute();
    await db.schema
      .createIndex("index_appeals_on_approved_by_account_id")
      .on("appeals")
      .column("approved_by_account_id")
      .execute();
    await db.schema
      .createIndex("index_appeals_on_rejected_by_account_id")
      .on("appeals")
      .column("rejected_by_account_id")
      .execute();
  },
};
