import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * The admin block lists of sign-ups (Mastodon's IpBlock, CanonicalEmailBlock, EmailDomainBlock):
 * IP ranges with a severity, hashes of canonical e-mail addresses, and for e-mail domain blocks the
 * parent of a block made for a domain's mail server and the record of refused attempts (history).
 */
export const ipAndEmailBlocks: RookeryMigration = {
  name: "0044_ip_and_email_blocks",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    /** The block a mail server's block was made for; removing the parent removes it too. */
    await db.schema
      .alterTable("email_domain_blocks")
      .addColumn("parent_id", t.id, (c) => c.references("email_domain_blocks.id").onDelete("cascade"))
      .execute();
    await db.schema
      .createIndex("index_email_domain_blocks_on_parent_id")
      .on("email_domain_blocks")
      .column("parent_id")
      .execute();
    // One row per refused sign-up: the block's history counts them (uses) and their addresses (accounts).
    await db.schema
      .createTable("email_domain_block_attempts")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("email_domain_block_id", t.id, (c) =>
        c.notNull().references("email_domain_blocks.id").onDelete("cascade"),
      )
      .addColumn("ip", "text")
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("index_email_domain_block_attempts_on_block_and_time")
      .on("email_domain_block_attempts")
      .columns(["email_domain_block_id", "created_at"])
      .execute();

    await db.schema
      .createTable("ip_blocks")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** A network in CIDR notation with its host bits cleared (`192.0.2.0/24`, `2001:db8::/32`). */
      .addColumn("ip", "text", (c) => c.notNull().unique())
      .addColumn("severity", "text", (c) => c.notNull())
      .addColumn("comment", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("expires_at", t.timestamp)
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("canonical_email_blocks")
      .addColumn("id", t.id, (c) => c.primaryKey())
      /** SHA-256 (hex) of the canonical address: lowercase, no dots and no `+suffix` before the `@`. */
      .addColumn("canonical_email_hash", "text", (c) => c.notNull().unique())
      /** The account whose address it was, when a suspension blocked it. */
      .addColumn("reference_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
