import { sql, type Kysely } from "kysely";
import type { Engine, RookeryMigration } from "./types.ts";

/**
 * The profile directory (`GET /api/v1/directory`) reads a page of listed accounts — discoverable,
 * not suspended, silenced or moved — most recently active or newest first, all of them or the local
 * ones only. One small partial index per order and reach, so a page is a range scan that stops after
 * `offset + limit` rows whatever the number of unlisted or remote accounts. The predicate is written
 * exactly as services/accounts/directory.ts writes it (SQLite matches partial indexes by text).
 */
export const directory: RookeryMigration = {
  name: "0027_directory",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const listed = "discoverable AND suspended_at IS NULL AND silenced_at IS NULL AND moved_to_account_id IS NULL";
    // Accounts that never posted come last: PostgreSQL must be told, SQLite sorts NULL lowest anyway.
    const active = engine === "postgres" ? "last_status_at DESC NULLS LAST, id DESC" : "last_status_at DESC, id DESC";
    // SQLite's `+` (see services/accounts/directory.ts) keeps it from reading index_accounts_on_domain instead.
    const local = engine === "postgres" ? "domain IS NULL" : "+domain IS NULL";
    for (const [suffix, reach] of [
      ["", ""],
      ["_local", ` AND ${local}`],
    ]) {
      await sql
        .raw(`CREATE INDEX index_accounts_directory_active${suffix} ON accounts (${active}) WHERE ${listed}${reach}`)
        .execute(db);
      await sql
        .raw(`CREATE INDEX index_accounts_directory_new${suffix} ON accounts (id) WHERE ${listed}${reach}`)
        .execute(db);
    }
  },
};
