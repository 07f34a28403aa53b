import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import { AuthenticationRequired } from "../errors.ts";
import { proxiedMediaLocation } from "../services/media/proxy.ts";
import { currentWebUser } from "../web/session.ts";
import { hangUpSignal } from "./hang_up.ts";

/**
 * Mastodon's media proxy: `GET /media_proxy/:id/:style` redirects (302) to the kept copy of
 * another server's attachment — `small` is its preview, any other last part or none the original
 * — having it downloaded first when it is not kept (services/media/proxy.ts: who may ask for what,
 * and how long it waits). The reader is the bearer of a token when one is sent, else the browser's
 * signed-in session; in limited federation mode only signed-in readers are served, as in Mastodon.
 */
export default async function mediaProxyRoutes(app: FastifyInstance, ctx: Ctx) {
  const options = {
    preHandler: app.auth({ optional: true, alwaysPublic: true }),
    config: { throttles: ["media_proxy" as const] },
  };
  async function show(req: FastifyRequest, reply: FastifyReply) {
    const { id, "*": rest } = req.params as { id: string; "*"?: string };
    const reader = req.viewer?.account ?? (await currentWebUser(ctx, req))?.account;
    if (ctx.config.limitedFederationMode && !reader) throw new AuthenticationRequired();
    const style = rest?.split("/").at(-1) === "small" ? "small" : "original";
    const location = await proxiedMediaLocation(ctx, id, style, reader?.id, hangUpSignal(reply));
    return reply.redirect(location, 302);
  }
  app.get("/media_proxy/:id", options, show);
  app.get("/media_proxy/:id/*", options, show);
}
