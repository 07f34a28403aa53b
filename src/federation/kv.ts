/**
 * Fedify's `KvStore` on Rookery's own database (db/queries/federation_kv.ts), so that every process
 * shares one store that survives restarts, on SQLite and PostgreSQL alike — the registry's
 * `@fedify/sqlite`, `@fedify/postgres` and `@fedify/redis` are builds for Fedify 1.x.
 * A key's segments are percent-encoded and joined with `/`: no segment contains `/`, so the keys
 * under a prefix are one range of the primary key.
 */
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import type { Db } from "../db/connect.ts";
import { durationMs } from "./durations.ts";
import { kvCompareAndSet, kvDelete, kvGet, kvList, kvSet } from "../db/queries/federation_kv.ts";

export const encodeKey = (key: KvKey): string => key.map((segment) => encodeURIComponent(segment)).join("/");

export const decodeKey = (text: string): KvKey =>
  text.split("/").map((segment) => decodeURIComponent(segment)) as unknown as KvKey;

/** When an entry set now with `options` expires (null: never). */
function expiryOf(options: KvStoreSetOptions | undefined, now = Date.now()): Date | null {
  if (!options?.ttl) return null;
  return new Date(now + durationMs(options.ttl, now));
}

export class DatabaseKvStore implements KvStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    return (await kvGet(this.#db.kysely, encodeKey(key))) as T | undefined;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    await kvSet(this.#db.kysely, encodeKey(key), value, expiryOf(options));
  }

  async delete(key: KvKey): Promise<void> {
    await kvDelete(this.#db.kysely, encodeKey(key));
  }

  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    return kvCompareAndSet(this.#db, encodeKey(key), expectedValue, newValue, expiryOf(options));
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    for (const entry of await kvList(this.#db.kysely, prefix ? encodeKey(prefix) : undefined))
      yield { key: decodeKey(entry.key), value: entry.value };
  }
}
