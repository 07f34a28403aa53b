/**
 * What notifies whom: the notification subscribers of domain events (src/subscribers.ts). Each
 * runs in a job written with the change that caused it, so a notification exists exactly when its
 * cause was committed, and the rules of notify.ts run off the request path. Each first checks that
 * its cause still exists (an unfavourite right after the favourite leaves nothing to notify), and
 * dates the notification by its cause (the group's hour bucket). Undoing a cause deletes its
 * notification in the undoing transaction (db/queries/notifications.ts).
 */
import type { Ctx } from "../../context.ts";
import { bellRingers } from "../../db/queries/relationships.ts";
import type { StatusRow } from "../../db/schema.ts";
import type { DomainEvent } from "../../events/types.ts";
import { hasPermission, type Permission } from "../accounts/roles.ts";
import { notify } from "./notify.ts";
import type { NotificationEvent } from "./types.ts";

/** A `notifications.notify` job queued by an earlier version: an event with its time as an ISO string. */
export type NotificationJob = Omit<NotificationEvent, "at"> & { at?: string };

/** Runs a `notifications.notify` job queued by an earlier version. */
export async function runNotificationJob(ctx: Ctx, payload: NotificationJob): Promise<void> {
  await notify(ctx, { ...payload, at: payload.at ? new Date(payload.at) : undefined });
}

/** A favourite notifies the status's author. */
export async function notifyOfFavourite(ctx: Ctx, event: DomainEvent<"favourite.created">): Promise<void> {
  const row = await ctx.db.kysely
    .selectFrom("favourites")
    .innerJoin("statuses", "statuses.id", "favourites.status_id")
    .select(["favourites.created_at", "statuses.account_id as author_id"])
    .where("favourites.id", "=", event.favouriteId)
    .executeTakeFirst();
  if (!row) return;
  await notify(ctx, {
    type: "favourite",
    receiverId: row.author_id,
    fromId: event.accountId,
    activityType: "Favourite",
    activityId: event.favouriteId,
    statusId: event.statusId,
    at: new Date(row.created_at),
  });
}

/** A follow (made at once, or a request accepted) notifies the followed account. */
export async function notifyOfFollow(ctx: Ctx, event: DomainEvent<"follow.created">): Promise<void> {
  const row = await ctx.db.kysely
    .selectFrom("follows")
    .select("created_at")
    .where("id", "=", event.followId)
    .executeTakeFirst();
  if (!row) return;
  await notify(ctx, {
    type: "follow",
    receiverId: event.targetAccountId,
    fromId: event.accountId,
    activityType: "Follow",
    activityId: event.followId,
    at: new Date(row.created_at),
  });
}

/** A request to follow a locked account notifies its owner while it is pending. */
export async function notifyOfFollowRequest(ctx: Ctx, event: DomainEvent<"follow_request.created">): Promise<void> {
  const row = await ctx.db.kysely
    .selectFrom("follow_requests")
    .select("created_at")
    .where("id", "=", event.requestId)
    .executeTakeFirst();
  if (!row) return;
  await notify(ctx, {
    type: "follow_request",
    receiverId: event.targetAccountId,
    fromId: event.accountId,
    activityType: "FollowRequest",
    activityId: event.requestId,
    at: new Date(row.created_at),
  });
}

/** The local users whose role holds `permission` (and who are not disabled). */
async function staffWith(ctx: Ctx, permission: Permission): Promise<string[]> {
  const staff = await ctx.db.kysely
    .selectFrom("users")
    .innerJoin("user_roles", "user_roles.id", "users.role_id")
    .select(["users.account_id", "user_roles.permissions"])
    .where("users.disabled", "=", false)
    .execute();
  return staff.filter((member) => hasPermission(member, permission)).map((member) => member.account_id);
}

/** A sign-up notifies every local user whose role manages users (`admin.sign_up`). */
export async function notifyStaffOfSignUp(ctx: Ctx, event: DomainEvent<"account.registered">): Promise<void> {
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .select("created_at")
    .where("id", "=", event.accountId)
    .executeTakeFirst();
  if (!account) return;
  for (const receiverId of await staffWith(ctx, "manage_users"))
    await notify(ctx, {
      type: "admin.sign_up",
      receiverId,
      fromId: event.accountId,
      activityType: "Account",
      activityId: event.accountId,
      at: new Date(account.created_at),
    });
}

/** A report notifies every local user whose role manages reports, except the reported account (`admin.report`). */
export async function notifyStaffOfReport(ctx: Ctx, event: DomainEvent<"report.created">): Promise<void> {
  const report = await ctx.db.kysely
    .selectFrom("reports")
    .select(["account_id", "target_account_id", "created_at"])
    .where("id", "=", event.reportId)
    .executeTakeFirst();
  if (!report) return;
  for (const receiverId of await staffWith(ctx, "manage_reports"))
    if (receiverId !== report.target_account_id)
      await notify(ctx, {
        type: "admin.report",
        receiverId,
        fromId: report.account_id,
        activityType: "Report",
        activityId: event.reportId,
        at: new Date(report.created_at),
      });
}

/** A strike notifies its target (`moderation_warning`; "from" the target, since no account sends it). */
export async function notifyOfModerationWarning(
  ctx: Ctx,
  event: DomainEvent<"account_warning.created">,
): Promise<void> {
  const warning = await ctx.db.kysely
    .selectFrom("account_warnings")
    .select("created_at")
    .where("id", "=", event.warningId)
    .executeTakeFirst();
  if (!warning) return;
  await notify(ctx, {
    type: "moderation_warning",
    receiverId: event.targetAccountId,
    fromId: event.targetAccountId,
    activityType: "AccountWarning",
    activityId: event.warningId,
    at: new Date(warning.created_at),
  });
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
  for (const subscriber of await bellRingers(db, status.account_id)) {
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
