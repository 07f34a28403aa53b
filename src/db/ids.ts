import { randomInt } from "node:crypto";

/**
 * Mastodon-style time-sortable IDs: milliseconds since the epoch shifted left 16 bits, plus a
 * 16-bit sequence. IDs made by one process are strictly increasing, so records created in the same
 * millisecond still sort in creation order. A new millisecond starts the sequence at a random
 * point in its lower half, so IDs are not enumerable and two processes rarely meet; when the
 * sequence runs out, the next millisecond is borrowed. IDs are decimal strings, never JS numbers.
 */
let lastMs = 0n;
let sequence = 0n;

export function newId(now: number = Date.now()): string {
  let ms = BigInt(now);
  if (ms > lastMs) {
    lastMs = ms;
    sequence = BigInt(randomInt(0, 0x8000));
  } else {
    ms = lastMs;
    sequence++;
    if (sequence > 0xffffn) {
      lastMs = ms = lastMs + 1n;
      sequence = 0n;
    }
  }
  return ((ms << 16n) | sequence).toString();
}

/** The next sequence number of each recently used past millisecond (bounded). */
const pastSequences = new Map<bigint, bigint>();
const PAST_SEQUENCES_MAX = 4096;

/**
 * An ID for a record dated `date` (e.g. a remote status published in the past). Many records of
 * one millisecond (posts published "to the second") get consecutive sequence numbers from a random
 * start, so this process never repeats an ID; another process may, rarely: writers retry.
 */
export function idForTime(date: Date): string {
  const ms = BigInt(date.getTime());
  const sequence = pastSequences.get(ms) ?? BigInt(randomInt(0, 0x10000));
  pastSequences.delete(ms);
  pastSequences.set(ms, (sequence + 1n) & 0xffffn);
  if (pastSequences.size > PAST_SEQUENCES_MAX) pastSequences.delete(pastSequences.keys().next().value!);
  return ((ms << 16n) | sequence).toString();
}

/** The smallest ID of a given millisecond: a cursor for "everything created since `date`". */
export function idFloorForTime(date: Date): string {
  return (BigInt(date.getTime()) << 16n).toString();
}

/** Whether `value` looks like an ID (a decimal integer that fits in a signed 64-bit column). */
export function isIdLike(value: string): boolean {
  return /^-?\d{1,19}$/.test(value) && BigInt(value) <= 9223372036854775807n && BigInt(value) >= -9223372036854775808n;
}

/** Compares two decimal ID strings numerically. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
