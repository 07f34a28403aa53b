import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { scheduledParams, userSettings } from "../../db/columns.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountById, lockAccountRow } from "../../db/queries/accounts.ts";
import { scheduledStatusById } from "../../db/queries/statuses.ts";
import type { AccountRow, Database, ScheduledParams, ScheduledStatusRow } from "../../db/schema.ts";
import { Forbidden, NotFound, Unprocessable, ValidationFailed } from "../../errors.ts";
import { createStatus } from "./create.ts";
import { AlreadyPublished } from "./errors.ts";
import { rememberIdempotencyKey } from "./idempotency.ts";
import { prepareStatus, type Author, type StatusParams } from "./prepare.ts";

/** A scheduled status must be at least this far ahead. */
export const MINIMUM_LEAD_MS = 5 * 60 * 1000;
const TOTAL_LIMIT = 300;
const DAILY_LIMIT = 25;

/** What `params` of a ScheduledStatus holds, as Mastodon stores it. */
export type SchedulingDecision = { kind: "now" } | { kind: "later"; at: Date };

const TOO_SOON = "Scheduled at The scheduled date must be in the future";

/**
 * When `scheduled_at` (already parsed) asks for: now (absent or past), later (≥ 5 minutes ahead),
 * or 422 in between — the same text as rescheduling, as Mastodon answers.
 */
export function decideSchedule(at: Date | undefined, now = Date.now()): SchedulingDecision {
  if (!at || at.getTime() <= now) return { kind: "now" };
  if (at.getTime() < now + MINIMUM_LEAD_MS) throw new ValidationFailed(TOO_SOON);
  return { kind: "later", at };
}

/** The limits of 300 scheduled posts and 25 a day; called under the account's lock, in the inserting transaction. */
async function checkLimits(tx: Kysely<Database>, accountId: string, at: Date): Promise<void> {
  const rows = await tx
    .selectFrom("scheduled_statuses")
    .select("scheduled_at")
    .where("account_id", "=", accountId)
    .execute();
  if (rows.length >= TOTAL_LIMIT)
    throw new ValidationFailed(`You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`);
  const day = at.toISOString().slice(0, 10);
  if (rows.filter((r) => r.scheduled_at.slice(0, 10) === day).length >= DAILY_LIMIT) {
    throw new ValidationFailed(`You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for today`);
  }
}

/**
 * Schedules a status: the whole post is checked now (text, media, poll, reply target, mentions),
 * its media are reserved for it, and a job publishes it at `at`.
 */
export async function scheduleStatus(
  ctx: Ctx,
  author: Author,
  params: StatusParams,
  at: Date,
  idempotencyKey?: string,
): Promise<ScheduledStatusRow> {
  const draft = await prepareStatus(ctx, author, params);
  const settings = userSettings(author.user);
  const poll = params.poll;
  const stored: ScheduledParams = {
    text: params.text,
    media_ids: params.mediaIds.length ? params.mediaIds : null,
    sensitive: params.sensitive ?? null,
    spoiler_text: params.spoilerText || null,
    visibility: params.visibility || settings.default_privacy,
    language: params.language ?? null,
    scheduled_at: null,
    poll: poll
      ? {
          options: poll.options,
          expires_in: poll.expiresIn ?? 0,
          multiple: poll.multiple,
          hide_totals: poll.hideTotals,
        }
      : null,
    // Mastodon does not echo the key (it is kept apart, for one hour).
    idempotency: null,
    in_reply_to_id: params.inReplyToId ?? null,
    application_id: author.applicationId,
    with_rate_limit: false,
    ...(params.allowedMentions ? { allowed_mentions: params.allowedMentions } : {}),
  };
  const id = newId();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    await lockAccountRow(tx, ctx.db.engine, author.account.id);
    await checkLimits(tx, author.account.id, at);
    const row = await tx
      .insertInto("scheduled_statuses")
      .values({
        id,
        account_id: author.account.id,
        scheduled_at: at.toISOString(),
        params: JSON.stringify(stored),
        created_at: new Date().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (draft.media.length)
      await tx
        .updateTable("media_attachments")
        .set({ scheduled_status_id: id })
        .where(
          "id",
          "in",
          draft.media.map((m) => m.id),
        )
        .execute();
    if (idempotencyKey) await rememberIdempotencyKey(tx, author.account.id, idempotencyKey, { scheduledStatusId: id });
    await ctx.jobs.enqueueWith(tx, "scheduled_statuses.publish", { id }, { runAt: at });
    return row;
  });
}

