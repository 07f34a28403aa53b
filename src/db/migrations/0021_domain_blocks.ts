import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/** The server's blocks of other servers (Mastodon's DomainBlock), one per domain. */
export const domainBlocks: RookeryMigration = {
  name: "0021_domain_blocks",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("domain_blocks")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("domain", "text", (c) => c.notNull().unique())
      .addColumn("severity", "text", (c) => c.notNull().defaultTo("silence"))
      .addColumn("reject_media", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("reject_reports", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("private_comment", "text")
      .addColumn("public_comment", "text")
      .addColumn("obfuscate", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
