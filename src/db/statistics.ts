/**
 * Planner statistics. The list queries are shaped so that their index is the best plan, but
 * PostgreSQL only sees that with statistics: without them it takes an owner's rows (a busy home
 * feed, thousands of bookmarks) for a handful and sorts them all instead of reading the index in
 * order and stopping after the page (test/db/plans.test.ts shows it). Autovacuum keeps them when it
 * runs, but it may be off, or not have run yet after a bulk write (a fresh server's first fan-outs,
 * a rebuild of every feed, an import), so Rookery keeps them itself:
 * - after migrations, every table of the schema is analyzed (new tables, new indexes);
 * - `maintenance.statistics` (every 10 minutes, and soon after jobs that wrote many rows) analyzes
 *   only the tables that need it, by the rule autovacuum uses, and costs one catalog query when
 *   nothing changed.
 * SQLite keeps no statistics until asked; `PRAGMA optimize` makes the same decision there.
 */
import { sql } from "kysely";
import type { Db } from "./connect.ts";

/**
 * A table is analyzed again once this many rows plus `ANALYZE_SCALE` of its live rows changed:
 * autovacuum's defaults (`autovacuum_analyze_threshold`, `autovacuum_analyze_scale_factor`).
 */
export const ANALYZE_THRESHOLD = 50;
export const ANALYZE_SCALE = 0.1;

/** `PRAGMA optimize` flags: 0x02 analyze tables that would benefit, 0x10000 also those never analyzed (SQLite 3.46+). */
const OPTIMIZE = sql.raw("0x10002");
/** The same plus 0x01: list the ANALYZE statements instead of running them. */
const OPTIMIZE_DRY_RUN = sql.raw("0x10003");

export interface RefreshOptions {
  /** Analyze every table (PostgreSQL), as after migrations; otherwise only those that need it. */
  afterMigration?: boolean;
}

/**
 * Brings the statistics up to date where they are missing or stale and returns the tables it
 * analyzed. On PostgreSQL these are the tables of the current schema that were never analyzed yet
 * have rows, or whose changes since their last analysis passed autovacuum's threshold; the counts
 * come from `pg_stat_user_tables`, which backends update within seconds of their writes, not at
 * once. Cheap when nothing changed: run it after migrations, after bulk writes and periodically.
 */
export async function refreshStatistics(db: Db, options: RefreshOptions = {}): Promise<string[]> {
  if (db.engine === "sqlite") {
    const planned = await sql<{ optimize: string }>`PRAGMA optimize=${OPTIMIZE_DRY_RUN}`.execute(db.kysely);
    if (planned.rows.length === 0) return [];
    await sql`PRAGMA optimize=${OPTIMIZE}`.execute(db.kysely);
    // Each row is `ANALYZE "main"."table"`. An empty table without indexes is listed every time but
    // leaves nothing to record, so only the tables that now have statistics count as analyzed.
    const names = planned.rows.map((row) => /"([^"]+)"$/.exec(row.optimize)?.[1] ?? row.optimize);
    const listed = sql.join(names);
    const recorded = await sql<{ tbl: string }>`SELECT DISTINCT tbl FROM sqlite_stat1 WHERE tbl IN (${listed})`.execute(
      db.kysely,
    );
    const analyzed = new Set(recorded.rows.map((row) => row.tbl));
    return names.filter((name) => analyzed.has(name));
  }
  const tables = await sql<{ schema: string; name: string; stale: boolean }>`
    SELECT schemaname AS schema, relname AS name,
      (last_analyze IS NULL AND last_autoanalyze IS NULL AND n_live_tup > 0)
        OR n_mod_since_analyze > ${sql.lit(ANALYZE_THRESHOLD)} + ${sql.lit(ANALYZE_SCALE)} * n_live_tup AS stale
    FROM pg_stat_user_tables WHERE schemaname = current_schema()
    ORDER BY relname`.execute(db.kysely);
  const chosen = tables.rows.filter((t) => options.afterMigration || t.stale);
  if (chosen.length === 0) return [];
  // SKIP_LOCKED: a table autovacuum (or another process) is analyzing right now is left to it.
  await sql`ANALYZE (SKIP_LOCKED) ${sql.join(chosen.map((t) => sql.id(t.schema, t.name)))}`.execute(db.kysely);
  return chosen.map((t) => t.name);
}
