import { sql } from "kysely";
import type { Db } from "../../db/connect.ts";

function daysAgo(days: number, now: Date): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString().slice(0, 10);
}

/** Confirmed local users whose account is not suspended (what NodeInfo and v1 stats count). */
export async function localUserCount(db: Db): Promise<number> {
  const row = await db.kysely
    .selectFrom("users")
    .innerJoin("accounts", "accounts.id", "users.account_id")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("users.confirmed_at", "is not", null)
    .where("accounts.suspended_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Users seen (by any token use) within the last `days` days. */
export async function activeUserCount(db: Db, days: number, now = new Date()): Promise<number> {
  const row = await db.kysely
    .selectFrom("user_activity_days")
    .select(sql<number>`count(distinct user_id)`.as("n"))
    .where("day", ">", daysAgo(days, now))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function localStatusCount(db: Db): Promise<number> {
  const row = await db.kysely
    .selectFrom("statuses")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("local", "=", true)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Domains of the remote accounts this server knows, sorted. */
export async function knownDomains(db: Db): Promise<string[]> {
  const rows = await db.kysely
    .selectFrom("accounts")
    .select("domain")
    .distinct()
    .where("domain", "is not", null)
    .orderBy("domain")
    .execute();
  return rows.map((r) => r.domain!).filter(Boolean);
}

export async function knownDomainCount(db: Db): Promise<number> {
  const row = await db.kysely
    .selectFrom("accounts")
    .select(sql<number>`count(distinct domain)`.as("n"))
    .where("domain", "is not", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface WeekActivity {
  week: string;
  statuses: string;
  logins: string;
  registrations: string;
}

/** Start (Monday 00:00 UTC) of the week holding `now`. */
export function weekStart(now: Date): Date {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * 86_400_000);
}

/**
 * The last 12 weeks, newest first: local statuses posted, users active and users registered per
 * week. One query per measure, bucketed with CASE so both engines run the same SQL.
 */
export async function weeklyActivity(db: Db, now = new Date()): Promise<WeekActivity[]> {
  const first = weekStart(now);
  const weeks = Array.from({ length: 12 }, (_, i) => new Date(first.getTime() - i * 7 * 86_400_000));
  const bounds = weeks.map((start) => ({ start, end: new Date(start.getTime() + 7 * 86_400_000) }));
  const buckets = (column: string, asDay: boolean) =>
    bounds.map(({ start, end }, i) => {
      const from = asDay ? start.toISOString().slice(0, 10) : start.toISOString();
      const to = asDay ? end.toISOString().slice(0, 10) : end.toISOString();
      return sql<number>`count(distinct case when ${sql.ref(column)} >= ${from} and ${sql.ref(column)} < ${to} then ${sql.ref(asDay ? "user_id" : "id")} end)`.as(
        `w${i}`,
      );
    });
  const oldest = bounds[bounds.length - 1].start;
  const [statuses, logins, registrations] = await Promise.all([
    db.kysely
      .selectFrom("statuses")
      .select(buckets("created_at", false))
      .where("local", "=", true)
      .where("created_at", ">=", oldest.toISOString())
      .executeTakeFirstOrThrow(),
    db.kysely
      .selectFrom("user_activity_days")
      .select(buckets("day", true))
      .where("day", ">=", oldest.toISOString().slice(0, 10))
      .executeTakeFirstOrThrow(),
    db.kysely
      .selectFrom("users")
      .select(buckets("created_at", false))
      .where("created_at", ">=", oldest.toISOString())
      .executeTakeFirstOrThrow(),
  ]);
  const pick = (row: Record<string, unknown>, i: number) => String(Number(row[`w${i}`] ?? 0));
  return bounds.map(({ start }, i) => ({
    week: String(Math.floor(start.getTime() / 1000)),
    statuses: pick(statuses, i),
    logins: pick(logins, i),
    registrations: pick(registrations, i),
  }));
}
