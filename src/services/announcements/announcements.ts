/**
 * Announcements (Mastodon's Announcement): staff post them from the `rookery announcements` command
 * or the admin area (/admin/announcements, which also edits, publishes and unpublishes them, each
 * step in the audit log), now or at a set time (the `announcements.publish` job), optionally about
 * an event with start and end times; every user sees the published ones, marks them read (dismiss) and reacts with an emoji
 * (at most eight different ones per announcement). Streams carry `announcement`,
 * `announcement.reaction` and `announcement.delete`.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AnnouncementRow, Database } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { recordAction } from "../admin/audit.ts";
import { formatText } from "../text/format.ts";

/** Different reactions one announcement may have. */
export const REACTION_LIMIT = 8;

export interface AnnouncementParams {
  text: string;
  startsAt?: Date;
  endsAt?: Date;
  allDay?: boolean;
  /** Publish at this time (absent or past: now). */
  publishAt?: Date;
}

/** Local status IDs linked in a text (`/@user/<id>` or `/users/<user>/statuses/<id>` on this server). */
function linkedStatusIds(ctx: Ctx, text: string): string[] {
  const base = ctx.config.baseUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`${base}/(?:@[\\w.-]+|users/[\\w.-]+/statuses)/(\\d{1,19})`, "g");
  return [...new Set([...text.matchAll(pattern)].map((m) => m[1]!))];
}

/** Mastodon's Announcement validations: a text, and event times given together, in order. */
function checkAnnouncement(params: AnnouncementParams): string {
  const text = params.text.trim();
  const problems: string[] = [];
  if (!text) problems.push("Text can't be blank");
  if (params.startsAt && params.endsAt && params.endsAt < params.startsAt)
    problems.push("Ends at must be after the start");
  if ((params.startsAt === undefined) !== (params.endsAt === undefined))
    problems.push("Starts at and ends at must be given together");
  if (problems.length > 0) throw new ValidationFailed(problems);
  return text;
}

/** The stored rendering of an announcement's text: HTML, and what it mentions, tags and links. */
async function renderedText(ctx: Ctx, text: string) {
  const formatted = await formatText(ctx, text, { multiline: true });
  return {
    text,
    content: formatted.html,
    mention_ids: JSON.stringify(formatted.mentions.map((a) => a.id)),
    tag_names: JSON.stringify(formatted.tags),
    status_ids: JSON.stringify(linkedStatusIds(ctx, text)),
  };
}

/**
 * Publishes an announcement now, or schedules it. With `actorId` (a moderator in the admin area)
 * the audit log records its creation (`create`), in the same transaction; the CLI records nothing.
 */
export async function createAnnouncement(
  ctx: Ctx,
  params: AnnouncementParams,
  actorId?: string,
): Promise<AnnouncementRow> {
  const text = checkAnnouncement(params);
  const rendered = await renderedText(ctx, text);
  const now = new Date();
  const later = params.publishAt && params.publishAt.getTime() > now.getTime() ? params.publishAt : undefined;
  const row = await ctx.db.kysely.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto("announcements")
      .values({
        id: newId(now.getTime()),
        ...rendered,
        all_day: params.allDay ?? false,
        starts_at: params.startsAt?.toISOString() ?? null,
        ends_at: params.endsAt?.toISOString() ?? null,
        published: !later,
        scheduled_at: later?.toISOString() ?? null,
        published_at: later ? null : now.toISOString(),
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (later) await ctx.jobs.enqueueWith(tx, "announcements.publish", { id: inserted.id }, { runAt: later });
    if (actorId) await logAnnouncement(tx, actorId, "create", inserted);
    return inserted;
  });
  if (row.published) await ctx.dispatcher.emitCommitted({ type: "announcement.published", announcementId: row.id });
  return row;
}

/** The `announcements.publish` job: a scheduled announcement goes out (once). */
export async function publishAnnouncement(ctx: Ctx, id: string): Promise<void> {
  const now = new Date().toISOString();
  const published = await ctx.db.kysely
    .updateTable("announcements")
    .set({ published: true, published_at: now, updated_at: now })
    .where("id", "=", id)
    .where("published", "=", false)
    .executeTakeFirst();
  if (Number(published.numUpdatedRows) > 0)
    await ctx.dispatcher.emitCommitted({ type: "announcement.published", announcementId: id });
}

