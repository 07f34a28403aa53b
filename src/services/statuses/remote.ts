/**
 * The one writer of remote statuses: whatever brings a post of another server (its Create, an
 * Update, a fetched thread, a boost of it), it is stored here, in the same tables as local posts,
 * so every read path — timelines, threads, notifications, search, streaming — serves it as it
 * serves ours. A status is found again by its `uri`; storing one twice stores it once. Its HTML is
 * sanitized with Mastodon's rules, its media are queued for download (services/media/remote.ts),
 * and its arrival is a `status.created` event like any other post (fan-out to local followers,
 * mention notifications, streams). Edits keep their history as local edits do.
 */
import { isBlurhashValid } from "blurhash";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { encodeMediaOrder } from "../../db/columns.ts";
import { idForTime, newId } from "../../db/ids.ts";
import { prepared, rowWhere } from "../../db/prepared.ts";
import { kvGet, kvSet } from "../../db/queries/federation_kv.ts";
import { bellRingers } from "../../db/queries/relationships.ts";
import type { AccountRow, Database, MediaType, StatusRow } from "../../db/schema.ts";
import { sanitizeHtml } from "../../text/sanitize.ts";
import { enqueueRemoteMediaFetch } from "../media/remote.ts";
import { addToConversations } from "../conversations/conversations.ts";
import { keepFirstVersion, snapshot } from "./edit.ts";
import { countBoost } from "./interactions.ts";
import { tagStatus, upsertTags } from "./tags.ts";
import { conversationForUris } from "./threads.ts";

export type Visibility = "public" | "unlisted" | "private" | "direct";

export interface RemoteMedia {
  url: string;
  type: MediaType;
  description: string | null;
  /** The sender's blurhash, shown until (and unless) the file is kept here. */
  blurhash: string | null;
  width: number | null;
  height: number | null;
  /** The focal point, x and y in -1..1. */
  focus: { x: number; y: number } | null;
}

/** A remote poll as its Question states it. */
export interface RemotePoll {
  options: string[];
  /** Votes per option, parallel to `options`. */
  tallies: number[];
  multiple: boolean;
  expiresAt: Date | null;
  votersCount: number | null;
}

/** What a remote post says of itself, already read from its Note (federation/note_rows.ts). */
export interface RemoteStatusData {
  uri: string;
  url: string | null;
  /** HTML, not yet sanitized. */
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  visibility: Visibility;
  /** The stored status it replies to, if this server has it. */
  parent: StatusRow | null;
  /** Accounts it mentions that this server knows (local and remote). */
  mentioned: AccountRow[];
  /** Hashtag names, without `#`. */
  tags: string[];
  media: RemoteMedia[];
  published: Date;
  editedAt: Date | null;
  poll: RemotePoll | null;
  /** How other servers name its thread (`conversation`, then `context`), the preferred first. */
  conversationUris?: string[];
}

/** Bounds for what another server may make us store (Mastodon's). */
const CONTENT_MAX = 100_000;
const SPOILER_MAX = 1_000;
const MEDIA_MAX = 16;
const DESCRIPTION_MAX = 1_500;
const TAGS_MAX = 50;
const OPTIONS_MAX = 20;
/** Blurhash components per axis (Mastodon's bound: more only costs the clients that decode it). */
const BLURHASH_COMPONENTS_MAX = 5;
const BASE83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

/** The sender's blurhash when it is one (base 83, its length matching its size) of at most 5×5 components. */
function acceptedBlurhash(blurhash: string | null): string | null {
  if (!blurhash || [...blurhash].some((c) => !BASE83.includes(c))) return null;
  const size = BASE83.indexOf(blurhash[0]!);
  const components = Math.max((size % 9) + 1, Math.floor(size / 9) + 1);
  return components <= BLURHASH_COMPONENTS_MAX && isBlurhashValid(blurhash).result ? blurhash : null;
}

/** The focal point when both coordinates are within -1..1. */
const acceptedFocus = (focus: RemoteMedia["focus"]) =>
  focus && [focus.x, focus.y].every((v) => Number.isFinite(v) && Math.abs(v) <= 1) ? focus : null;

