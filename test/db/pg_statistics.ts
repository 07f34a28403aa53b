/**
 * PostgreSQL statistics in tests: keeping autovacuum away from a test's tables (so "never analyzed"
 * stays true until the code under test analyzes), and making the pool's backends report their
 * writes to `pg_stat_user_tables` now rather than within the ten seconds PostgreSQL allows itself.
 */
import { sql } from "kysely";
import type { Db } from "../../src/db/connect.ts";

/** Connections in the pool of `createTestServer` (test/kit.ts). */
const TEST_POOL_SIZE = 4;

/** Turns autovacuum (and so its ANALYZE) off for every table of the current schema. */
export async function disableAutovacuum(db: Db): Promise<void> {
  const tables = await sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`.execute(db.kysely);
  for (const { name } of tables.rows)
    await sql`ALTER TABLE ${sql.id(name)} SET (autovacuum_enabled = false)`.execute(db.kysely);
}

/**
 * Makes every connection of the pool report its pending table counters: each is held at once (so
 * all are reached) and asks its backend to report at the end of its statement (PostgreSQL 15+).
 * A pool smaller than `connections` fails after its connection timeout rather than hanging.
 */
export async function reportTableCounters(db: Db, connections = TEST_POOL_SIZE): Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const allHeld = new Promise<void>((resolve) => (release = resolve));
  await Promise.all(
    Array.from({ length: connections }, () =>
      db.kysely.connection().execute(async (connection) => {
        await sql`SELECT pg_stat_force_next_flush()`.execute(connection);
        if (++arrived === connections) release();
        await allHeld;
      }),
    ),
  );
}

/** What `pg_stat_user_tables` says of `table` in the current schema. */
export async function tableCounters(
  db: Db,
  table: string,
): Promise<{ analyzed: boolean; live: number; modifiedSinceAnalyze: number }> {
  const row = (
    await sql<{ analyzed: boolean; live: string; modified: string }>`
      SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL AS analyzed,
        n_live_tup AS live, n_mod_since_analyze AS modified
      FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ${table}`.execute(db.kysely)
  ).rows[0];
  if (!row) throw new Error(`no table ${table} in the current schema`);
  return { analyzed: row.analyzed, live: Number(row.live), modifiedSinceAnalyze: Number(row.modified) };
}
