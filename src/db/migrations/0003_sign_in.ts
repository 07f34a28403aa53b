import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

export const signIn: RookeryMigration = {
  name: "0003_sign_in",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);

    await db.schema
      .createTable("web_sessions")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("session_digest", "text", (c) => c.notNull().unique())
      .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("ip", "text")
      .addColumn("user_agent", "text")
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("last_seen_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex("index_web_sessions_on_user_id").on("web_sessions").column("user_id").execute();

    await db.schema
      .createTable("notifications")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("from_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("status_id", t.id, (c) => c.references("statuses.id").onDelete("cascade"))
      .addColumn("activity_type", "text")
      .addColumn("activity_id", t.id)
      .addColumn("group_key", "text")
      .addColumn("filtered", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_notifications_on_account_id_and_id")
      .on("notifications")
      .columns(["account_id", "id"])
      .execute();

    await db.schema
      .createTable("email_domain_blocks")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("domain", "text", (c) => c.notNull().unique())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
