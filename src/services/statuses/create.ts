import type { Ctx } from "../../context.ts";
import { encodeMediaOrder } from "../../db/columns.ts";
import { newId } from "../../db/ids.ts";
import type { StatusRow } from "../../db/schema.ts";
import { Unprocessable } from "../../errors.ts";
import { insertPoll } from "../polls/create.ts";
import { AlreadyPublished } from "./errors.ts";
import { rememberIdempotencyKey } from "./idempotency.ts";
import { hasPreviewableLink, localStatusUris } from "./links.ts";
import type { Author, StatusDraft } from "./prepare.ts";
import { tagStatus, upsertTags } from "./tags.ts";
import { addToOwnFeed } from "../timelines/feeds.ts";
import { addToConversations } from "../conversations/conversations.ts";

export interface CreateOptions {
  /** Publishing a scheduled status: its row is removed in the same transaction (once only). */
  scheduledStatusId?: string;
  idempotencyKey?: string;
}

/**
 * Stores a prepared post (see `prepareStatus`) of a local author with its mentions, tags, media,
 * poll and counters in one transaction, and enqueues its preview card. Returns the new row.
 */
export async function createStatus(
  ctx: Ctx,
  author: Author,
  draft: StatusDraft,
  options: CreateOptions = {},
): Promise<StatusRow> {
  const { text, spoilerText, sensitive, visibility, language, parent, media, formatted } = draft;
  const { scheduledStatusId, idempotencyKey } = options;
  const now = new Date();
  const nowIso = now.toISOString();
  const id = newId(now.getTime());
  const created = await ctx.dispatcher.transaction(async (tx) => {
    if (scheduledStatusId) {
      const claimed = await tx.deleteFrom("scheduled_statuses").where("id", "=", scheduledStatusId).executeTakeFirst();
      if (Number(claimed.numDeletedRows) !== 1) throw new AlreadyPublished();
      await tx
        .updateTable("media_attachments")
        .set({ scheduled_status_id: null })
        .where("scheduled_status_id", "=", scheduledStatusId)
        .execute();
    }
    const tags = await upsertTags(tx, formatted.tags);
    const status = await tx
      .insertInto("statuses")
      .values({
        id,
        ...localStatusUris(ctx.config.baseUrl, author.account.username, id),
        account_id: author.account.id,
        text,
        content: formatted.html,
        spoiler_text: spoilerText,
        sensitive,
        visibility,
        language,
        in_reply_to_id: parent?.id ?? null,
        in_reply_to_account_id: parent?.account_id ?? null,
        conversation_id: parent?.conversation_id ?? newId(now.getTime()),
        application_id: author.applicationId,
        local: true,
        ordered_media_attachment_ids: encodeMediaOrder(media.map((m) => m.id)),
        created_at: nowIso,
        updated_at: nowIso,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (formatted.mentions.length > 0) {
      await tx
        .insertInto("mentions")
        .values(
          formatted.mentions.map((account) => ({
            id: newId(),
            status_id: id,
            account_id: account.id,
            silent: false,
            created_at: nowIso,
          })),
        )
        .execute();
    }
    if (visibility === "direct") await addToConversations(tx, ctx.db.engine, status, formatted.mentions);
    await tagStatus(tx, id, tags, nowIso);
    if (media.length > 0) {
      // Only still-free media are taken, so two posts racing for one file cannot both get it.
      const taken = await tx
        .updateTable("media_attachments")
        .set({ status_id: id, updated_at: nowIso })
        .where(
          "id",
          "in",
          media.map((m) => m.id),
        )
        .where("status_id", "is", null)
        .where("scheduled_status_id", "is", null)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== media.length)
        throw new Unprocessable(
          `Media ${media.map((m) => m.id).join(", ")} not found or already attached to another post`,
        );
    }
    let row = status;
    if (draft.poll) {
      const poll = await insertPoll(tx, author.account.id, id, draft.poll, now);
      row = await tx
        .updateTable("statuses")
        .set({ poll_id: poll.id })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await ctx.jobs.enqueueWith(tx, "polls.close", { pollId: poll.id }, { runAt: new Date(poll.expires_at!) });
    }
    if (visibility !== "direct") {
      await tx
        .updateTable("accounts")
        .set((eb) => ({ statuses_count: eb("statuses_count", "+", 1), last_status_at: nowIso }))
        .where("id", "=", author.account.id)
        .execute();
    }
    if (parent && (visibility === "public" || visibility === "unlisted")) {
      await tx
        .updateTable("statuses")
        .set((eb) => ({ replies_count: eb("replies_count", "+", 1) }))
        .where("id", "=", parent.id)
        .execute();
    }
    await addToOwnFeed(tx, row);
    await ctx.dispatcher.emit(tx, { type: "status.created", statusId: id, local: true });
    if (idempotencyKey) await rememberIdempotencyKey(tx, author.account.id, idempotencyKey, { statusId: id });
    if (hasPreviewableLink(visibility, text))
      await ctx.jobs.enqueueWith(tx, "cards.fetch", { statusId: id }, { maxAttempts: 3 });
    return row;
  });
  return created;
}
