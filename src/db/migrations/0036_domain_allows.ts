import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * The servers a server in limited federation mode federates with (Mastodon's DomainAllow): one
 * row a domain, matched exactly (no subdomains), without a port.
 */
export const domainAllows: RookeryMigration = {
  name: "0036_domain_allows",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("domain_allows")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("domain", "text", (c) => c.notNull().unique())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
