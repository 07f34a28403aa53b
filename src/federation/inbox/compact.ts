/**
 * A `Create` of a post read from its JSON by key, the way Mastodon reads activities, when its
 * JSON-LD context makes every key read here mean what ActivityStreams says: the vocabulary's
 * context, other contexts Fedify carries that define none of these keys, and inline definitions
 * of other terms (Mastodon's `sensitive`, `Hashtag`, `Emoji`, `toot:`…). Then JSON-LD expansion
 * would give each key exactly its ActivityStreams meaning, so reading the keys gives what Fedify's
 * parse gives (`note_rows.ts` `decodePost`; a test holds the two readings equal on the recorded
 * activities of each server), for a tenth of the CPU: Fedify's parse was most of what an inbox
 * POST cost the web process.
 *
 * Anything this cannot read with certainty is answered with undefined and read by Fedify instead:
 * another context, a definition of a key read here, a keyword (`@language`, `@vocab`…), a context
 * or an IRI-shaped key inside the post, values of unexpected shapes, links to fetch.
 */
import { preloadedContexts } from "@fedify/vocab-runtime";
import type { RemoteEmoji } from "../../services/emoji/remote.ts";
import type { RemoteMedia } from "../../services/statuses/remote.ts";
import type { MediaType } from "../../db/schema.ts";
import { readRawPost, type RawPostTerms } from "../raw_post.ts";
import type { DecodedCreate } from "./decoded.ts";

type Json = Record<string, unknown>;

const AS_CONTEXT = "https://www.w3.org/ns/activitystreams";
const AS = "https://www.w3.org/ns/activitystreams#";
const TOOT = "http://joinmastodon.org/ns#";

/** Every key read below, and the types it tells apart: no context but ActivityStreams' may define them. */
const READ_TERMS = new Set([
  "id",
  "type",
  "actor",
  "object",
  "content",
  "contentMap",
  "summary",
  "summaryMap",
  "name",
  "nameMap",
  "to",
  "cc",
  "tag",
  "attachment",
  "url",
  "href",
  "icon",
  "published",
  "updated",
  "inReplyTo",
  "attributedTo",
  "mediaType",
  "width",
  "height",
  "context",
  "Create",
  "Note",
  "Article",
  "Page",
  "Mention",
  "Link",
  "Document",
  "Image",
  "Video",
  "Audio",
  "as",
]);

/** Terms read only when the sender's context defines them so (they are not ActivityStreams' own). */
const OWN_TERMS: Record<string, string> = {
  sensitive: `${AS}sensitive`,
  Hashtag: `${AS}Hashtag`,
  Emoji: `${TOOT}Emoji`,
};

