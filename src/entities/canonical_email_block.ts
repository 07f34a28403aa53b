import type { CanonicalEmailBlockRow } from "../db/schema.ts";

/** The Admin::CanonicalEmailBlock entity (Mastodon's REST::Admin::CanonicalEmailBlockSerializer). */
export interface AdminCanonicalEmailBlockJson {
  id: string;
  canonical_email_hash: string;
}

export function serializeAdminCanonicalEmailBlock(row: CanonicalEmailBlockRow): AdminCanonicalEmailBlockJson {
  return { id: row.id, canonical_email_hash: row.canonical_email_hash };
}
