import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { AccountConversationRow, AccountRow, StatusRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";
import { serializeStatuses, type Status } from "./status.ts";

export interface Conversation {
  id: string;
  unread: boolean;
  /** The other participants; the viewer alone for a note to oneself. */
  accounts: Account[];
  last_status: Status | null;
}

/**
 * Serializes the viewer's conversations with a fixed number of queries whatever their number;
 * `lastStatuses` holds the last statuses the viewer may see (the others render as none).
 */
export async function serializeConversations(
  ctx: Ctx,
  rows: readonly AccountConversationRow[],
  lastStatuses: ReadonlyMap<string, StatusRow>,
  viewer: AccountRow,
): Promise<Conversation[]> {
  if (rows.length === 0) return [];
  const participants = rows.map((r) => JSON.parse(r.participant_account_ids) as string[]);
  const accountRows = [
    ...(await accountsByIds(ctx.db.kysely, [...new Set(participants.flat())], { activeOnly: true })),
    viewer,
  ];
  const serialized = await serializeAccounts(ctx, accountRows);
  const accounts = new Map(accountRows.map((row, i) => [row.id, serialized[i]!]));
  const statuses = rows.map((r) => lastStatuses.get(r.last_status_id)).filter((s): s is StatusRow => !!s);
  const renderedStatuses = await serializeStatuses(ctx, statuses, viewer);
  const rendered = new Map(statuses.map((row, i) => [row.id, renderedStatuses[i]!]));
  return rows.map((row, i) => {
    const others = participants[i]!.map((id) => accounts.get(id)).filter((a): a is Account => a !== undefined);
    return {
      id: row.id,
      unread: Boolean(row.unread),
      accounts: others.length > 0 ? others : [accounts.get(viewer.id)!],
      last_status: rendered.get(row.last_status_id) ?? null,
    };
  });
}
