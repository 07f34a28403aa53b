import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * What `rookery media remove` walks, in age order a page at a time: kept copies of remote media
 * (the index of 0031 gains the id to page by) and remote accounts with a kept avatar or header
 * (`--prune-profiles`, `--remove-headers`), by when they were last fetched.
 */
export const remoteMedia: RookeryMigration = {
  name: "0035_remote_media",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.dropIndex("index_media_attachments_kept_remote").execute();
    await sql`CREATE INDEX index_media_attachments_kept_remote ON media_attachments (created_at, id) WHERE remote_url IS NOT NULL AND file IS NOT NULL`.execute(
      db,
    );
    await sql`CREATE INDEX index_accounts_kept_remote_pictures ON accounts (fetched_at, id) WHERE domain IS NOT NULL AND (avatar_file IS NOT NULL OR header_file IS NOT NULL)`.execute(
      db,
    );
  },
};
