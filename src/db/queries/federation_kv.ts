/**
 * Named queries of the federation key–value store (`federation_kv`). Keys arrive encoded (segments
 * percent-encoded and joined with `/`, see src/federation/kv.ts), so a key and the keys under it
 * form one range of the primary key: `p` itself, then `p/` up to (not including) `p0`.
 * An entry past its `expires_at` counts as absent everywhere.
 */
import { isDeepStrictEqual } from "node:util";
import type { ExpressionBuilder, Kysely } from "kysely";
import type { Db } from "../connect.ts";
import { prepared } from "../prepared.ts";
import type { Database } from "../schema.ts";

export interface KvEntry {
  key: string;
  value: unknown;
}

const live = (now: string) => (eb: ExpressionBuilder<Database, "federation_kv">) =>
  eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]);

export async function kvGet(db: Kysely<Database>, key: string, now = new Date()): Promise<unknown> {
  // Read for every inbound activity (Fedify's idempotence record): built once, see db/prepared.ts.
  const { rows } = await db.executeQuery<{ value: string }>(
    prepared<"key" | "now">(
      db,
      "federation_kv.get",
      (slot) =>
        db
          .selectFrom("federation_kv")
          .select("value")
          .where("key", "=", slot("key") as string)
          .where(live(slot("now") as string)),
      { key, now: now.toISOString() },
    ),
  );
  return rows[0] ? JSON.parse(rows[0].value) : undefined;
}

export async function kvSet(db: Kysely<Database>, key: string, value: unknown, expiresAt: Date | null): Promise<void> {
  await db.executeQuery(
    prepared<"key" | "value" | "expires_at">(
      db,
      "federation_kv.set",
      (slot) => {
        const row = { value: slot("value") as string, expires_at: slot("expires_at") as string | null };
        return db
          .insertInto("federation_kv")
          .values({ key: slot("key") as string, ...row })
          .onConflict((oc) => oc.column("key").doUpdateSet(row));
      },
      { key, value: JSON.stringify(value), expires_at: expiresAt?.toISOString() ?? null },
    ),
  );
}

export async function kvDelete(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom("federation_kv").where("key", "=", key).execute();
}

/**
 * Sets `key` to `value` only if it now holds `expected` (deeply equal; `undefined` for absent or
 * expired); true when it did. The read and the write are one transaction holding the row.
 */
export async function kvCompareAndSet(
  db: Db,
  key: string,
  expected: unknown,
  value: unknown,
  expiresAt: Date | null,
  now = new Date(),
): Promise<boolean> {
  return db.kysely.transaction().execute(async (tx) => {
    let current = tx.selectFrom("federation_kv").select(["value", "expires_at"]).where("key", "=", key);
    if (db.engine === "postgres") current = current.forUpdate();
    const row = await current.executeTakeFirst();
    const alive = row && (row.expires_at === null || row.expires_at > now.toISOString());
    const held = alive ? JSON.parse(row.value) : undefined;
    if (!isDeepStrictEqual(held, expected)) return false;
    if (expected === undefined) {
      // Absent: another process may insert it meanwhile; only one insert wins.
      const row = { value: JSON.stringify(value), expires_at: expiresAt?.toISOString() ?? null };
      const inserted = await tx
        .insertInto("federation_kv")
        .values({ key, ...row })
        .onConflict((oc) =>
          oc.column("key").doUpdateSet(row).where("federation_kv.expires_at", "<=", now.toISOString()),
        )
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
    }
    await kvSet(tx, key, value, expiresAt);
    return true;
  });
}

/** The live entries whose key is `prefix` or under it (every entry without a prefix), in key order. */
export async function kvList(db: Kysely<Database>, prefix: string | undefined, now = new Date()): Promise<KvEntry[]> {
  let query = db.selectFrom("federation_kv").select(["key", "value"]).where(live(now.toISOString())).orderBy("key");
  if (prefix !== undefined)
    query = query.where((eb) =>
      eb.or([eb("key", "=", prefix), eb.and([eb("key", ">=", `${prefix}/`), eb("key", "<", `${prefix}0`)])]),
    );
  const rows = await query.execute();
  return rows.map((row) => ({ key: row.key, value: JSON.parse(row.value) }));
}

/** Deletes the entries that expired (housekeeping); returns how many. */
export async function kvDeleteExpired(db: Kysely<Database>, now = new Date()): Promise<number> {
  const result = await db.deleteFrom("federation_kv").where("expires_at", "<=", now.toISOString()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
