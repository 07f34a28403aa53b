/**
 * Whose posts a signed-in viewer does not see in timelines, threads and lists of accounts — the
 * one rule every read path applies (Mastodon's `excluded_account_ids` plus domain blocks):
 * - accounts the viewer blocks, and accounts that block the viewer;
 * - accounts the viewer mutes (until the mute expires);
 * - accounts on a domain the viewer blocks.
 * Two forms: a SQL condition for list queries over large tables (correlated NOT EXISTS probes on
 * unique indexes, so a page stays an index scan; `LIMIT 1 OFFSET 0` keeps PostgreSQL from turning a probe into
 * an anti-join that hashes the whole table), and a batch check for a known set of authors.
 */
import { sql, type Kysely, type RawBuilder, type SqlBool } from "kysely";
import {
  blockedByViewer,
  blockingViewer,
  domainBlockedByViewer,
  mutedByViewer,
} from "../../db/queries/relationships.ts";
import type { Database } from "../../db/schema.ts";

/** The SQL time "now" written as the engines store timestamps (ISO 8601 text or timestamptz). */
function now(): string {
  return new Date().toISOString();
}

/**
 * A condition for `.where(...)` on a query with an account ID column `authorColumn` (for example
 * `"statuses.account_id"`): true when that account is not hidden from `viewerId`. Either may also
 * be a SQL expression (the feeds' fan-out tests every follower of an author at once).
 */
export function notHiddenFrom(
  viewerId: string | RawBuilder<unknown>,
  authorColumn: string | RawBuilder<unknown>,
  at: unknown = now(),
): RawBuilder<SqlBool> {
  const author = typeof authorColumn === "string" ? sql.ref(authorColumn) : authorColumn;
  return sql<SqlBool>`(
    NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = ${viewerId} AND blocks.target_account_id = ${author} LIMIT 1 OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = ${author} AND blocks.target_account_id = ${viewerId} LIMIT 1 OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM mutes WHERE mutes.account_id = ${viewerId} AND mutes.target_account_id = ${author}
      AND (mutes.expires_at IS NULL OR mutes.expires_at > ${at}) LIMIT 1 OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM account_domain_blocks JOIN accounts hidden_domain ON hidden_domain.domain = account_domain_blocks.domain
      WHERE account_domain_blocks.account_id = ${viewerId} AND hidden_domain.id = ${author} LIMIT 1 OFFSET 0)
  )`;
}

export interface HiddenOptions {
  /** Muted accounts count as hidden (timelines, threads); false where mutes do not apply (a profile). */
  mutes?: boolean;
}

/** The accounts among `authorIds` hidden from `viewerId`, with one query per kind of relation. */
export async function hiddenAccounts(
  db: Kysely<Database>,
  viewerId: string,
  authorIds: readonly string[],
  options: HiddenOptions = {},
): Promise<Set<string>> {
  const ids = [...new Set(authorIds)].filter((id) => id !== viewerId);
  if (ids.length === 0) return new Set();
  const [blocking, blockedBy, muting, domains] = await Promise.all([
    blockedByViewer(db, viewerId, ids),
    blockingViewer(db, viewerId, ids),
    options.mutes === false ? new Map<string, boolean>() : mutedByViewer(db, viewerId, ids),
    domainBlockedByViewer(db, viewerId, ids),
  ]);
  return new Set([...blocking, ...blockedBy, ...muting.keys(), ...domains]);
}
