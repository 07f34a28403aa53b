import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { NotFound } from "../errors.ts";
import { mediaTypeOfName } from "../media/types.ts";

/** The byte range a `Range` header asks of a file of `size` bytes (RFC 9110 §14): one range only. */
export type RangeAsked = { start: number; end: number } | "unsatisfiable" | undefined;

export function parseRange(header: string | undefined, size: number): RangeAsked {
  // Several ranges, other units or bad syntax: the header is ignored and the whole file sent.
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

/**
 * Serves stored media under /system/<key> (random names, so they can be cached forever), with
 * byte ranges so that browsers can seek in video and audio.
 */
export default async function mediaFileRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/system/*", async (req, reply) => {
    const key = (req.params as { "*": string })["*"];
    // Account archives are their owners' only (web/archive.ts serves them).
    if (key.startsWith("archives/")) throw new NotFound("Not Found");
    const type = mediaTypeOfName(key);
    const file = type ? await ctx.media.open(key) : undefined;
    if (!file || !type) throw new NotFound("Not Found");
    reply
      .header("Cache-Control", "public, max-age=31536000, immutable")
      .header("X-Content-Type-Options", "nosniff")
      .header("Content-Security-Policy", "default-src 'none'; sandbox")
      .header("Access-Control-Allow-Origin", "*")
      .header("Accept-Ranges", "bytes")
      .type(type);
    const range = parseRange(req.headers.range, file.size);
    if (range === "unsatisfiable")
      return reply.code(416).header("Content-Range", `bytes */${file.size}`).type("application/json").send({
        error: "Range Not Satisfiable",
      });
    // Streamed from storage, so a 99 MB video costs a read buffer, not its size, per request.
    if (!range) return reply.header("Content-Length", file.size).send(file.size === 0 ? "" : file.read());
    return reply
      .code(206)
      .header("Content-Range", `bytes ${range.start}-${range.end}/${file.size}`)
      .header("Content-Length", range.end - range.start + 1)
      .send(file.read(range.start, range.end));
  });
}
