import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Direct-message conversations as each participant sees them (Mastodon's account_conversations):
 * one row per account, thread and set of other participants, holding the thread's direct statuses
 * that reached the account. Paged by the newest of them (`last_status_id`).
 */
export const conversations: RookeryMigration = {
  name: "0014_conversations",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("account_conversations")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("conversation_id", t.id, (c) => c.notNull())
      // The other participants' account IDs, sorted, as a JSON array of strings.
      .addColumn("participant_account_ids", "text", (c) => c.notNull())
      // The thread's direct statuses this account has, oldest first, as a JSON array of strings.
      .addColumn("status_ids", "text", (c) => c.notNull())
      .addColumn("last_status_id", t.id, (c) => c.notNull())
      .addColumn("unread", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("account_conversations_unique", ["account_id", "conversation_id", "participant_account_ids"])
      .execute();
    await db.schema
      .createIndex("index_account_conversations_on_account_id_and_last_status_id")
      .on("account_conversations")
      .columns(["account_id", "last_status_id"])
      .execute();
    await db.schema
      .createIndex("index_account_conversations_on_conversation_id")
      .on("account_conversations")
      .column("conversation_id")
      .execute();
  },
};
