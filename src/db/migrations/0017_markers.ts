import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Reading positions (Mastodon's markers): one row per user and timeline (`home`, `notifications`)
 * with the last read ID and a version that every update advances, checked as an optimistic lock.
 */
export const markers: RookeryMigration = {
  name: "0017_markers",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("markers")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("timeline", "text", (c) => c.notNull())
      .addColumn("last_read_id", t.id, (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .addUniqueConstraint("markers_user_id_timeline_unique", ["user_id", "timeline"])
      .execute();
  },
};
