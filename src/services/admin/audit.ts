/**
 * The audit log (Mastodon's Admin::ActionLog): every moderation action records who did it, what,
 * to which record and when, in the transaction that makes the change, so the log never misses an
 * action that happened nor holds one that did not. Readers need View Audit Log.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, AdminActionLogRow, Database, ReportRow } from "../../db/schema.ts";

/** What Mastodon's log names targets by. */
export type AuditTarget =
  | "Account"
  | "User"
  | "Report"
  | "DomainBlock"
  | "DomainAllow"
  | "EmailDomainBlock"
  | "IpBlock"
  | "CanonicalEmailBlock"
  | "Status"
  | "AccountWarning"
  | "AccountWarningPreset"
  | "Appeal"
  | "Announcement"
  | "CustomEmoji"
  | "Rule"
  | "Setting"
  | "UserRole"
  | "Tag"
  | "PreviewCard"
  | "PreviewCardProvider";

export interface AuditEntry {
  /** The moderator's account. */
  actorId: string;
  /** Mastodon's action names: `suspend`, `silence`, `approve`, `resolve`, `create`, `destroy`, … */
  action: string;
  targetType: AuditTarget;
  targetId?: string | null;
  /** A readable name of the target that outlives it (a handle, a domain, a report's number). */
  humanIdentifier?: string | null;
  detail?: string | null;
}

/** Records `entry`; pass the transaction of the change (`db` may be a Kysely transaction). */
export async function recordAction(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto("admin_action_logs")
    .values({
      id: newId(),
      account_id: entry.actorId,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId ?? null,
      human_identifier: entry.humanIdentifier ?? null,
      detail: entry.detail ?? null,
      created_at: new Date().toISOString(),
    })
    .execute();
}

export interface AuditFilter {
  /** Only what this moderator did. */
  actorId?: string;
  /** Only what was done to this record. */
  targetType?: AuditTarget;
  targetId?: string;
  /**
   * Only what was done to a target of this readable name (a handle as `alice` or
   * `rita@remote.example`, a domain, a report's number), in any case.
   */
  targetName?: string;
}

/** The log, newest first, a page at a time. */
export function auditLog(ctx: Ctx, filter: AuditFilter, page: PageParams): Promise<AdminActionLogRow[]> {
  let query = ctx.db.kysely.selectFrom("admin_action_logs").selectAll();
  if (filter.actorId) query = query.where("account_id", "=", filter.actorId);
  if (filter.targetType) query = query.where("target_type", "=", filter.targetType);
  if (filter.targetId) query = query.where("target_id", "=", filter.targetId);
  if (filter.targetName)
    query = query.where((eb) => eb(eb.fn("lower", ["human_identifier"]), "=", filter.targetName!.toLowerCase()));
  return fetchPage(query, "id", page);
}

/** The moderators who appear in the log (what it can be filtered by), by username. */
export async function auditLogActors(ctx: Ctx): Promise<AccountRow[]> {
  return ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("id", "in", (eb) => eb.selectFrom("admin_action_logs").select("account_id").distinct())
    .orderBy("username")
    .orderBy("domain")
    .execute();
}

/**
 * What moderators did about a report (Mastodon's Report#history): the report's own entries and
 * those on the reported account, the newest `limit`, oldest first.
 */
export async function reportHistory(ctx: Ctx, report: ReportRow, limit = 100): Promise<AdminActionLogRow[]> {
  const rows = await ctx.db.kysely
    .selectFrom("admin_action_logs")
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([eb("target_type", "=", "Report"), eb("target_id", "=", report.id)]),
        eb.and([eb("target_type", "=", "Account"), eb("target_id", "=", report.target_account_id)]),
      ]),
    )
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.reverse();
}