/** Every announcement, published or waiting, newest first (for staff). */
export function allAnnouncements(ctx: Ctx): Promise<AnnouncementRow[]> {
  return ctx.db.kysely.selectFrom("announcements").selectAll().orderBy("id", "desc").execute();
}

/** Removes an announcement (clients drop it); with `actorId` the audit log records it (`destroy`). */
export async function removeAnnouncement(ctx: Ctx, id: string | undefined, actorId?: string): Promise<void> {
  if (!id) throw new NotFound();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const row = await findAnnouncement(tx, id);
    if (!row) throw new NotFound();
    await tx.deleteFrom("announcements").where("id", "=", row.id).execute();
    if (actorId) await logAnnouncement(tx, actorId, "destroy", row);
  });
  await ctx.dispatcher.emitCommitted({ type: "announcement.deleted", announcementId: id });
}

/** The published announcements, in the order of their events (start, else publication). */
export async function publishedAnnouncements(ctx: Ctx): Promise<AnnouncementRow[]> {
  const rows = await ctx.db.kysely.selectFrom("announcements").selectAll().where("published", "=", true).execute();
  const when = (r: AnnouncementRow) => r.starts_at ?? r.published_at ?? r.created_at;
  return rows.sort((a, b) => (when(a) < when(b) ? -1 : when(a) > when(b) ? 1 : 0));
}

/** A published announcement (404 otherwise). */
export async function publishedAnnouncement(ctx: Ctx, id: string | undefined): Promise<AnnouncementRow> {
  const row = id
    ? await ctx.db.kysely
        .selectFrom("announcements")
        .selectAll()
        .where("id", "=", id)
        .where("published", "=", true)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Marks an announcement read for the account. */
export async function dismissAnnouncement(ctx: Ctx, accountId: string, id: string | undefined): Promise<void> {
  const row = await publishedAnnouncement(ctx, id);
  await ctx.db.kysely
    .insertInto("announcement_reads")
    .values({ id: newId(), account_id: accountId, announcement_id: row.id, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(["account_id", "announcement_id"]).doNothing())
    .execute();
}

const EMOJI = /^\p{RGI_Emoji}$/v;

/** Adds the account's reaction `name` (a Unicode emoji or a local custom emoji's shortcode). */
export async function addReaction(ctx: Ctx, accountId: string, id: string | undefined, rawName: string): Promise<void> {
  const row = await publishedAnnouncement(ctx, id);
  const name = rawName.trim();
  let customEmojiId: string | null = null;
  if (!EMOJI.test(name)) {
    const custom = await ctx.db.kysely
      .selectFrom("custom_emojis")
      .select("id")
      .where("shortcode", "=", name)
      .where("domain", "is", null)
      .where("disabled", "=", false)
      .executeTakeFirst();
    if (!custom) throw new ValidationFailed("Name is not a recognized emoji");
    customEmojiId = custom.id;
  }
  const names = await ctx.db.kysely
    .selectFrom("announcement_reactions")
    .select("name")
    .distinct()
    .where("announcement_id", "=", row.id)
    .execute();
  if (!names.some((n) => n.name === name) && names.length >= REACTION_LIMIT)
    throw new ValidationFailed("Limit of different reactions reached");
  await ctx.db.kysely
    .insertInto("announcement_reactions")
    .values({
      id: newId(),
      account_id: accountId,
      announcement_id: row.id,
      name,
      custom_emoji_id: customEmojiId,
      created_at: new Date().toISOString(),
    })
    .onConflict((oc) => oc.columns(["account_id", "announcement_id", "name"]).doNothing())
    .execute();
  await ctx.dispatcher.emitCommitted({ type: "announcement.reacted", announcementId: row.id, name });
}

/** Removes the account's reaction (404 when there was none). */
export async function removeReaction(ctx: Ctx, accountId: string, id: string | undefined, name: string): Promise<void> {
  const row = await publishedAnnouncement(ctx, id);
  const removed = await ctx.db.kysely
    .deleteFrom("announcement_reactions")
    .where("account_id", "=", accountId)
    .where("announcement_id", "=", row.id)
    .where("name", "=", name.trim())
    .executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) throw new NotFound();
  await ctx.dispatcher.emitCommitted({ type: "announcement.reacted", announcementId: row.id, name: name.trim() });
}

// ---- The admin area: what moderators with Manage Announcements do, audited as Mastodon logs it. ----

function findAnnouncement(db: Kysely<Database>, id: string | undefined): Promise<AnnouncementRow | undefined> {
  if (!id || !isIdLike(id)) return Promise.resolve(undefined);
  return db.selectFrom("announcements").selectAll().where("id", "=", id).executeTakeFirst();
}

/** An audit entry for `row`, named by its text as Mastodon names announcements. */
function logAnnouncement(
  db: Kysely<Database>,
  actorId: string,
  action: "create" | "update" | "destroy",
  row: AnnouncementRow,
  detail?: string,
): Promise<void> {
  return recordAction(db, {
    actorId,
    action,
    targetType: "Announcement",
    targetId: row.id,
    humanIdentifier: row.text,
    detail: detail ?? null,
  });
}

/**
 * Takes back a scheduled publication: the waiting `announcements.publish` job would otherwise
 * publish the announcement at the time it was first given.
 */
async function withdrawScheduledPublication(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .deleteFrom("jobs")
    .where("name", "=", "announcements.publish")
    .where("payload", "=", JSON.stringify({ id }))
    .where("locked_until", "is", null)
    .where("failed_at", "is", null)
    .execute();
}

/** Every announcement, published or not, newest first, a page at a time (the admin list). */
export function listAnnouncements(ctx: Ctx, page: PageParams): Promise<AnnouncementRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("announcements").selectAll(), "id", page);
}

