/**
 * Conditions shared by the timelines' queries on `statuses`. Each existence condition is a per-row
 * probe (`LIMIT 1 OFFSET 0`), so PostgreSQL keeps it beside the ordered index scan instead of
 * hashing the whole probed table into a join (see test/db/plans.test.ts).
 */
import { sql, type RawBuilder, type SqlBool } from "kysely";

/** The status has at least one media attachment (`only_media`). */
export function hasMedia(): RawBuilder<SqlBool> {
  return sql<SqlBool>`EXISTS (SELECT 1 FROM media_attachments WHERE media_attachments.status_id = statuses.id LIMIT 1 OFFSET 0)`;
}
