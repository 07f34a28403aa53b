import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Local accounts' Ed25519 key pairs (FEP-8b32 object integrity proofs), made on first use; kept
 * apart from `accounts`, whose rows every page reads.
 */
export const accountKeys: RookeryMigration = {
  name: "0032_account_keys",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("account_keys")
      .addColumn("account_id", t.id, (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
      /** PEM (PKCS#8 and SPKI). */
      .addColumn("ed25519_private_key", "text", (c) => c.notNull())
      .addColumn("ed25519_public_key", "text", (c) => c.notNull())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
