import { BadRequest, ParameterMissing, ValidationFailed } from "../errors.ts";
import { isIdLike } from "../db/ids.ts";

/**
 * A file part of a multipart body: its bytes in memory, or, on routes that spool uploads
 * (`spoolFiles`), the path of a temporary file removed when the response is done.
 */
export type UploadedFile = {
  readonly kind: "file";
  filename: string;
  mimetype: string;
  size: number;
} & ({ data: Buffer; path?: undefined } | { path: string; data?: undefined });

/** The bytes of a file part on a route that keeps them in memory. */
export function fileData(file: UploadedFile): Buffer {
  if (!file.data) throw new Error("this route spools its files; read them from their path");
  return file.data;
}

export type ParamValue = string | number | boolean | null | UploadedFile | ParamValue[] | ParamObject;
export interface ParamObject {
  [key: string]: ParamValue;
}

export function isUploadedFile(value: unknown): value is UploadedFile {
  return typeof value === "object" && value !== null && (value as UploadedFile).kind === "file";
}

function isPlainObject(value: unknown): value is ParamObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !isUploadedFile(value);
}

const KEY_HEAD = /^[[\]]*([^[\]]+)\]*/;

/**
 * JavaScript lists integer-like keys of an object in numeric order, but Rails keeps hash keys in
 * the order they arrived (`fields_attributes[5]…` then `[2]…` fills fields in that order).
 * Parsed hashes remember their arrival order under this symbol; `orderedValues` reads it.
 */
const KEY_ORDER = Symbol("keyOrder");

function setKey(object: ParamObject, key: string, value: ParamValue): void {
  const order = ((object as { [KEY_ORDER]?: string[] })[KEY_ORDER] ??= []);
  if (!(key in object)) order.push(key);
  object[key] = value;
}

/** The values of a parameter hash in the order its keys arrived. */
export function orderedValues(object: ParamObject): ParamValue[] {
  const order = (object as { [KEY_ORDER]?: string[] })[KEY_ORDER];
  const keys = order ? [...order, ...Object.keys(object).filter((k) => !order.includes(k))] : Object.keys(object);
  return keys.filter((k) => k in object).map((k) => object[k]);
}

/** Places one `name=value` pair into `params` the way Rack does (`a[b][]`, `a[][c]`, `a[0][c]`). */
function normalizeParam(params: ParamObject, name: string, value: ParamValue, depth = 0): ParamObject {
  if (depth > 32) throw new BadRequest("Parameters are nested too deeply");
  const match = KEY_HEAD.exec(name);
  const key = match?.[1] ?? "";
  const after = match ? name.slice(match[0].length) : "";
  if (!key) return params;
  if (after === "") {
    setKey(params, key, value);
  } else if (after === "[") {
    setKey(params, name, value);
  } else if (after === "[]") {
    const existing = params[key];
    const list: ParamValue[] = Array.isArray(existing) ? existing : [];
    if (!Array.isArray(existing)) setKey(params, key, list);
    list.push(value);
  } else if (after.startsWith("[]")) {
    const simple = /^\[\]\[([^[\]]+)\]$/.exec(after);
    const childName = simple ? simple[1] : after.slice(2);
    const existing = params[key];
    const list: ParamValue[] = Array.isArray(existing) ? existing : [];
    if (!Array.isArray(existing)) setKey(params, key, list);
    const last = list[list.length - 1];
    if (isPlainObject(last) && !hasNestedKey(last, childName)) {
      normalizeParam(last, childName, value, depth + 1);
    } else {
      list.push(normalizeParam({}, childName, value, depth + 1));
    }
  } else {
    const existing = params[key];
    const child: ParamObject = isPlainObject(existing) ? existing : {};
    if (!isPlainObject(existing)) setKey(params, key, child);
    normalizeParam(child, after, value, depth + 1);
  }
  return params;
}

function hasNestedKey(object: ParamObject, name: string): boolean {
  const parts = name.split(/[[\]]+/).filter(Boolean);
  let current: ParamValue = object;
  for (const part of parts) {
    if (!isPlainObject(current) || !(part in current)) return false;
    current = current[part];
  }
  return true;
}

/** Builds the nested parameter object from ordered name/value pairs. */
export function nestPairs(pairs: Iterable<readonly [string, ParamValue]>): ParamObject {
  const params: ParamObject = Object.create(null);
  for (const [name, value] of pairs) normalizeParam(params, name, value);
  return params;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw new BadRequest("Invalid percent-encoding or UTF-8 in parameters");
  }
}

