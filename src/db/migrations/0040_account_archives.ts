import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Archives of their accounts users asked for (Mastodon's backups): a ZIP made by a job, kept in
 * media storage under a random key, downloadable by its owner only.
 */
export const accountArchives: RookeryMigration = {
  name: "0040_account_archives",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("account_archives")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      /** pending, done or failed. */
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("file_key", "text")
      .addColumn("file_size", "bigint")
      .addColumn("error", "text")
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("finished_at", t.timestamp)
      .execute();
    await db.schema
      .createIndex("index_account_archives_on_user_id_and_created_at")
      .on("account_archives")
      .columns(["user_id", "created_at"])
      .execute();
  },
};