/** Any announcement, published or not (404 otherwise). */
export async function announcementOf(ctx: Ctx, id: string | undefined): Promise<AnnouncementRow> {
  const row = await findAnnouncement(ctx.db.kysely, id);
  if (!row) throw new NotFound();
  return row;
}

/**
 * Edits an announcement (Mastodon's Admin::AnnouncementsController#update): its text and event
 * times are checked as at creation. A published one stays published and clients get it again; for
 * one not published, `publishAt` in the future (re)schedules it, in the past publishes it now, and
 * absent leaves it unpublished without a schedule. Logged as `update`.
 */
export async function updateAnnouncement(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  params: AnnouncementParams,
): Promise<AnnouncementRow> {
  const text = checkAnnouncement(params);
  const rendered = await renderedText(ctx, text);
  const now = new Date();
  const row = await ctx.db.kysely.transaction().execute(async (tx) => {
    const current = await findAnnouncement(tx, id);
    if (!current) throw new NotFound();
    const event = {
      ...rendered,
      all_day: params.allDay ?? false,
      starts_at: params.startsAt?.toISOString() ?? null,
      ends_at: params.endsAt?.toISOString() ?? null,
      updated_at: now.toISOString(),
    };
    let publication = {};
    if (!current.published) {
      await withdrawScheduledPublication(tx, current.id);
      const at = params.publishAt;
      if (at && at.getTime() > now.getTime()) {
        publication = { scheduled_at: at.toISOString() };
        await ctx.jobs.enqueueWith(tx, "announcements.publish", { id: current.id }, { runAt: at });
      } else if (at) {
        publication = { published: true, published_at: now.toISOString(), scheduled_at: null };
      } else {
        publication = { scheduled_at: null };
      }
    }
    const updated = await tx
      .updateTable("announcements")
      .set({ ...event, ...publication })
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await logAnnouncement(tx, actorId, "update", updated);
    return updated;
  });
  if (row.published) await ctx.dispatcher.emitCommitted({ type: "announcement.published", announcementId: row.id });
  return row;
}

/**
 * Publishes an announcement now (a draft, or one scheduled for later), or takes a published one
 * back (clients drop it; it can be published again). Mastodon logs both as `update`; the detail
 * says which. Asking for what already is changes nothing and logs nothing.
 */
export async function setAnnouncementPublished(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  published: boolean,
): Promise<AnnouncementRow> {
  const now = new Date().toISOString();
  const { row, changed } = await ctx.db.kysely.transaction().execute(async (tx) => {
    const current = await findAnnouncement(tx, id);
    if (!current) throw new NotFound();
    if (current.published === published) return { row: current, changed: false };
    await withdrawScheduledPublication(tx, current.id);
    const updated = await tx
      .updateTable("announcements")
      .set(
        published
          ? { published: true, published_at: now, scheduled_at: null, updated_at: now }
          : { published: false, scheduled_at: null, updated_at: now },
      )
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await logAnnouncement(tx, actorId, "update", updated, published ? "published" : "unpublished");
    return { row: updated, changed: true };
  });
  if (changed)
    await ctx.dispatcher.emitCommitted(
      published
        ? { type: "announcement.published", announcementId: row.id }
        : { type: "announcement.deleted", announcementId: row.id },
    );
  return row;
}
