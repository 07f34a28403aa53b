/**
 * Fedify's durations (TTLs of stored entries, delays of queued messages) in milliseconds. Fedify
 * gives days and shorter units, which are exact arithmetic; the Temporal polyfill's calendar
 * arithmetic (`total` with `relativeTo`) is used only for weeks, months and years, since it cost
 * more than a percent of an inbox worker's time at one call per handled activity.
 */
import { Temporal } from "@js-temporal/polyfill";

type DurationFields = Partial<
  Record<
    | "years"
    | "months"
    | "weeks"
    | "days"
    | "hours"
    | "minutes"
    | "seconds"
    | "milliseconds"
    | "microseconds"
    | "nanoseconds",
    number
  >
>;

export function durationMs(duration: Temporal.Duration | Temporal.DurationLike, now: number): number {
  const d = duration as DurationFields;
  if (!d.years && !d.months && !d.weeks)
    return (
      (d.days ?? 0) * 86_400_000 +
      (d.hours ?? 0) * 3_600_000 +
      (d.minutes ?? 0) * 60_000 +
      (d.seconds ?? 0) * 1000 +
      (d.milliseconds ?? 0) +
      (d.microseconds ?? 0) / 1000 +
      (d.nanoseconds ?? 0) / 1_000_000
    );
  return Temporal.Duration.from(duration).total({
    unit: "millisecond",
    relativeTo: Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO("UTC"),
  });
}
