import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { AccountWarningRow, AppealRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";

/** The Appeal entity: the user's text and where the moderators' decision stands. */
export interface AppealJson {
  text: string;
  state: "approved" | "rejected" | "pending";
}

/** The AccountWarning entity (a strike), as its target sees it in a `moderation_warning` notification. */
export interface AccountWarningJson {
  id: string;
  action: string;
  text: string;
  status_ids: string[] | null;
  target_account: Account;
  appeal: AppealJson | null;
  created_at: string;
}

/** Where an appeal stands: decided one way or the other, or waiting for a moderator. */
export function appealState(appeal: Pick<AppealRow, "approved_at" | "rejected_at">): AppealJson["state"] {
  return appeal.approved_at ? "approved" : appeal.rejected_at ? "rejected" : "pending";
}

/** The reported posts a warning is about (the JSON column), or null when it names none. */
export function warningStatusIds(row: Pick<AccountWarningRow, "status_ids">): string[] | null {
  return row.status_ids ? (JSON.parse(row.status_ids) as string[]).map(String) : null;
}

/** Serializes warnings with one query for their appeals and one for their target accounts. */
export async function serializeAccountWarnings(
  ctx: Ctx,
  rows: readonly AccountWarningRow[],
): Promise<AccountWarningJson[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const appeals = new Map(
    (await ctx.db.kysely.selectFrom("appeals").selectAll().where("account_warning_id", "in", ids).execute()).map(
      (a) => [a.account_warning_id, a],
    ),
  );
  const targets = await accountsByIds(ctx.db.kysely, [...new Set(rows.map((r) => r.target_account_id))]);
  const accounts = new Map((await serializeAccounts(ctx, targets)).map((a) => [a.id, a]));
  return rows.flatMap((row) => {
    const target = accounts.get(row.target_account_id);
    if (!target) return [];
    const appeal = appeals.get(row.id);
    return [
      {
        id: row.id,
        action: row.action,
        text: row.text,
        status_ids: warningStatusIds(row),
        target_account: target,
        appeal: appeal ? { text: appeal.text, state: appealState(appeal) } : null,
        created_at: row.created_at,
      },
    ];
  });
}
