import { sql, type Kysely } from "kysely";
import type { Engine, RookeryMigration } from "./types.ts";

/**
 * Full-text search in the database itself, no search engine to run (services/search/search.ts):
 * - SQLite: FTS5 tables over `statuses` (text and content warning) and `accounts` (username,
 *   display name, domain), external-content tables kept by triggers, so a row is searchable in
 *   the transaction that writes it; built from the existing rows here.
 * - PostgreSQL: GIN indexes on the `simple` text-search vectors of the same columns; the queries
 *   use the identical expressions (`STATUS_VECTOR`, `ACCOUNT_VECTOR`); a pattern index serves
 *   hashtag prefixes.
 */
export const STATUS_VECTOR = "to_tsvector('simple', coalesce(spoiler_text, '') || ' ' || coalesce(text, ''))";
export const ACCOUNT_VECTOR =
  "to_tsvector('simple', username || ' ' || coalesce(display_name, '') || ' ' || coalesce(domain, ''))";

const TOKENIZER = "unicode61 remove_diacritics 2";

/** An external-content FTS5 table over `table` and the triggers that keep it. */
// deno-lint-ignore no-explicit-any
async function fts5(db: Kysely<any>, name: string, table: string, columns: string[]): Promise<void> {
  const list = columns.join(", ");
  const values = (row: string) => columns.map((c) => `${row}.${c}`).join(", ");
  await sql
    .raw(
      `CREATE VIRTUAL TABLE ${name} USING fts5(${list}, content='${table}', content_rowid='id', tokenize='${TOKENIZER}')`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${name}_insert AFTER INSERT ON ${table} BEGIN
        INSERT INTO ${name} (rowid, ${list}) VALUES (new.id, ${values("new")}); END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${name}_delete AFTER DELETE ON ${table} BEGIN
        INSERT INTO ${name} (${name}, rowid, ${list}) VALUES ('delete', old.id, ${values("old")}); END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${name}_update AFTER UPDATE OF ${list} ON ${table} BEGIN
        INSERT INTO ${name} (${name}, rowid, ${list}) VALUES ('delete', old.id, ${values("old")});
        INSERT INTO ${name} (rowid, ${list}) VALUES (new.id, ${values("new")}); END`,
    )
    .execute(db);
  await sql.raw(`INSERT INTO ${name} (${name}) VALUES ('rebuild')`).execute(db);
}

export const search: RookeryMigration = {
  name: "0015_search",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    if (engine === "sqlite") {
      await fts5(db, "statuses_search", "statuses", ["text", "spoiler_text"]);
      await fts5(db, "accounts_search", "accounts", ["username", "display_name", "domain"]);
      return;
    }
    await sql.raw(`CREATE INDEX index_statuses_on_search ON statuses USING gin (${STATUS_VECTOR})`).execute(db);
    await sql.raw(`CREATE INDEX index_accounts_on_search ON accounts USING gin (${ACCOUNT_VECTOR})`).execute(db);
    // Hashtag prefixes (`LIKE 'abc%'`) whatever the database's collation.
    await sql`CREATE INDEX index_tags_on_name_pattern ON tags (lower(name) text_pattern_ops)`.execute(db);
  },
};
