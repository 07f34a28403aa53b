/**
 * Where notifications come from. Services that change statuses, follows, favourites and polls
 * enqueue the `notifications.notify` job in their own transaction (`enqueueNotification`), so a
 * notification exists exactly when its cause was committed, and the rules of notify.ts run off
 * the request path. A new status (its mentions, and the `status` notifications of followers who
 * asked for them) and a boost are notified by the fan-out job, an edit by `notifications.edit`,
 * a poll's end by the job that closes it. Undoing a cause removes its notification.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Database, StatusRow } from "../../db/schema.ts";
import type { JobQueue } from "../../jobs/queue.ts";
import { notify } from "./notify.ts";
import type { ActivityType, NotificationEvent } from "./types.ts";

/** The job payload: an event with its time as an ISO string. */
export type NotificationJob = Omit<NotificationEvent, "at"> & { at?: string };

/** Enqueues `event` inside the transaction that causes it (nothing for notifying yourself). */
export async function enqueueNotification(
  jobs: JobQueue,
  tx: Kysely<Database>,
  event: NotificationEvent,
): Promise<void> {
  if (event.receiverId === event.fromId && event.type !== "poll") return;
  const payload: NotificationJob = { ...event, at: (event.at ?? new Date()).toISOString() };
  await jobs.enqueueWith(tx, "notifications.notify", payload);
}

/** Runs a `notifications.notify` job. */
export async function runNotificationJob(ctx: Ctx, payload: NotificationJob): Promise<void> {
  await notify(ctx, { ...payload, at: payload.at ? new Date(payload.at) : undefined });
}

/** Removes the notifications of activities that were undone (an unfavourite, an unfollow, …). */
export async function removeNotificationsOf(
  tx: Kysely<Database>,
  activityType: ActivityType,
  activityIds: readonly string[],
): Promise<void> {
  if (activityIds.length === 0) return;
  await tx
    .deleteFrom("notifications")
    .where("activity_id", "in", activityIds)
    .where("activity_type", "=", activityType)
    .execute();
}

/**
 * The notifications of a status that was just published: its author's boost of a local status
 * notifies the boosted author; a post notifies the local accounts it mentions and the followers
 * who asked to be notified of the author's posts (not for replies to others, not for direct posts,
 * and only in the languages the follow asks for).
 */
export async function notifyOfNewStatus(ctx: Ctx, statusId: string): Promise<void> {
  const db = ctx.db.kysely;
  const status = await db.selectFrom("statuses").selectAll().where("id", "=", statusId).executeTakeFirst();
  if (!status || status.deleted_at) return;
  const at = new Date(status.created_at);
  if (status.reblog_of_id) {
    const original = await db
      .selectFrom("statuses")
      .select(["id", "account_id"])
      .where("id", "=", status.reblog_of_id)
      .executeTakeFirst();
    if (original)
      await notify(ctx, {
        type: "reblog",
        receiverId: original.account_id,
        fromId: status.account_id,
        activityType: "Status",
        activityId: status.id,
        statusId: original.id,
        at,
      });
    return;
  }
  await notifyMentions(ctx, status, undefined, at);
  const replyToOthers = status.in_reply_to_account_id !== null && status.in_reply_to_account_id !== status.account_id;
  if (replyToOthers || status.visibility === "direct") return;
  const subscribers = await db
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.account_id")
    .select(["follows.account_id", "follows.languages"])
    .where("follows.target_account_id", "=", status.account_id)
    .where("follows.notify", "=", true)
    .where("accounts.domain", "is", null)
    .execute();
  for (const subscriber of subscribers) {
    const languages = subscriber.languages ? (JSON.parse(subscriber.languages) as string[]) : null;
    if (languages && status.language && !languages.includes(status.language)) continue;
    await notify(ctx, {
      type: "status",
      receiverId: subscriber.account_id,
      fromId: status.account_id,
      activityType: "Status",
      activityId: status.id,
      statusId: status.id,
      at,
    });
  }
}

/** After an edit: the local accounts that boosted the status, and the accounts newly mentioned. */
export async function notifyOfEdit(ctx: Ctx, statusId: string, addedMentionIds: readonly string[]): Promise<void> {
  const db = ctx.db.kysely;
  const status = await db.selectFrom("statuses").selectAll().where("id", "=", statusId).executeTakeFirst();
  if (!status) return;
  const boosters = await db
    .selectFrom("statuses")
    .innerJoin("accounts", "accounts.id", "statuses.account_id")
    .select("statuses.account_id")
    .distinct()
    .where("statuses.reblog_of_id", "=", status.id)
    .where("accounts.domain", "is", null)
    .execute();
  for (const booster of boosters)
    await notify(ctx, {
      type: "update",
      receiverId: booster.account_id,
      fromId: status.account_id,
      activityType: "Status",
      activityId: status.id,
      statusId: status.id,
    });
  if (addedMentionIds.length > 0) await notifyMentions(ctx, status, addedMentionIds);
}

/** `mention` notifications for the local accounts a status mentions (only `onlyIds` when given). */
async function notifyMentions(
  ctx: Ctx,
  status: Pick<StatusRow, "id" | "account_id">,
  onlyIds: readonly string[] | undefined,
  at?: Date,
): Promise<void> {
  let query = ctx.db.kysely
    .selectFrom("mentions")
    .innerJoin("accounts", "accounts.id", "mentions.account_id")
    .select(["mentions.id", "mentions.account_id"])
    .where("mentions.status_id", "=", status.id)
    .where("mentions.silent", "=", false)
    .where("accounts.domain", "is", null);
  if (onlyIds) query = query.where("mentions.id", "in", onlyIds);
  for (const mention of await query.execute())
    await notify(ctx, {
      type: "mention",
      receiverId: mention.account_id,
      fromId: status.account_id,
      activityType: "Mention",
      activityId: mention.id,
      statusId: status.id,
      at,
    });
}

/** A poll ended: its author and every local account that voted in it. */
export async function notifyOfPollEnd(ctx: Ctx, pollId: string): Promise<void> {
  const db = ctx.db.kysely;
  const poll = await db
    .selectFrom("polls")
    .select(["id", "account_id", "status_id"])
    .where("id", "=", pollId)
    .executeTakeFirst();
  if (!poll) return;
  const voters = await db
    .selectFrom("poll_votes")
    .innerJoin("accounts", "accounts.id", "poll_votes.account_id")
    .select("poll_votes.account_id")
    .distinct()
    .where("poll_votes.poll_id", "=", poll.id)
    .where("accounts.domain", "is", null)
    .execute();
  const receivers = new Set([poll.account_id, ...voters.map((v) => v.account_id)]);
  for (const receiverId of receivers)
    await notify(ctx, {
      type: "poll",
      receiverId,
      fromId: poll.account_id,
      activityType: "Poll",
      activityId: poll.id,
      statusId: poll.status_id,
    });
}
