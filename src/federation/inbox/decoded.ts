/**
 * A `Create` of a post, read where it is received. Most of what reaches an inbox is a `Create`
 * that embeds its post (Mastodon, GoToSocial, Misskey and Akkoma all send them so). Queued as it
 * came, it was parsed in a job worker (Fedify's JSON-LD expansion and vocabulary: a third of the
 * worker's time for a post) while the web process, which only checks the signature, had CPU to
 * spare. So the web process reads such a `Create` once its signature is checked into plain data,
 * with no database lookup and no fetch: by key where its context allows (compact.ts), through
 * Fedify's parse and federation/note_rows.ts `decodePost` otherwise. It queues that; the worker only
 * looks up what the post names by URI and stores it.
 *
 * Only what can be read without fetching takes this path: the post embedded whole (its tags,
 * their icons and its attachments as objects, not links), not a poll, not a vote, and only
 * contexts Fedify carries (Akkoma's own context URL, say, would have to be fetched). Everything else,
 * and anything this reading refuses, is queued for Fedify's listeners (federation/inbox/) as before.
 * Both paths record a handled activity under Fedify's own key, so a duplicate is stored once,
 * whichever path each copy took.
 */
import type { DocumentLoader } from "@fedify/fedify";
import { Activity, Create, Question } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import type { Ctx } from "../../context.ts";
import { instanceLoaders } from "../instance_actor.ts";
import { DatabaseKvStore } from "../kv.ts";
import { decodePost, isPost, PostRefused, storeDecodedPost, type DecodedPost } from "../note_rows.ts";
import { Resolver } from "../resolver.ts";
import { isJson, listOf, POST_TYPES, readCompactCreate } from "./compact.ts";
import { logRefused, Refused, senderOf } from "./inbox.ts";

export const DECODED_CREATE_JOB = "federation.decoded_create";

/** A job's payload: a `Create` whose post was decoded where it was received. */
export interface DecodedCreate {
  /** The Create's id. */
  activity: string;
  actor: string;
  post: DecodedPost;
}

type Json = Record<string, unknown>;

/** A loader for what the post does not embed: nothing may be fetched while a POST waits. */
const refuse: DocumentLoader = (url) => Promise.reject(new Error(`${url} is not embedded`));

/** Only the contexts Fedify carries with it (a context at another URL would be fetched). */
const preloadedOnly =
  (loader: DocumentLoader): DocumentLoader =>
  (url, options) =>
    Object.hasOwn(preloadedContexts, url) ? loader(url, options) : refuse(url, options);

/**
 * The `Create` in `json` (its HTTP signature checked) with its post decoded, when it can be read
 * without fetching anything; otherwise undefined, and it goes to Fedify's listeners.
 */
export async function decodeCreate(
  json: Json,
  loaders: { contextLoader: DocumentLoader },
): Promise<DecodedCreate | undefined> {
  if (json.type !== "Create" || typeof json.id !== "string" || "proof" in json) return undefined;
  const object = json.object;
  if (!isJson(object) || typeof object.type !== "string" || !POST_TYPES.has(object.type)) return undefined;
  // A Note named by a poll's option is a vote: counted by the listeners, never stored as a post.
  if (typeof object.id !== "string" || object.name !== undefined) return undefined;
  const tags = listOf(object.tag);
  if (!tags.every(isJson) || !listOf(object.attachment).every(isJson)) return undefined;
  if (tags.some((tag) => tag.type === "Emoji" && !isJson(tag.icon))) return undefined;
  // Most of them need no JSON-LD processor at all (compact.ts); the rest are parsed by Fedify.
  return readCompactCreate(json) ?? parseCreate(json, loaders);
}

/** `decodeCreate` through Fedify's parse (the JSON's shape already checked there). */
export async function parseCreate(
  json: Json,
  loaders: { contextLoader: DocumentLoader },
): Promise<DecodedCreate | undefined> {
  const object = json.object as Json;
  const offline = { documentLoader: refuse, contextLoader: preloadedOnly(loaders.contextLoader) };
  try {
    // A Linked Data signature is not what was checked (the HTTP signature was): it is left out, as
    // Fedify's queue leaves it out before parsing.
    const { signature: _signature, ...unsigned } = json;
    const activity = await Activity.fromJsonLd(unsigned, offline);
    const id = activity.id?.href;
    if (!(activity instanceof Create) || !id || id !== URL.parse(String(json.id))?.href || !activity.actorId)
      return undefined;
    const post = await activity.getObject(offline);
    if (!isPost(post) || post instanceof Question || post.id?.href !== URL.parse(String(object.id))?.href)
      return undefined;
    return { activity: id, actor: activity.actorId.href, post: await decodePost(post, object, offline) };
  } catch {
    // Something this reading cannot take (a link to fetch after all, a malformed value): the
    // listeners' path reads it, or refuses it, as before.
    return undefined;
  }
}

/** Fedify's record that an activity was handled (its `kvPrefixes.activityIdempotence`, kept a day). */
const handledKey = (ctx: Ctx, activity: string) =>
  ["_fedify", "activityIdempotence", new URL(ctx.config.baseUrl).origin, activity] as const;
const HANDLED_FOR = Temporal.Duration.from({ days: 1 });

/** Stores the post of a decoded `Create` (the job). A refused one is logged and done with. */
export async function storeDecodedCreate(ctx: Ctx, create: DecodedCreate): Promise<void> {
  const kv = new DatabaseKvStore(ctx.db);
  const key = handledKey(ctx, create.activity);
  if ((await kv.get(key)) === true) return;
  try {
    const sender = await senderOf(ctx, URL.parse(create.actor), URL.parse(create.activity));
    const base = new URL(ctx.config.baseUrl);
    const read = { ctx, resolver: new Resolver(ctx), fedCtx: await instanceLoaders(ctx.federation, base) };
    await storeDecodedPost(read, create.post, sender);
  } catch (error) {
    const refused = error instanceof PostRefused ? new Refused(error.message) : error;
    if (!(refused instanceof Refused)) {
      // As the listeners' path logs it; the job is tried again.
      ctx.log.warn({ err: error, activity: create.activity }, "inbox: an activity could not be handled");
      throw error;
    }
    logRefused(ctx, { id: create.activity, type: "Create" }, refused);
  }
  await kv.set(key, true, { ttl: HANDLED_FOR });
}
