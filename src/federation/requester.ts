/**
 * Who asks for an ActivityPub document, and whether they may have it: Mastodon's secure mode.
 * With `AUTHORIZED_FETCH=true` (implied by limited federation mode) every ActivityPub GET but the
 * instance actor's needs an HTTP signature by an actor whose server is not suspended here (and,
 * in limited federation mode, is on the allow-list); what
 * the signer sees then follows the owner's blocks (a blocked account or server gets empty
 * collections and no posts). Without it documents are public, as Mastodon serves them.
 */
import { getKeyOwner, verifyRequest, type Context, type RequestContext } from "@fedify/fedify";
import type { Ctx } from "../context.ts";
import { blockFor } from "../services/admin/domain_blocks.ts";
import { isAllowedDomain } from "../services/admin/domain_allows.ts";
import { accountByUri } from "../services/accounts/remote.ts";
import { blocksRequester } from "../services/visibility/requesters.ts";
import { INSTANCE_ACTOR } from "./instance_actor.ts";

export interface Requester {
  /** The signer's actor id. */
  uri: string;
  /** Its host (lower case, with the port if any). */
  host: string;
  /** Its account here, when this server knows it. */
  accountId?: string;
}

/** The verified signer of each request, worked out once a request whoever asks. */
const requesters = new WeakMap<Request, Promise<Requester | null>>();
/** The request as it was signed, for requests Fedify sees under another path (`/@alice`). */
const signedAs = new WeakMap<Request, Request>();

/**
 * Declares that `routed` (what Fedify dispatches, e.g. `/users/alice`) stands for `received` (the
 * request as sent and signed, e.g. `/@alice`): its signature is checked against the latter.
 */
export function routedAs(routed: Request, received: Request): Request {
  signedAs.set(routed, received);
  return routed;
}

/** The signer of this request, or null (unsigned, bad signature, key not found). */
export function requesterOf(ctx: Ctx, fedCtx: RequestContext<void>): Promise<Requester | null> {
  const request = signedAs.get(fedCtx.request) ?? fedCtx.request;
  let found = requesters.get(request);
  if (!found) {
    found = (async () => {
      // Keys of servers in secure mode are fetched with a signature too (the instance actor's).
      const loaders = {
        documentLoader: await fedCtx.getDocumentLoader({ identifier: INSTANCE_ACTOR }),
        contextLoader: fedCtx.contextLoader,
      };
      const key = await verifyRequest(request, loaders).catch(() => null);
      const owner = key && (await getKeyOwner(key, loaders).catch(() => null));
      if (!owner?.id) return null;
      const account = await accountByUri(ctx, owner.id.href);
      return { uri: owner.id.href, host: owner.id.host.toLowerCase(), accountId: account?.id };
    })();
    requesters.set(request, found);
  }
  return found;
}

/** Why this request may not read ActivityPub documents here, or undefined when it may. */
export async function fetchRefusal(ctx: Ctx, fedCtx: RequestContext<void>): Promise<string | undefined> {
  if (!ctx.config.authorizedFetch) return undefined;
  if (!fedCtx.request.headers.has("signature") && !fedCtx.request.headers.has("signature-input"))
    return "Request not signed";
  const requester = await requesterOf(ctx, fedCtx);
  if (!requester) return "The request's signature could not be verified";
  const block = await blockFor(ctx.db.kysely, requester.host);
  if (block?.severity === "suspend") return "The signer's domain is blocked";
  if (!(await isAllowedDomain(ctx, requester.host))) return "The signer's domain is not allowed";
  return undefined;
}

/** Why each refused request was refused, for its 401's message. */
const refusals = new WeakMap<Request, string>();

/** The `authorize()` predicate of every ActivityPub document but the instance actor. */
export const mayFetch = (ctx: Ctx) => async (fedCtx: RequestContext<void>) => {
  const refusal = await fetchRefusal(ctx, fedCtx);
  if (refusal) refusals.set(fedCtx.request, refusal);
  return refusal === undefined;
};

/** The 401 of a refused ActivityPub GET, with Mastodon's reason. */
export function unauthorizedFetch(request: Request): Response {
  const error = refusals.get(request) ?? "Request not signed";
  return Response.json({ error }, { status: 401 });
}

/**
 * Whether the owner `ownerId` keeps its content from this request's signer: in secure mode, the
 * accounts and servers the owner blocks see empty collections and none of its posts.
 */
export async function hiddenFromRequester(
  ctx: Ctx,
  fedCtx: Context<void> | RequestContext<void>,
  ownerId: string,
): Promise<boolean> {
  // Followers are also listed for deliveries, outside any request.
  if (!ctx.config.authorizedFetch || !("request" in fedCtx)) return false;
  const requester = await requesterOf(ctx, fedCtx);
  return requester !== null && (await blocksRequester(ctx, ownerId, requester));
}
