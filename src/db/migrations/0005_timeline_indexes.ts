import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

export const timelineIndexes: RookeryMigration = {
  name: "0005_timeline_indexes",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    // The public timeline reads public originals newest first.
    await sql`CREATE INDEX index_statuses_public_timeline ON statuses (id) WHERE visibility = 'public' AND reblog_of_id IS NULL AND deleted_at IS NULL`.execute(
      db,
    );
  },
};
