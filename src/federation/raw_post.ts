/**
 * What a remote post says that Fedify's parse drops (its vocabulary has no field for it), read
 * from the post's JSON as it was sent: each attachment's `blurhash` and `focalPoint` and the
 * post's `conversation` (reference/federation.md §3.1, §3.3). Keys are read the way Mastodon reads
 * them, by name (Akkoma defines no `blurhash` in its context, yet sends it), and also under the
 * compact or full IRIs a JSON-LD processor writes (`toot:blurhash`, `http://joinmastodon.org/ns#…`);
 * values as plain JSON or as JSON-LD value, list and node objects. The JSON is the one the
 * signature covered: the activity as received (when the post is embedded in it, with the
 * activity's origin) or the post as fetched from its id.
 */
import type { Activity, Object as ApObject } from "@fedify/vocab";

const TOOT = "http://joinmastodon.org/ns#";
const OSTATUS = "http://ostatus.org#";
const AS = "https://www.w3.org/ns/activitystreams#";

type Json = Record<string, unknown>;

/** What the JSON of one attachment adds to its Document. */
export interface RawMediaTerms {
  blurhash: string | null;
  focus: { x: number; y: number } | null;
}

/** What a post's JSON adds to what Fedify read. */
export interface RawPostTerms {
  /** Its `conversation` (Mastodon's name of its thread). */
  conversation: string | null;
  /** Its attachments' terms, by their URL (as `URL.href` writes it). */
  media: Map<string, RawMediaTerms>;
}

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** A property by its name, its `prefix:` form or its IRI. */
function property(node: Json, name: string, prefix: string, namespace: string): unknown {
  return node[name] ?? node[`${prefix}:${name}`] ?? node[`${namespace}${name}`];
}

/** One value: the first of an array, the value of a value object, the id of a node. */
function single(value: unknown): unknown {
  const first = Array.isArray(value) ? value[0] : value;
  if (!isJson(first)) return first;
  return first["@value"] ?? first["@id"] ?? first.id;
}

const text = (value: unknown): string | null => {
  const found = single(value);
  return typeof found === "string" && found !== "" ? found : null;
};

/** A list: a JSON array, a list object, or an expanded property holding one. */
function list(value: unknown): unknown[] | null {
  const holder = Array.isArray(value) && value.length === 1 && isJson(value[0]) ? value[0] : value;
  if (isJson(holder) && Array.isArray(holder["@list"])) return holder["@list"];
  return Array.isArray(value) ? value : null;
}

function focusOf(value: unknown): RawMediaTerms["focus"] {
  const point = list(value)?.map(single);
  if (!point || point.length !== 2 || !point.every((v) => typeof v === "number")) return null;
  const [x, y] = point as [number, number];
  return { x, y };
}

/** The URL of an attachment as its `url` gives it (a string, a Link, a list of either). */
function urlOf(value: unknown): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === "string") return first;
  if (!isJson(first)) return null;
  const href = first.href ?? first[`${AS}href`] ?? first["@id"] ?? first.id;
  return text(href);
}

/** What `raw`, a post's JSON, adds to what Fedify read of it. */
export function readRawPost(raw: unknown): RawPostTerms {
  const media = new Map<string, RawMediaTerms>();
  if (!isJson(raw)) return { conversation: null, media };
  const attachments = property(raw, "attachment", "as", AS);
  for (const item of Array.isArray(attachments) ? attachments : [attachments]) {
    if (!isJson(item)) continue;
    const url = urlOf(item.url ?? item[`${AS}url`]);
    if (!url) continue;
    media.set(URL.parse(url)?.href ?? url, {
      blurhash: text(property(item, "blurhash", "toot", TOOT)),
      focus: focusOf(property(item, "focalPoint", "toot", TOOT)),
    });
  }
  return { conversation: text(property(raw, "conversation", "ostatus", OSTATUS)), media };
}

const idOf = (id: unknown) => (typeof id === "string" ? (URL.parse(id) ?? undefined) : undefined);

/**
 * The JSON of `post` as its sender signed it: the object embedded in `activity` (as received)
 * when it is this post and shares the activity's origin (Fedify uses an embedded object only
 * then, and fetches it otherwise), else the post's own document (as fetched from its id).
 */
export async function rawPostOf(post: ApObject, activity?: Activity): Promise<unknown> {
  const received = activity ? await activity.toJsonLd() : undefined;
  if (isJson(received)) {
    const object =
      Array.isArray(received.object) && received.object.length === 1 ? received.object[0] : received.object;
    const sameOrigin = idOf(received.id ?? received["@id"])?.origin === post.id?.origin;
    if (isJson(object) && sameOrigin && idOf(object.id ?? object["@id"])?.href === post.id?.href) return object;
  }
  return post.toJsonLd();
}