/** Splits an `application/x-www-form-urlencoded` string (also a query string) into decoded pairs. */
export function decodeFormPairs(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  if (!text) return pairs;
  for (const piece of text.split("&")) {
    if (!piece) continue;
    const eq = piece.indexOf("=");
    const name = decodeComponent(eq === -1 ? piece : piece.slice(0, eq));
    const value = eq === -1 ? "" : decodeComponent(piece.slice(eq + 1));
    pairs.push([name, value]);
  }
  return pairs;
}

export function parseFormEncoded(text: string): ParamObject {
  return nestPairs(decodeFormPairs(text));
}

/** Merges request parameters like Rails: body first, then the query string (which wins), then path params. */
export function mergeParams(body: unknown, query: ParamObject, path: Record<string, string> | undefined): ParamObject {
  const merged: ParamObject = Object.create(null);
  if (isPlainObject(body)) Object.assign(merged, body);
  Object.assign(merged, query);
  if (path) Object.assign(merged, path);
  return merged;
}

// ---- Coercion, the way Mastodon (ActiveModel) casts values. ----

const FALSE_VALUES = new Set(["0", "f", "F", "false", "FALSE", "off", "OFF"]);

/** ActiveModel boolean cast: absent or "" → undefined; false-list → false; anything else → true. */
export function toBoolean(value: ParamValue | undefined): boolean | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0;
  if (typeof value === "string") return !FALSE_VALUES.has(value);
  if (Array.isArray(value)) return toBoolean(value[value.length - 1]);
  return true;
}

/** A string parameter; numbers are accepted and stringified, objects and files are not strings. */
export function toStringParam(value: ParamValue | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** Ruby's `to_i`: leading integer or 0. */
export function toInteger(value: ParamValue | undefined): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) : 0;
  const text = toStringParam(value);
  if (text === undefined) return 0;
  const match = /^\s*([+-]?\d+)/.exec(text);
  return match ? Number.parseInt(match[1], 10) : 0;
}

/** An array of strings; a bare scalar is accepted as a one-element array (lenient, as reference §1 advises). */
export function toStringArray(value: ParamValue | undefined): string[] {
  if (value === undefined || value === null || value === "") return [];
  if (Array.isArray(value)) return value.map(toStringParam).filter((v): v is string => v !== undefined);
  if (isPlainObject(value))
    return orderedValues(value)
      .map(toStringParam)
      .filter((v): v is string => v !== undefined);
  const single = toStringParam(value);
  return single === undefined ? [] : [single];
}

/** A hash parameter (`fields_attributes`, `poll`, `source`): an object, or the values of an array. */
export function toObject(value: ParamValue | undefined): ParamObject | undefined {
  return isPlainObject(value) ? value : undefined;
}

/** `limit` as Mastodon reads it: absent → default; otherwise min(|to_i|, max). */
export function toLimit(value: ParamValue | undefined, fallback: number, max: number): number {
  const n = toInteger(value);
  if (n === undefined) return fallback;
  return Math.min(Math.abs(n), max);
}

/** A required string parameter; missing or blank gives 400 like Rails' `params.require`. */
export function requireString(params: ParamObject, name: string): string {
  const value = toStringParam(params[name]);
  if (value === undefined || value.trim() === "") throw new ParameterMissing(name);
  return value;
}

/** An ID-shaped cursor or reference; anything else is treated as absent (cursors) or not found (lookups). */
export function toId(value: ParamValue | undefined): string | undefined {
  const text = toStringParam(value)?.trim();
  return text && isIdLike(text) ? text : undefined;
}

/** Checks a string against a list of allowed values, 422 otherwise. */
export function toChoice<T extends string>(
  value: ParamValue | undefined,
  choices: readonly T[],
  label: string,
): T | undefined {
  const text = toStringParam(value);
  if (text === undefined || text === "") return undefined;
  if (!choices.includes(text as T)) throw new ValidationFailed(`${label} is not included in the list`);
  return text as T;
}

const EARLIEST_TIME = Date.parse("0001-01-01T00:00:00Z");
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A datetime parameter (ISO 8601): undefined when absent, null when unreadable or outside the
 * years 1–9999 (what both engines store and ISO 8601 writes in four digits), else the time.
 */
export function toTime(value: ParamValue | undefined): Date | null | undefined {
  const text = toStringParam(value)?.trim();
  if (text === undefined || text === "") return undefined;
  const time = Date.parse(text);
  if (Number.isNaN(time) || time < EARLIEST_TIME || time > LATEST_TIME) return null;
  return new Date(time);
}

/** `scheduled_at`, POSTed with a status or PUT on a scheduled one: unreadable or out of range is 422. */
export function scheduledAtParam(value: ParamValue | undefined): Date | undefined {
  const time = toTime(value);
  if (time === null) throw new ValidationFailed("Scheduled at is not a valid date");
  return time;
}
