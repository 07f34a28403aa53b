/**
 * The federation edge in Fastify: the paths Fedify dispatches are routes of their own, each handing
 * the request to `federation.fetch` with the canonical URL (the configured origin, so signatures
 * and ids agree whatever a proxy did to the Host header). A GET that does not ask for ActivityPub
 * JSON (a browser opening a profile) falls through to the pages and their 404. Inbox POSTs are read
 * whole, up to 1 MiB, and what can be refused without a key fetch is refused first: an unsigned
 * POST, an RFC 9421 signature that does not cover the body, the method and the URL (Fedify accepts
 * it), a signer on a suspended domain, a key on another server than the actor's; the rest is
 * verified and queued by inbox/accept.ts (not by Fedify's inbox handler, which parses each
 * activity twice before answering).
 * No other route passes through Fedify, so the client API pays nothing for it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import { accountByUri } from "../services/accounts/remote.ts";
import { blockFor } from "../services/admin/domain_blocks.ts";
import { isAllowedDomain } from "../services/admin/domain_allows.ts";
import { acceptActivity } from "./inbox/accept.ts";
import { INSTANCE_ACTOR_PATH } from "./instance_actor.ts";
import { routedAs, unauthorizedFetch } from "./requester.ts";
import { MemoryKeyCache } from "./key_cache.ts";
import { DatabaseKvStore } from "./kv.ts";

/** The largest activity an inbox takes, as Mastodon (1 MiB). */
export const INBOX_BODY_LIMIT = 1024 * 1024;

function toRequest(req: FastifyRequest, base: URL, body?: Buffer, path?: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  headers.set("host", base.host);
  return new Request(new URL(path ?? req.url, base), {
    method: req.method,
    headers,
    body: body ? new Uint8Array(body) : undefined,
  });
}

async function send(reply: FastifyReply, response: Response): Promise<void> {
  reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  await reply.send(Buffer.from(await response.arrayBuffer()));
}

/** The components an RFC 9421 signature covers, from `Signature-Input` (all labels together). */
function coveredComponents(signatureInput: string): Set<string> {
  const covered = new Set<string>();
  for (const match of signatureInput.matchAll(/=\(([^)]*)\)/g))
    for (const component of match[1]!.matchAll(/"([^"]+)"/g)) covered.add(component[1]!.toLowerCase());
  return covered;
}

