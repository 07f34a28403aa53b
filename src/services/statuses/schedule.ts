import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, ScheduledStatusRow } from "../../db/schema.ts";
import { ApiError, NotFound, ValidationFailed } from "../../errors.ts";
import { AlreadyPublished, createStatus, rememberIdempotencyKey, replyTarget, type Author, type CreateStatusParams } from "./create.ts";
import { checkContent, checkVisibility, effectiveText, loadAttachableMedia } from "./validate.ts";
import { userSettings } from "../accounts/settings.ts";

/** A scheduled status must be at least this far ahead. */
export const MINIMUM_LEAD_MS = 5 * 60 * 1000;
const TOTAL_LIMIT = 300;
const DAILY_LIMIT = 25;

/** What `params` of a ScheduledStatus holds, as Mastodon stores it. */
export interface ScheduledParams {
  text: string;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: string | null;
  language: string | null;
  scheduled_at: null;
  poll: { options: string[]; expires_in: number; multiple: boolean; hide_totals: boolean } | null;
  idempotency: string | null;
  in_reply_to_id: string | null;
  /** A string: Rookery's IDs exceed what a JSON number holds exactly (docs/compatibility.md). */
  application_id: string | null;
  with_rate_limit: boolean;
}

export type SchedulingDecision = { kind: "now" } | { kind: "later"; at: Date };

/** When `scheduled_at` asks for: now (past times), later (≥ 5 minutes ahead), or 422 in between. */
export function decideSchedule(value: string, now = Date.now()): SchedulingDecision {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new ValidationFailed("Scheduled at is not a valid date");
  if (at.getTime() <= now) return { kind: "now" };
  if (at.getTime() < now + MINIMUM_LEAD_MS) throw new ValidationFailed("Scheduled at date must be in the future");
  return { kind: "later", at };
}

async function checkLimits(ctx: Ctx, accountId: string, at: Date): Promise<void> {
  const rows = await ctx.db.kysely.selectFrom("scheduled_statuses").select("scheduled_at").where("account_id", "=", accountId).execute();
  if (rows.length >= TOTAL_LIMIT) throw new ValidationFailed(`You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`);
  const day = at.toISOString().slice(0, 10);
  if (rows.filter((r) => r.scheduled_at.slice(0, 10) === day).length >= DAILY_LIMIT) {
    throw new ValidationFailed(`You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`);
  }
}

/**
 * Schedules a status: the whole post is checked now (text, media, poll, reply target), its media
 * are reserved for it, and a job publishes it at `at`.
 */
export async function scheduleStatus(ctx: Ctx, author: Author, params: CreateStatusParams, at: Date, idempotencyKey?: string): Promise<ScheduledStatusRow> {
  const effective = effectiveText(params.text, params.spoilerText, params.mediaIds);
  checkContent({ text: effective.text, spoilerText: effective.spoilerText, mediaIds: params.mediaIds, poll: params.poll });
  checkVisibility(params.visibility);
  await replyTarget(ctx, author.account, params.inReplyToId);
  const media = await loadAttachableMedia(ctx.db.kysely, author.account.id, params.mediaIds);
  await checkLimits(ctx, author.account.id, at);
  const settings = userSettings(author.user);
  const stored: ScheduledParams = {
    text: params.text,
    media_ids: params.mediaIds.length ? params.mediaIds : null,
    sensitive: params.sensitive ?? null,
    spoiler_text: params.spoilerText || null,
    visibility: params.visibility ?? settings.default_privacy,
    language: params.language ?? null,
    scheduled_at: null,
    poll: params.poll ? { options: params.poll.options, expires_in: params.poll.expiresIn ?? 0, multiple: params.poll.multiple, hide_totals: params.poll.hideTotals } : null,
    // Mastodon does not echo the key (it is kept apart, for one hour).
    idempotency: null,
    in_reply_to_id: params.inReplyToId ?? null,
    application_id: author.applicationId,
    with_rate_limit: false,
  };
  const id = newId();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto("scheduled_statuses")
      .values({ id, account_id: author.account.id, scheduled_at: at.toISOString(), params: JSON.stringify(stored), created_at: new Date().toISOString() })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (media.length) await tx.updateTable("media_attachments").set({ scheduled_status_id: id }).where("id", "in", media.map((m) => m.id)).execute();
    if (idempotencyKey) await rememberIdempotencyKey(tx, author.account.id, idempotencyKey, { scheduledStatusId: id });
    await ctx.jobs.enqueueWith(tx, "scheduled_statuses.publish", { id }, { runAt: at });
    return row;
  });
}

