/**
 * Handling reports (Mastodon's Api::V1::Admin::ReportsController, Report, ReportFilter): the queue
 * of reports, taking one (assign to self) or letting it go, resolving and reopening it, and
 * correcting its category and broken rules. Every change is written to the audit log in its own
 * transaction, with Mastodon's action names (`assigned_to_self`, `unassigned`, `resolve`, `reopen`,
 * `update`) and the report's ID as the readable name. Acting on the reported account (suspending,
 * silencing, warning) is the account actions' business, not this module's.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, Database, InstanceRule, ReportCategory, ReportRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { loadSettings } from "../instance/settings.ts";
import { REPORT_CATEGORIES } from "../reports/reports.ts";
import { recordAction } from "./audit.ts";

/**
 * Which reports to list. An account filter that is given but is no ID (`null`) matches nothing,
 * as Mastodon's `where(account_id: "abc")` does.
 */
export interface ReportFilter {
  /** true: resolved reports only; false or absent: unresolved ones only (Mastodon's default). */
  resolved?: boolean;
  /** The reporter. */
  accountId?: string | null;
  /** The reported account. */
  targetAccountId?: string | null;
  /** Only reports about local (or only about remote) accounts (Mastodon's `target_origin`). */
  targetOrigin?: "local" | "remote";
}

/** The queue, newest first, a page at a time. */
export async function listReports(ctx: Ctx, filter: ReportFilter, page: PageParams): Promise<ReportRow[]> {
  if (filter.accountId === null || filter.targetAccountId === null) return [];
  let query = ctx.db.kysely
    .selectFrom("reports")
    .selectAll()
    .where("action_taken_at", filter.resolved ? "is not" : "is", null);
  if (filter.accountId) query = query.where("account_id", "=", filter.accountId);
  if (filter.targetAccountId) query = query.where("target_account_id", "=", filter.targetAccountId);
  if (filter.targetOrigin) {
    const local = filter.targetOrigin === "local";
    // A probe per report read: the queue's index stays the plan, whatever the number of accounts.
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("accounts")
          .select(eb.lit(1).as("one"))
          .whereRef("accounts.id", "=", "reports.target_account_id")
          .where("accounts.domain", local ? "is" : "is not", null),
      ),
    );
  }
  return fetchPage(query, "id", page);
}

export async function reportOf(ctx: Ctx, id: string | undefined): Promise<ReportRow> {
  const row = await findReport(ctx.db.kysely, id);
  if (!row) throw new NotFound();
  return row;
}

/** The server's rules, which a report's rule IDs number from 1. */
export async function serverRules(ctx: Ctx): Promise<InstanceRule[]> {
  return (await loadSettings(ctx.db.kysely)).values.rules;
}

function findReport(db: Kysely<Database>, id: string | undefined): Promise<ReportRow | undefined> {
  if (!id || !isIdLike(id)) return Promise.resolve(undefined);
  return db.selectFrom("reports").selectAll().where("id", "=", id).executeTakeFirst();
}

type ReportChange = Partial<
  Pick<ReportRow, "category" | "rule_ids" | "assigned_account_id" | "action_taken_at" | "action_taken_by_account_id">
>;

/**
 * Applies `change` to the report `id` and logs `action` by `moderator`, in one transaction; the
 * report is read there again so that a concurrent change is not overwritten by a stale copy.
 */
async function changeReport(
  ctx: Ctx,
  moderator: AccountRow,
  id: string | undefined,
  action: string,
  decide: (report: ReportRow) => ReportChange | undefined,
): Promise<ReportRow> {
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const report = await findReport(tx, id);
    if (!report) throw new NotFound();
    const change = decide(report);
    if (!change) return report;
    const updated = await tx
      .updateTable("reports")
      .set({ ...change, updated_at: new Date().toISOString() })
      .where("id", "=", report.id)
      .returningAll()
      .executeTakeFirst();
    if (!updated) throw new NotFound();
    await recordAction(tx, {
      actorId: moderator.id,
      action,
      targetType: "Report",
      targetId: report.id,
      humanIdentifier: report.id,
    });
    return updated;
  });
}

