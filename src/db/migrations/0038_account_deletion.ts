import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Local accounts their owners deleted (Mastodon's self-deletion): the row stays, suspended and
 * emptied, so the username stays taken and other servers are told it is gone (410, Delete).
 */
export const accountDeletion: RookeryMigration = {
  name: "0038_account_deletion",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema.alterTable("accounts").addColumn("deleted_at", t.timestamp).execute();
  },
};
