import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Notifications as Mastodon keeps them: one row per receiver, activity and type (repeats are
 * ignored), found by receiver and ID, by group, by sender and by activity (to remove it with its
 * favourite, follow or boost); the receiver's notification policy, the senders whose
 * notifications the receiver accepted, and the requests that collect filtered mentions.
 */
export const notifications: RookeryMigration = {
  name: "0018_notifications",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createIndex("index_notifications_on_activity")
      .on("notifications")
      .columns(["account_id", "activity_type", "activity_id", "type"])
      .unique()
      .execute();
    await db.schema
      .createIndex("index_notifications_on_activity_id")
      .on("notifications")
      .columns(["activity_id", "activity_type"])
      .execute();
    await db.schema
      .createIndex("index_notifications_on_group_key")
      .on("notifications")
      .columns(["account_id", "group_key", "id"])
      .where(sql.ref("group_key"), "is not", null)
      .execute();
    await db.schema
      .createIndex("index_notifications_on_from_account")
      .on("notifications")
      .columns(["account_id", "from_account_id", "id"])
      .execute();
    await db.schema.createIndex("index_notifications_on_status_id").on("notifications").column("status_id").execute();

    await db.schema
      .createTable("notification_policies")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().unique().references("accounts.id").onDelete("cascade"))
      .addColumn("for_not_following", "text", (c) => c.notNull().defaultTo("accept"))
      .addColumn("for_not_followers", "text", (c) => c.notNull().defaultTo("accept"))
      .addColumn("for_new_accounts", "text", (c) => c.notNull().defaultTo("accept"))
      .addColumn("for_private_mentions", "text", (c) => c.notNull().defaultTo("filter"))
      .addColumn("for_limited_accounts", "text", (c) => c.notNull().defaultTo("filter"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("notification_permissions")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("from_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("notification_permissions_pair_unique", ["account_id", "from_account_id"])
      .execute();

    await db.schema
      .createTable("notification_requests")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("from_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("last_status_id", t.id, (c) => c.references("statuses.id").onDelete("set null"))
      .addColumn("dismissed", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("notification_requests_pair_unique", ["account_id", "from_account_id"])
      .execute();
    await db.schema
      .createIndex("index_notification_requests_on_account_id_and_dismissed")
      .on("notification_requests")
      .columns(["account_id", "dismissed", "id"])
      .execute();
  },
};
