import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Deleting a suspended account's data later (Mastodon's AccountDeletionRequest): a moderator's
 * suspension asks for the data to go after 30 days, lifting the suspension withdraws the request,
 * and a daily job deletes what is due. One request per account; it goes with its account.
 */
export const accountDeletionRequests: RookeryMigration = {
  name: "0049_account_deletion_requests",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("account_deletion_requests")
      .addColumn("account_id", t.id, (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_account_deletion_requests_on_created_at")
      .on("account_deletion_requests")
      .column("created_at")
      .execute();
  },
};