export const isJson = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The keyword aliases every context gives (the security vocabulary's too): they change nothing. */
const ALIASES: Record<string, string> = { id: "@id", type: "@type" };

/** Keywords that change how every key is read. */
const GLOBAL_KEYWORDS = new Set(["@vocab", "@language", "@base", "@direction", "@import"]);

/**
 * Whether a context document defines none of the keys read here (the usual aliases aside), none of
 * the terms read only when the sender defines them, and no keyword that changes every key.
 */
function definesNoReadTerm(document: unknown): boolean {
  const context = isJson(document) ? document["@context"] : undefined;
  const parts = Array.isArray(context) ? context : [context];
  return parts.every(
    (part) =>
      isJson(part) &&
      Object.entries(part).every(
        ([term, definition]) =>
          (!READ_TERMS.has(term) || ALIASES[term] === definition) && !(term in OWN_TERMS) && !GLOBAL_KEYWORDS.has(term),
      ),
  );
}

/** Contexts Fedify carries that leave the keys read here alone (the security vocabulary, GoToSocial's…). */
const HARMLESS_CONTEXTS = new Set(
  Object.entries(preloadedContexts)
    .filter(([url, document]) => url !== AS_CONTEXT && definesNoReadTerm(document))
    .map(([url]) => url),
);

/** What a context says of the terms read here: undefined when it cannot be read with certainty. */
function readContext(context: unknown): Set<string> | undefined {
  const parts = Array.isArray(context) ? context : [context];
  let vocabulary = false;
  const prefixes: Record<string, string> = { as: AS };
  const definitions: Record<string, unknown> = {};
  for (const part of parts) {
    if (part === AS_CONTEXT) vocabulary = true;
    else if (typeof part === "string") {
      if (!HARMLESS_CONTEXTS.has(part)) return undefined;
    } else if (isJson(part)) {
      for (const [term, definition] of Object.entries(part)) {
        if (term.startsWith("@") || READ_TERMS.has(term)) return undefined;
        if (typeof definition === "string" && /^https?:\/\//.test(definition) && /[#/]$/.test(definition))
          prefixes[term] = definition;
        definitions[term] = definition;
      }
    } else return undefined;
  }
  if (!vocabulary) return undefined;
  const defined = new Set<string>();
  for (const [term, iri] of Object.entries(OWN_TERMS)) {
    if (!(term in definitions)) continue;
    // Defined otherwise than as a plain IRI or a prefixed name of the expected one: not read here.
    const definition = definitions[term];
    if (typeof definition !== "string") return undefined;
    const colon = definition.indexOf(":");
    const prefix = colon > 0 ? prefixes[definition.slice(0, colon)] : undefined;
    const expanded = prefix && !definition.startsWith("http") ? prefix + definition.slice(colon + 1) : definition;
    if (expanded !== iri) return undefined;
    defined.add(term);
  }
  return defined;
}

/** No key of `node` is an IRI or a keyword (so it carries no context of its own), `@context` aside at the top. */
const plainKeys = (node: Json, top = false) =>
  Object.keys(node).every((key) => (top && key === "@context") || (!key.includes(":") && !key.startsWith("@")));

export const listOf = (value: unknown): unknown[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];

class Unreadable extends Error {}

/** An absolute http(s) URL, as `URL.href` writes it. */
function iri(value: unknown): string {
  if (typeof value !== "string") throw new Unreadable();
  const url = URL.parse(value);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) throw new Unreadable();
  return url.href;
}

/** An IRI given as a string or as a node with an id. */
const idOf = (value: unknown) => iri(isJson(value) ? value.id : value);

const optionalIri = (value: unknown) => (value === undefined || value === null ? null : idOf(value));

/** The first of a property's values, as Fedify's accessor answers (undefined: none). */
function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : (value ?? undefined);
}

/** A natural-language property: the plain value, else the first of its map by language (expansion order). */
function text(node: Json, name: string): string | null {
  const plain = first(node[name]);
  if (plain !== undefined) {
    if (typeof plain !== "string") throw new Unreadable();
    return plain;
  }
  const map = node[`${name}Map`];
  if (map === undefined || map === null) return null;
  if (!isJson(map)) throw new Unreadable();
  const languages = Object.keys(map).sort();
  for (const language of languages) if (typeof map[language] !== "string") throw new Unreadable();
  return languages.length > 0 ? (map[languages[0]!] as string) : null;
}

/** The language of a post's content, as `note_rows.ts` reads it from Fedify's language strings. */
function languageOf(node: Json): string | null {
  const map = node.contentMap;
  if (map === undefined || map === null) return null;
  if (!isJson(map)) throw new Unreadable();
  for (const tag of Object.keys(map).sort()) {
    let language: string;
    try {
      language = new Intl.Locale(tag).language.toLowerCase();
    } catch {
      throw new Unreadable();
    }
    if (/^[a-z]{2,3}$/.test(language) && language !== "und") return language;
  }
  return null;
}

/** RFC 3339 with its offset, as Temporal reads `xsd:dateTime` (no leap second, no hour 24). */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

function instant(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const parts = typeof value === "string" ? DATE_TIME.exec(value) : null;
  if (!parts) throw new Unreadable();
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  // A day the month does not have (Date would roll it over into the next month).
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (month < 1 || month > 12 || calendar.getUTCDate() !== day) throw new Unreadable();
  const date = new Date(value as string);
  if (Number.isNaN(date.getTime())) throw new Unreadable();
  return date.toISOString();
}

function nonNegative(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new Unreadable();
  return value;
}

/** A `url`: a string or a Link; the first of several. */
function urlOf(value: unknown): string | null {
  const found = first(value);
  if (found === undefined || found === null) return null;
  if (typeof found === "string") return iri(found);
  if (isJson(found) && found.type === "Link" && plainKeys(found)) return iri(found.href);
  throw new Unreadable();
}

const MEDIA_TYPES = new Set(["Document", "Image", "Video", "Audio"]);

/** As `note_rows.ts` tells media apart: by the attachment's type, then its MIME type. */
function mediaTypeOf(type: string, mime: string): MediaType {
  if (type === "Video" || mime.startsWith("video/")) return "video";
  if (type === "Audio" || mime.startsWith("audio/")) return "audio";
  if (type === "Image" || mime.startsWith("image/")) return "image";
  return "unknown";
}

