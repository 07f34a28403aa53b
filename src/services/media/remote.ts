/**
 * Media of other servers' posts, kept here as Mastodon keeps them. A remote attachment is stored
 * with its `remote_url` (services/statuses/remote.ts) and a job downloads it: pictures
 * (`FETCH_REMOTE_MEDIA_JOB`, two at a time) are re-encoded with a preview and blurhash as uploads
 * are; video, gifv and audio (`FETCH_REMOTE_TIMED_MEDIA_JOB`, one at a time, however long it takes)
 * are streamed to disk and converted by the code that converts uploads (timed.ts), which needs
 * ffmpeg — without it they stay links, as uploads of them are refused. The content decides, as for
 * uploads: an animated GIF becomes a gifv, a "video" that is a still picture an image. Downloads go
 * through the SSRF-safe fetch within the upload limits (remote_download.ts).
 *
 * Readers' clients then load the copy from this server instead of telling the other one who reads.
 * Until a copy is kept — or after `rookery media remove` dropped it — clients get the media proxy's
 * address (proxy.ts), which has it downloaded when asked. Nothing is downloaded from a domain with
 * `reject_media` or a suspended one, nor for a suspended account, and what was kept of such a
 * domain goes (`purgeDomainMedia`, with its accounts' avatars and headers).
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { sql, type Kysely, type Updateable } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Database, JobRow, MediaAttachmentRow, MediaAttachmentsTable } from "../../db/schema.ts";
import { keptWhenRemote } from "../../entities/media_attachment.ts";
import { LIMITS } from "../../limits.ts";
import { EXTENSIONS, inspectImage, type ImageInfo } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";
import { classify, MediaRejected, type TimedKind } from "../../media/transcode.ts";
import { blockFor, onDomain } from "../admin/domain_blocks.ts";
import { SafeFetchError } from "../http/safe_fetch.ts";
import { downloadRemote, forgetNotKept, MediaNotKept, rememberNotKept } from "./remote_download.ts";
import { purgeDomainProfileImages } from "./remote_profiles.ts";
import { convertProbed, mediaFolder, probeInBackground, withTemporaryFolder } from "./timed.ts";
import { processImage } from "./upload.ts";

/** The job that downloads and keeps one remote picture. */
export const FETCH_REMOTE_MEDIA_JOB = "media.fetch_remote";
/** The job that downloads and converts one remote video, gifv or audio file (and animated GIF). */
export const FETCH_REMOTE_TIMED_MEDIA_JOB = "media.fetch_remote_timed";
/** The job that drops what was kept of a domain's media (after a `reject_media` block, a suspension). */
export const PURGE_DOMAIN_MEDIA_JOB = "media.purge_domain";

/** A file being converted may take this long to download (99 MB at 330 kB/s). */
const TIMED_DOWNLOAD_MS = 5 * 60_000;
const PICTURE_DOWNLOAD_MS = 30_000;

/** The fetch job an attachment of this type needs here, if this server keeps such media. */
function fetchJobFor(ctx: Ctx, type: MediaAttachmentRow["type"]): string | undefined {
  if (!keptWhenRemote(type, ctx.config.transcoder !== undefined)) return undefined;
  return type === "image" ? FETCH_REMOTE_MEDIA_JOB : FETCH_REMOTE_TIMED_MEDIA_JOB;
}

/**
 * Queues the download of a remote attachment (in the transaction that stores it, or when the
 * media proxy is asked for it); one job per attachment at a time. False when its type is not kept.
 */
export async function enqueueRemoteMediaFetch(
  ctx: Ctx,
  db: Kysely<Database>,
  media: Pick<MediaAttachmentRow, "id" | "type">,
): Promise<boolean> {
  const job = fetchJobFor(ctx, media.type);
  if (!job) return false;
  await ctx.jobs.enqueueWith(db, job, { mediaId: media.id }, { maxAttempts: 3, uniqueKey: `${job}:${media.id}` });
  return true;
}

/** An attachment with what decides whether it may be downloaded. */
type RemoteRow = MediaAttachmentRow & { domain: string | null; author_suspended_at: string | null };

