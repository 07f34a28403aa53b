import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Rankings computed from recent activity by the `trends.refresh` job (services/trends/trends.ts):
 * trending hashtags, statuses and links, and the most followed active accounts that suggestions
 * offer. A request reads one ranking in order, never the activity itself.
 */
export const trends: RookeryMigration = {
  name: "0016_trends",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("trends")
      // `tags`, `statuses`, `links` or `accounts`.
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("item_id", t.id, (c) => c.notNull())
      .addColumn("score", "real", (c) => c.notNull())
      .addColumn("computed_at", t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint("trends_pkey", ["kind", "position"])
      .execute();
  },
};
