// Fedify KvStore over Rookery's Kysely handle (SQLite and PostgreSQL).
// Table (a Rookery migration would create it):
//   CREATE TABLE federation_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at BIGINT NULL);
//   CREATE INDEX federation_kv_expires ON federation_kv (expires_at) WHERE expires_at IS NOT NULL;
// key = JSON.stringify(KvKey) (keys hold URLs and "\n"), value = JSON text, expires_at = epoch ms.
import { isDeepStrictEqual } from "node:util";
import { sql, type Kysely } from "/work/main/node_modules/kysely/dist/index.js"; // "kysely" in Rookery
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";

type Engine = "sqlite" | "postgres";
interface KvDb { federation_kv: { key: string; value: string; expires_at: number | string | null } }

const encode = (key: KvKey) => JSON.stringify(key);
/** ms from a Fedify TTL (a @js-temporal/polyfill Duration; days count as 24 h). */
const expiry = (o?: KvStoreSetOptions) => (o?.ttl == null ? null : Date.now() + o.ttl.total({ unit: "millisecond" }));

export class SqlKvStore implements KvStore {
  readonly #db: Kysely<KvDb>;
  readonly #engine: Engine;
  constructor(db: Kysely<any>, engine: Engine) { this.#db = db as Kysely<KvDb>; this.#engine = engine; }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const row = await this.#db.selectFrom("federation_kv").select(["value", "expires_at"])
      .where("key", "=", encode(key)).executeTakeFirst();
    if (!row || (row.expires_at != null && Number(row.expires_at) <= Date.now())) return undefined;
    return JSON.parse(row.value) as T;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    const row = { key: encode(key), value: JSON.stringify(value ?? null), expires_at: expiry(options) };
    await this.#db.insertInto("federation_kv").values(row)
      .onConflict((oc) => oc.column("key").doUpdateSet({ value: row.value, expires_at: row.expires_at })).execute();
  }

  async delete(key: KvKey): Promise<void> {
    await this.#db.deleteFrom("federation_kv").where("key", "=", encode(key)).execute();
  }

  /** Compare-and-swap: `expected` undefined means "absent"; `newValue` undefined means "delete". */
  async cas(key: KvKey, expected: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const k = encode(key);
    const run = async (tx: Kysely<KvDb>) => {
      let q = tx.selectFrom("federation_kv").select(["value", "expires_at"]).where("key", "=", k);
      if (this.#engine === "postgres") q = q.forUpdate();
      const row = await q.executeTakeFirst();
      const live = row && !(row.expires_at != null && Number(row.expires_at) <= Date.now());
      const current = live ? JSON.parse(row.value) : undefined;
      if (!isDeepStrictEqual(current, expected)) return false;
      if (newValue === undefined) {
        await tx.deleteFrom("federation_kv").where("key", "=", k).execute();
        return true;
      }
      const values = { key: k, value: JSON.stringify(newValue), expires_at: expiry(options) };
      if (row) {
        await tx.updateTable("federation_kv").set({ value: values.value, expires_at: values.expires_at }).where("key", "=", k).execute();
        return true;
      }
      // Absent: a racing inserter wins; ON CONFLICT DO NOTHING tells us we lost.
      const r = await tx.insertInto("federation_kv").values(values).onConflict((oc) => oc.column("key").doNothing()).executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
    };
    // SQLite: Rookery's node:sqlite driver has one connection, so a transaction serialises writers;
    // use BEGIN IMMEDIATE semantics if several processes share the file (Kysely's default is DEFERRED).
    return await this.#db.transaction().execute((tx) => run(tx));
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    let q = this.#db.selectFrom("federation_kv").select(["key", "value", "expires_at"]);
    if (prefix != null) {
      const exact = encode(prefix);
      const starts = exact.slice(0, -1) + ","; // '["_fedify","circuit"' + ','
      q = q.where((eb) => eb.or([
        eb("key", "=", exact),
        eb(sql`substr(key, 1, ${starts.length})`, "=", starts),
      ]));
    }
    const now = Date.now();
    for (const row of await q.orderBy("key").execute()) {
      if (row.expires_at != null && Number(row.expires_at) <= now) continue;
      yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
    }
  }

  /** Run from a recurring job: expired entries are invisible already; this reclaims their space. */
  async sweep(): Promise<number> {
    const r = await this.#db.deleteFrom("federation_kv").where("expires_at", "<=", Date.now()).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
