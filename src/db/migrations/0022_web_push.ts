import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Web Push: the server's own keys (VAPID, made on first start) and one push subscription per
 * access token, with the alerts and policy the client chose.
 */
export const webPush: RookeryMigration = {
  name: "0022_web_push",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("server_keys")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("public_key", "text", (c) => c.notNull())
      .addColumn("private_key", "text", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("web_push_subscriptions")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("access_token_id", t.id, (c) =>
        c.notNull().unique().references("oauth_access_tokens.id").onDelete("cascade"),
      )
      .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("endpoint", "text", (c) => c.notNull())
      .addColumn("key_p256dh", "text", (c) => c.notNull())
      .addColumn("key_auth", "text", (c) => c.notNull())
      /** RFC 8291 (aes128gcm) rather than the older draft Mastodon sends by default (aesgcm). */
      .addColumn("standard", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      /** JSON object: notification type → boolean. */
      .addColumn("alerts", "text", (c) => c.notNull())
      .addColumn("policy", "text", (c) => c.notNull().defaultTo("all"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_web_push_subscriptions_on_user_id")
      .on("web_push_subscriptions")
      .column("user_id")
      .execute();
  },
};
