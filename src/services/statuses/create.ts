import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, Database, StatusRow, UserRow } from "../../db/schema.ts";
import { NotFound, Unprocessable } from "../../errors.ts";
import { formatText } from "../../text/format.ts";
import { extractEntities } from "../../text/entities.ts";
import { userSettings } from "../accounts/settings.ts";
import { insertPoll } from "../polls/create.ts";
import { tagStatus, upsertTags } from "./tags.ts";
import { checkContent, checkVisibility, effectiveText, loadAttachableMedia, normalizeLanguage, type PollParams, type Visibility } from "./validate.ts";
import { isStatusVisible } from "./visibility.ts";

/** Who posts: the account, its user (for defaults) and the app the token belongs to. */
export interface Author {
  account: AccountRow;
  user: UserRow;
  applicationId: string | null;
}

export interface CreateStatusParams {
  /** Publishing a scheduled status: its row is removed in the same transaction (once only). */
  scheduledStatusId?: string;
  text: string;
  mediaIds: string[];
  poll?: PollParams;
  inReplyToId?: string;
  sensitive?: boolean;
  spoilerText: string;
  visibility?: string;
  language?: string;
}

/** Public and unlisted posts with a link get a preview card, fetched in the background. */
export function hasPreviewableLink(visibility: string, text: string): boolean {
  return (visibility === "public" || visibility === "unlisted") && extractEntities(text).some((e) => e.kind === "url" && /^https?:/i.test(e.url));
}

/** The scheduled status was published (or cancelled) by someone else first. */
export class AlreadyPublished extends Error {
  override name = "AlreadyPublished";
}

/** How long an Idempotency-Key returns the same status. */
export const IDEMPOTENCY_WINDOW_MS = 60 * 60 * 1000;

export function localStatusUris(baseUrl: string, username: string, id: string) {
  return { uri: `${baseUrl}/users/${username}/statuses/${id}`, url: `${baseUrl}/@${username}/${id}` };
}

/** The status a still-valid Idempotency-Key of this account points at (created or scheduled). */
export async function findIdempotent(db: Kysely<Database>, accountId: string, key: string | undefined): Promise<{ statusId: string | null; scheduledStatusId: string | null } | undefined> {
  if (!key) return undefined;
  const row = await db.selectFrom("idempotency_keys").selectAll().where("account_id", "=", accountId).where("key", "=", key).executeTakeFirst();
  if (!row || Date.parse(row.created_at) + IDEMPOTENCY_WINDOW_MS < Date.now()) return undefined;
  return { statusId: row.status_id, scheduledStatusId: row.scheduled_status_id };
}

/** Records an Idempotency-Key inside the creating transaction; a concurrent duplicate fails on the key. */
export async function rememberIdempotencyKey(db: Kysely<Database>, accountId: string, key: string, target: { statusId?: string; scheduledStatusId?: string }): Promise<void> {
  const now = new Date().toISOString();
  // An expired key, or one whose status was deleted (or whose scheduled status is gone), may be used again.
  await db
    .deleteFrom("idempotency_keys")
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .where((eb) =>
      eb.or([
        eb("created_at", "<", new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString()),
        eb.and([eb("status_id", "is not", null), eb.not(eb.exists(eb.selectFrom("statuses").select("statuses.id").whereRef("statuses.id", "=", "idempotency_keys.status_id")))]),
        eb.and([
          eb("scheduled_status_id", "is not", null),
          eb.not(eb.exists(eb.selectFrom("scheduled_statuses").select("scheduled_statuses.id").whereRef("scheduled_statuses.id", "=", "idempotency_keys.scheduled_status_id"))),
        ]),
      ]),
    )
    .execute();
  await db
    .insertInto("idempotency_keys")
    .values({ account_id: accountId, key, status_id: target.statusId ?? null, scheduled_status_id: target.scheduledStatusId ?? null, created_at: now })
    .execute();
}

