import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { NotFound } from "../errors.ts";

const TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  mp4: "video/mp4",
  webm: "video/webm",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
};

/** Serves stored media under /system/<key> (random names, so they can be cached forever). */
export default async function mediaFileRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/system/*", async (req, reply) => {
    const key = (req.params as { "*": string })["*"];
    const extension = key.split(".").pop()?.toLowerCase() ?? "";
    const type = TYPES[extension];
    const data = type ? await ctx.media.get(key) : undefined;
    if (!data) throw new NotFound("Not Found");
    return reply
      .header("Cache-Control", "public, max-age=31536000, immutable")
      .header("X-Content-Type-Options", "nosniff")
      .header("Content-Security-Policy", "default-src 'none'; sandbox")
      .header("Access-Control-Allow-Origin", "*")
      .type(type)
      .send(data);
  });
}
