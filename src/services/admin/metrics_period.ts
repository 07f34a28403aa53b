/**
 * The time window of the admin dashboard's measures, dimensions and retention (Mastodon's
 * Admin::Metrics): whole UTC days from `start_at`'s day to `end_at`'s day, both included. Rows are
 * put into days by their time-ordered IDs (milliseconds << 16), so a window is a range of the
 * primary key and a day is an integer division both engines do alike.
 */
import { sql, type RawBuilder } from "kysely";
import { idFloorForTime } from "../../db/ids.ts";
import type { Ctx } from "../../context.ts";
import { NotFound, ParameterMissing, ValidationFailed } from "../../errors.ts";

export const DAY_MS = 86_400_000;
/** The longest window asked for at once: a year and a month, enough for any dashboard view. */
export const MAX_DAYS = 400;

/** Milliseconds of the first day's and of the last day's midnights (UTC). */
export interface Period {
  start: number;
  end: number;
}

/** The days of `start` … `end`; refuses windows longer than MAX_DAYS. */
export function periodOf(start: Date, end: Date): Period {
  const period = {
    start: Math.floor(start.getTime() / DAY_MS) * DAY_MS,
    end: Math.floor(end.getTime() / DAY_MS) * DAY_MS,
  };
  if ((period.end - period.start) / DAY_MS + 1 > MAX_DAYS)
    throw new ValidationFailed(`The period is too long (maximum is ${MAX_DAYS} days)`);
  return period;
}

/** Mastodon's previous period: the same length, ending where this one starts. */
export function previousPeriod(period: Period): Period {
  const length = period.end - period.start;
  return { start: period.start - length, end: period.end - length };
}

/** The midnights of the period's days, in order (empty when it ends before it starts). */
export function daysOf(period: Period): number[] {
  const days: number[] = [];
  for (let day = period.start; day <= period.end; day += DAY_MS) days.push(day);
  return days;
}

/** `[lowest ID, ID after the last]` of rows created in the period. */
export function idRange(period: Period): [string, string] {
  return [idFloorForTime(new Date(period.start)), idFloorForTime(new Date(period.end + DAY_MS))];
}

/** The day (days since the epoch) of a time-ordered ID column, as SQL. */
export function dayOfId(column: string): RawBuilder<number> {
  // 2^16 sequence numbers per millisecond, 86 400 000 milliseconds per day.
  return sql<number>`(${sql.ref(column)} / ${sql.raw(String(65_536 * DAY_MS))})`;
}

/** `YYYY-MM-DD` of a day's midnight. */
export function dayString(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** A day's midnight as the API writes dates. */
export function isoDay(time: number): string {
  return new Date(time).toISOString();
}

const names = new Intl.DisplayNames(["en"], { type: "language", fallback: "code" });

/** A language code's English name (the code itself when unknown; `und` is "Unknown"). */
export function languageName(code: string): string {
  if (code === "und") return "Unknown";
  try {
    return names.of(code) ?? code;
  } catch {
    return code;
  }
}

/** What some keys of measures and dimensions need: a hashtag's `id`, a server's `domain`. */
export interface KeyParams {
  id?: string;
  domain?: string;
}

/** The hashtag a key's `id` names (400 without one, 404 for an unknown one). */
export async function tagIdOf(ctx: Ctx, key: string, params: KeyParams | undefined): Promise<string> {
  if (!params?.id) throw new ParameterMissing(key);
  const tag = /^\d{1,19}$/.test(params.id)
    ? await ctx.db.kysely.selectFrom("tags").select("id").where("id", "=", params.id).executeTakeFirst()
    : undefined;
  if (!tag) throw new NotFound();
  return tag.id;
}

/** The server a key's `domain` names, lower case (400 without one). */
export function domainOf(key: string, params: KeyParams | undefined): string {
  const domain = params?.domain?.trim().toLowerCase();
  if (!domain) throw new ParameterMissing(key);
  return domain;
}
