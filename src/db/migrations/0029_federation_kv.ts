import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Fedify's key–value store (cached documents and keys, idempotence of received activities,
 * circuit-breaker state) kept in the database, so every process shares it and it survives restarts.
 * Keys are their segments percent-encoded and joined with `/`; PostgreSQL compares them byte by
 * byte (`COLLATE "C"`) so that a prefix is a range of the primary key on both engines.
 */
export const federationKv: RookeryMigration = {
  name: "0029_federation_kv",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("federation_kv")
      .addColumn("key", engine === "postgres" ? sql`text COLLATE "C"` : "text", (c) => c.primaryKey())
      /** JSON. */
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("expires_at", t.timestamp)
      .execute();
    await sql`CREATE INDEX index_federation_kv_on_expires_at ON federation_kv (expires_at) WHERE expires_at IS NOT NULL`.execute(
      db,
    );
  },
};