export async function findOwnScheduledStatus(ctx: Ctx, account: AccountRow, id: string | undefined): Promise<ScheduledStatusRow> {
  const row = id ? await ctx.db.kysely.selectFrom("scheduled_statuses").selectAll().where("id", "=", id).where("account_id", "=", account.id).executeTakeFirst() : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Moves a scheduled status to a new time (at least five minutes ahead); the old job then finds nothing due. */
export async function rescheduleStatus(ctx: Ctx, row: ScheduledStatusRow, value: string | undefined): Promise<ScheduledStatusRow> {
  const at = value ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()) || at.getTime() < Date.now() + MINIMUM_LEAD_MS) {
    throw new ValidationFailed("Scheduled at The scheduled date must be in the future");
  }
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const updated = await tx.updateTable("scheduled_statuses").set({ scheduled_at: at.toISOString() }).where("id", "=", row.id).returningAll().executeTakeFirstOrThrow();
    await ctx.jobs.enqueueWith(tx, "scheduled_statuses.publish", { id: row.id }, { runAt: at });
    return updated;
  });
}

/** Cancels a scheduled status; its media become free again. */
export async function cancelScheduledStatus(ctx: Ctx, row: ScheduledStatusRow): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx.updateTable("media_attachments").set({ scheduled_status_id: null }).where("scheduled_status_id", "=", row.id).execute();
    await tx.deleteFrom("scheduled_statuses").where("id", "=", row.id).execute();
  });
}

export function storedParams(row: ScheduledStatusRow): ScheduledParams {
  return JSON.parse(row.params);
}

/**
 * The `scheduled_statuses.publish` job: publishes the status if it is due, exactly once even with
 * several workers (the scheduled row is deleted in the publishing transaction). A post that no
 * longer passes the rules (reply target gone, account disabled) is dropped, as Mastodon does.
 */
export async function publishScheduledStatus(ctx: Ctx, id: string, now = Date.now()): Promise<"published" | "not-due" | "gone" | "dropped"> {
  const row = await ctx.db.kysely.selectFrom("scheduled_statuses").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) return "gone";
  if (Date.parse(row.scheduled_at) > now) return "not-due";
  const user = await ctx.db.kysely.selectFrom("users").selectAll().where("account_id", "=", row.account_id).executeTakeFirst();
  const account = await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", row.account_id).executeTakeFirst();
  const params = storedParams(row);
  const drop = async () => {
    await cancelScheduledStatus(ctx, row);
    return "dropped" as const;
  };
  if (!user || !account || user.disabled || account.suspended_at) return drop();
  try {
    await createStatus(
      ctx,
      { account, user, applicationId: params.application_id },
      {
        scheduledStatusId: row.id,
        text: params.text,
        mediaIds: params.media_ids ?? [],
        poll: params.poll ? { options: params.poll.options, expiresIn: params.poll.expires_in, multiple: params.poll.multiple, hideTotals: params.poll.hide_totals } : undefined,
        inReplyToId: params.in_reply_to_id ?? undefined,
        sensitive: params.sensitive ?? undefined,
        spoilerText: params.spoiler_text ?? "",
        visibility: params.visibility ?? undefined,
        language: params.language ?? undefined,
      },
    );
    return "published";
  } catch (error) {
    if (error instanceof AlreadyPublished) return "gone";
    if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
      // Another worker may have published it meanwhile (its media then look taken): not a refusal.
      const still = await ctx.db.kysely.selectFrom("scheduled_statuses").select("id").where("id", "=", row.id).executeTakeFirst();
      return still ? drop() : "gone";
    }
    throw error;
  }
}
