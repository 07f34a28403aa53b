import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { DeletedStatus } from "../../events/types.ts";
import { NotFound } from "../../errors.ts";
import { removeFromConversations } from "../conversations/conversations.ts";
import { deleteNotificationsOf } from "../../db/queries/notifications.ts";
import { whereShown } from "../timelines/shown.ts";

/** What other servers must hear of the deletion of a local author's status; null for a remote one. */
async function deletedForFederation(ctx: Ctx, status: StatusRow): Promise<DeletedStatus | null> {
  if (!status.local) return null;
  const db = ctx.db.kysely;
  const [mentioned, reblogOf] = await Promise.all([
    db
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .select("accounts.id")
      .where("mentions.status_id", "=", status.id)
      .where("accounts.domain", "is not", null)
      .execute(),
    status.reblog_of_id
      ? db
          .selectFrom("statuses")
          .innerJoin("accounts", "accounts.id", "statuses.account_id")
          .select(["statuses.uri", "accounts.id as authorId", "accounts.domain"])
          .where("statuses.id", "=", status.reblog_of_id)
          .executeTakeFirst()
      : undefined,
  ]);
  const audience = mentioned.map((m) => m.id);
  if (reblogOf && reblogOf.domain !== null) audience.push(reblogOf.authorId);
  return {
    uri: status.uri,
    authorId: status.account_id,
    visibility: status.visibility,
    remoteAudienceIds: audience,
    reblogOfUri: reblogOf?.uri ?? null,
  };
}

/**
 * Deletes a status and the boosts of it, keeping every counter right: the authors' statuses
 * counts, the boosted status's reblogs count and the parent's replies count. Counters move only
 * for rows this call really deleted, so concurrent deletions cannot count twice (a lost race is
 * a 404). Media are detached, not destroyed, so the client can redraft with them.
 */
export async function deleteStatus(ctx: Ctx, status: StatusRow): Promise<void> {
  // Where it (and its boosts) were shown, read before the deletion takes the feed entries.
  const boostRows = await ctx.db.kysely
    .selectFrom("statuses")
    .selectAll()
    .where("reblog_of_id", "=", status.id)
    .execute();
  const shown = await whereShown(ctx.db.kysely, [status, ...boostRows], { mentioned: true });
  const federated = await deletedForFederation(ctx, status);
  await ctx.dispatcher.transaction(async (tx) => {
    const now = new Date().toISOString();
    await tx
      .updateTable("media_attachments")
      .set({ status_id: null, updated_at: now })
      .where("status_id", "=", status.id)
      .execute();
    await tx.deleteFrom("polls").where("status_id", "=", status.id).execute();
    const boosts = await tx
      .deleteFrom("statuses")
      .where("reblog_of_id", "=", status.id)
      .returning(["account_id", "visibility"])
      .execute();
    const deleted = await tx
      .deleteFrom("statuses")
      .where("id", "=", status.id)
      .returning(["id", "account_id", "visibility", "reblog_of_id", "in_reply_to_id", "conversation_id"])
      .executeTakeFirst();
    if (!deleted) throw new NotFound();
    if (deleted.visibility === "direct") await removeFromConversations(tx, ctx.db.engine, deleted);

    const perAccount = new Map<string, number>();
    for (const s of [deleted, ...boosts])
      if (s.visibility !== "direct") perAccount.set(s.account_id, (perAccount.get(s.account_id) ?? 0) + 1);
    for (const [accountId, n] of perAccount) {
      await tx
        .updateTable("accounts")
        .set((eb) => ({ statuses_count: eb("statuses_count", "-", n) }))
        .where("id", "=", accountId)
        .where("statuses_count", ">=", n)
        .execute();
    }
    if (deleted.reblog_of_id) {
      // The boosted author's notification goes with the boost (a post's own go with it by cascade).
      await deleteNotificationsOf(tx, "Status", [deleted.id]);
      await tx
        .updateTable("statuses")
        .set((eb) => ({ reblogs_count: eb("reblogs_count", "-", 1) }))
        .where("id", "=", deleted.reblog_of_id)
        .where("reblogs_count", ">", 0)
        .execute();
    }
    if (deleted.in_reply_to_id && (deleted.visibility === "public" || deleted.visibility === "unlisted")) {
      await tx
        .updateTable("statuses")
        .set((eb) => ({ replies_count: eb("replies_count", "-", 1) }))
        .where("id", "=", deleted.in_reply_to_id)
        .where("replies_count", ">", 0)
        .execute();
    }
    await ctx.dispatcher.emit(tx, { type: "status.deleted", statuses: shown, federated });
  });
}