/** The columns of a remote poll (options cut to Mastodon's bounds, tallies never negative). */
function pollColumns(poll: RemotePoll) {
  const options = poll.options.slice(0, OPTIONS_MAX).map((o) => cut(o, 200));
  const tallies = options.map((_, i) => Math.max(0, Math.floor(poll.tallies[i] ?? 0)));
  return {
    options: JSON.stringify(options),
    cached_tallies: JSON.stringify(tallies),
    multiple: poll.multiple,
    expires_at: poll.expiresAt && !Number.isNaN(poll.expiresAt.getTime()) ? poll.expiresAt.toISOString() : null,
    votes_count: tallies.reduce((a, b) => a + b, 0),
    voters_count: poll.votersCount === null ? null : Math.max(0, Math.floor(poll.votersCount)),
  };
}

async function insertRemotePoll(
  tx: Kysely<Database>,
  authorId: string,
  statusId: string,
  poll: RemotePoll,
  now: string,
): Promise<string> {
  const id = newId();
  await tx
    .insertInto("polls")
    .values({
      id,
      account_id: authorId,
      status_id: statusId,
      ...pollColumns(poll),
      hide_totals: false,
      closed_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

const cut = (text: string, max: number) => (text.length > max ? [...text].slice(0, max).join("") : text);

/** How long a deletion is remembered, so that its post arriving late (out of order, again) stays deleted. */
const DELETION_MEMORY_MS = 24 * 60 * 60 * 1000;
const deletionKey = (uri: string) => `deleted-status\n${uri}`;

/** Remembers that the post `uri` was deleted by its author (Mastodon's delete-upon-arrival). */
export async function rememberDeletion(ctx: Ctx, uri: string): Promise<void> {
  await kvSet(ctx.db.kysely, deletionKey(uri), true, new Date(Date.now() + DELETION_MEMORY_MS));
}

/** Whether the post `uri` was deleted lately (it is not stored again). */
export async function wasDeleted(ctx: Ctx, uri: string): Promise<boolean> {
  return (await kvGet(ctx.db.kysely, deletionKey(uri))) === true;
}

/** The status stored for `uri`, if any. */
export async function statusByUri(ctx: Ctx, uri: string): Promise<StatusRow | undefined> {
  return rowWhere(ctx.db.kysely, "statuses", "uri", uri);
}

/** The status with this ID, if any. */
export async function statusById(ctx: Ctx, id: string): Promise<StatusRow | undefined> {
  return rowWhere(ctx.db.kysely, "statuses", "id", id);
}

/** The status whose page is `url` (when it is not its id), if any. */
export async function statusByUrl(ctx: Ctx, url: string): Promise<StatusRow | undefined> {
  return ctx.db.kysely
    .selectFrom("statuses")
    .selectAll()
    .where("url", "=", url)
    .where("url", "is not", null)
    .whereRef("url", "<>", "uri")
    .where("reblog_of_id", "is", null)
    .executeTakeFirst();
}

async function insertMedia(
  ctx: Ctx,
  tx: Kysely<Database>,
  authorId: string,
  statusId: string,
  media: readonly RemoteMedia[],
  now: string,
): Promise<string[]> {
  const rows = media.slice(0, MEDIA_MAX).map((item) => ({
    id: newId(),
    account_id: authorId,
    status_id: statusId,
    scheduled_status_id: null,
    type: item.type,
    file: null,
    file_content_type: null,
    file_size: null,
    preview_file: null,
    thumbnail_file: null,
    remote_url: item.url,
    description: item.description ? cut(item.description, DESCRIPTION_MAX) : null,
    focus_x: acceptedFocus(item.focus)?.x ?? null,
    focus_y: acceptedFocus(item.focus)?.y ?? null,
    blurhash: acceptedBlurhash(item.blurhash),
    meta: JSON.stringify(
      item.width && item.height
        ? {
            original: {
              width: item.width,
              height: item.height,
              size: `${item.width}x${item.height}`,
              aspect: item.width / item.height,
            },
          }
        : {},
    ),
    processing: "complete" as const,
    created_at: now,
    updated_at: now,
  }));
  if (rows.length) await tx.insertInto("media_attachments").values(rows).execute();
  // Media are kept here once downloaded (services/media/remote.ts); until then the media proxy serves them.
  for (const row of rows) await enqueueRemoteMediaFetch(ctx, tx, row);
  return rows.map((row) => row.id);
}

async function insertMentions(
  tx: Kysely<Database>,
  statusId: string,
  accounts: readonly AccountRow[],
  now: string,
): Promise<string[]> {
  const unique = [...new Map(accounts.map((account) => [account.id, account])).values()];
  if (unique.length === 0) return [];
  const rows = unique.map((account) => ({
    id: newId(),
    status_id: statusId,
    account_id: account.id,
    silent: false,
    created_at: now,
  }));
  await tx
    .insertInto("mentions")
    .values(rows)
    .onConflict((oc) => oc.columns(["status_id", "account_id"]).doNothing())
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Whether a remote post of `authorId` mentioning `mentioned` may notify anyone here (what
 * notifyOfNewStatus looks for): a local account mentioned, or a local follower of the author who
 * asked to be notified of their posts.
 */
async function mayNotify(tx: Kysely<Database>, authorId: string, mentioned: readonly AccountRow[]): Promise<boolean> {
  if (mentioned.some((account) => account.domain === null)) return true;
  return (await bellRingers(tx, authorId, 1)).length > 0;
}

/** Stores a remote post of `author`; a post already stored (same uri) is returned as it is. */
export async function storeRemoteStatus(ctx: Ctx, author: AccountRow, data: RemoteStatusData): Promise<StatusRow> {
  // An ID dated by publication may meet one another process made for the same millisecond: a
  // second attempt takes another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await insertRemoteStatus(ctx, author, data);
    } catch (error) {
      if (attempt >= 3) throw error;
      ctx.log.debug({ err: error, uri: data.uri, attempt }, "storing a remote post again");
    }
  }
}

async function insertRemoteStatus(ctx: Ctx, author: AccountRow, data: RemoteStatusData): Promise<StatusRow> {
  const known = await statusByUri(ctx, data.uri);
  if (known) return known;
  const now = new Date().toISOString();
  const published =
    Number.isNaN(data.published.getTime()) || data.published.getTime() > Date.now() + 5 * 60_000
      ? new Date()
      : data.published;
  // Dated by publication, as Mastodon does: a post fetched late sorts where it was written.
  const id = idForTime(published);
  const content = sanitizeHtml(cut(data.content, CONTENT_MAX));
  const parent = data.parent;
  try {
    return await ctx.dispatcher.transaction(async (tx) => {
      const values = {
        id,
        uri: data.uri,
        url: data.url,
        account_id: author.id,
        text: "",
        content,
        spoiler_text: cut(data.spoilerText, SPOILER_MAX),
        sensitive: data.sensitive || data.spoilerText.trim() !== "",
        visibility: data.visibility,
        language: data.language,
        in_reply_to_id: parent?.id ?? null,
        in_reply_to_account_id: parent?.account_id ?? null,
        // A reply joins its parent's thread; without the parent, the thread its name says.
        conversation_id:
          parent?.conversation_id ??
          (await conversationForUris(tx, ctx.config.baseUrl, data.conversationUris ?? [], now)) ??
          newId(),
        application_id: null,
        local: false,
        edited_at: data.editedAt?.toISOString() ?? null,
        created_at: published.toISOString(),
        updated_at: now,
      };
      // Built once (db/prepared.ts): it runs for every post that arrives.
      const insert = prepared<keyof typeof values>(
        tx,
        "statuses.insert.remote",
        (slot) =>
          tx
            .insertInto("statuses")
            .values(
              Object.fromEntries(
                Object.keys(values).map((column) => [column, slot(column as keyof typeof values)]),
              ) as typeof values,
            )
            .returningAll(),
        values,
      );
      const status = (await tx.executeQuery<StatusRow>(insert)).rows[0]!;
      const mediaIds = await insertMedia(ctx, tx, author.id, id, data.media, now);
      await insertMentions(tx, id, data.mentioned, now);
      await tagStatus(tx, id, await upsertTags(tx, data.tags.slice(0, TAGS_MAX)), now);
      const pollId = data.poll ? await insertRemotePoll(tx, author.id, id, data.poll, now) : null;
      const row =
        mediaIds.length || pollId
          ? await tx
              .updateTable("statuses")
              .set({ ordered_media_attachment_ids: encodeMediaOrder(mediaIds), poll_id: pollId })
              .where("id", "=", id)
              .returningAll()
              .executeTakeFirstOrThrow()
          : status;
      if (data.visibility === "direct") await addToConversations(tx, ctx.db.engine, row, data.mentioned, false);
      if (data.visibility !== "direct")
        await tx.executeQuery(
          prepared<"now" | "author">(
            tx,
            "accounts.count_remote_status",
            (slot) =>
              tx
                .updateTable("accounts")
                .set((eb) => ({ statuses_count: eb("statuses_count", "+", 1), last_status_at: slot("now") as string }))
                .where("id", "=", slot("author") as string),
            { now, author: author.id },
          ),
        );
      if (parent && (data.visibility === "public" || data.visibility === "unlisted"))
        await tx
          .updateTable("statuses")
          .set((eb) => ({ replies_count: eb("replies_count", "+", 1) }))
          .where("id", "=", parent.id)
          .execute();
      await ctx.dispatcher.emit(tx, {
        type: "status.created",
        statusId: id,
        local: false,
        notifies: await mayNotify(tx, author.id, data.mentioned),
      });
      return row;
    });
  } catch (error) {
    // The same post arriving twice at once (a Create and a fetch of it): one row wins.
    const raced = await statusByUri(ctx, data.uri);
    if (raced) return raced;
    throw error;
  }
}

/**
 * An Update of a remote post: the new text, warning, media and mentions replace the old, the
 * version before is kept in the history (as for local edits), and streams hear of it.
 */
export async function updateRemoteStatus(ctx: Ctx, status: StatusRow, data: RemoteStatusData): Promise<StatusRow> {
  const now = new Date().toISOString();
  const editedAt = (data.editedAt ?? new Date()).toISOString();
  return ctx.dispatcher.transaction(async (tx) => {
    await keepFirstVersion(tx, status);
    await tx.deleteFrom("media_attachments").where("status_id", "=", status.id).execute();
    const mediaIds = await insertMedia(ctx, tx, status.account_id, status.id, data.media, now);
    const existing = await tx.selectFrom("mentions").select("account_id").where("status_id", "=", status.id).execute();
    const had = new Set(existing.map((m) => m.account_id));
    const added = await insertMentions(
      tx,
      status.id,
      data.mentioned.filter((account) => !had.has(account.id)),
      now,
    );
    await tx.deleteFrom("statuses_tags").where("status_id", "=", status.id).execute();
    await tagStatus(tx, status.id, await upsertTags(tx, data.tags.slice(0, TAGS_MAX)), now);
    const pollId = await replacePoll(tx, status, data.poll, now);
    const updated = await tx
      .updateTable("statuses")
      .set({
        content: sanitizeHtml(cut(data.content, CONTENT_MAX)),
        spoiler_text: cut(data.spoilerText, SPOILER_MAX),
        sensitive: data.sensitive || data.spoilerText.trim() !== "",
        language: data.language,
        ordered_media_attachment_ids: encodeMediaOrder(mediaIds),
        poll_id: pollId,
        edited_at: editedAt,
        updated_at: now,
      })
      .where("id", "=", status.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await snapshot(tx, updated, editedAt);
    await ctx.dispatcher.emit(tx, { type: "status.updated", statusId: status.id, addedMentionIds: added });
    return updated;
  });
}

/**
 * The poll of an updated remote post: the same options keep the poll (and the local votes) with
 * the new tallies; other options replace it; none removes it. Returns the poll's id.
 */
async function replacePoll(
  tx: Kysely<Database>,
  status: StatusRow,
  poll: RemotePoll | null,
  now: string,
): Promise<string | null> {
  const current = status.poll_id
    ? await tx.selectFrom("polls").selectAll().where("id", "=", status.poll_id).executeTakeFirst()
    : undefined;
  if (current && poll && current.options === pollColumns(poll).options) {
    await tx
      .updateTable("polls")
      .set({ ...pollColumns(poll), updated_at: now })
      .where("id", "=", current.id)
      .execute();
    return current.id;
  }
  if (current) await tx.deleteFrom("polls").where("id", "=", current.id).execute();
  return poll ? insertRemotePoll(tx, status.account_id, status.id, poll, now) : null;
}

/**
 * Only the tallies of a remote poll changed (an Update of its Question that edits nothing else):
 * they are written without a new version in the history. False when the post's text changed too.
 */
export async function updateRemoteTallies(ctx: Ctx, status: StatusRow, data: RemoteStatusData): Promise<boolean> {
  if (!status.poll_id || !data.poll) return false;
  if (sanitizeHtml(cut(data.content, CONTENT_MAX)) !== status.content || data.spoilerText !== status.spoiler_text)
    return false;
  const columns = pollColumns(data.poll);
  const updated = await ctx.db.kysely
    .updateTable("polls")
    .set({ ...columns, updated_at: new Date().toISOString() })
    .where("id", "=", status.poll_id)
    .where("options", "=", columns.options)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** A boost by a remote account (its Announce, `uri`) of a stored status; a repeated one is kept once. */
export async function storeRemoteReblog(
  ctx: Ctx,
  booster: AccountRow,
  status: StatusRow,
  uri: string,
  published: Date,
): Promise<StatusRow | undefined> {
  if (status.visibility === "direct" || status.visibility === "private") return undefined;
  const known = await statusByUri(ctx, uri);
  if (known) return known;
  const now = new Date().toISOString();
  const at = Number.isNaN(published.getTime()) || published.getTime() > Date.now() ? new Date() : published;
  const id = idForTime(at);
  try {
    return await ctx.dispatcher.transaction(async (tx) => {
      const row = await tx
        .insertInto("statuses")
        .values({
          id,
          uri,
          url: status.url,
          account_id: booster.id,
          reblog_of_id: status.id,
          visibility: "public",
          local: false,
          conversation_id: status.conversation_id,
          created_at: at.toISOString(),
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await countBoost(tx, status.id, booster.id, now);
      // The boosted post's author is told, when the post is one of ours.
      await ctx.dispatcher.emit(tx, { type: "status.created", statusId: row.id, local: false, notifies: status.local });
      return row;
    });
  } catch (error) {
    const raced = await statusByUri(ctx, uri);
    if (raced) return raced;
    throw error;
  }
}

/** The posts a remote account has pinned here. */
export async function remotePinsOf(ctx: Ctx, accountId: string): Promise<StatusRow[]> {
  return ctx.db.kysely
    .selectFrom("status_pins")
    .innerJoin("statuses", "statuses.id", "status_pins.status_id")
    .selectAll("statuses")
    .where("status_pins.account_id", "=", accountId)
    .execute();
}

/** The job that reads a remote post's replies collection (federation/replies.ts). */
export const FETCH_REPLIES_JOB = "federation.fetch_replies";

/** Someone opened the thread of `status`: if it is remote, its replies are fetched from its server. */
export async function wantRepliesOf(ctx: Ctx, status: StatusRow): Promise<void> {
  if (status.local || status.reblog_of_id) return;
  await ctx.jobs.enqueue(
    FETCH_REPLIES_JOB,
    { statusId: status.id },
    { uniqueKey: `${FETCH_REPLIES_JOB}:${status.id}` },
  );
}

/** The public and unlisted replies to `statusId` known here, newest first, a page by ID. */
export async function publicRepliesOf(
  ctx: Ctx,
  statusId: string,
  page: { limit: number; maxId?: string },
): Promise<Array<Pick<StatusRow, "id" | "uri">>> {
  let query = ctx.db.kysely
    .selectFrom("statuses")
    .select(["id", "uri"])
    .where("in_reply_to_id", "=", statusId)
    .where("visibility", "in", ["public", "unlisted"])
    .where("deleted_at", "is", null);
  if (page.maxId) query = query.where("id", "<", page.maxId);
  return query.orderBy("id", "desc").limit(page.limit).execute();
}

const REPLIES_MEMORY_MS = 60 * 60 * 1000;

/**
 * Whether the replies of the remote post `uri` were fetched within the hour; if not, notes that
 * they are being fetched now (so a burst of readers fetches them once).
 */
export async function repliesFetchedLately(ctx: Ctx, uri: string): Promise<boolean> {
  const key = `replies-fetched\n${uri}`;
  if ((await kvGet(ctx.db.kysely, key)) === true) return true;
  await kvSet(ctx.db.kysely, key, true, new Date(Date.now() + REPLIES_MEMORY_MS));
  return false;
}
