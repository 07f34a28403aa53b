import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * Media still being converted, found without reading every attachment: the housekeeping sweep
 * looks for conversions whose job is gone (a worker that crashed on every attempt).
 */
export const mediaProcessing: RookeryMigration = {
  name: "0024_media_processing",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX index_media_attachments_processing ON media_attachments (id) WHERE processing IN ('queued', 'in_progress')`.execute(
      db,
    );
  },
};