/** Mastodon's `assign_to_self`: the moderator takes the report. */
export function assignReportToSelf(ctx: Ctx, moderator: AccountRow, id: string | undefined): Promise<ReportRow> {
  return changeReport(ctx, moderator, id, "assigned_to_self", () => ({ assigned_account_id: moderator.id }));
}

/** Mastodon's `unassign`: nobody handles the report any more. */
export function unassignReport(ctx: Ctx, moderator: AccountRow, id: string | undefined): Promise<ReportRow> {
  return changeReport(ctx, moderator, id, "unassigned", () => ({ assigned_account_id: null }));
}

/** Marks the report handled by `moderator` (again, if it already was: the time and moderator are renewed). */
export function resolveReport(ctx: Ctx, moderator: AccountRow, id: string | undefined): Promise<ReportRow> {
  return changeReport(ctx, moderator, id, "resolve", () => ({
    action_taken_at: new Date().toISOString(),
    action_taken_by_account_id: moderator.id,
  }));
}

/** Puts the report back in the queue of unresolved ones. */
export function reopenReport(ctx: Ctx, moderator: AccountRow, id: string | undefined): Promise<ReportRow> {
  return changeReport(ctx, moderator, id, "reopen", () => ({
    action_taken_at: null,
    action_taken_by_account_id: null,
  }));
}

export interface ReportUpdate {
  /** The new category, as given (checked here). */
  category?: string;
  /** The broken rules' IDs; absent leaves them as they are, an empty list removes them. */
  ruleIds?: string[];
}

/** A rule ID as the Rule entity writes it (`01` is rule 1, as Mastodon casts it). */
function canonicalRuleId(text: string): string {
  const trimmed = text.trim();
  return /^\d+$/.test(trimmed) ? trimmed.replace(/^0+(?=\d)/, "") : trimmed;
}

function storedRuleIds(report: ReportRow): string[] {
  if (!report.rule_ids) return [];
  try {
    const parsed: unknown = JSON.parse(report.rule_ids);
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * Corrects a report's category and rules, with Mastodon's rules: only a `violation` report names
 * broken rules ("Rule ids must be blank" otherwise), and those must be the server's rules. As in
 * Mastodon, they are checked only when the category or the rules change. A change is logged as
 * `update`; a request that changes nothing is not.
 */
export async function updateReport(
  ctx: Ctx,
  moderator: AccountRow,
  id: string | undefined,
  params: ReportUpdate,
): Promise<ReportRow> {
  // Read before the transaction: SQLite has one connection, which the transaction holds.
  const ruleCount = (await serverRules(ctx)).length;
  return changeReport(ctx, moderator, id, "update", (report) => {
    const problems: string[] = [];
    let category = report.category;
    if (params.category !== undefined) {
      if (REPORT_CATEGORIES.includes(params.category as ReportCategory)) category = params.category as ReportCategory;
      else problems.push("Category is not included in the list");
    }
    const before = storedRuleIds(report);
    const ruleIds = params.ruleIds ? [...new Set(params.ruleIds.map(canonicalRuleId).filter(Boolean))] : before;
    const rulesChanged = ruleIds.length !== before.length || ruleIds.some((r, i) => r !== before[i]);
    if (problems.length === 0 && (category !== report.category || rulesChanged)) {
      if (category !== "violation") {
        if (ruleIds.length > 0) problems.push("Rule ids must be blank");
      } else {
        if (ruleIds.some((r) => !/^\d+$/.test(r) || Number(r) < 1 || Number(r) > ruleCount))
          problems.push("Rule ids contains invalid rule IDs");
      }
    }
    if (problems.length > 0) throw new ValidationFailed(problems);
    if (category === report.category && !rulesChanged) return undefined;
    return { category, rule_ids: ruleIds.length ? JSON.stringify(ruleIds) : null };
  });
}
