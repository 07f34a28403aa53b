// Mounting Fedify in Fastify 5 without @fedify/fastify (which builds a streaming Request without
// duplex:"half", so every POST throws, and bypasses bodyLimit). onRequest hook:
//  - GET/HEAD: hand Fedify a bodiless Request; its 404/406 fall through to Fastify's own routes.
//  - POST to an inbox (ctx.parseUri(url).type === "inbox"): read the raw body, at most 1 MiB, then
//    hand Fedify a Request with a Buffer body. Other POSTs never touch Fedify.
// The URL is always the canonical origin + path, and Host is set to the canonical host, so both
// RFC 9421 (@target-uri/@authority from the URL) and draft-cavage (`host` header) verify against
// what a sender signed for our canonical inbox URL, whatever a proxy did to Host.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Federation } from "@fedify/fedify";

export const INBOX_BODY_LIMIT = 1024 * 1024;
const notFound = new Response(null, { status: 404 });
const notAcceptable = new Response(null, { status: 406 });

class BodyTooLarge extends Error {}

async function readCapped(req: FastifyRequest, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    size += (chunk as Buffer).length;
    if (size > limit) { req.raw.destroy(); throw new BodyTooLarge(); }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toHeaders(req: FastifyRequest, canonicalHost: string): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.raw.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v); else headers.set(name, value);
  }
  headers.set("host", canonicalHost);
  return headers;
}

async function send(reply: FastifyReply, response: Response): Promise<void> {
  reply.code(response.status);
  response.headers.forEach((value, name) => { reply.header(name, value); });
  await reply.send(Buffer.from(await response.arrayBuffer()));
}

export function mountFederation<T>(app: FastifyInstance, federation: Federation<T>, opts: {
  baseUrl: string; contextData: () => T; bodyLimit?: number;
}): void {
  const base = new URL(opts.baseUrl);
  const limit = opts.bodyLimit ?? INBOX_BODY_LIMIT;
  app.addHook("onRequest", async (req, reply) => {
    const method = req.method;
    if (method !== "GET" && method !== "HEAD" && method !== "POST") return;
    const url = new URL(req.url, base); // canonical origin, path and query as received
    const contextData = opts.contextData();
    let body: Buffer | undefined;
    if (method === "POST") {
      const parsed = federation.createContext(base, contextData).parseUri(url);
      if (parsed?.type !== "inbox") return; // not ours: Fastify parses it as usual
      try { body = await readCapped(req, limit); } catch (e) {
        if (e instanceof BodyTooLarge) return reply.code(413).send({ error: "Payload too large" });
        throw e;
      }
    }
    const request = new Request(url, { method, headers: toHeaders(req, base.host), body: body === undefined ? undefined : new Uint8Array(body) });
    const response = await federation.fetch(request, {
      contextData,
      onNotFound: () => notFound,
      onNotAcceptable: () => notAcceptable,
    });
    if (response === notFound || response === notAcceptable) return; // Fastify routes it (HTML pages, API)
    await send(reply, response);
    return reply;
  });
}
