import type { FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import { html } from "./html.ts";
import { renderPage } from "./render.ts";
import { varyOnAccept } from "./negotiation.ts";

/** Paths only programs read: they answer JSON whatever the Accept header says. */
const MACHINE_PATHS = /^\/(?:api|oauth\/(?:token|revoke|userinfo)|\.well-known|nodeinfo)(?:[/?]|$)/;

/** Whether the client asked for HTML (a browser's Accept header names text/html, and not with q=0). */
function acceptsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  if (typeof accept !== "string") return false;
  return accept.split(",").some((item) => {
    const [type, ...params] = item.trim().toLowerCase().split(";");
    if (type.trim() !== "text/html" && type.trim() !== "application/xhtml+xml") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Answers requests no route matches: a browser asking for a page gets an HTML page in the site's
 * style; everything else (every API client, `curl` with its `*\/*`) gets Mastodon's JSON 404.
 */
export function notFoundHandler(ctx: Ctx) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // The answer depends on Accept, so caches must keep the two apart.
    varyOnAccept(reply);
    if (!acceptsHtml(req) || MACHINE_PATHS.test(req.url)) return reply.code(404).send({ error: "Not Found" });
    return renderPage(ctx, reply, {
      title: "Page not found",
      status: 404,
      body: html`<p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
<nav><a href="/">Home</a><a href="/settings">Your account</a></nav>`,
    });
  };
}