export async function findOwnScheduledStatus(
  ctx: Ctx,
  account: AccountRow,
  id: string | undefined,
): Promise<ScheduledStatusRow> {
  const row = await scheduledStatusById(ctx.db.kysely, id);
  if (!row || row.account_id !== account.id) throw new NotFound();
  return row;
}

/** The account's scheduled statuses, a page of them (newest ID first). */
export async function listScheduledStatuses(
  ctx: Ctx,
  account: AccountRow,
  page: PageParams,
): Promise<ScheduledStatusRow[]> {
  return fetchPage(
    ctx.db.kysely.selectFrom("scheduled_statuses").selectAll().where("account_id", "=", account.id),
    "id",
    page,
  );
}

/** Moves a scheduled status to a new time (at least five minutes ahead); the old job then finds nothing due. */
export async function rescheduleStatus(
  ctx: Ctx,
  row: ScheduledStatusRow,
  at: Date | undefined,
): Promise<ScheduledStatusRow> {
  if (!at || at.getTime() < Date.now() + MINIMUM_LEAD_MS) throw new ValidationFailed(TOO_SOON);
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable("scheduled_statuses")
      .set({ scheduled_at: at.toISOString() })
      .where("id", "=", row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.jobs.enqueueWith(tx, "scheduled_statuses.publish", { id: row.id }, { runAt: at });
    return updated;
  });
}

/** Cancels a scheduled status; its media become free again. */
export async function cancelScheduledStatus(ctx: Ctx, row: ScheduledStatusRow): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .updateTable("media_attachments")
      .set({ scheduled_status_id: null })
      .where("scheduled_status_id", "=", row.id)
      .execute();
    await tx.deleteFrom("scheduled_statuses").where("id", "=", row.id).execute();
  });
}

/** The post a scheduled status stands for, as `prepareStatus` takes it. */
function paramsOf(stored: ScheduledParams): StatusParams {
  const poll = stored.poll;
  return {
    text: stored.text,
    mediaIds: stored.media_ids ?? [],
    poll: poll
      ? { options: poll.options, expiresIn: poll.expires_in, multiple: poll.multiple, hideTotals: poll.hide_totals }
      : undefined,
    inReplyToId: stored.in_reply_to_id ?? undefined,
    sensitive: stored.sensitive ?? undefined,
    spoilerText: stored.spoiler_text ?? "",
    visibility: stored.visibility ?? undefined,
    language: stored.language ?? undefined,
    allowedMentions: stored.allowed_mentions,
  };
}

/**
 * The `scheduled_statuses.publish` job: publishes the status if it is due, exactly once even with
 * several workers (the scheduled row is deleted in the publishing transaction). A post that no
 * longer passes the rules (reply target gone, account disabled) is dropped, as Mastodon does.
 */
export async function publishScheduledStatus(
  ctx: Ctx,
  id: string,
  now = Date.now(),
): Promise<"published" | "not-due" | "gone" | "dropped"> {
  const row = await scheduledStatusById(ctx.db.kysely, id);
  if (!row) return "gone";
  if (Date.parse(row.scheduled_at) > now) return "not-due";
  const user = await ctx.db.kysely
    .selectFrom("users")
    .selectAll()
    .where("account_id", "=", row.account_id)
    .executeTakeFirst();
  const account = await accountById(ctx.db.kysely, row.account_id);
  const params = scheduledParams(row);
  const drop = async () => {
    await cancelScheduledStatus(ctx, row);
    return "dropped" as const;
  };
  if (!user || !account || user.disabled || account.suspended_at) return drop();
  const author = { account, user, applicationId: params.application_id };
  try {
    const draft = await prepareStatus(ctx, author, paramsOf(params), { scheduledStatusId: row.id });
    await createStatus(ctx, author, draft, { scheduledStatusId: row.id });
    return "published";
  } catch (error) {
    if (error instanceof AlreadyPublished) return "gone";
    if (isRefusal(error)) {
      // Another worker may have published it meanwhile (its media then look taken): not a refusal.
      const still = await ctx.db.kysely
        .selectFrom("scheduled_statuses")
        .select("id")
        .where("id", "=", row.id)
        .executeTakeFirst();
      return still ? drop() : "gone";
    }
    throw error;
  }
}

/** The post breaks a rule now (reply target gone, media taken, mention refused): it cannot be published. */
function isRefusal(error: unknown): boolean {
  return error instanceof Unprocessable || error instanceof NotFound || error instanceof Forbidden;
}
