import { readFile } from "node:fs/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { MediaAttachmentRow } from "../../db/schema.ts";
import { serializeMediaAttachment } from "../../entities/media_attachment.ts";
import { ParameterMissing, Unprocessable, ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { waitForProcessing } from "../../services/media/timed.ts";
import {
  deleteOwnMedia,
  findOwnUsableMedia,
  removeThumbnail,
  updateMedia,
  uploadMedia,
} from "../../services/media/upload.ts";
import { userOf } from "../auth.ts";
import { isUploadedFile, toId, toStringParam, type ParamValue } from "../params.ts";
import { updateRoute } from "../update_route.ts";
import { hangUpSignal } from "../hang_up.ts";

/** An optional `thumbnail` file part; an empty one (a form with no file chosen) is no thumbnail. */
async function thumbnailParam(value: ParamValue | undefined): Promise<Buffer | undefined> {
  if (value === undefined || value === null || value === "") return undefined;
  if (!isUploadedFile(value)) throw new ValidationFailed("Thumbnail must be an uploaded image file");
  // Refused before it is read into memory: a thumbnail is an image.
  if (value.size > LIMITS.media.imageSizeLimit)
    throw new ValidationFailed(`Thumbnail file size must be less than ${LIMITS.media.imageSizeLimit / 1024 / 1024} MB`);
  return value.data ?? (await readFile(value.path));
}

const processing = (row: MediaAttachmentRow) => row.processing === "queued" || row.processing === "in_progress";

export default async function mediaRoutes(app: FastifyInstance, ctx: Ctx) {
  const write = app.auth({ scopes: ["write:media"], user: true });
  // Video and audio may be 99 MB: the parts are spooled to temporary files, not held in memory.
  const upload = {
    preHandler: write,
    config: { throttles: ["media" as const], maxFileSize: LIMITS.media.videoSizeLimit + 1, spoolFiles: true },
  };

  async function store(req: FastifyRequest, hangUp: AbortSignal): Promise<MediaAttachmentRow> {
    const viewer = userOf(req);
    const file = req.input.file;
    if (file === undefined || file === null || file === "") throw new ParameterMissing("file");
    if (!isUploadedFile(file)) throw new Unprocessable("File type of uploaded media could not be verified");
    return uploadMedia(ctx, viewer.account, {
      file: file.data ?? { path: file.path, size: file.size },
      description: toStringParam(req.input.description),
      focus: toStringParam(req.input.focus),
      thumbnail: await thumbnailParam(req.input.thumbnail),
      signal: hangUp,
    });
  }

  // v2: images are finished at once (200); video, gifv and audio answer 202 with `url: null` while converted.
  app.post("/api/v2/media", upload, async (req, reply) => {
    const row = await store(req, hangUpSignal(reply));
    return reply.code(processing(row) ? 202 : 200).send(serializeMediaAttachment(ctx, row));
  });

  // v1 always answers finished media: it waits while the job workers convert (never converting itself).
  app.post("/api/v1/media", upload, async (req, reply) => {
    const hangUp = hangUpSignal(reply);
    let row = await store(req, hangUp);
    if (processing(row)) {
      // A client that hangs up stops the wait; the conversion goes on and the media can be fetched later.
      // Nothing is sent while waiting, so the socket's idle timeout (60 s) is off meanwhile.
      const socket = req.raw.socket;
      const idleTimeout = socket.timeout;
      socket.setTimeout?.(0);
      try {
        row = (await waitForProcessing(ctx, row.id, hangUp)) ?? row;
      } finally {
        if (!socket.destroyed) socket.setTimeout?.(idleTimeout ?? 0);
      }
      // Failed meanwhile: the same 422 as GET.
      if (row.processing === "failed") row = await findOwnUsableMedia(ctx, userOf(req).account, row.id);
    }
    return reply.code(processing(row) ? 202 : 200).send(serializeMediaAttachment(ctx, row));
  });

  // Media still being converted answer 206, as Mastodon's.
  const answer = (reply: FastifyReply, row: MediaAttachmentRow) =>
    reply.code(processing(row) ? 206 : 200).send(serializeMediaAttachment(ctx, row));

  app.get("/api/v1/media/:id", { preHandler: write }, async (req, reply) => {
    const viewer = userOf(req);
    return answer(reply, await findOwnUsableMedia(ctx, viewer.account, toId(req.input.id)));
  });

  updateRoute(
    app,
    "/api/v1/media/:id",
    { preHandler: write, config: { maxFileSize: LIMITS.media.imageSizeLimit + 1 } },
    async (req, reply) => {
      const viewer = userOf(req);
      const media = await findOwnUsableMedia(ctx, viewer.account, toId(req.input.id));
      const updated = await updateMedia(ctx, media, {
        description: toStringParam(req.input.description),
        focus: toStringParam(req.input.focus),
        thumbnail: await thumbnailParam(req.input.thumbnail),
      });
      return answer(reply, updated);
    },
  );

  app.delete("/api/v1/media/:id/thumbnail", { preHandler: write }, async (req, reply) => {
    const viewer = userOf(req);
    const media = await findOwnUsableMedia(ctx, viewer.account, toId(req.input.id));
    return answer(reply, await removeThumbnail(ctx, media));
  });

  app.delete("/api/v1/media/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    await deleteOwnMedia(ctx, viewer.account, toId(req.input.id));
    return {};
  });
}
