import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import sharp from "sharp";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { ClientGone } from "../../db/abort.ts";
import type { AccountRow, JobRow, MediaAttachmentRow } from "../../db/schema.ts";
import { ServiceUnavailable, Unprocessable, ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { probe, type Probe, type Transcoder } from "../../media/ffmpeg.ts";
import { ProgramsBusy } from "../../media/program_slots.ts";
import { randomFileName } from "../../media/storage.ts";
import { TEMPORARY } from "../../media/temporary.ts";
import {
  classify,
  extractPicture,
  MediaRejected,
  timedMeta,
  transcode,
  type TimedKind,
} from "../../media/transcode.ts";
import {
  blurhashOf,
  fitWithin,
  metaOf,
  sizeOf,
  SMALL_PIXELS,
  storeThumbnail,
  type StoredThumbnail,
  type UploadSource,
} from "./pictures.ts";

export const PROCESS_JOB = "media.process";

/** Where every file of an attachment lives (upload, original, preview, thumbnail). */
export const mediaFolder = (id: string) => `media_attachments/files/${id}`;
const processJobKey = (id: string) => `${PROCESS_JOB}:${id}`;

/** How long ffprobe may look at an upload during the request. */
const PROBE_TIMEOUT_MS = 20_000;

const BUSY = "Too many media files are being processed right now; try again in a moment";

/**
 * ffprobe on an upload while its client waits: 503 with Retry-After when the process's programs
 * are all busy and enough uploads wait for one already, or the wait passes its limit
 * (`program_slots.ts`); a client that hangs up stops the wait or the program.
 */
async function probeUpload(ctx: Ctx, tools: Transcoder, path: string, signal: AbortSignal | undefined) {
  try {
    return await probe(tools, path, { timeoutMs: PROBE_TIMEOUT_MS, signal });
  } catch (error) {
    if (error instanceof ProgramsBusy) {
      // Many of these in a row mean FFMPEG_CONCURRENCY is too low for the uploads this server gets.
      ctx.log.warn({ reason: error.message }, "upload refused: no ffprobe slot");
      throw new ServiceUnavailable(BUSY, error.retryAfterSeconds);
    }
    if (signal?.aborted) throw new ClientGone();
    throw error;
  }
}

/**
 * What one conversion may cost: wall-clock time (two minutes plus ten times the media's duration,
 * at most two hours) and processor time (a minute plus twenty processor-seconds per second of
 * media; bench/RESULTS.md measures 0.3 for 720p). Past either, ffmpeg is stopped and the media fails.
 */
function conversionLimits(duration: number | undefined): { timeoutMs: number; cpuSeconds: number } {
  const seconds = Math.ceil(duration ?? LIMITS.media.videoDurationLimit);
  return { timeoutMs: Math.min(2 * 3600_000, 120_000 + seconds * 10_000), cpuSeconds: 60 + seconds * 20 };
}

/** Runs `work` in a fresh working folder (removed afterwards; `media.cleanup` sweeps those a crash left). */
export async function withTemporaryFolder<T>(work: (folder: string) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(join(tmpdir(), TEMPORARY.conversions));
  try {
    return await work(folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

export interface TimedUpload {
  file: UploadSource;
  description: string | null;
  focus: { x: number; y: number } | undefined;
  thumbnail: Buffer | undefined;
  /** Set when the upload is an animated GIF (sharp read it); it becomes a `gifv`. */
  animatedGif: { width: number; height: number } | undefined;
  /** Fires when the client hangs up. */
  signal?: AbortSignal;
}

/**
 * Accepts a video, an audio file or an animated GIF: checked during the request (ffprobe reads
 * the container, limits on size, dimensions, frame rate and duration), stored as uploaded, and
 * queued for the `media.process` job, which converts it. Answers the row, still `queued`. When
 * ffprobe gets no slot (ServiceUnavailable) or the client hangs up, nothing is stored.
 */
export async function acceptTimedMedia(
  ctx: Ctx,
  tools: Transcoder,
  account: AccountRow,
  upload: TimedUpload,
): Promise<MediaAttachmentRow> {
  const size = sizeOf(upload.file);
  if (size > LIMITS.media.videoSizeLimit)
    throw new ValidationFailed(`File file size must be less than ${LIMITS.media.videoSizeLimit / 1024 / 1024} MB`);
  const id = newId();
  const folder = mediaFolder(id);
  const uploadKey = `${folder}/upload/${randomFileName("bin")}`;
  const kind = await withTemporaryFolder(async (temporary) => {
    // A spooled upload is read where it lies; bytes in memory are written out for ffprobe.
    let path = join(temporary, "upload");
    if (Buffer.isBuffer(upload.file)) await writeFile(path, upload.file);
    else path = upload.file.path;
    const info = await probeUpload(ctx, tools, path, upload.signal);
    if (!info) throw new Unprocessable("File type of uploaded media could not be verified");
    let kind: TimedKind;
    if (upload.animatedGif) {
      // ffmpeg must read it as the GIF sharp saw, not as anything else its bytes also resemble.
      if (info.formatName !== "gif") throw new Unprocessable("File type of uploaded media could not be verified");
      const { width, height } = upload.animatedGif;
      if (width * height > LIMITS.media.videoMatrixLimit) throw new ValidationFailed("File dimensions are too large");
      kind = "gifv";
    } else {
      try {
        kind = classify(info, LIMITS.media);
      } catch (error) {
        if (error instanceof MediaRejected) throw new Unprocessable(error.message);
        throw error;
      }
    }
    await ctx.media.putFile(uploadKey, path);
    return kind;
  });

  try {
    const thumbnail = upload.thumbnail ? await storeThumbnail(ctx, folder, upload.thumbnail) : undefined;
    const now = new Date().toISOString();
    const row = await ctx.db.kysely.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto("media_attachments")
        .values({
          id,
          account_id: account.id,
          type: kind,
          file: uploadKey,
          file_content_type: null,
          file_size: size,
          thumbnail_file: thumbnail?.key ?? null,
          description: upload.description,
          focus_x: upload.focus?.x ?? null,
          focus_y: upload.focus?.y ?? null,
          blurhash: thumbnail?.blurhash ?? null,
          meta: "{}",
          processing: "queued",
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await ctx.jobs.enqueueWith(tx, PROCESS_JOB, { id }, { maxAttempts: 3, uniqueKey: processJobKey(id) });
      return inserted;
    });
    ctx.jobs.wake();
    return row;
  } catch (error) {
    // Nothing of a refused upload stays (the ID was never given out).
    await ctx.media.deleteUnder(folder, []);
    throw error;
  }
}

export interface Converted {
  file: string;
  contentType: string;
  size: number;
  preview: string | null;
  /** The preview's blurhash (a video's first frame, an audio file's cover art). */
  previewBlurhash: string | null;
  cover: StoredThumbnail | undefined;
  meta: Record<string, unknown>;
}

/** Ends of what one conversion may produce: no longer than the limit, no larger than this. */
const OUTPUT_BYTES = 512 * 1024 * 1024;

function limitFor(kind: TimedKind): number {
  return kind === "audio" ? LIMITS.media.audioDurationLimit : LIMITS.media.videoDurationLimit;
}

/** Turns failures of the steps after the conversion (preview frame, cover art) into a refusal of the file. */
async function orRejected<T>(what: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (signal?.aborted || error instanceof MediaRejected) throw error;
    throw new MediaRejected(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Converts the stored upload; every key it wrote is pushed onto `written`, so a failure can remove them. */
async function convert(
  ctx: Ctx,
  tools: Transcoder,
  row: MediaAttachmentRow,
  written: string[],
  signal: AbortSignal | undefined,
): Promise<Converted> {
  return withTemporaryFolder(async (temporary) => {
    const input = join(temporary, "upload");
    if (!row.file || !(await ctx.media.copyToFile(row.file, input)))
      throw new MediaRejected("the uploaded file is gone");
    const info = await probeInBackground(tools, input, signal);
    if (!info) throw new MediaRejected("the file is not a readable video or audio file");
    return convertProbed(
      ctx,
      tools,
      { id: row.id, kind: row.type as TimedKind, input, info, temporary },
      written,
      signal,
    );
  });
}

/** ffprobe in a job: it waits for a program slot instead of being refused. */
export function probeInBackground(tools: Transcoder, path: string, signal: AbortSignal | undefined) {
  return probe(tools, path, { timeoutMs: PROBE_TIMEOUT_MS, signal, background: true });
}

/** A file to convert, already read by ffprobe. */
export interface ProbedFile {
  /** The attachment whose files the results become. */
  id: string;
  kind: TimedKind;
  /** Its path, inside `temporary`. */
  input: string;
  info: Probe;
  /** A working folder for the conversion's own files. */
  temporary: string;
}

/**
 * Converts a probed video, gifv or audio file into the attachment's stored files (the converted
 * file, a video's first frame as preview, an audio file's cover art) and describes them; shared
 * by uploads and by the media of other servers (`remote.ts`). Every key it wrote is pushed onto
 * `written`, so a failure can remove them.
 */
export async function convertProbed(
  ctx: Ctx,
  tools: Transcoder,
  { id, kind, input, info, temporary }: ProbedFile,
  written: string[],
  signal: AbortSignal | undefined,
): Promise<Converted> {
  const folder = mediaFolder(id);
  const audio = kind === "audio";
  const output = join(temporary, audio ? "out.mp3" : "out.mp4");
  const caps = { seconds: limitFor(kind) + 1, bytes: OUTPUT_BYTES };
  const result = await transcode(tools, info, kind, input, output, caps, {
    ...conversionLimits(info.duration),
    signal,
  });
  // A file whose header states no duration is cut at the limit by ffmpeg; reaching it means too long.
  if (result.duration !== undefined && result.duration > limitFor(kind))
    throw new MediaRejected(`the file is longer than the ${limitFor(kind) / 60} minutes allowed`);
  const meta = timedMeta(result);

  const file = `${folder}/original/${randomFileName(audio ? "mp3" : "mp4")}`;
  written.push(file);
  await ctx.media.putFile(file, output);
  const size = (await stat(output)).size;

  let preview: string | null = null;
  let previewBlurhash: string | null = null;
  let cover: StoredThumbnail | undefined;
  if (!audio) {
    // The first frame of the converted video, so a phone video's rotation is already applied.
    const smallOut = await orRejected("no preview could be taken from the video", signal, async () => {
      const framePath = join(temporary, "frame.png");
      await extractPicture(tools, output, framePath, { timeoutMs: 60_000, cpuSeconds: 30, signal });
      const frame = await sharp(framePath).metadata();
      const small = fitWithin({ width: frame.width ?? 1, height: frame.height ?? 1 }, SMALL_PIXELS);
      return sharp(framePath)
        .resize(small.width, small.height, { fit: "inside" })
        .jpeg({ quality: 85 })
        .toBuffer({ resolveWithObject: true });
    });
    preview = `${folder}/small/${randomFileName("jpg")}`;
    written.push(preview);
    await ctx.media.put(preview, smallOut.data);
    meta.small = metaOf({ width: smallOut.info.width, height: smallOut.info.height });
    previewBlurhash = await blurhashOf(smallOut.data);
  } else if (info.coverArt) {
    // The cover art embedded in the audio file becomes its thumbnail (unless one was chosen), as Mastodon does.
    const coverPath = join(temporary, "cover.png");
    try {
      await extractPicture(tools, input, coverPath, { timeoutMs: 60_000, cpuSeconds: 30, signal });
      cover = await storeThumbnail(ctx, folder, await readFile(coverPath));
      written.push(cover.key);
      previewBlurhash = cover.blurhash;
    } catch (error) {
      if (signal?.aborted) throw error;
      ctx.log.info({ err: error, media: id }, "the audio file's cover art could not be read; it has none");
    }
  }
  return { file, contentType: audio ? "audio/mpeg" : "video/mp4", size, preview, previewBlurhash, cover, meta };
}

/**
 * The `media.process` job: converts a queued video, gifv or audio upload, stores the result and
 * its preview, and marks the attachment complete. A file ffmpeg cannot convert (corrupt,
 * truncated, too long, too slow) marks it failed with the reason and removes every file it had;
 * other errors (storage, database) are retried, and fail it on the last attempt. When the workers
 * stop (`shutdown`), ffmpeg is stopped and the job runs again later.
 */
export async function processTimedMedia(
  ctx: Ctx,
  id: string,
  job?: Pick<JobRow, "attempts" | "max_attempts">,
  shutdown?: AbortSignal,
): Promise<void> {
  const tools = ctx.config.transcoder;
  const row = await ctx.db.kysely.selectFrom("media_attachments").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || (row.processing !== "queued" && row.processing !== "in_progress")) return;
  // A retry after a crash: files an earlier attempt wrote and never recorded go first.
  if (row.processing === "in_progress")
    await ctx.media.deleteUnder(
      mediaFolder(id),
      [row.file, row.thumbnail_file].filter((k) => k !== null),
    );
  await ctx.db.kysely
    .updateTable("media_attachments")
    .set({ processing: "in_progress" })
    .where("id", "=", id)
    .execute();
  const written: string[] = [];
  const started = performance.now();
  try {
    if (!tools) throw new MediaRejected("this server has no ffmpeg to convert video and audio");
    const done = await convert(ctx, tools, row, written, shutdown);
    // A thumbnail chosen (or removed) while the job ran is the owner's: the cover art only fills an empty
    // place, and the preview's blurhash only describes media without a thumbnail.
    const updated = await ctx.db.kysely
      .updateTable("media_attachments")
      .set(({ ref, fn, eb }) => ({
        file: done.file,
        file_content_type: done.contentType,
        file_size: done.size,
        preview_file: done.preview,
        thumbnail_file: fn.coalesce(ref("thumbnail_file"), eb.val(done.cover?.key ?? null)),
        blurhash: eb.case().when("thumbnail_file", "is", null).then(done.previewBlurhash).else(ref("blurhash")).end(),
        meta: JSON.stringify(done.meta),
        processing: "complete",
      }))
      .where("id", "=", id)
      .where("processing", "=", "in_progress")
      .returning(["id", "thumbnail_file"])
      .executeTakeFirst();
    if (!updated) {
      // Deleted by its owner while it was being converted.
      for (const key of written.splice(0)) await ctx.media.delete(key);
      return;
    }
    // From here the written files are the attachment's.
    written.length = 0;
    if (done.cover && updated.thumbnail_file !== done.cover.key) await ctx.media.delete(done.cover.key);
    if (row.file) await ctx.media.delete(row.file);
    ctx.log.info(
      { media: id, type: row.type, ms: Math.round(performance.now() - started), bytes: done.size },
      "media processed",
    );
  } catch (error) {
    for (const key of written) await ctx.media.delete(key).catch(() => {});
    if (shutdown?.aborted) throw error;
    const lastAttempt = !job || job.attempts >= job.max_attempts;
    if (!(error instanceof MediaRejected) && !lastAttempt) throw error;
    ctx.log.warn({ err: error, media: id }, "media processing failed");
    await markFailed(ctx, row, error instanceof MediaRejected ? error.message : "processing failed");
  }
}

/**
 * Marks an attachment still being converted as failed with the reason (GET answers 422 with it)
 * and removes its files; one finished meanwhile (by another run of the job) is left alone.
 */
async function markFailed(ctx: Ctx, row: MediaAttachmentRow, reason: string): Promise<void> {
  const updated = await ctx.db.kysely
    .updateTable("media_attachments")
    .set({ processing: "failed", file: null, preview_file: null, meta: JSON.stringify({ error: reason }) })
    .where("id", "=", row.id)
    .where("processing", "in", ["queued", "in_progress"])
    .returning("id")
    .executeTakeFirst();
  if (!updated) return;
  for (const key of [row.file, row.preview_file]) if (key) await ctx.media.delete(key).catch(() => {});
}

/**
 * Fails conversions whose job is gone for good (it ran out of attempts, each cut short by a crash
 * of its worker, before it could record the failure): without this they would answer 206 until the
 * clean-up removes them a day later. Run by `maintenance.recover`; answers how many it failed.
 */
export async function failAbandonedMedia(ctx: Ctx, batch = 100): Promise<number> {
  const rows = await ctx.db.kysely
    .selectFrom("media_attachments")
    .selectAll()
    // Written out as the partial index's predicate: with bound values SQLite could not use that index.
    .where(sql<boolean>`processing IN ('queued', 'in_progress')`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("jobs")
            .select("jobs.id")
            // The job's key is `media.process:<id>` (an untyped parameter would leave PostgreSQL's concat guessing).
            .where(
              "jobs.unique_key",
              "=",
              sql<string>`concat(cast(${`${PROCESS_JOB}:`} as text), media_attachments.id)`,
            )
            .where("jobs.failed_at", "is", null),
        ),
      ),
    )
    .orderBy("id")
    .limit(batch)
    .execute();
  for (const row of rows) await markFailed(ctx, row, "the conversion was interrupted; upload the file again");
  return rows.length;
}

/** Why processing failed, as stored by `processTimedMedia`. */
export function failureReason(row: MediaAttachmentRow): string | undefined {
  try {
    const meta = JSON.parse(row.meta) as { error?: unknown };
    return typeof meta.error === "string" ? meta.error : undefined;
  } catch {
    return undefined;
  }
}

/** Waits until a queued attachment is processed (the v1 upload, which answers finished media). */
export async function waitForProcessing(
  ctx: Ctx,
  id: string,
  signal: AbortSignal,
  timeoutMs = 2 * 3600_000,
): Promise<MediaAttachmentRow | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 100; Date.now() < deadline && !signal.aborted; delay = Math.min(delay * 2, 1000)) {
    const row = await ctx.db.kysely.selectFrom("media_attachments").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row || row.processing === "complete" || row.processing === "failed") return row;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  return undefined;
}