async function remoteAttachment(ctx: Ctx, id: string): Promise<RemoteRow | undefined> {
  return ctx.db.kysely
    .selectFrom("media_attachments")
    .innerJoin("accounts", "accounts.id", "media_attachments.account_id")
    .selectAll("media_attachments")
    .select(["accounts.domain", "accounts.suspended_at as author_suspended_at"])
    .where("media_attachments.id", "=", id)
    .executeTakeFirst();
}

/** Whether this server may keep media of `domain` (neither `reject_media` nor suspended). */
export async function domainKeepsMedia(ctx: Ctx, domain: string): Promise<boolean> {
  const block = await blockFor(ctx.db.kysely, domain);
  return !block?.reject_media && block?.severity !== "suspend";
}

/** Whether `row` is an attachment of another server's post, not kept yet, that may be downloaded. */
async function mayDownload(ctx: Ctx, row: RemoteRow): Promise<boolean> {
  return (
    row.remote_url !== null &&
    row.file === null &&
    row.status_id !== null &&
    row.domain !== null &&
    row.author_suspended_at === null &&
    (await domainKeepsMedia(ctx, row.domain))
  );
}

/**
 * Runs one download of attachment `id`: a file that cannot be kept (MediaNotKept, or refused by
 * the conversion: MediaRejected) is remembered and the job ends; a transient failure is tried
 * again, until the last attempt, which is remembered too. Stopping workers run it again later.
 */
async function keepingFailures(
  ctx: Ctx,
  id: string,
  job: Pick<JobRow, "attempts" | "max_attempts"> | undefined,
  shutdown: AbortSignal | undefined,
  work: () => Promise<void>,
): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (shutdown?.aborted) throw error;
    const final = error instanceof MediaNotKept || error instanceof MediaRejected;
    const lastAttempt = !job || job.attempts >= job.max_attempts;
    if (!final && !lastAttempt) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    await rememberNotKept(ctx, id, reason);
    if (!final && !(error instanceof SafeFetchError)) throw error;
    ctx.log.info({ media: id, reason }, "remote media not kept");
  }
}

type KeptColumns = Pick<
  Updateable<MediaAttachmentsTable>,
  "type" | "file" | "file_content_type" | "file_size" | "preview_file" | "thumbnail_file" | "blurhash" | "meta"
>;

/**
 * Records a kept copy, unless the attachment was kept by another run, detached (its post went) or
 * its domain blocked meanwhile: then the files just written go again.
 */
async function recordKept(ctx: Ctx, row: RemoteRow, columns: KeptColumns, written: string[]): Promise<void> {
  const discard = () => Promise.all(written.map((key) => ctx.media.delete(key).catch(() => {})));
  if (!(await domainKeepsMedia(ctx, row.domain!))) {
    await discard();
    return;
  }
  const now = new Date().toISOString();
  const updated = await ctx.db.kysely
    .updateTable("media_attachments")
    // A copy's age counts from when it was kept, as Mastodon's re-download resets `created_at`:
    // `media remove --days` does not drop a copy the proxy has just fetched again.
    .set({ ...columns, created_at: now, updated_at: now })
    .where("id", "=", row.id)
    .where("file", "is", null)
    .where("status_id", "is not", null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) await discard();
  else await forgetNotKept(ctx, row.id);
}

/** Reads a downloaded picture, or MediaNotKept. */
async function readPicture(data: Buffer | string): Promise<ImageInfo> {
  try {
    return await inspectImage(data, "File");
  } catch {
    throw new MediaNotKept("the file is not a picture this server reads");
  }
}

