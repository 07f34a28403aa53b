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
  // One step of the account_id index per moderator (the next ID above the last), not a read of the
  // whole log as SELECT DISTINCT would be: the log grows with every action, its moderators do not.
  // Their accounts are read apart, by their IDs: joined to the steps, whose number PostgreSQL cannot
  // foresee, they could be read whole.
  const db = ctx.db.kysely;
  const actors = await db
    .withRecursive("actors(id)", (db) =>
      db
        .selectNoFrom((eb) =>
          eb
            .selectFrom("admin_action_logs")
            .select((log) => log.fn.min("account_id").as("id"))
            .as("id"),
        )
        .unionAll((db) =>
          db
            .selectFrom("actors")
            .select((eb) =>
              eb
                .selectFrom("admin_action_logs")
                .select((log) => log.fn.min("admin_action_logs.account_id").as("id"))
                .whereRef("admin_action_logs.account_id", ">", "actors.id")
                .as("id"),
            )
            .where("actors.id", "is not", null),
        ),
    )
    .selectFrom("actors")
    .select("actors.id")
    .where("actors.id", "is not", null)
    .execute();
  if (actors.length === 0) return [];
  return db
    .selectFrom("accounts")
    .selectAll()
    .where(
      "id",
      "in",
      actors.map((a) => a.id!),
    )
    .orderBy("username")
    .orderBy("domain")
    .execute();
}

/**
 * What moderators did about a report (Mastodon's Report#history): the report's own entries and
 * those on the reported account, the newest `limit`, oldest first.
 */
export async function reportHistory(ctx: Ctx, report: ReportRow, limit = 100): Promise<AdminActionLogRow[]> {
  // Two ranges of the target index, merged in ID order (an OR of them would be read whole and sorted).
  const db = ctx.db.kysely;
  const of = (type: AuditTarget, id: string) =>
    db.selectFrom("admin_action_logs").selectAll().where("target_type", "=", type).where("target_id", "=", id);
  const rows = await of("Report", report.id)
    .unionAll(of("Account", report.target_account_id))
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.reverse();
}
