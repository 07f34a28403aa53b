import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeMediaAttachment } from "../../entities/media_attachment.ts";
import { ParameterMissing, Unprocessable } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { deleteOwnMedia, findOwnUnattachedMedia, updateMedia, uploadMedia } from "../../services/media/upload.ts";
import { userOf } from "../auth.ts";
import { isUploadedFile, toId, toStringParam } from "../params.ts";

export default async function mediaRoutes(app: FastifyInstance, ctx: Ctx) {
  const write = app.auth({ scopes: ["write:media"], user: true });

  // Images are processed during the request, so both versions answer 200 with the finished attachment.
  for (const path of ["/api/v1/media", "/api/v2/media"]) {
    app.post(
      path,
      { preHandler: write, config: { throttles: ["media"], maxFileSize: LIMITS.media.imageSizeLimit + 1 } },
      async (req) => {
        const viewer = userOf(req);
        const file = req.input.file;
        if (file === undefined || file === null || file === "") throw new ParameterMissing("file");
        if (!isUploadedFile(file)) throw new Unprocessable("File type of uploaded media could not be verified");
        const row = await uploadMedia(ctx, viewer.account, {
          data: file.data,
          description: toStringParam(req.input.description),
          focus: toStringParam(req.input.focus),
        });
        return serializeMediaAttachment(ctx, row);
      },
    );
  }

  app.get("/api/v1/media/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    return serializeMediaAttachment(ctx, await findOwnUnattachedMedia(ctx, viewer.account, toId(req.input.id)));
  });

  app.put("/api/v1/media/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    const media = await findOwnUnattachedMedia(ctx, viewer.account, toId(req.input.id));
    const updated = await updateMedia(ctx, media, {
      description: toStringParam(req.input.description),
      focus: toStringParam(req.input.focus),
    });
    return serializeMediaAttachment(ctx, updated);
  });

  app.delete("/api/v1/media/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    await deleteOwnMedia(ctx, viewer.account, toId(req.input.id));
    return {};
  });
}
