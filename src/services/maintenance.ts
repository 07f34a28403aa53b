import type { Ctx } from "../context.ts";
import { refreshStatistics } from "../db/statistics.ts";
import type { Db } from "../db/connect.ts";
import { kvDeleteExpired } from "../db/queries/federation_kv.ts";
import { deleteOldSignals } from "../realtime/signals.ts";

const DAY = 86_400_000;

/** The job that refreshes the planner's statistics: recurring, and asked for after bulk writes. */
export const STATISTICS_JOB = "maintenance.statistics";
/** Rows written by jobs of one process after which the statistics are checked soon. */
export const BULK_WRITE_ROWS = 1000;
/**
 * How long after a bulk write the check runs: the jobs of a burst share one check, and PostgreSQL
 * backends report their writes to `pg_stat_user_tables` within seconds, not at once.
 */
export const STATISTICS_CHECK_DELAY_MS = 30_000;

/** Keeps the planner's statistics current as tables change (see db/statistics.ts); returns the tables analyzed. */
export async function refreshPlannerStatistics(db: Db): Promise<string[]> {
  return refreshStatistics(db);
}

/** Rows written by this process's jobs since it last asked for a statistics check, per database. */
const unchecked = new WeakMap<Db, number>();

/**
 * Called at the end of a job with the rows it wrote (a fan-out, a merge, a rebuild, a trim): once
 * this process has written `BULK_WRITE_ROWS` since it last asked, one statistics check is
 * scheduled `STATISTICS_CHECK_DELAY_MS` later, and requests meanwhile join the pending one. So a
 * bulk write gets fresh statistics within a minute instead of at the next periodic check.
 */
export async function afterBulkWrite(ctx: Ctx, rows: number): Promise<void> {
  const total = (unchecked.get(ctx.db) ?? 0) + rows;
  unchecked.set(ctx.db, total >= BULK_WRITE_ROWS ? 0 : total);
  if (total < BULK_WRITE_ROWS) return;
  await ctx.jobs.enqueue(STATISTICS_JOB, null, {
    runAt: new Date(Date.now() + STATISTICS_CHECK_DELAY_MS),
    uniqueKey: `${STATISTICS_JOB}:after-writes`,
  });
}

/**
 * Deletes rows that have outlived their use: spent authorization codes, old activity days,
 * long-failed jobs, expired entries of the federation store, stream signals past their ten minutes.
 */
export async function pruneExpiredRecords(
  db: Db,
  now = new Date(),
): Promise<{ grants: number; activityDays: number; failedJobs: number; federationKv: number; signals: number }> {
  const ago = (days: number) => new Date(now.getTime() - days * DAY).toISOString();
  const [grants, activityDays, failedJobs, federationKv, signals] = await Promise.all([
    db.kysely.deleteFrom("oauth_access_grants").where("expires_at", "<", ago(1)).executeTakeFirst(),
    db.kysely.deleteFrom("user_activity_days").where("day", "<", ago(400).slice(0, 10)).executeTakeFirst(),
    db.kysely.deleteFrom("jobs").where("failed_at", "<", ago(30)).executeTakeFirst(),
    kvDeleteExpired(db.kysely, now),
    deleteOldSignals(db, now.getTime()),
  ]);
  return {
    grants: Number(grants.numDeletedRows),
    activityDays: Number(activityDays.numDeletedRows),
    failedJobs: Number(failedJobs.numDeletedRows),
    federationKv,
    signals,
  };
}
