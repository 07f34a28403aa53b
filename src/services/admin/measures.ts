/**
 * The admin dashboard's measures (Mastodon's Admin::Metrics::Measure): per-day numbers over a
 * window of days, their total, and for most the total of the period before. Each is computed from
 * the rows Rookery keeps, by one or two queries over a range of IDs (or of indexed days):
 * - active_users: users seen on each day (user_activity_days, written on any use of a token);
 *   the total counts each user once.
 * - new_users, opened_reports: rows created each day; resolved_reports: reports resolved each day.
 * - interactions: favourites, boosts and replies made by local accounts (what Mastodon counts as
 *   they happen).
 * - tag_accounts, tag_uses, tag_servers (`{id}`): posts with the hashtag, their distinct authors
 *   and distinct other servers, as the hashtag's history counts them.
 * - instance_* (`{domain}`): a server's accounts, media bytes, reports against its accounts,
 *   posts, follows of and by its accounts; the total is all time, as Mastodon's is. Its
 *   `include_subdomains` is not supported: Rookery keeps no list of servers to match it on.
 * Rookery stores no thumbnail sizes, so media bytes are the files' alone.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import {
  dayOfId,
  dayString,
  daysOf,
  domainOf,
  idRange,
  isoDay,
  previousPeriod,
  tagIdOf,
  DAY_MS,
  type Period,
} from "./metrics_period.ts";

/** Mastodon's measure keys, in its order. */
export const MEASURE_KEYS = [
  "active_users",
  "new_users",
  "interactions",
  "opened_reports",
  "resolved_reports",
  "tag_accounts",
  "tag_uses",
  "tag_servers",
  "instance_accounts",
  "instance_media_attachments",
  "instance_reports",
  "instance_statuses",
  "instance_follows",
  "instance_followers",
] as const;
export type MeasureKey = (typeof MEASURE_KEYS)[number];

/** The parameters a key takes (`tag_uses[id]`, `instance_accounts[domain]`). */
export interface MeasureParams {
  id?: string;
  domain?: string;
}

export interface Measure {
  key: MeasureKey;
  unit: string | null;
  total: number;
  /** The total for people (bytes as `1.5 MB`), where Mastodon writes one. */
  humanValue?: string;
  /** Absent where the total is all time, not the window's. */
  previousTotal?: number;
  data: Array<{ date: string; value: number }>;
}

type DayCounts = Map<number, number>;

function toDayCounts(rows: ReadonlyArray<{ day: unknown; n: unknown }>): DayCounts {
  const counts: DayCounts = new Map();
  for (const row of rows) {
    const day = Number(row.day) * DAY_MS;
    counts.set(day, (counts.get(day) ?? 0) + Number(row.n ?? 0));
  }
  return counts;
}

function series(period: Period, counts: DayCounts): Measure["data"] {
  return daysOf(period).map((day) => ({ date: isoDay(day), value: counts.get(day) ?? 0 }));
}

const sum = (counts: DayCounts) => [...counts.values()].reduce((a, b) => a + b, 0);

/** Per-day counts and their sum over a window, for a query of one window. */
async function windowed(
  period: Period,
  perDay: (p: Period) => Promise<DayCounts>,
): Promise<Pick<Measure, "total" | "previousTotal" | "data">> {
  const [current, previous] = await Promise.all([perDay(period), perDay(previousPeriod(period))]);
  return { total: sum(current), previousTotal: sum(previous), data: series(period, current) };
}

const count = (n: unknown) => Number(n ?? 0);

/** The measures named in `keys` (unknown keys are left out, as Mastodon does). */
export async function measures(
  ctx: Ctx,
  keys: readonly string[],
  period: Period,
  params: Readonly<Record<string, MeasureParams | undefined>>,
): Promise<Measure[]> {
  const known = [...new Set(keys)].filter((k): k is MeasureKey => (MEASURE_KEYS as readonly string[]).includes(k));
  const results: Measure[] = [];
  for (const key of known) results.push(await measure(ctx, key, period, params[key]));
  return results;
}