/** The host of the key that signed the request (draft-cavage `keyId`, or RFC 9421 `keyid`). */
function signerHost(req: FastifyRequest): string | undefined {
  const header = [req.headers.signature, req.headers["signature-input"]].filter((h) => typeof h === "string").join(",");
  const keyId = /keyid="([^"]+)"/i.exec(header)?.[1];
  if (!keyId) return undefined;
  try {
    return new URL(keyId).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** An id, or the id of an object. */
const idOf = (value: unknown): string | undefined => {
  const id = typeof value === "string" ? value : (value as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : undefined;
};

/** The body as JSON, or undefined when it is not JSON. */
function parseBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** What the adapter reads of an activity before verifying it: its type, actor and object ids. */
function peek(json: unknown): { type?: unknown; actor?: string; object?: string } {
  if (typeof json !== "object" || json === null) return {};
  const activity = json as { type?: unknown; actor?: unknown; object?: unknown };
  return { type: activity.type, actor: idOf(activity.actor), object: idOf(activity.object) };
}

/** The host of the activity's `actor`, if the body names one. */
function actorHost(json: unknown): string | undefined {
  const actor = peek(json).actor;
  return actor ? (URL.parse(actor)?.hostname.toLowerCase() ?? undefined) : undefined;
}

/**
 * A deleted account we never knew, announcing its deletion (Mastodon sends that to every server it
 * ever talked to): taken without checking, since its key is gone with it and there is nothing to do.
 */
async function isUnknownActorDeletion(ctx: Ctx, json: unknown): Promise<boolean> {
  const { type, actor, object } = peek(json);
  return type === "Delete" && actor !== undefined && actor === object && !(await accountByUri(ctx, actor));
}

/**
 * Why an inbox POST is refused before Fedify reads it, or undefined. As Mastodon: every POST needs
 * an HTTP signature (a Linked Data signature alone does not do), by a key on the actor's own
 * server — Fedify would take a key whose document merely claims the actor as its owner.
 */
async function refusal(
  ctx: Ctx,
  req: FastifyRequest,
  json: unknown,
): Promise<{ status: number; error: string } | undefined> {
  const input = req.headers["signature-input"];
  if (typeof input === "string" && input) {
    const covered = coveredComponents(input);
    for (const component of ["@method", "@target-uri", "content-digest"])
      if (!covered.has(component)) return { status: 401, error: `The signature must cover ${component}` };
  }
  const host = signerHost(req);
  if (!host) return { status: 401, error: "Request not signed" };
  const block = await blockFor(ctx.db.kysely, host);
  if (block?.severity === "suspend") return { status: 401, error: "The signer's domain is blocked" };
  if (!(await isAllowedDomain(ctx, host))) return { status: 401, error: "The signer's domain is not allowed" };
  const actor = actorHost(json);
  if (actor && actor !== host) return { status: 401, error: "The signing key is not on the actor's server" };
  return undefined;
}

export default async function federationRoutes(app: FastifyInstance, ctx: Ctx) {
  const base = new URL(ctx.config.baseUrl);
  const notFound = new Response(null, { status: 404 });

  const dispatch = async (req: FastifyRequest, reply: FastifyReply, body?: Buffer, path?: string) => {
    const request = path
      ? routedAs(toRequest(req, base, body, path), toRequest(req, base, body))
      : toRequest(req, base, body);
    const response = await ctx.federation.fetch(request, {
      contextData: undefined,
      onNotFound: () => notFound,
      onNotAcceptable: () => notFound,
      onUnauthorized: unauthorizedFetch,
    });
    if (response === notFound) return reply.callNotFound();
    await send(reply, response);
    return reply;
  };

  // Where a page has the same address, browsers get the page (web/public/) and servers this.
  const activity = { constraints: { format: "activity" } };
  app.get("/users/:username", activity, (req, reply) => dispatch(req, reply));
  app.get(INSTANCE_ACTOR_PATH, (req, reply) => dispatch(req, reply));
  app.get("/users/:username/statuses/:id", activity, (req, reply) => dispatch(req, reply));
  app.get("/users/:username/statuses/:id/replies", (req, reply) => dispatch(req, reply));
  for (const collection of ["outbox", "followers", "following", "collections/featured", "collections/tags"])
    app.get(`/users/:username/${collection}`, (req, reply) => dispatch(req, reply));
  // The pages' URLs (`url` of actors and Notes) answer ActivityPub JSON too, as Mastodon's do:
  // a link pasted into another server's search resolves.
  app.get("/@:username", activity, (req, reply) => {
    const { username } = req.params as { username: string };
    return dispatch(req, reply, undefined, `/users/${encodeURIComponent(username)}`);
  });
  app.get("/@:username/:id", activity, (req, reply) => {
    const { username, id } = req.params as { username: string; id: string };
    return dispatch(req, reply, undefined, `/users/${encodeURIComponent(username)}/statuses/${encodeURIComponent(id)}`);
  });

  await app.register(async (inboxes) => {
    // Any media type, kept as bytes: the signature's digest covers the body exactly as sent.
    inboxes.removeAllContentTypeParsers();
    inboxes.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: INBOX_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    const keyCache = new MemoryKeyCache(new DatabaseKvStore(ctx.db), {
      contextLoader: ctx.federation.createContext(base, undefined).contextLoader,
    });
    const receive = async (req: FastifyRequest, reply: FastifyReply) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const json = parseBody(body);
      const refused = await refusal(ctx, req, json);
      if (refused) return reply.code(refused.status).send({ error: refused.error });
      if (json === undefined) return reply.code(400).send({ error: "The body is not JSON" });
      if (await isUnknownActorDeletion(ctx, json)) return reply.code(202).send();
      const { username } = req.params as { username?: string };
      const accepted = await acceptActivity(ctx, keyCache, toRequest(req, base, body), json, username);
      if (accepted.error) {
        if (accepted.status === 401) ctx.log.info({ url: req.url, reason: accepted.error }, "inbox: POST refused");
        return reply.code(accepted.status).send({ error: accepted.error });
      }
      return reply.code(accepted.status).send();
    };
    inboxes.post("/users/:username/inbox", receive);
    inboxes.post("/inbox", receive);
  });
}
