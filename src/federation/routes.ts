/**
 * The federation edge in Fastify: the paths Fedify dispatches are routes of their own, each handing
 * the request to `federation.fetch` with the canonical URL (the configured origin, so signatures
 * and ids agree whatever a proxy did to the Host header). A request that does not ask for
 * ActivityPub JSON (a browser opening a profile) falls through to the pages and their 404.
 * No other route passes through Fedify, so the client API pays nothing for it.
 */
import type { Federation } from "@fedify/fedify";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";

function toRequest(req: FastifyRequest, base: URL): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  headers.set("host", base.host);
  return new Request(new URL(req.url, base), { method: req.method, headers });
}

async function send(reply: FastifyReply, response: Response): Promise<void> {
  reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  await reply.send(Buffer.from(await response.arrayBuffer()));
}

export default async function federationRoutes(app: FastifyInstance, ctx: Ctx, federation: Federation<void>) {
  const base = new URL(ctx.config.baseUrl);
  const notFound = new Response(null, { status: 404 });

  const dispatch = async (req: FastifyRequest, reply: FastifyReply) => {
    const response = await federation.fetch(toRequest(req, base), {
      contextData: undefined,
      onNotFound: () => notFound,
      onNotAcceptable: () => notFound,
    });
    if (response === notFound) return reply.callNotFound();
    await send(reply, response);
    return reply;
  };

  app.get("/users/:username", dispatch);
}