async function measure(ctx: Ctx, key: MeasureKey, period: Period, params: MeasureParams | undefined): Promise<Measure> {
  const db = ctx.db.kysely;
  const unit = key === "instance_media_attachments" ? "bytes" : null;
  switch (key) {
    case "active_users": {
      const distinct = async (p: Period) =>
        count(
          (
            await db
              .selectFrom("user_activity_days")
              .select(sql<number>`count(distinct user_id)`.as("n"))
              .where("day", ">=", dayString(p.start))
              .where("day", "<=", dayString(p.end))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const rows = await db
        .selectFrom("user_activity_days")
        .select(["day", (eb) => eb.fn.countAll().as("n")])
        .where("day", ">=", dayString(period.start))
        .where("day", "<=", dayString(period.end))
        .groupBy("day")
        .execute();
      const counts: DayCounts = new Map(rows.map((r) => [Date.parse(`${r.day}T00:00:00Z`), count(r.n)]));
      const [total, previousTotal] = await Promise.all([distinct(period), distinct(previousPeriod(period))]);
      return { key, unit, total, previousTotal, data: series(period, counts) };
    }
    case "new_users":
      return { key, unit, ...(await windowed(period, (p) => countById(ctx, "users", p))) };
    case "opened_reports":
      return { key, unit, ...(await windowed(period, (p) => countById(ctx, "reports", p))) };
    case "resolved_reports":
      return { key, unit, ...(await windowed(period, (p) => resolvedReports(ctx, p))) };
    case "interactions":
      return { key, unit, ...(await windowed(period, (p) => interactions(ctx, p))) };
    case "tag_uses":
    case "tag_accounts":
    case "tag_servers":
      return { key, unit, ...(await tagMeasure(ctx, key, period, await tagIdOf(ctx, key, params))) };
    default: {
      const result = await instanceMeasure(ctx, key, period, domainOf(key, params));
      return { key, unit, ...result, ...(unit === "bytes" ? { humanValue: humanSize(result.total) } : {}) };
    }
  }
}

async function countById(ctx: Ctx, table: "users" | "reports", period: Period): Promise<DayCounts> {
  const [lo, hi] = idRange(period);
  const rows = await ctx.db.kysely
    .selectFrom(table)
    .select([dayOfId("id").as("day"), (eb) => eb.fn.countAll().as("n")])
    .where("id", ">=", lo)
    .where("id", "<", hi)
    .groupBy(dayOfId("id"))
    .execute();
  return toDayCounts(rows);
}

/** Reports resolved in the period, by the day of resolution (on the action_taken_at index). */
async function resolvedReports(ctx: Ctx, period: Period): Promise<DayCounts> {
  const rows = await ctx.db.kysely
    .selectFrom("reports")
    .select("action_taken_at")
    .where("action_taken_at", ">=", isoDay(period.start))
    .where("action_taken_at", "<", isoDay(period.end + DAY_MS))
    .execute();
  const counts: DayCounts = new Map();
  for (const row of rows) {
    const day = Math.floor(Date.parse(row.action_taken_at!) / DAY_MS) * DAY_MS;
    counts.set(day, (counts.get(day) ?? 0) + 1);
  }
  return counts;
}

async function interactions(ctx: Ctx, period: Period): Promise<DayCounts> {
  const [lo, hi] = idRange(period);
  const db = ctx.db.kysely;
  const [favourites, posts] = await Promise.all([
    db
      .selectFrom("favourites as f")
      .innerJoin("accounts as a", "a.id", "f.account_id")
      .select([dayOfId("f.id").as("day"), (eb) => eb.fn.countAll().as("n")])
      .where("f.id", ">=", lo)
      .where("f.id", "<", hi)
      .where("a.domain", "is", null)
      .groupBy(dayOfId("f.id"))
      .execute(),
    db
      .selectFrom("statuses")
      .select([dayOfId("id").as("day"), (eb) => eb.fn.countAll().as("n")])
      .where("id", ">=", lo)
      .where("id", "<", hi)
      .where("local", "=", true)
      .where("deleted_at", "is", null)
      .where((eb) => eb.or([eb("reblog_of_id", "is not", null), eb("in_reply_to_id", "is not", null)]))
      .groupBy(dayOfId("id"))
      .execute(),
  ]);
  const counts = toDayCounts(favourites);
  for (const [day, n] of toDayCounts(posts)) counts.set(day, (counts.get(day) ?? 0) + n);
  return counts;
}

async function tagMeasure(
  ctx: Ctx,
  key: "tag_uses" | "tag_accounts" | "tag_servers",
  period: Period,
  tagId: string,
): Promise<Pick<Measure, "total" | "previousTotal" | "data">> {
  const db = ctx.db.kysely;
  const what =
    key === "tag_uses"
      ? sql<number>`count(*)`
      : key === "tag_accounts"
        ? sql<number>`count(distinct s.account_id)`
        : sql<number>`count(distinct a.domain)`;
  const base = (p: Period) => {
    const [lo, hi] = idRange(p);
    return db
      .selectFrom("statuses_tags as st")
      .innerJoin("statuses as s", "s.id", "st.status_id")
      .innerJoin("accounts as a", "a.id", "s.account_id")
      .where("st.tag_id", "=", tagId)
      .where("st.status_id", ">=", lo)
      .where("st.status_id", "<", hi)
      .where("s.deleted_at", "is", null);
  };
  const perDay = async (p: Period) =>
    toDayCounts(
      await base(p)
        .select([dayOfId("st.status_id").as("day"), what.as("n")])
        .groupBy(dayOfId("st.status_id"))
        .execute(),
    );
  const total = async (p: Period) => count((await base(p).select(what.as("n")).executeTakeFirstOrThrow()).n);
  const [counts, current, previous] = await Promise.all([perDay(period), total(period), total(previousPeriod(period))]);
  return { total: current, previousTotal: previous, data: series(period, counts) };
}

async function instanceMeasure(
  ctx: Ctx,
  key: Extract<MeasureKey, `instance_${string}`>,
  period: Period,
  domain: string,
): Promise<Pick<Measure, "total" | "data">> {
  const db = ctx.db.kysely;
  const [lo, hi] = idRange(period);
  let total: unknown;
  let rows: Array<{ day: unknown; n: unknown }>;
  switch (key) {
    case "instance_accounts": {
      const base = db.selectFrom("accounts").where("domain", "=", domain);
      total = (await base.select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n;
      rows = await base
        .select([dayOfId("id").as("day"), (eb) => eb.fn.countAll().as("n")])
        .where("id", ">=", lo)
        .where("id", "<", hi)
        .groupBy(dayOfId("id"))
        .execute();
      break;
    }
    case "instance_media_attachments": {
      const base = db
        .selectFrom("accounts as a")
        .innerJoin("media_attachments as m", "m.account_id", "a.id")
        .where("a.domain", "=", domain);
      const bytes = sql<number>`coalesce(sum(m.file_size), 0)`;
      total = (await base.select(bytes.as("n")).executeTakeFirstOrThrow()).n;
      rows = await base
        .select([dayOfId("m.id").as("day"), bytes.as("n")])
        .where("m.id", ">=", lo)
        .where("m.id", "<", hi)
        .groupBy(dayOfId("m.id"))
        .execute();
      break;
    }
    case "instance_reports": {
      const base = db
        .selectFrom("accounts as a")
        .innerJoin("reports as r", "r.target_account_id", "a.id")
        .where("a.domain", "=", domain);
      total = (await base.select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n;
      rows = await base
        .select([dayOfId("r.id").as("day"), (eb) => eb.fn.countAll().as("n")])
        .where("r.id", ">=", lo)
        .where("r.id", "<", hi)
        .groupBy(dayOfId("r.id"))
        .execute();
      break;
    }
    case "instance_statuses": {
      const base = db
        .selectFrom("accounts as a")
        .innerJoin("statuses as s", "s.account_id", "a.id")
        .where("a.domain", "=", domain)
        .where("s.deleted_at", "is", null);
      total = (await base.select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n;
      rows = await base
        .select([dayOfId("s.id").as("day"), (eb) => eb.fn.countAll().as("n")])
        .where("s.id", ">=", lo)
        .where("s.id", "<", hi)
        .groupBy(dayOfId("s.id"))
        .execute();
      break;
    }
    case "instance_follows":
    case "instance_followers": {
      // Follows of the server's accounts (by anyone here), or by its accounts.
      const side = key === "instance_follows" ? "f.target_account_id" : "f.account_id";
      const base = db
        .selectFrom("accounts as a")
        .innerJoin("follows as f", side, "a.id")
        .where("a.domain", "=", domain);
      total = (await base.select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n;
      rows = await base
        .select([dayOfId("f.id").as("day"), (eb) => eb.fn.countAll().as("n")])
        .where("f.id", ">=", lo)
        .where("f.id", "<", hi)
        .groupBy(dayOfId("f.id"))
        .execute();
      break;
    }
  }
  return { total: count(total), data: series(period, toDayCounts(rows)) };
}

/** Mastodon's number_to_human_size: `0 Bytes`, `1 Byte`, `1.5 KB`, `12.3 MB` (three significant digits). */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? "Byte" : "Bytes"}`;
  const units = ["KB", "MB", "GB", "TB", "PB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}
