import type { Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * Signals to streaming connections that must reach every process when there is no Redis: a user
 * disabled from the CLI, a token revoked through another process (src/realtime/signals.ts).
 * Rows are read by their time-ordered primary key and removed after a few minutes.
 */
export const streamSignals: RookeryMigration = {
  name: "0025_stream_signals",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("stream_signals")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("channel", "text", (c) => c.notNull())
      /** The bus message as JSON (`{"event":"kill"}`). */
      .addColumn("message", "text", (c) => c.notNull())
      /** The process that wrote it, which has delivered it to its own listeners already. */
      .addColumn("origin", "text", (c) => c.notNull())
      .execute();
  },
};
