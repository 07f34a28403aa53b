import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * What federation looks up: follows and follow requests that crossed servers by their Follow
 * activity's id (an Accept, Reject or Undo names it; partial, since local follows have none), and
 * accounts and posts by the URL of their page (a link pasted into search), a post's replies by
 * ID, kept copies of remote media by age.
 */
export const federationLookups: RookeryMigration = {
  name: "0031_federation_lookups",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX index_follows_on_uri ON follows (uri) WHERE uri IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_follow_requests_on_uri ON follow_requests (uri) WHERE uri IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_accounts_on_url ON accounts (url) WHERE url IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_statuses_on_url ON statuses (url) WHERE url IS NOT NULL AND url <> uri`.execute(db);
    // A post's replies page by ID (its replies collection); the thread queries use it as the old one.
    await sql`CREATE INDEX index_statuses_on_in_reply_to_id_and_id ON statuses (in_reply_to_id, id)`.execute(db);
    await sql`DROP INDEX index_statuses_on_in_reply_to_id`.execute(db);
    // Kept copies of remote media, oldest first (\`rookery media remove\`).
    await sql`CREATE INDEX index_media_attachments_kept_remote ON media_attachments (created_at) WHERE remote_url IS NOT NULL AND file IS NOT NULL`.execute(
      db,
    );
  },
};
