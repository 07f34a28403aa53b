/**
 * Taking an activity into an inbox: the part of a POST that runs before the answer. Its HTTP
 * signature is verified (Fedify's `verifyRequest`, draft-cavage and RFC 9421, with the signer's key
 * from memory after its first use) and the key must belong to the activity's actor; then the
 * activity is queued, as it came, for Fedify's queue to parse and hand to the listeners
 * (federation/inbox/) in a job worker, with Fedify's retries and its record of handled activities.
 *
 * Fedify's own inbox handler does the same, but parses the activity's JSON-LD into objects twice
 * before answering (once to look for object proofs, once to read it), and the worker parses it
 * again: ~2 ms each for a Mastodon `Create`, most of an inbox POST's cost. Here the POST reads only
 * what it must (type, actor) from the JSON, and the parse happens once, in the worker. Linked Data
 * signatures are not looked at: every POST must carry an HTTP signature by the actor's own server
 * (routes.ts), which is what Mastodon trusts too when both are there.
 */
import { doesActorOwnKey, verifyRequest } from "@fedify/fedify";
import { Activity } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import { findLocalAccount } from "../../services/accounts/lookup.ts";
import { instanceLoaders } from "../instance_actor.ts";
import type { MemoryKeyCache } from "../key_cache.ts";
import { JobMessageQueue } from "../queue.ts";
import { decodeCreate, DECODED_CREATE_JOB } from "./decoded.ts";

/** How far a signature's date may be from now (Fedify's default, and Mastodon's 12 hours is wider). */
const TIME_WINDOW = { hours: 1 } as const;

export interface Accepted {
  status: number;
  error?: string;
}

/** The id of an actor named as a string or as an object with an id. */
function actorIdOf(activity: Record<string, unknown>): URL | undefined {
  const actor = activity.actor;
  const id = typeof actor === "string" ? actor : (actor as { id?: unknown } | null)?.id;
  if (typeof id !== "string") return undefined;
  const url = URL.parse(id);
  return url && (url.protocol === "https:" || url.protocol === "http:") ? url : undefined;
}

const isType = (type: unknown) =>
  (typeof type === "string" && type !== "") ||
  (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === "string"));

/**
 * Verifies and queues one activity POSTed to `recipient`'s inbox (undefined: the shared inbox).
 * `request` is the POST with its canonical URL, `json` its body parsed.
 */
export async function acceptActivity(
  ctx: Ctx,
  keyCache: MemoryKeyCache,
  request: Request,
  json: unknown,
  recipient: string | undefined,
): Promise<Accepted> {
  if (recipient !== undefined) {
    const account = await findLocalAccount(ctx, recipient);
    if (!account || account.username !== recipient) return { status: 404, error: "Record not found" };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    return { status: 400, error: "The body is not an activity" };
  const activity = json as Record<string, unknown>;
  const actorId = actorIdOf(activity);
  if (!isType(activity.type) || !actorId) return { status: 400, error: "The activity has no type or no actor" };
  if (activity.id !== undefined && (typeof activity.id !== "string" || !URL.canParse(activity.id)))
    return { status: 400, error: "The activity's id is not a URL" };

  const base = new URL(ctx.config.baseUrl);
  const { documentLoader, contextLoader } = await instanceLoaders(ctx.federation, base);
  const key = await verifyRequest(request, { documentLoader, contextLoader, keyCache, timeWindow: TIME_WINDOW });
  if (!key) return { status: 401, error: "The request's signature could not be verified" };
  const owned =
    key.ownerId?.href === actorId.href ||
    (await doesActorOwnKey(new Activity({ actor: actorId }), key, { documentLoader, contextLoader }));
  if (!owned) return { status: 401, error: "The signer and the actor do not match" };

  // A Create of an embedded post is read here, where CPU is to spare (inbox/decoded.ts).
  const decoded = await decodeCreate(activity, { contextLoader });
  if (decoded) {
    await ctx.jobs.enqueue(DECODED_CREATE_JOB, decoded);
    return { status: 202 };
  }
  // The message Fedify's queue expects of an inbox (what its own handler queues): the worker
  // parses `activity`, skips it if its id was handled already, and calls the listener.
  await new JobMessageQueue(ctx.jobs).enqueue({
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: base.origin,
    activity: json,
    // The HTTP signature is what was checked; a Linked Data signature in the body is only detached.
    ldSignatureVerified: false,
    identifier: recipient ?? null,
    attempt: 0,
    started: new Date().toISOString(),
    traceContext: {},
  });
  return { status: 202 };
}