/** The status replied to, which the author must be able to see (and which is not a boost). */
export async function replyTarget(ctx: Ctx, author: AccountRow, id: string | undefined): Promise<StatusRow | undefined> {
  if (!id) return undefined;
  const parent = await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", id).executeTakeFirst();
  if (!parent || parent.reblog_of_id || !(await isStatusVisible(ctx.db.kysely, parent, author.id))) {
    throw new NotFound("The post you are trying to reply to does not appear to exist.");
  }
  return parent;
}

/**
 * Publishes a status for a local author: validates text, media, poll, visibility and reply target,
 * renders the text, and stores the status with its mentions, tags, media, poll and counters in one
 * transaction. Returns the new row. (Scheduling is decided by the caller.)
 */
export async function createStatus(ctx: Ctx, author: Author, params: CreateStatusParams, idempotencyKey?: string): Promise<StatusRow> {
  const settings = userSettings(author.user);
  const { text, spoilerText, hadWarning } = effectiveText(params.text, params.spoilerText, params.mediaIds);
  checkContent({ text, spoilerText, mediaIds: params.mediaIds, poll: params.poll });
  let visibility: Visibility = checkVisibility(params.visibility) ?? settings.default_privacy;
  if (visibility === "public" && author.account.silenced_at) visibility = "unlisted";
  const parent = await replyTarget(ctx, author.account, params.inReplyToId);
  const media = await loadAttachableMedia(ctx.db.kysely, author.account.id, params.mediaIds, { scheduledStatusId: params.scheduledStatusId });
  const formatted = await formatText(ctx, text, { multiline: true });
  const sensitive = (params.sensitive ?? settings.default_sensitive) || hadWarning;
  const language = normalizeLanguage(params.language) ?? settings.default_language ?? null;

  const now = new Date();
  const nowIso = now.toISOString();
  const id = newId(now.getTime());
  return ctx.db.kysely.transaction().execute(async (tx) => {
    if (params.scheduledStatusId) {
      const claimed = await tx.deleteFrom("scheduled_statuses").where("id", "=", params.scheduledStatusId).executeTakeFirst();
      if (Number(claimed.numDeletedRows) !== 1) throw new AlreadyPublished();
      await tx.updateTable("media_attachments").set({ scheduled_status_id: null }).where("scheduled_status_id", "=", params.scheduledStatusId).execute();
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
        ordered_media_attachment_ids: media.length ? JSON.stringify(media.map((m) => m.id)) : null,
        created_at: nowIso,
        updated_at: nowIso,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (formatted.mentions.length > 0) {
      await tx
        .insertInto("mentions")
        .values(formatted.mentions.map((account) => ({ id: newId(), status_id: id, account_id: account.id, silent: false, created_at: nowIso })))
        .execute();
    }
    await tagStatus(tx, id, tags, nowIso);
    if (media.length > 0) {
      // Only still-free media are taken, so two posts racing for one file cannot both get it.
      const taken = await tx
        .updateTable("media_attachments")
        .set({ status_id: id, updated_at: nowIso })
        .where("id", "in", media.map((m) => m.id))
        .where("status_id", "is", null)
        .where("scheduled_status_id", "is", null)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== media.length) throw new Unprocessable(`Media ${media.map((m) => m.id).join(", ")} not found or already attached to another post`);
    }
    let row = status;
    if (params.poll) {
      const poll = await insertPoll(tx, author.account.id, id, params.poll, now);
      row = await tx.updateTable("statuses").set({ poll_id: poll.id }).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
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
      await tx.updateTable("statuses").set((eb) => ({ replies_count: eb("replies_count", "+", 1) })).where("id", "=", parent.id).execute();
    }
    if (idempotencyKey) await rememberIdempotencyKey(tx, author.account.id, idempotencyKey, { statusId: id });
    if (hasPreviewableLink(visibility, text)) await ctx.jobs.enqueueWith(tx, "cards.fetch", { statusId: id }, { maxAttempts: 3 });
    return row;
  });
}
