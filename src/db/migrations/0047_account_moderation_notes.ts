import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Moderators' notes on an account (Mastodon's AccountModerationNote): what staff tell each other
 * about an account, shown on its admin page and never to its owner. A note goes with its author's
 * account and with the account it is about, as Mastodon's `dependent: :destroy` does.
 */
export const accountModerationNotes: RookeryMigration = {
  name: "0047_account_moderation_notes",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("account_moderation_notes")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** The moderator who wrote it. */
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    // The account page lists an account's notes in the order they were written.
    await db.schema
      .createIndex("index_account_moderation_notes_on_target_account_id")
      .on("account_moderation_notes")
      .columns(["target_account_id", "id"])
      .execute();
    await db.schema
      .createIndex("index_account_moderation_notes_on_account_id")
      .on("account_moderation_notes")
      .column("account_id")
      .execute();
  },
};
