import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { ReportRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";

/** The Report entity, as its reporter (and a notified moderator) sees it. */
export interface ReportJson {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  created_at: string;
  status_ids: string[] | null;
  rule_ids: string[] | null;
  target_account: Account;
}

/** Serializes reports with one query for their target accounts. */
export async function serializeReports(ctx: Ctx, rows: readonly ReportRow[]): Promise<ReportJson[]> {
  if (rows.length === 0) return [];
  const targets = await accountsByIds(
    ctx.db.kysely,
    rows.map((r) => r.target_account_id),
  );
  const accounts = new Map((await serializeAccounts(ctx, targets)).map((a) => [a.id, a]));
  return rows.flatMap((row) => {
    const target = accounts.get(row.target_account_id);
    if (!target) return [];
    return [
      {
        id: row.id,
        action_taken: row.action_taken_at !== null,
        action_taken_at: row.action_taken_at,
        category: row.category,
        comment: row.comment,
        forwarded: row.forward,
        created_at: row.created_at,
        status_ids: row.status_ids ? (JSON.parse(row.status_ids) as string[]) : null,
        rule_ids: row.rule_ids ? (JSON.parse(row.rule_ids) as string[]) : null,
        target_account: target,
      },
    ];
  });
}
