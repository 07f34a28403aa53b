/**
 * Retention cohorts of the admin dashboard (Mastodon's Admin::Metrics::Retention): the users who
 * signed up in each day (or month) of a window, and for each later period of the window how many
 * of them were still active then — last seen in that period or after it, as Mastodon reads its
 * `current_sign_in_at`. "Seen" is the last day a token of theirs was used (user_activity_days,
 * kept 400 days), or their last sign-in if later. One query over the window's new users.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { idFloorForTime } from "../../db/ids.ts";
import type { Period } from "./metrics_period.ts";

export type Frequency = "day" | "month";

export interface Cohort {
  period: string;
  frequency: Frequency;
  data: Array<{ date: string; rate: number; value: number }>;
}

/** The start of the day or month holding `time` (UTC). */
function truncate(time: number, frequency: Frequency): number {
  const date = new Date(time);
  return frequency === "day"
    ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
    : Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function next(time: number, frequency: Frequency): number {
  const date = new Date(time);
  return frequency === "day" ? time + 86_400_000 : Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

export async function retention(ctx: Ctx, period: Period, frequency: Frequency): Promise<Cohort[]> {
  const first = truncate(period.start, frequency);
  const last = truncate(period.end, frequency);
  const periods: number[] = [];
  for (let p = first; p <= last; p = next(p, frequency)) periods.push(p);
  if (periods.length === 0) return [];
  const lo = idFloorForTime(new Date(first));
  const hi = idFloorForTime(new Date(next(last, frequency)));
  const users = await ctx.db.kysely
    .selectFrom("users as u")
    .select([
      "u.created_at",
      "u.current_sign_in_at",
      (eb) =>
        eb
          .selectFrom("user_activity_days as d")
          .select(sql<string>`max(d.day)`.as("day"))
          .whereRef("d.user_id", "=", "u.id")
          .as("last_day"),
    ])
    .where("u.id", ">=", lo)
    .where("u.id", "<", hi)
    .execute();
  const cohorts = new Map<number, number[]>(periods.map((p) => [p, []]));
  for (const user of users) {
    const signedUp = truncate(Date.parse(user.created_at), frequency);
    const seen = Math.max(
      user.last_day ? Date.parse(`${user.last_day}T00:00:00Z`) : 0,
      user.current_sign_in_at ? Date.parse(user.current_sign_in_at) : 0,
    );
    cohorts.get(signedUp)?.push(seen ? truncate(seen, frequency) : -Infinity);
  }
  return periods.map((cohort) => {
    const lastSeen = cohorts.get(cohort)!;
    return {
      period: new Date(cohort).toISOString(),
      frequency,
      data: periods
        .filter((p) => p >= cohort)
        .map((p) => {
          const value = lastSeen.filter((seen) => seen >= p).length;
          return { date: new Date(p).toISOString(), rate: value / Math.max(lastSeen.length, 1), value };
        }),
    };
  });
}
