import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * How other servers name threads (a post's `conversation` or `context`): the URI a conversation
 * was first seen with, so that posts of the same thread whose parent is unknown here join it, and
 * our own posts in it name it the same way. Conversations begun here have no row (their URI is
 * made from their ID).
 */
export const conversationUris: RookeryMigration = {
  name: "0034_conversation_uris",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("conversations")
      /** The `conversation_id` its statuses carry. */
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("uri", "text", (c) => c.notNull().unique())
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .execute();
  },
};
