/**
 * Content negotiation between a page and its ActivityPub document. The same URLs (`/@alice`,
 * `/@alice/123`, `/users/alice`) answer HTML to browsers and ActivityPub JSON to servers, as
 * Mastodon's do; Fastify's router picks the route by a `format` constraint derived from the
 * Accept header, so each edge registers its own route for the same path (federation/routes.ts
 * the JSON one with `constraints: { format: "activity" }`, web/ the page) and neither imports
 * the other.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export type Format = "html" | "activity";

/** Media types answered with the ActivityPub document (Rails' `json` format covers all three). */
const ACTIVITY_TYPES = new Set(["application/activity+json", "application/ld+json", "application/json"]);
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml", "text/*", "*/*"]);

/**
 * The format an Accept header prefers: the highest quality wins, the first listed on a tie, and
 * anything that names no JSON type (every browser, `curl`'s `*\/*`, no header) gets the page.
 * Runs for every request the router matches, so the common cases return before any parsing.
 */
export function preferredFormat(accept: string | undefined): Format {
  if (accept === undefined) return "html";
  if (accept === "application/activity+json" || accept === "application/json") return "activity";
  // Media types are case-insensitive; browsers' headers (no "json") pay for lower-casing only.
  const header = accept.includes("json") ? accept : accept.toLowerCase();
  if (!header.includes("json")) return "html";
  let best: Format = "html";
  let bestQuality = -1;
  for (const item of header.split(",")) {
    const [rawType, ...params] = item.split(";");
    const type = rawType.trim().toLowerCase();
    const format: Format | undefined = ACTIVITY_TYPES.has(type)
      ? "activity"
      : HTML_TYPES.has(type)
        ? "html"
        : undefined;
    if (!format) continue;
    let quality = 1;
    for (const param of params) {
      const [name, value] = param.split("=");
      if (name.trim().toLowerCase() === "q") quality = Number(value);
    }
    if (quality > 0 && quality <= 1 && quality > bestQuality) {
      best = format;
      bestQuality = quality;
    }
  }
  return best;
}

/** Registers the `format` route constraint (before any route that uses it). */
export function registerFormatConstraint(app: FastifyInstance): void {
  app.addConstraintStrategy({
    name: "format",
    storage() {
      const handlers = new Map<string, unknown>();
      return {
        get: (format: string) => (handlers.get(format) ?? null) as never,
        set: (format: string, store: unknown) => void handlers.set(format, store),
      };
    },
    deriveConstraint: (req: FastifyRequest["raw"]) => preferredFormat(req.headers.accept),
    // Paths without a JSON route answer whatever the format.
    mustMatchWhenDerived: false,
  });
}

/** The answer depends on Accept: caches must keep the page and the document apart. */
export function varyOnAccept(reply: FastifyReply): void {
  const vary = reply.getHeader("vary");
  if (vary === undefined) reply.header("Vary", "Accept");
  else if (!/\baccept\b/i.test(String(vary))) reply.header("Vary", `${String(vary)}, Accept`);
}

/** Whether this request's route was chosen as the ActivityPub one. */
export const wantsActivity = (req: FastifyRequest): boolean => preferredFormat(req.headers.accept) === "activity";