function readTags(note: Json, defined: Set<string>) {
  const mentions: string[] = [];
  const tags: string[] = [];
  const emojis: RemoteEmoji[] = [];
  for (const tag of listOf(note.tag)) {
    if (!isJson(tag) || !plainKeys(tag) || typeof tag.type !== "string") throw new Unreadable();
    if (tag.type === "Mention") {
      const href = optionalIri(tag.href);
      if (href) mentions.push(href);
    } else if (tag.type === "Hashtag") {
      if (!defined.has("Hashtag")) throw new Unreadable();
      const name = text(tag, "name")?.replace(/^#/, "").trim();
      if (name) tags.push(name);
    } else if (tag.type === "Emoji") {
      if (!defined.has("Emoji")) throw new Unreadable();
      const shortcode = text(tag, "name")?.replace(/^:|:$/g, "");
      const icon = first(tag.icon);
      if (!isJson(icon) || !plainKeys(icon)) throw new Unreadable();
      const url = icon.type === "Image" ? urlOf(icon.url) : null;
      if (shortcode && url) emojis.push({ shortcode, uri: optionalIri(tag.id), imageUrl: url });
    } else throw new Unreadable(); // Another kind of tag: Fedify's reading decides what it is.
  }
  return { mentions, tags, emojis };
}

/** The post's attachments; `terms` is what `raw_post.ts` read of them (blurhash, focal point). */
function readMedia(note: Json, terms: RawPostTerms["media"]): RemoteMedia[] {
  const media: RemoteMedia[] = [];
  for (const item of listOf(note.attachment)) {
    if (!isJson(item) || !plainKeys(item) || typeof item.type !== "string" || !MEDIA_TYPES.has(item.type))
      throw new Unreadable();
    const url = urlOf(item.url);
    if (!url) continue;
    const mime = item.mediaType ?? "";
    if (typeof mime !== "string") throw new Unreadable();
    const found = terms.get(url);
    media.push({
      url,
      type: mediaTypeOf(item.type, mime),
      description: text(item, "name"),
      blurhash: found?.blurhash ?? null,
      width: nonNegative(item.width),
      height: nonNegative(item.height),
      focus: found?.focus ?? null,
    });
  }
  return media;
}

/** The kinds of post a `Create` read on arrival may carry (a Question, a poll, is the listeners'). */
export const POST_TYPES = new Set(["Note", "Article", "Page"]);

/**
 * The `Create` in `json` with its post, read by key; undefined when it cannot be read with
 * certainty this way (see above).
 */
export function readCompactCreate(json: Json): DecodedCreate | undefined {
  const defined = readContext(json["@context"]);
  if (!defined || json.type !== "Create" || !plainKeys(json, true)) return undefined;
  const note = json.object;
  if (!isJson(note) || !plainKeys(note) || typeof note.type !== "string" || !POST_TYPES.has(note.type))
    return undefined;
  // A vote (a Note named by a poll's option) and posts that are polls are the listeners'.
  if (note.name !== undefined || note.nameMap !== undefined) return undefined;
  try {
    const uri = iri(note.id);
    const { mentions, tags, emojis } = readTags(note, defined);
    // `as:Public` is a compact IRI the vocabulary's context expands.
    const audience = (value: unknown) => listOf(value).map((to) => (to === "as:Public" ? `${AS}Public` : idOf(to)));
    const tos = audience(note.to);
    const ccs = audience(note.cc);
    const sensitive = defined.has("sensitive") ? first(note.sensitive) : undefined;
    if (sensitive !== undefined && typeof sensitive !== "boolean") throw new Unreadable();
    const raw = readRawPost(note);
    return {
      activity: iri(json.id),
      actor: idOf(first(json.actor)),
      post: {
        uri,
        url: urlOf(note.url) ?? uri,
        attributedTo: note.attributedTo === undefined ? null : idOf(first(note.attributedTo)),
        content: text(note, "content") ?? "",
        spoilerText: text(note, "summary") ?? "",
        sensitive: sensitive === true,
        language: languageOf(note),
        to: tos,
        cc: ccs,
        mentions,
        tags,
        emojis,
        media: readMedia(note, raw.media),
        inReplyTo: optionalIri(first(note.inReplyTo)),
        published: instant(note.published),
        editedAt: instant(note.updated),
        poll: null,
        conversationUris: [raw.conversation, ...listOf(note.context).map(idOf)].filter(
          (uri): uri is string => uri !== null,
        ),
      },
    };
  } catch (error) {
    if (error instanceof Unreadable) return undefined;
    throw error;
  }
}
