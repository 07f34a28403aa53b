import { BOOLEAN_COLUMNS } from "./schema.ts";

/**
 * Gives SQLite rows the JavaScript types PostgreSQL rows have, so that services never see a
 * difference: IDs (`id`, `*_id`) are decimal strings (they exceed 2^53 and must never become
 * numbers), flags listed in BOOLEAN_COLUMNS are booleans, other integers are numbers.
 */
export function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in row) {
    let value = row[key];
    if (value !== null && (key === "id" || key.endsWith("_id"))) {
      value = String(value);
    } else if (typeof value === "bigint") {
      value = BOOLEAN_COLUMNS.has(key)
        ? value !== 0n
        : value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
          ? Number(value)
          : String(value);
    }
    out[key] = value;
  }
  return out;
}
