import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { encodeMediaOrder, mediaOrder, pollOptions } from "../../db/columns.ts";
import { newId } from "../../db/ids.ts";
import type { Database, MediaAttachmentRow, PollRow, StatusRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { insertPoll } from "../polls/create.ts";
import { parseFocus } from "../media/focus.ts";
import { tagStatus, upsertTags } from "./tags.ts";
import { hasPreviewableLink } from "./links.ts";
import { prepareContent } from "./prepare.ts";
import { detachCard } from "../cards/fetch.ts";
import { normalizeLanguage, type PollParams } from "./validate.ts";

export interface MediaAttribute {
  id: string;
  description?: string;
  focus?: string;
}

export interface EditStatusParams {
  text?: string;
  spoilerText?: string;
  sensitive?: boolean;
  language?: string;
  /** Absent: keep the media; given (even empty): the new list. */
  mediaIds?: string[];
  mediaAttributes: MediaAttribute[];
  /** Absent: keep the poll. */
  poll?: PollParams;
}

/** A snapshot of the status as it reads now, for the edit history. */
export async function snapshot(db: Kysely<Database>, status: StatusRow, at: string): Promise<void> {
  const order = mediaOrder(status);
  const media = order.length
    ? await db.selectFrom("media_attachments").select(["id", "description"]).where("id", "in", order).execute()
    : [];
  const poll = status.poll_id
    ? await db.selectFrom("polls").select("options").where("id", "=", status.poll_id).executeTakeFirst()
    : undefined;
  await db
    .insertInto("status_edits")
    .values({
      id: newId(),
      status_id: status.id,
      account_id: status.account_id,
      text: status.text,
      content: status.content,
      spoiler_text: status.spoiler_text,
      sensitive: status.sensitive,
      language: status.language,
      ordered_media_attachment_ids: encodeMediaOrder(order),
      media_descriptions: order.length
        ? JSON.stringify(order.map((id) => media.find((m) => m.id === id)?.description ?? null))
        : null,
      poll_options: poll ? poll.options : null,
      created_at: at,
    })
    .execute();
}

/** Before a status's first edit, its original version goes into the history. */
export async function keepFirstVersion(db: Kysely<Database>, status: StatusRow): Promise<void> {
  const edits = await db.selectFrom("status_edits").select("id").where("status_id", "=", status.id).limit(1).execute();
  if (edits.length === 0) await snapshot(db, status, status.created_at);
}

/** Whether an edit keeps the poll's votes: same options and the same single/multiple choice. */
function keepsVotes(current: PollRow, next: PollParams): boolean {
  const options = pollOptions(current);
  return (
    current.multiple === next.multiple &&
    options.length === next.options.length &&
    options.every((o, i) => o === next.options[i].trim())
  );
}

/**
 * Edits an own status: text, warning, sensitivity, language, media (order, descriptions, focus)
 * and poll. Changing the poll's options resets its votes. The first edit keeps the original
 * version in the history; every edit adds the new one. Nothing is stored when a rule fails.
 */
export async function editStatus(ctx: Ctx, status: StatusRow, params: EditStatusParams): Promise<StatusRow> {
  const db = ctx.db.kysely;
  const mediaIds = [...new Set(params.mediaIds ?? mediaOrder(status))];
  const currentPoll = status.poll_id
    ? await db.selectFrom("polls").selectAll().where("id", "=", status.poll_id).executeTakeFirst()
    : undefined;
  // An edit follows the rules of a new post (a warning alone becomes the text; length, media, poll limits).
  const { text, spoilerText, media, formatted } = await prepareContent(
    ctx,
    status.account_id,
    {
      text: params.text ?? status.text,
      spoilerText: params.spoilerText ?? status.spoiler_text,
      mediaIds,
      poll: params.poll,
    },
    { statusId: status.id },
  );
  const focusById = new Map(params.mediaAttributes.map((a) => [a.id, parseFocus(a.focus)]));
  for (const attribute of params.mediaAttributes) {
    if (!media.some((m) => m.id === attribute.id))
      throw new ValidationFailed(`Media ${attribute.id} is not attached to this post`);
    if (attribute.description !== undefined && [...attribute.description].length > LIMITS.media.descriptionLimit) {
      throw new ValidationFailed(`Description is too long (maximum is ${LIMITS.media.descriptionLimit} characters)`);
    }
  }
  const now = new Date();
  const nowIso = now.toISOString();

  return ctx.dispatcher.transaction(async (tx) => {
    await keepFirstVersion(tx, status);

    const tags = await upsertTags(tx, formatted.tags);
    await tx.deleteFrom("statuses_tags").where("status_id", "=", status.id).execute();
    await tagStatus(tx, status.id, tags, nowIso);
    const existingMentions = await tx
      .selectFrom("mentions")
      .select("account_id")
      .where("status_id", "=", status.id)
      .execute();
    const known = new Set(existingMentions.map((m) => m.account_id));
    const added = formatted.mentions
      .filter((a) => !known.has(a.id))
      .map((a) => ({ id: newId(), status_id: status.id, account_id: a.id, silent: false, created_at: nowIso }));
    if (added.length) await tx.insertInto("mentions").values(added).execute();
    const keep = new Set(formatted.mentions.map((a) => a.id));
    const dropped = existingMentions.filter((m) => !keep.has(m.account_id)).map((m) => m.account_id);
    // Mentions that left the text become silent: those accounts keep access to a post addressed to them.
    if (dropped.length)
      await tx
        .updateTable("mentions")
        .set({ silent: true })
        .where("status_id", "=", status.id)
        .where("account_id", "in", dropped)
        .execute();

    const detach = mediaOrder(status).filter((id) => !mediaIds.includes(id));
    if (detach.length)
      await tx
        .updateTable("media_attachments")
        .set({ status_id: null, updated_at: nowIso })
        .where("id", "in", detach)
        .execute();
    for (const row of media as MediaAttachmentRow[]) {
      const attribute = params.mediaAttributes.find((a) => a.id === row.id);
      const focus = focusById.get(row.id);
      await tx
        .updateTable("media_attachments")
        .set({
          status_id: status.id,
          description: attribute?.description ?? row.description,
          focus_x: focus ? focus.x : row.focus_x,
          focus_y: focus ? focus.y : row.focus_y,
          updated_at: nowIso,
        })
        .where("id", "=", row.id)
        .execute();
    }

    let pollId = status.poll_id;
    const removePoll = currentPoll && (mediaIds.length > 0 || (params.poll && !keepsVotes(currentPoll, params.poll)));
    if (currentPoll && params.poll && !removePoll) {
      // Same options: the votes stay, the new duration and hide_totals apply.
      const expiresAt = new Date(now.getTime() + (params.poll.expiresIn ?? 0) * 1000).toISOString();
      await tx
        .updateTable("polls")
        .set({ expires_at: expiresAt, hide_totals: params.poll.hideTotals, closed_at: null, updated_at: nowIso })
        .where("id", "=", currentPoll.id)
        .execute();
      await ctx.jobs.enqueueWith(tx, "polls.close", { pollId: currentPoll.id }, { runAt: new Date(expiresAt) });
    }
    if (removePoll) {
      await tx.deleteFrom("polls").where("id", "=", currentPoll.id).execute();
      pollId = null;
    }
    if (params.poll && (!currentPoll || removePoll)) {
      const poll = await insertPoll(tx, status.account_id, status.id, params.poll, now);
      pollId = poll.id;
      await ctx.jobs.enqueueWith(tx, "polls.close", { pollId: poll.id }, { runAt: new Date(poll.expires_at!) });
    }

    const updated = await tx
      .updateTable("statuses")
      .set({
        text,
        content: formatted.html,
        spoiler_text: spoilerText,
        sensitive: (params.sensitive ?? status.sensitive) || spoilerText.trim() !== "",
        language:
          params.language !== undefined ? (normalizeLanguage(params.language) ?? status.language) : status.language,
        ordered_media_attachment_ids: encodeMediaOrder(mediaIds),
        poll_id: pollId,
        edited_at: nowIso,
        updated_at: nowIso,
      })
      .where("id", "=", status.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await snapshot(tx, updated, nowIso);
    await ctx.dispatcher.emit(tx, {
      type: "status.updated",
      statusId: status.id,
      addedMentionIds: added.map((m) => m.id),
    });
    if (text !== status.text) {
      // A changed text may link elsewhere: the card is fetched again, as Mastodon resets it on edit.
      await detachCard(tx, status.id);
      if (hasPreviewableLink(updated.visibility, text))
        await ctx.jobs.enqueueWith(tx, "cards.fetch", { statusId: status.id }, { maxAttempts: 3 });
    }
    return updated;
  });
}
