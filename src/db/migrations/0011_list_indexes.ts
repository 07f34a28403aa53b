import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * Every list endpoint pages newest first by a row ID within one owner (an account, a status, a
 * list): each gets an (owner, id) index, so a page is one backward range scan that stops after
 * `limit` rows, and no plan has to sort a user's rows or read the whole table.
 *
 * The boosts index becomes partial (`reblog_of_id IS NOT NULL`): a plain one offered the planner
 * `reblog_of_id IS NULL` — every original post — as an index lookup, which without statistics
 * SQLite preferred to the public timeline's own index and sorted all public posts per request.
 */
export const listIndexes: RookeryMigration = {
  name: "0011_list_indexes",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`DROP INDEX index_statuses_on_reblog_of_id`.execute(db);
    await sql`CREATE INDEX index_statuses_on_reblog_of_id_and_id ON statuses (reblog_of_id, id) WHERE reblog_of_id IS NOT NULL`.execute(
      db,
    );
    await sql`DROP INDEX index_favourites_on_status_id`.execute(db);
    await sql`DROP INDEX index_scheduled_statuses_on_account_id`.execute(db);
    const pairs: Array<[table: string, owner: string]> = [
      ["favourites", "status_id"],
      ["favourites", "account_id"],
      ["bookmarks", "account_id"],
      ["status_pins", "account_id"],
      ["scheduled_statuses", "account_id"],
      ["mutes", "account_id"],
      ["account_domain_blocks", "account_id"],
      ["account_pins", "account_id"],
      ["list_accounts", "list_id"],
      ["tag_follows", "account_id"],
    ];
    for (const [table, owner] of pairs) {
      await db.schema.createIndex(`index_${table}_on_${owner}_and_id`).on(table).columns([owner, "id"]).execute();
    }
  },
};
