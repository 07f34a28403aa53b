import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * The follows that ring a bell (notify of the followed account's posts), by followed account:
 * each post, local or from another server, asks who rings for its author (db/queries/
 * relationships.ts `bellRingers`). That read went through every local account (SQLite drove the
 * join from `accounts.domain IS NULL`) or every follower of a popular author; now it reads the
 * few who ring. The queries name the column as the index does (`WHERE notify`).
 */
export const bellIndex: RookeryMigration = {
  name: "0051_bell_index",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX index_follows_ringing ON follows (target_account_id) WHERE notify`.execute(db);
  },
};
