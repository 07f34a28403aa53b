/**
 * The Admin::Report entity (Mastodon's REST::Admin::ReportSerializer): a report as moderators see
 * it, with the reporter, the target, the assigned moderator and the one who resolved it as
 * Admin::Account, the reported statuses that still exist (Mastodon keeps deleted ones for reports;
 * Rookery removes a deleted status's row) and the broken rules. A page of reports costs a fixed number of queries.
 */
import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import { statusesByIds } from "../db/queries/statuses.ts";
import type { AccountRow, InstanceRule, ReportCategory, ReportRow } from "../db/schema.ts";
import { serializeAdminAccounts, type AdminAccountJson } from "./admin_account.ts";
import { serializeRules } from "./instance.ts";
import { serializeStatuses, type Status } from "./status.ts";

export interface AdminReportJson {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: ReportCategory;
  comment: string;
  forwarded: boolean;
  created_at: string;
  updated_at: string;
  account: AdminAccountJson;
  target_account: AdminAccountJson;
  assigned_account: AdminAccountJson | null;
  action_taken_by_account: AdminAccountJson | null;
  statuses: Status[];
  rules: ReturnType<typeof serializeRules>;
}

function jsonIds(text: string | null): string[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * Serializes reports for `viewer` (the moderator: the statuses carry their flags), with `rules`
 * the server's rules (a report's rule IDs are positions in that list, as the Rule entity numbers them).
 */
export async function serializeAdminReports(
  ctx: Ctx,
  rows: readonly ReportRow[],
  viewer: AccountRow,
  rules: readonly InstanceRule[],
): Promise<AdminReportJson[]> {
  if (rows.length === 0) return [];
  const accountIds = rows.flatMap((r) =>
    [r.account_id, r.target_account_id, r.assigned_account_id, r.action_taken_by_account_id].filter(
      (id): id is string => id !== null,
    ),
  );
  const statusIds = rows.flatMap((r) => jsonIds(r.status_ids));
  const [accountRows, statusRows] = await Promise.all([
    accountsByIds(ctx.db.kysely, accountIds),
    statusesByIds(ctx.db.kysely, statusIds),
  ]);
  const [adminAccounts, statuses] = await Promise.all([
    serializeAdminAccounts(ctx, accountRows),
    serializeStatuses(ctx, statusRows, viewer),
  ]);
  const accounts = new Map(adminAccounts.map((a) => [a.id, a]));
  const statusById = new Map(statuses.map((s) => [s.id, s]));
  const allRules = serializeRules(rules);
  const optional = (id: string | null) => (id ? (accounts.get(id) ?? null) : null);
  return rows.flatMap((row) => {
    const account = accounts.get(row.account_id);
    const target = accounts.get(row.target_account_id);
    if (!account || !target) return [];
    const ruleIds = new Set(jsonIds(row.rule_ids));
    return [
      {
        id: row.id,
        action_taken: row.action_taken_at !== null,
        action_taken_at: row.action_taken_at ? new Date(row.action_taken_at).toISOString() : null,
        category: row.category,
        comment: row.comment,
        forwarded: row.forward,
        created_at: new Date(row.created_at).toISOString(),
        updated_at: new Date(row.updated_at).toISOString(),
        account,
        target_account: target,
        assigned_account: optional(row.assigned_account_id),
        action_taken_by_account: optional(row.action_taken_by_account_id),
        statuses: jsonIds(row.status_ids).flatMap((id) => statusById.get(id) ?? []),
        rules: allRules.filter((rule) => ruleIds.has(rule.id)),
      },
    ];
  });
}