/** Keeps a downloaded picture as an upload is kept: re-encoded original, small preview, blurhash. */
async function keepPicture(ctx: Ctx, row: RemoteRow, data: Buffer | string, info: ImageInfo): Promise<void> {
  if (info.width * info.height > LIMITS.media.imageMatrixLimit)
    throw new MediaNotKept("the picture's dimensions are too large");
  let processed;
  try {
    processed = await processImage(data, info);
  } catch (error) {
    throw new MediaNotKept(`the picture could not be processed: ${(error as Error).message}`);
  }
  const folder = mediaFolder(row.id);
  const file = `${folder}/original/${randomFileName(EXTENSIONS[info.format])}`;
  const preview = `${folder}/small/${randomFileName(processed.smallExtension)}`;
  const written = [file, preview];
  await ctx.media.put(file, processed.original);
  await ctx.media.put(preview, processed.small);
  await recordKept(
    ctx,
    row,
    {
      type: "image",
      file,
      preview_file: preview,
      thumbnail_file: null,
      file_content_type: `image/${info.format}`,
      file_size: processed.original.length,
      blurhash: row.blurhash ?? processed.blurhash,
      meta: JSON.stringify(processed.meta),
    },
    written,
  );
}

/**
 * The `media.fetch_remote` job: downloads a remote picture and keeps it. An animated GIF is handed
 * to the conversion job when ffmpeg is there (it becomes a gifv, as an uploaded one does).
 */
export async function cacheRemoteMedia(
  ctx: Ctx,
  mediaId: string,
  job?: Pick<JobRow, "attempts" | "max_attempts">,
): Promise<void> {
  const row = await remoteAttachment(ctx, mediaId);
  if (!row || !(await mayDownload(ctx, row))) return;
  await keepingFailures(ctx, row.id, job, undefined, async () => {
    const body = await downloadRemote(ctx, row.remote_url!, {
      maxBytes: LIMITS.media.imageSizeLimit,
      timeoutMs: PICTURE_DOWNLOAD_MS,
      accept: "image/*",
    });
    const info = await readPicture(body);
    if (info.format === "gif" && info.animated && ctx.config.transcoder) {
      const next = FETCH_REMOTE_TIMED_MEDIA_JOB;
      await ctx.jobs.enqueue(next, { mediaId: row.id }, { maxAttempts: 3, uniqueKey: `${next}:${row.id}` });
      return;
    }
    await keepPicture(ctx, row, body, info);
  });
}

/**
 * The `media.fetch_remote_timed` job: streams a remote video, gifv or audio file to disk, checks it
 * as an upload is checked (ffprobe, `classify`: the limits on size, dimensions, frame rate and
 * duration) and converts it as uploads are converted; a still picture is kept as a picture. When
 * the workers stop (`shutdown`), the download or ffmpeg stops and the job runs again later.
 */
export async function cacheRemoteTimedMedia(
  ctx: Ctx,
  mediaId: string,
  job?: Pick<JobRow, "attempts" | "max_attempts">,
  shutdown?: AbortSignal,
): Promise<void> {
  const tools = ctx.config.transcoder;
  const row = await remoteAttachment(ctx, mediaId);
  // Without ffmpeg (gone since the job was queued) it stays a link.
  if (!tools || !row || !(await mayDownload(ctx, row))) return;
  await keepingFailures(ctx, row.id, job, shutdown, () =>
    withTemporaryFolder(async (temporary) => {
      const input = join(temporary, "download");
      await downloadRemote(ctx, row.remote_url!, {
        maxBytes: LIMITS.media.videoSizeLimit,
        timeoutMs: TIMED_DOWNLOAD_MS,
        accept: "video/*, audio/*, image/gif;q=0.5",
        saveTo: input,
        signal: shutdown,
      });
      const picture = await inspectImage(input, "File").catch(() => undefined);
      const animatedGif = picture?.format === "gif" && picture.animated;
      if (picture && !animatedGif) {
        if ((await stat(input)).size > LIMITS.media.imageSizeLimit)
          throw new MediaNotKept("the picture is larger than pictures may be");
        return keepPicture(ctx, row, input, picture);
      }
      const info = await probeInBackground(tools, input, shutdown);
      if (!info) throw new MediaNotKept("the file is not a video or audio file ffmpeg reads");
      let kind: TimedKind;
      if (picture && animatedGif) {
        // ffmpeg must read it as the GIF sharp saw, not as anything else its bytes also resemble.
        if (info.formatName !== "gif") throw new MediaNotKept("the file is not a GIF ffmpeg reads");
        if (picture.width * picture.height > LIMITS.media.videoMatrixLimit)
          throw new MediaNotKept("the GIF's dimensions are too large");
        kind = "gifv";
      } else {
        kind = classify(info, LIMITS.media);
      }
      const written: string[] = [];
      try {
        const done = await convertProbed(ctx, tools, { id: row.id, kind, input, info, temporary }, written, shutdown);
        await recordKept(
          ctx,
          row,
          {
            type: kind,
            file: done.file,
            file_content_type: done.contentType,
            file_size: done.size,
            preview_file: done.preview,
            thumbnail_file: done.cover?.key ?? null,
            blurhash: row.blurhash ?? done.previewBlurhash,
            meta: JSON.stringify(done.meta),
          },
          written,
        );
      } catch (error) {
        await Promise.all(written.map((key) => ctx.media.delete(key).catch(() => {})));
        throw error;
      }
    }),
  );
}

