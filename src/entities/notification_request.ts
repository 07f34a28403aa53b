import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { AccountRow, NotificationRequestRow, StatusRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";
import { serializeStatuses, type Status } from "./status.ts";

/** The NotificationRequest entity. */
export interface NotificationRequestJson {
  id: string;
  created_at: string;
  updated_at: string;
  /** An integer carried as a string, as Mastodon renders it. */
  notifications_count: string;
  account: Account;
  last_status: Status | null;
}

/**
 * Serializes requests with a fixed number of queries. `counts` holds each sender's filtered
 * notifications, `statuses` the last statuses the receiver may see (others render as null).
 */
export async function serializeNotificationRequests(
  ctx: Ctx,
  rows: readonly NotificationRequestRow[],
  counts: ReadonlyMap<string, number>,
  statuses: readonly StatusRow[],
  viewer: AccountRow,
): Promise<NotificationRequestJson[]> {
  if (rows.length === 0) return [];
  const senders = await accountsByIds(
    ctx.db.kysely,
    rows.map((r) => r.from_account_id),
  );
  const accounts = new Map((await serializeAccounts(ctx, senders)).map((a) => [a.id, a]));
  const statusJson = new Map((await serializeStatuses(ctx, statuses, viewer)).map((s) => [s.id, s]));
  return rows.flatMap((row) => {
    const account = accounts.get(row.from_account_id);
    if (!account) return [];
    return [
      {
        id: row.id,
        created_at: row.created_at,
        updated_at: row.updated_at,
        notifications_count: String(counts.get(row.from_account_id) ?? 0),
        account,
        last_status: (row.last_status_id && statusJson.get(row.last_status_id)) || null,
      },
    ];
  });
}
