/**
 * Planner statistics. The list queries are shaped so that their index is the only sensible plan,
 * but both planners still choose better with current statistics: SQLite keeps none until asked
 * (`PRAGMA optimize` analyzes the tables that lack them or changed a lot since), and PostgreSQL's
 * autovacuum may not have analyzed freshly created indexes and tables yet.
 */
import { sql } from "kysely";
import type { Db } from "./connect.ts";

/**
 * Brings the statistics up to date where they are missing or stale. Cheap when nothing changed:
 * run it after opening (SQLite), after migrations, and periodically (the maintenance job).
 */
export async function refreshStatistics(db: Db, options: { afterMigration?: boolean } = {}): Promise<void> {
  if (db.engine === "sqlite") {
    // 0x10002: also analyze tables that were never analyzed (SQLite 3.46+).
    await sql`PRAGMA optimize=0x10002`.execute(db.kysely);
  } else if (options.afterMigration) {
    await sql`ANALYZE`.execute(db.kysely);
  }
}
