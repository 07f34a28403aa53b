/**
 * The server's VAPID key pair (RFC 8292), made on first start and kept in the database so that
 * every process and every restart signs pushes with the same key clients subscribed with.
 */
import webpush from "web-push";
import type { Ctx } from "../../context.ts";

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

const cache = new WeakMap<Ctx["db"], Promise<VapidKeys>>();

async function loadOrCreate(ctx: Ctx): Promise<VapidKeys> {
  const db = ctx.db.kysely;
  const stored = await db.selectFrom("server_keys").selectAll().where("name", "=", "vapid").executeTakeFirst();
  if (stored) return { publicKey: stored.public_key, privateKey: stored.private_key };
  const made = webpush.generateVAPIDKeys();
  // Two processes starting at once: the first insert wins and both read it back.
  await db
    .insertInto("server_keys")
    .values({
      name: "vapid",
      public_key: made.publicKey,
      private_key: made.privateKey,
      created_at: new Date().toISOString(),
    })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await db.selectFrom("server_keys").selectAll().where("name", "=", "vapid").executeTakeFirstOrThrow();
  return { publicKey: row.public_key, privateKey: row.private_key };
}

/** The server's VAPID keys (generated and stored the first time). */
export function vapidKeys(ctx: Ctx): Promise<VapidKeys> {
  let keys = cache.get(ctx.db);
  if (!keys) {
    keys = loadOrCreate(ctx);
    keys.catch(() => cache.delete(ctx.db));
    cache.set(ctx.db, keys);
  }
  return keys;
}
