import sharp from "sharp";
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import type { AccountRow, MediaAttachmentRow } from "../../db/schema.ts";
import { NotFound, Unprocessable, ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { EXTENSIONS, inspectImage, type ImageInfo } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";
import { parseFocus } from "./focus.ts";
import {
  blurhashOf,
  fitWithin,
  metaOf,
  ORIGINAL_PIXELS,
  sharpInput,
  sizeOf,
  SMALL_PIXELS,
  storeThumbnail,
  type UploadSource,
} from "./pictures.ts";
import { acceptTimedMedia, failureReason, mediaFolder } from "./timed.ts";

export interface UploadParams {
  file: UploadSource;
  description?: string;
  focus?: string;
  /** A chosen preview picture (video and audio above all). */
  thumbnail?: Buffer;
  /** Fires when the client hangs up: a video's check stops (waiting for ffprobe, or ffprobe itself). */
  signal?: AbortSignal;
}

/** An image as Rookery keeps it: re-encoded original (no EXIF), small preview, meta and blurhash. */
export async function processImage(data: Buffer | string, info: ImageInfo) {
  const target = fitWithin(info, ORIGINAL_PIXELS);
  // Re-encoding drops EXIF (location!) and applies the orientation.
  let original = sharp(data, { animated: info.animated }).rotate();
  if (target.width !== info.width) original = original.resize(target.width, target.height, { fit: "inside" });
  const encoded =
    info.format === "jpeg"
      ? original.jpeg({ quality: 90, mozjpeg: true })
      : info.format === "png"
        ? original.png()
        : info.format === "gif"
          ? original.gif()
          : info.format === "webp"
            ? original.webp({ quality: 90 })
            : original.avif({ quality: 70 });
  const originalOut = await encoded.toBuffer({ resolveWithObject: true });
  const originalSize = {
    width: originalOut.info.width,
    height: originalOut.info.pageHeight ?? originalOut.info.height,
  };

  const smallSize = fitWithin(originalSize, SMALL_PIXELS);
  const small = sharp(data, { animated: false }).rotate().resize(smallSize.width, smallSize.height, { fit: "inside" });
  const hasAlpha = (await sharp(data).metadata()).hasAlpha === true;
  const smallOut = await (hasAlpha ? small.png() : small.jpeg({ quality: 85 })).toBuffer({ resolveWithObject: true });

  const blurhash = await blurhashOf(data);
  return {
    original: originalOut.data,
    small: smallOut.data,
    smallExtension: hasAlpha ? "png" : "jpg",
    meta: {
      original: metaOf(originalSize),
      small: metaOf({ width: smallOut.info.width, height: smallOut.info.height }),
    },
    blurhash,
  };
}

function checkDescription(description: string | undefined): void {
  if (description !== undefined && [...description].length > LIMITS.media.descriptionLimit) {
    throw new ValidationFailed(`Description is too long (maximum is ${LIMITS.media.descriptionLimit} characters)`);
  }
}

/**
 * Stores an upload. Images (and still GIFs) are identified by content, limited, scaled into an
 * original and a small preview (never cropped) and complete when this returns. Video, audio and
 * animated GIFs are checked and queued for conversion (`acceptTimedMedia`): the row answered is
 * still processing. Without ffmpeg only images are accepted.
 */
export async function uploadMedia(ctx: Ctx, account: AccountRow, params: UploadParams): Promise<MediaAttachmentRow> {
  checkDescription(params.description);
  const focus = parseFocus(params.focus);
  const size = sizeOf(params.file);
  if (size === 0) throw new Unprocessable("File type of uploaded media could not be verified");
  let info: ImageInfo | undefined;
  try {
    info = await inspectImage(sharpInput(params.file), "File");
  } catch {
    info = undefined;
  }
  const tools = ctx.config.transcoder;
  const animatedGif = info?.format === "gif" && info.animated;
  if (tools && (!info || animatedGif)) {
    return acceptTimedMedia(ctx, tools, account, {
      file: params.file,
      description: params.description ?? null,
      focus,
      thumbnail: params.thumbnail,
      animatedGif: animatedGif && info ? { width: info.width, height: info.height } : undefined,
      signal: params.signal,
    });
  }
  if (!info) throw new Unprocessable("File type of uploaded media could not be verified");
  if (size > LIMITS.media.imageSizeLimit)
    throw new ValidationFailed(`File file size must be less than ${LIMITS.media.imageSizeLimit / 1024 / 1024} MB`);
  if (info.width * info.height > LIMITS.media.imageMatrixLimit)
    throw new ValidationFailed("File dimensions are too large");

  let processed;
  try {
    processed = await processImage(sharpInput(params.file), info);
  } catch (error) {
    ctx.log.warn({ err: error }, "media processing failed");
    throw new Unprocessable("Error processing thumbnail for uploaded media");
  }
  const id = newId();
  const folder = mediaFolder(id);
  const file = `${folder}/original/${randomFileName(EXTENSIONS[info.format])}`;
  const preview = `${folder}/small/${randomFileName(processed.smallExtension)}`;
  const thumbnail = params.thumbnail ? await storeThumbnail(ctx, folder, params.thumbnail) : undefined;
  await ctx.media.put(file, processed.original);
  await ctx.media.put(preview, processed.small);
  const now = new Date().toISOString();
  return ctx.db.kysely
    .insertInto("media_attachments")
    .values({
      id,
      account_id: account.id,
      type: "image",
      file,
      file_content_type: `image/${info.format}`,
      file_size: processed.original.length,
      preview_file: preview,
      thumbnail_file: thumbnail?.key ?? null,
      description: params.description ?? null,
      focus_x: focus?.x ?? null,
      focus_y: focus?.y ?? null,
      blurhash: thumbnail?.blurhash ?? processed.blurhash,
      meta: JSON.stringify(processed.meta),
      processing: "complete",
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function findOwnMedia(ctx: Ctx, account: AccountRow, id: string | undefined): Promise<MediaAttachmentRow> {
  const row =
    id && isIdLike(id)
      ? await ctx.db.kysely
          .selectFrom("media_attachments")
          .selectAll()
          .where("id", "=", id)
          .where("account_id", "=", account.id)
          .executeTakeFirst()
      : undefined;
  if (!row) throw new NotFound();
  return row;
}

/**
 * One of the viewer's unattached media that can still be used (GET and PUT /api/v1/media/:id, DELETE
 * its thumbnail): 404 as `findOwnUnattachedMedia`, and 422 with the reason when its conversion
 * failed (Mastodon refuses before changing anything).
 */
export async function findOwnUsableMedia(
  ctx: Ctx,
  account: AccountRow,
  id: string | undefined,
): Promise<MediaAttachmentRow> {
  const row = await findOwnUnattachedMedia(ctx, account, id);
  if (row.processing === "failed") {
    const reason = failureReason(row);
    throw new Unprocessable(`Error processing thumbnail for uploaded media${reason ? `: ${reason}` : ""}`);
  }
  return row;
}

/** One of the viewer's media not yet attached to a status, or 404. */
export async function findOwnUnattachedMedia(
  ctx: Ctx,
  account: AccountRow,
  id: string | undefined,
): Promise<MediaAttachmentRow> {
  const row = await findOwnMedia(ctx, account, id);
  if (row.status_id || row.scheduled_status_id) throw new NotFound();
  return row;
}

/** Deletes one of the viewer's unattached media (DELETE /api/v1/media/:id); attached ones are refused. */
export async function deleteOwnMedia(ctx: Ctx, account: AccountRow, id: string | undefined): Promise<void> {
  const media = await findOwnMedia(ctx, account, id);
  if (media.status_id || media.scheduled_status_id)
    throw new Unprocessable("Media attachment is currently used by a status");
  await destroyMedia(ctx, [media]);
}

export async function updateMedia(
  ctx: Ctx,
  media: MediaAttachmentRow,
  params: { description?: string; focus?: string; thumbnail?: Buffer },
): Promise<MediaAttachmentRow> {
  checkDescription(params.description);
  const focus = parseFocus(params.focus);
  const thumbnail = params.thumbnail ? await storeThumbnail(ctx, mediaFolder(media.id), params.thumbnail) : undefined;
  const updated = await ctx.db.kysely
    .updateTable("media_attachments")
    .set({
      description: params.description ?? media.description,
      focus_x: focus ? focus.x : media.focus_x,
      focus_y: focus ? focus.y : media.focus_y,
      ...(thumbnail ? { thumbnail_file: thumbnail.key, blurhash: thumbnail.blurhash } : {}),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", media.id)
    .returningAll()
    .executeTakeFirst();
  if (thumbnail && media.thumbnail_file) await ctx.media.delete(media.thumbnail_file);
  if (!updated) {
    if (thumbnail) await ctx.media.delete(thumbnail.key);
    throw new NotFound();
  }
  return updated;
}

/**
 * Removes a chosen thumbnail (DELETE /api/v1/media/:id/thumbnail): the generated preview and its
 * blurhash take its place again (audio has none until it is processed with cover art).
 */
export async function removeThumbnail(ctx: Ctx, media: MediaAttachmentRow): Promise<MediaAttachmentRow> {
  if (!media.thumbnail_file) return media;
  const preview = media.preview_file ? await ctx.media.get(media.preview_file) : undefined;
  const blurhash = preview ? await blurhashOf(preview) : null;
  const updated = await ctx.db.kysely
    .updateTable("media_attachments")
    .set({ thumbnail_file: null, blurhash, updated_at: new Date().toISOString() })
    .where("id", "=", media.id)
    .where("thumbnail_file", "=", media.thumbnail_file)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new NotFound();
  await ctx.media.delete(media.thumbnail_file);
  return updated;
}

/** Deletes media rows that are still unattached, and their files; returns how many went. */
export async function destroyMedia(ctx: Ctx, rows: readonly MediaAttachmentRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  // Re-checked in the DELETE itself: a post may have taken one of them meanwhile.
  const gone = await ctx.db.kysely
    .deleteFrom("media_attachments")
    .where(
      "id",
      "in",
      rows.map((r) => r.id),
    )
    .where("status_id", "is", null)
    .where("scheduled_status_id", "is", null)
    .returning("id")
    .execute();
  // The whole folder goes: besides the recorded files it may hold those of a conversion still
  // running or of one cut short by a crash.
  for (const { id } of gone) await ctx.media.deleteUnder(mediaFolder(id), []);
  return gone.length;
}

/**
 * Removes media left unattached for a day (the `media.cleanup` job): never used, or detached by a
 * deletion or an edit more than a day ago (`updated_at` moves when media are detached).
 */
export async function removeUnattachedMedia(ctx: Ctx, olderThanMs = 24 * 60 * 60 * 1000): Promise<number> {
  const cutoff = new Date(Date.now() - olderThanMs).toISOString();
  const rows = await ctx.db.kysely
    .selectFrom("media_attachments")
    .selectAll()
    .where("status_id", "is", null)
    .where("scheduled_status_id", "is", null)
    .where("updated_at", "<", cutoff)
    .limit(1000)
    .execute();
  return destroyMedia(ctx, rows);
}
