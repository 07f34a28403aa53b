import { sql, type Kysely } from "kysely";
import type { Engine, RookeryMigration } from "./types.ts";

/**
 * SQLite's full-text table of statuses (0015) holds only statuses with something to find: a text
 * or a content warning. Posts from other servers keep their text empty (their HTML is `content`),
 * and each of them wrote an index row with no words in it — a write to two more pages of the file
 * for every post that arrived, for a row no search can match. The triggers now skip empty
 * statuses (a status emptied by an edit leaves the index, one given words joins it), and the
 * empty rows already there are removed. PostgreSQL's GIN index holds nothing for an empty vector.
 * FTS5's check of the index against its content table (`'integrity-check'` with rank 1) now
 * reports the statuses left out; the index's own check (rank 0) holds, and a `'rebuild'` would
 * put empty rows back (harmless: they match nothing, and deleting their statuses leaves them).
 */
const nonEmpty = (row: "new" | "old") => `(coalesce(${row}.text, '') <> '' OR coalesce(${row}.spoiler_text, '') <> '')`;

export const searchSkipsEmpty: RookeryMigration = {
  name: "0052_search_skips_empty",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    if (engine !== "sqlite") return;
    for (const trigger of ["insert", "delete", "update"])
      await sql.raw(`DROP TRIGGER statuses_search_${trigger}`).execute(db);
    // The rows of empty statuses go while the old triggers' rule (every status has a row) still holds.
    await sql`INSERT INTO statuses_search (statuses_search, rowid, text, spoiler_text)
      SELECT 'delete', id, text, spoiler_text FROM statuses
      WHERE coalesce(text, '') = '' AND coalesce(spoiler_text, '') = ''`.execute(db);
    await sql
      .raw(
        `CREATE TRIGGER statuses_search_insert AFTER INSERT ON statuses WHEN ${nonEmpty("new")} BEGIN
          INSERT INTO statuses_search (rowid, text, spoiler_text) VALUES (new.id, new.text, new.spoiler_text); END`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER statuses_search_delete AFTER DELETE ON statuses WHEN ${nonEmpty("old")} BEGIN
          INSERT INTO statuses_search (statuses_search, rowid, text, spoiler_text)
          VALUES ('delete', old.id, old.text, old.spoiler_text); END`,
      )
      .execute(db);
    // One trigger, its two steps in this order: the old row leaves before the new one comes.
    await sql
      .raw(
        `CREATE TRIGGER statuses_search_update AFTER UPDATE OF text, spoiler_text ON statuses BEGIN
          INSERT INTO statuses_search (statuses_search, rowid, text, spoiler_text)
            SELECT 'delete', old.id, old.text, old.spoiler_text WHERE ${nonEmpty("old")};
          INSERT INTO statuses_search (rowid, text, spoiler_text)
            SELECT new.id, new.text, new.spoiler_text WHERE ${nonEmpty("new")}; END`,
      )
      .execute(db);
  },
};