/** Drops the kept copies of `rows` (their links to the other server stay). */
async function uncache(ctx: Ctx, rows: readonly Pick<MediaAttachmentRow, "id">[]): Promise<void> {
  for (const row of rows) {
    await ctx.db.kysely
      .updateTable("media_attachments")
      .set({
        file: null,
        preview_file: null,
        // Remote attachments have a thumbnail only from an audio file's cover art, which goes with it.
        thumbnail_file: null,
        file_size: null,
        file_content_type: null,
        updated_at: new Date().toISOString(),
      })
      .where("id", "=", row.id)
      .execute();
    await ctx.media.deleteUnder(mediaFolder(row.id), []);
  }
}

const BATCH = 500;

export interface RemovalOptions {
  /** Counts what would go without removing anything. */
  dryRun?: boolean;
  /** Called after each batch with the number done so far. */
  onProgress?: (done: number) => void;
}

export interface Removed {
  count: number;
  /** The kept files' sizes, as recorded (previews not counted). */
  bytes: number;
}

/**
 * Drops kept copies of remote media older than `olderThan` (`rookery media remove`), a batch at a
 * time in age order; the attachments fall back to the media proxy.
 */
export async function removeCachedRemoteMedia(
  ctx: Ctx,
  olderThan: Date,
  options: RemovalOptions = {},
): Promise<Removed> {
  const removed: Removed = { count: 0, bytes: 0 };
  let after: { created_at: string; id: string } | undefined;
  for (;;) {
    let query = ctx.db.kysely
      .selectFrom("media_attachments")
      .select(["id", "created_at", "file_size"])
      // Written out as the partial index's predicate (index_media_attachments_kept_remote).
      .where(sql<boolean>`remote_url IS NOT NULL AND file IS NOT NULL`)
      .where("created_at", "<", olderThan.toISOString());
    if (after) {
      const { created_at, id } = after;
      query = query.where((eb) => eb(eb.refTuple("created_at", "id"), ">", eb.tuple(created_at, id)));
    }
    const rows = await query.orderBy("created_at").orderBy("id").limit(BATCH).execute();
    if (rows.length === 0) return removed;
    if (!options.dryRun) await uncache(ctx, rows);
    removed.count += rows.length;
    for (const row of rows) removed.bytes += row.file_size ?? 0;
    after = rows[rows.length - 1];
    options.onProgress?.(removed.count);
  }
}

/**
 * Drops what was kept of a domain's media — attachments, and its accounts' avatars and headers —
 * when the domain's block rejects media or suspends it; returns how many attachments and accounts.
 */
export async function purgeDomainMedia(ctx: Ctx, domain: string): Promise<number> {
  if (await domainKeepsMedia(ctx, domain)) return 0;
  let done = 0;
  for (;;) {
    const rows = await ctx.db.kysely
      .selectFrom("media_attachments")
      .select("media_attachments.id")
      .where(sql<boolean>`remote_url IS NOT NULL AND file IS NOT NULL`)
      .where("account_id", "in", ctx.db.kysely.selectFrom("accounts").select("id").where(onDomain(domain)))
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    await uncache(ctx, rows);
    done += rows.length;
  }
  return done + (await purgeDomainProfileImages(ctx, domain));
}
