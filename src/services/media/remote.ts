/**
 * Media of other servers' posts, kept here as Mastodon keeps them: a remote attachment is stored
 * with its `remote_url` and served from there until a job downloads it (through the SSRF-safe
 * fetch, within the upload limits) and keeps a re-encoded copy with its preview and blurhash, so
 * readers' clients load it from this server instead of telling the other one who reads. Pictures
 * are kept; video and audio stay links for now. A domain blocked with `reject_media` is never
 * downloaded from, and what was kept of it goes; `rookery media remove` drops old copies.
 */
import type { Ctx } from "../../context.ts";
import type { MediaAttachmentRow } from "../../db/schema.ts";
import { LIMITS } from "../../limits.ts";
import { EXTENSIONS, inspectImage } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";
import { blockFor, onDomain } from "../admin/domain_blocks.ts";
import { safeFetch, SafeFetchError } from "../http/safe_fetch.ts";
import { mediaFolder } from "./timed.ts";
import { processImage } from "./upload.ts";

/** The job that downloads one remote attachment. */
export const FETCH_REMOTE_MEDIA_JOB = "media.fetch_remote";
/** The job that drops what was kept of a domain's media (after a `reject_media` block). */
export const PURGE_DOMAIN_MEDIA_JOB = "media.purge_domain";

/** Downloads and keeps one remote picture; nothing when it is kept already, not a picture, or refused. */
export async function cacheRemoteMedia(ctx: Ctx, mediaId: string): Promise<void> {
  const row = await ctx.db.kysely
    .selectFrom("media_attachments")
    .innerJoin("accounts", "accounts.id", "media_attachments.account_id")
    .selectAll("media_attachments")
    .select("accounts.domain")
    .where("media_attachments.id", "=", mediaId)
    .executeTakeFirst();
  if (!row?.remote_url || row.file || row.type !== "image" || !row.domain) return;
  if ((await blockFor(ctx.db.kysely, row.domain))?.reject_media) return;
  let body: Buffer;
  try {
    const response = await safeFetch(ctx, row.remote_url, {
      maxBytes: LIMITS.media.imageSizeLimit,
      headers: { accept: "image/*" },
      timeoutMs: 30_000,
    });
    if (response.status !== 200) return;
    body = response.body;
  } catch (error) {
    // Worth another try later only when the other server may answer then.
    if (error instanceof SafeFetchError && error.transient) throw error;
    ctx.log.info({ media: mediaId, url: row.remote_url, reason: (error as Error).message }, "remote media not kept");
    return;
  }
  let info;
  try {
    info = await inspectImage(body, "File");
  } catch {
    return;
  }
  if (info.width * info.height > LIMITS.media.imageMatrixLimit) return;
  const processed = await processImage(body, info);
  const folder = mediaFolder(row.id);
  const file = `${folder}/original/${randomFileName(EXTENSIONS[info.format])}`;
  const preview = `${folder}/small/${randomFileName(processed.smallExtension)}`;
  await ctx.media.put(file, processed.original);
  await ctx.media.put(preview, processed.small);
  const updated = await ctx.db.kysely
    .updateTable("media_attachments")
    .set({
      file,
      preview_file: preview,
      file_content_type: `image/${info.format}`,
      file_size: processed.original.length,
      blurhash: row.blurhash ?? processed.blurhash,
      meta: JSON.stringify(processed.meta),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", row.id)
    .where("file", "is", null)
    .executeTakeFirst();
  // The post went (or another run kept it) meanwhile: its files go too.
  if (Number(updated.numUpdatedRows) === 0) await ctx.media.deleteUnder(folder, []);
}

/** Drops the kept copies of `rows` (their links to the other server stay). Returns how many. */
async function uncache(ctx: Ctx, rows: readonly Pick<MediaAttachmentRow, "id">[]): Promise<number> {
  for (const row of rows) {
    await ctx.db.kysely
      .updateTable("media_attachments")
      .set({ file: null, preview_file: null, file_size: null, updated_at: new Date().toISOString() })
      .where("id", "=", row.id)
      .execute();
    await ctx.media.deleteUnder(mediaFolder(row.id), []);
  }
  return rows.length;
}

const BATCH = 500;

/** Drops kept copies of remote media older than `olderThan`, a batch at a time; returns how many. */
export async function removeCachedRemoteMedia(
  ctx: Ctx,
  olderThan: Date,
  onProgress?: (done: number) => void,
): Promise<number> {
  let done = 0;
  for (;;) {
    const rows = await ctx.db.kysely
      .selectFrom("media_attachments")
      .select("id")
      .where("remote_url", "is not", null)
      .where("file", "is not", null)
      .where("created_at", "<", olderThan.toISOString())
      .orderBy("created_at")
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return done;
    done += await uncache(ctx, rows);
    onProgress?.(done);
  }
}

/** Drops what was kept of a domain's media (a `reject_media` block, a suspension); returns how many. */
export async function purgeDomainMedia(ctx: Ctx, domain: string): Promise<number> {
  const block = await blockFor(ctx.db.kysely, domain);
  if (!block?.reject_media && block?.severity !== "suspend") return 0;
  let done = 0;
  for (;;) {
    const rows = await ctx.db.kysely
      .selectFrom("media_attachments")
      .innerJoin("accounts", "accounts.id", "media_attachments.account_id")
      .select("media_attachments.id")
      .where("media_attachments.file", "is not", null)
      .where("media_attachments.remote_url", "is not", null)
      .where("accounts.id", "in", ctx.db.kysely.selectFrom("accounts").select("id").where(onDomain(domain)))
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return done;
    done += await uncache(ctx, rows);
  }
}
