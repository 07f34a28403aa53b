/**
 * Direct-message conversations (Mastodon's AccountConversation): each local participant of a
 * direct status — its author and the accounts it mentions, unless they block, mute or block the
 * domain of the author — has one row per thread and set of other participants. The row holds the
 * thread's statuses that reached them and is unread for everyone but the author of the newest.
 * Kept in the transactions that post and delete direct statuses.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Engine } from "../../db/migrations/types.ts";
import { compareIds, newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountConversationRow, AccountRow, Database, StatusRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";
import { filterVisible } from "../visibility/find.ts";
import { statusesByIds } from "../../db/queries/statuses.ts";

function idsOf(json: string): string[] {
  return JSON.parse(json) as string[];
}

/** Adds a new direct status to the conversations of its local participants, inside `tx`. */
export async function addToConversations(
  tx: Kysely<Database>,
  engine: Engine,
  status: Pick<StatusRow, "id" | "account_id" | "conversation_id">,
  mentioned: readonly Pick<AccountRow, "id" | "domain">[],
  authorIsLocal = true,
): Promise<void> {
  const conversationId = status.conversation_id;
  if (!conversationId) return;
  const everyone = [...new Set([status.account_id, ...mentioned.map((m) => m.id)])].sort(compareIds);
  const recipients = authorIsLocal ? [status.account_id] : [];
  for (const account of mentioned) {
    if (account.domain !== null || account.id === status.account_id) continue;
    // A recipient who hides the author gets no notification of it, and no conversation.
    const hidden = await hiddenAccounts(tx, account.id, [status.account_id]);
    if (!hidden.has(status.account_id)) recipients.push(account.id);
  }
  const now = new Date().toISOString();
  for (const recipient of recipients) {
    const participants = JSON.stringify(everyone.filter((id) => id !== recipient));
    await tx
      .insertInto("account_conversations")
      .values({
        id: newId(),
        account_id: recipient,
        conversation_id: conversationId,
        participant_account_ids: participants,
        status_ids: "[]",
        last_status_id: status.id,
        unread: false,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(["account_id", "conversation_id", "participant_account_ids"]).doNothing())
      .execute();
    let query = tx
      .selectFrom("account_conversations")
      .selectAll()
      .where("account_id", "=", recipient)
      .where("conversation_id", "=", conversationId)
      .where("participant_account_ids", "=", participants);
    if (engine === "postgres") query = query.forUpdate();
    const row = await query.executeTakeFirstOrThrow();
    const statusIds = [...new Set([...idsOf(row.status_ids), status.id])].sort(compareIds);
    await tx
      .updateTable("account_conversations")
      .set({
        status_ids: JSON.stringify(statusIds),
        last_status_id: statusIds[statusIds.length - 1]!,
        unread: recipient !== status.account_id,
        updated_at: now,
      })
      .where("id", "=", row.id)
      .execute();
  }
}

/** Takes a deleted direct status out of every conversation holding it; emptied ones go. */
export async function removeFromConversations(
  tx: Kysely<Database>,
  engine: Engine,
  status: Pick<StatusRow, "id" | "conversation_id">,
): Promise<void> {
  if (!status.conversation_id) return;
  let query = tx
    .selectFrom("account_conversations")
    .selectAll()
    .where("conversation_id", "=", status.conversation_id)
    .where("status_ids", "like", `%"${status.id}"%`);
  if (engine === "postgres") query = query.forUpdate();
  for (const row of await query.execute()) {
    const statusIds = idsOf(row.status_ids).filter((id) => id !== status.id);
    if (statusIds.length === 0) {
      await tx.deleteFrom("account_conversations").where("id", "=", row.id).execute();
      continue;
    }
    await tx
      .updateTable("account_conversations")
      .set({
        status_ids: JSON.stringify(statusIds),
        last_status_id: statusIds[statusIds.length - 1]!,
        updated_at: new Date().toISOString(),
      })
      .where("id", "=", row.id)
      .execute();
  }
}

/** A page of the viewer's conversations, the one with the newest status first. */
export async function conversationsOf(
  ctx: Ctx,
  viewer: AccountRow,
  page: PageParams,
): Promise<AccountConversationRow[]> {
  const query = ctx.db.kysely.selectFrom("account_conversations").selectAll().where("account_id", "=", viewer.id);
  return fetchPage(query, "last_status_id", page);
}

/** One of the viewer's conversations, or 404. */
export async function ownConversation(
  ctx: Ctx,
  viewer: AccountRow,
  id: string | undefined,
): Promise<AccountConversationRow> {
  const row = id
    ? await ctx.db.kysely
        .selectFrom("account_conversations")
        .selectAll()
        .where("id", "=", id)
        .where("account_id", "=", viewer.id)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Marks a conversation read or unread; returns it as it is now. */
export async function markConversation(
  ctx: Ctx,
  row: AccountConversationRow,
  unread: boolean,
): Promise<AccountConversationRow> {
  const updated = await ctx.db.kysely
    .updateTable("account_conversations")
    .set({ unread, updated_at: new Date().toISOString() })
    .where("id", "=", row.id)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new NotFound();
  return updated;
}

/** Removes a conversation from the viewer's list (the statuses stay). */
export async function removeConversation(ctx: Ctx, row: AccountConversationRow): Promise<void> {
  await ctx.db.kysely.deleteFrom("account_conversations").where("id", "=", row.id).execute();
}

/** The last statuses of `rows` that the viewer may see, by ID (a conversation shows the others as none). */
export async function visibleLastStatuses(
  ctx: Ctx,
  rows: readonly AccountConversationRow[],
  viewerId: string,
): Promise<Map<string, StatusRow>> {
  const statuses = await statusesByIds(
    ctx.db.kysely,
    rows.map((r) => r.last_status_id),
  );
  return new Map((await filterVisible(ctx, statuses, viewerId)).map((s) => [s.id, s]));
}
