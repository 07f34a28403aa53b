import { refreshStatistics } from "../db/statistics.ts";
import type { Db } from "../db/connect.ts";

const DAY = 86_400_000;

/** Keeps the planner's statistics current as tables grow (SQLite; PostgreSQL's autovacuum does it there). */
export async function refreshPlannerStatistics(db: Db): Promise<void> {
  await refreshStatistics(db);
}

/** Deletes rows that have outlived their use: spent authorization codes, old activity days, long-failed jobs. */
export async function pruneExpiredRecords(
  db: Db,
  now = new Date(),
): Promise<{ grants: number; activityDays: number; failedJobs: number }> {
  const ago = (days: number) => new Date(now.getTime() - days * DAY).toISOString();
  const [grants, activityDays, failedJobs] = await Promise.all([
    db.kysely.deleteFrom("oauth_access_grants").where("expires_at", "<", ago(1)).executeTakeFirst(),
    db.kysely.deleteFrom("user_activity_days").where("day", "<", ago(400).slice(0, 10)).executeTakeFirst(),
    db.kysely.deleteFrom("jobs").where("failed_at", "<", ago(30)).executeTakeFirst(),
  ]);
  return {
    grants: Number(grants.numDeletedRows),
    activityDays: Number(activityDays.numDeletedRows),
    failedJobs: Number(failedJobs.numDeletedRows),
  };
}
