import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * Follows and follow requests that crossed servers are found by their Follow activity's id (an
 * Accept, Reject or Undo names it): partial indexes, since local follows have none.
 */
export const followUris: RookeryMigration = {
  name: "0031_follow_uris",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX index_follows_on_uri ON follows (uri) WHERE uri IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_follow_requests_on_uri ON follow_requests (uri) WHERE uri IS NOT NULL`.execute(db);
  },
};
