import { sql } from "kysely";
import type { Db } from "./connect.ts";
import { foundation } from "./migrations/0001_foundation.ts";
import { defaultRoles } from "./migrations/0002_default_roles.ts";
import { signIn } from "./migrations/0003_sign_in.ts";
import { statuses } from "./migrations/0004_statuses.ts";
import { timelineIndexes } from "./migrations/0005_timeline_indexes.ts";
import { socialGraph } from "./migrations/0010_social_graph.ts";
import { listIndexes } from "./migrations/0011_list_indexes.ts";
import { housekeeping } from "./migrations/0012_housekeeping.ts";
import { feeds } from "./migrations/0013_feeds.ts";
import { conversations } from "./migrations/0014_conversations.ts";
import { search } from "./migrations/0015_search.ts";
import { trends } from "./migrations/0016_trends.ts";
import { markers } from "./migrations/0017_markers.ts";
import { notifications } from "./migrations/0018_notifications.ts";
import { filters } from "./migrations/0019_filters.ts";
import { reports } from "./migrations/0020_reports.ts";
import { domainBlocks } from "./migrations/0021_domain_blocks.ts";
import { webPush } from "./migrations/0022_web_push.ts";
import { announcements } from "./migrations/0023_announcements.ts";
import { mediaProcessing } from "./migrations/0024_media_processing.ts";
import { streamSignals } from "./migrations/0025_stream_signals.ts";
import { jobWorkers } from "./migrations/0026_job_workers.ts";
import { directory } from "./migrations/0027_directory.ts";
import { jobOrdering } from "./migrations/0028_job_ordering.ts";
import { federationKv } from "./migrations/0029_federation_kv.ts";
import { jobWorkerBoot } from "./migrations/0030_job_worker_boot.ts";
import { federationLookups } from "./migrations/0031_federation_lookups.ts";
import { accountKeys } from "./migrations/0032_account_keys.ts";
import { jobClaimIndex } from "./migrations/0033_job_claim_index.ts";
import { conversationUris } from "./migrations/0034_conversation_uris.ts";
import { remoteMedia } from "./migrations/0035_remote_media.ts";
import { domainAllows } from "./migrations/0036_domain_allows.ts";
import { accountAliases } from "./migrations/0037_account_aliases.ts";
import { accountDeletion } from "./migrations/0038_account_deletion.ts";
import { accountArchives } from "./migrations/0040_account_archives.ts";
import { adminActionLogs } from "./migrations/0041_admin_action_logs.ts";
import { accountWarnings } from "./migrations/0042_account_warnings.ts";
import { reportModeration } from "./migrations/0043_report_moderation.ts";
import { ipAndEmailBlocks } from "./migrations/0044_ip_and_email_blocks.ts";
import { trendReviews } from "./migrations/0045_trend_reviews.ts";
import { reportNotes } from "./migrations/0046_report_notes.ts";
import { accountModerationNotes } from "./migrations/0047_account_moderation_notes.ts";
import { appeals } from "./migrations/0048_appeals.ts";
import { accountDeletionRequests } from "./migrations/0049_account_deletion_requests.ts";
import { moderationIndexes } from "./migrations/0050_moderation_indexes.ts";
import { bellIndex } from "./migrations/0051_bell_index.ts";
import { searchSkipsEmpty } from "./migrations/0052_search_skips_empty.ts";
import { bulkImports } from "./migrations/0039_bulk_imports.ts";
import type { RookeryMigration } from "./migrations/types.ts";
import { refreshStatistics } from "./statistics.ts";

/** Every migration, in order. Append only: never edit one that has shipped. */
export const MIGRATIONS: readonly RookeryMigration[] = [
  foundation,
  defaultRoles,
  signIn,
  statuses,
  timelineIndexes,
  socialGraph,
  listIndexes,
  housekeeping,
  feeds,
  conversations,
  search,
  trends,
  markers,
  notifications,
  filters,
  reports,
  domainBlocks,
  webPush,
  announcements,
  mediaProcessing,
  streamSignals,
  jobWorkers,
  directory,
  jobOrdering,
  federationKv,
  jobWorkerBoot,
  federationLookups,
  accountKeys,
  jobClaimIndex,
  conversationUris,
  remoteMedia,
  domainAllows,
  accountAliases,
  accountDeletion,
  bulkImports,
  accountArchives,
  adminActionLogs,
  accountWarnings,
  reportModeration,
  ipAndEmailBlocks,
  trendReviews,
  reportNotes,
  accountModerationNotes,
  appeals,
  accountDeletionRequests,
  moderationIndexes,
  bellIndex,
  searchSkipsEmpty,
];

/**
 * Applies the pending migrations in one transaction and returns their names. Several processes
 * may start at once: PostgreSQL serializes them with an advisory lock on the schema, SQLite with
 * its single writer. (Kysely's Migrator is not used: it inspects every schema of the database,
 * which fails while another process drops a schema.) Planner statistics are refreshed afterwards.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const applied = await applyPending(db);
  await refreshStatistics(db, { afterMigration: applied.length > 0 });
  return applied;
}

async function applyPending(db: Db): Promise<string[]> {
  return db.kysely.transaction().execute(async (tx) => {
    if (db.engine === "postgres") await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema()))`.execute(tx);
    await sql`CREATE TABLE IF NOT EXISTS rookery_migrations (name text PRIMARY KEY, applied_at text NOT NULL)`.execute(
      tx,
    );
    const done = new Set(
      (await sql<{ name: string }>`SELECT name FROM rookery_migrations`.execute(tx)).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.name)) continue;
      try {
        await migration.up(tx, db.engine);
      } catch (error) {
        throw new Error(
          `Migration ${migration.name} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      await sql`INSERT INTO rookery_migrations (name, applied_at) VALUES (${migration.name}, ${new Date().toISOString()})`.execute(
        tx,
      );
      applied.push(migration.name);
    }
    return applied;
  });
}
