/**
 * Reports (Mastodon's ReportService): a user reports an account, optionally some of its statuses,
 * the server rules broken and a comment; the moderators (staff who manage reports) are notified
 * with `admin.report`. A report of a remote account with `forward` is sent to its server (as a Flag,
 * federation/outbox/reports.ts); other servers' Flags about local accounts arrive here too.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, ReportCategory, ReportRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { targetAccount } from "../accounts/follow.ts";
import { blockFor } from "../admin/domain_blocks.ts";
import { loadSettings } from "../instance/settings.ts";
import { findVisibleStatuses } from "../visibility/find.ts";

export const REPORT_CATEGORIES: readonly ReportCategory[] = ["spam", "legal", "violation", "other"];
const COMMENT_LIMIT = 1000;

export interface ReportParams {
  accountId?: string;
  statusIds: string[];
  comment?: string;
  category?: string;
  ruleIds: string[];
  forward: boolean;
  forwardToDomains: string[];
}

export async function createReport(ctx: Ctx, reporter: AccountRow, params: ReportParams): Promise<ReportRow> {
  const target = await targetAccount(ctx, params.accountId);
  const comment = params.comment ?? "";
  const problems: string[] = [];
  if ([...comment].length > COMMENT_LIMIT)
    problems.push(`Comment is too long (maximum is ${COMMENT_LIMIT} characters)`);
  let category = (params.category ?? "other") as ReportCategory;
  if (!REPORT_CATEGORIES.includes(category)) problems.push("Category is not included in the list");
  const ruleCount = (await loadSettings(ctx.db.kysely)).values.rules.length;
  const ruleIds = [...new Set(params.ruleIds)];
  if (ruleIds.some((id) => !/^\d+$/.test(id) || Number(id) < 1 || Number(id) > ruleCount))
    problems.push("Rule ids contains invalid rule IDs");
  if (problems.length > 0) throw new ValidationFailed(problems);
  // Broken rules make it a violation report, as in Mastodon.
  if (ruleIds.length > 0) category = "violation";
  // Only the target's own statuses that the reporter can see are attached.
  const statuses = (await findVisibleStatuses(ctx, params.statusIds, reporter.id)).filter(
    (s) => s.account_id === target.id,
  );
  const domains = [...new Set(params.forwardToDomains.map((d) => d.trim().toLowerCase()).filter((d) => d))];
  return storeReport(ctx, {
    account_id: reporter.id,
    target_account_id: target.id,
    status_ids: statuses.length ? JSON.stringify(statuses.map((s) => s.id)) : null,
    rule_ids: ruleIds.length ? JSON.stringify(ruleIds) : null,
    comment,
    category,
    forward: params.forward && target.domain !== null,
    forward_to_domains: domains.length ? JSON.stringify(domains) : null,
  });
}

/** Stores a report and tells its subscribers (moderators, federation) in the same transaction. */
async function storeReport(
  ctx: Ctx,
  values: Omit<
    ReportRow,
    "id" | "action_taken_at" | "action_taken_by_account_id" | "assigned_account_id" | "created_at" | "updated_at"
  >,
): Promise<ReportRow> {
  const now = new Date().toISOString();
  return ctx.dispatcher.transaction(async (tx) => {
    const row = await tx
      .insertInto("reports")
      .values({ id: newId(), ...values, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.dispatcher.emit(tx, { type: "report.created", reportId: row.id });
    return row;
  });
}

/** A report with what its forwarding needs: the target and the reported statuses' ids. */
export async function reportForForwarding(
  ctx: Ctx,
  reportId: string,
): Promise<{ report: ReportRow; target: AccountRow; statusUris: string[] } | undefined> {
  const report = await ctx.db.kysely.selectFrom("reports").selectAll().where("id", "=", reportId).executeTakeFirst();
  if (!report?.forward) return undefined;
  const target = await ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("id", "=", report.target_account_id)
    .executeTakeFirst();
  if (!target || target.domain === null) return undefined;
  const ids = report.status_ids ? (JSON.parse(report.status_ids) as string[]) : [];
  const statuses = ids.length
    ? await ctx.db.kysely.selectFrom("statuses").select("uri").where("id", "in", ids).execute()
    : [];
  return { report, target, statusUris: statuses.map((s) => s.uri) };
}

/**
 * A report from another server (its Flag) about `target`, a local account, and some of its
 * statuses: stored as a report by `reporter` (usually that server's instance actor), unless the
 * reporter's domain is blocked with `reject_reports`. Moderators are notified as for local reports.
 */
export async function receiveReport(
  ctx: Ctx,
  reporter: AccountRow,
  target: AccountRow,
  statusIds: string[],
  comment: string,
): Promise<ReportRow | undefined> {
  if (reporter.domain === null || target.domain !== null) return undefined;
  const block = await blockFor(ctx.db.kysely, reporter.domain);
  if (block?.reject_reports || block?.severity === "suspend") return undefined;
  return storeReport(ctx, {
    account_id: reporter.id,
    target_account_id: target.id,
    status_ids: statusIds.length ? JSON.stringify(statusIds) : null,
    rule_ids: null,
    comment: [...comment].slice(0, COMMENT_LIMIT).join(""),
    category: "other",
    forward: false,
    forward_to_domains: null,
  });
}
