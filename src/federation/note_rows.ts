/**
 * A remote Note (or Article, Page, Question…) → what services/statuses/remote.ts stores, read the
 * way Mastodon reads posts of Mastodon, GoToSocial, Misskey and Akkoma: the content in its
 * language, the warning, the audience (→ visibility), the post it replies to (fetched when this
 * server lacks it, a few levels up), the accounts it mentions (fetched when unknown), hashtags and
 * attachments. The Note must be on its author's server and attributed to its author.
 */
import type { Context, DocumentLoader } from "@fedify/fedify";
import {
  Article,
  Audio,
  Document,
  Emoji,
  Hashtag,
  Image,
  Link,
  Mention,
  Note,
  Page,
  PUBLIC_COLLECTION,
  Question,
  Video,
  type Activity,
  type Actor,
  type Object as ApObject,
} from "@fedify/vocab";
import type { Ctx } from "../context.ts";
import type { AccountRow, MediaType, StatusRow } from "../db/schema.ts";
import {
  statusByUri,
  storeRemoteStatus,
  wasDeleted,
  type RemoteMedia,
  type RemotePoll,
  type RemoteStatusData,
  type Visibility,
} from "../services/statuses/remote.ts";
import { storeRemoteEmojis, type RemoteEmoji } from "../services/emoji/remote.ts";
import { rawPostOf, readRawPost } from "./raw_post.ts";
import type { Resolver } from "./resolver.ts";

/** The objects stored as statuses. */
export type PostObject = Note | Article | Page | Question;
export const isPost = (object: unknown): object is PostObject =>
  object instanceof Note || object instanceof Article || object instanceof Page || object instanceof Question;

/** The post cannot be stored as it is; the reason is logged by the caller. */
export class PostRefused extends Error {
  override name = "PostRefused";
}

/** How many ancestors of a post are fetched to complete its thread. */
const THREAD_DEPTH = 5;
/** How many unknown mentioned accounts one post may make us fetch. */
const MENTION_FETCHES = 10;

const PUBLIC = new Set([PUBLIC_COLLECTION.href, "as:Public", "Public"]);

export function visibilityOf(object: ApObject, author: Pick<AccountRow, "followers_url">): Visibility {
  return visibilityFrom(
    object.toIds.map((url) => url.href),
    object.ccIds.map((url) => url.href),
    author,
  );
}

/** A post's visibility from its `to` and `cc`. */
function visibilityFrom(tos: string[], ccs: string[], author: Pick<AccountRow, "followers_url">): Visibility {
  if (tos.some((href) => PUBLIC.has(href))) return "public";
  if (ccs.some((href) => PUBLIC.has(href))) return "unlisted";
  if (author.followers_url && [...tos, ...ccs].includes(author.followers_url)) return "private";
  return "direct";
}

function mediaTypeOf(item: Document | Image | Video | Audio, mime: string): MediaType {
  if (item instanceof Video || mime.startsWith("video/")) return "video";
  if (item instanceof Audio || mime.startsWith("audio/")) return "audio";
  if (item instanceof Image || mime.startsWith("image/")) return "image";
  return "unknown";
}

function hrefOf(value: URL | Link | null | undefined): string | null {
  if (!value) return null;
  return value instanceof URL ? value.href : (value.href?.href ?? null);
}

function languageOf(post: PostObject): string | null {
  for (const content of post.contents)
    if (typeof content === "object" && "locale" in content) {
      // `und` (Akkoma's "undetermined") and malformed tags have no language.
      const language = content.locale?.language?.toLowerCase() ?? "";
      if (/^[a-z]{2,3}$/.test(language) && language !== "und") return language;
    }
  return null;
}

export interface ReadContext {
  ctx: Ctx;
  resolver: Resolver;
  /** Whose loaders fetch what a post only links to. */
  fedCtx: Pick<Context<void>, "documentLoader" | "contextLoader">;
}

/**
 * What a post says of itself, read without looking anything up in the database: plain data, so it
 * can be read in one process (the web process that received it) and stored in another (a job).
 * What it names by URI (the accounts it mentions, the post it replies to) is resolved when stored.
 */
export interface DecodedPost {
  uri: string;
  url: string;
  attributedTo: string | null;
  /** HTML, not yet sanitized. */
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  to: string[];
  cc: string[];
  /** The accounts its Mention tags name, in order. */
  mentions: string[];
  /** Hashtag names, without `#`. */
  tags: string[];
  emojis: RemoteEmoji[];
  media: RemoteMedia[];
  inReplyTo: string | null;
  /** ISO 8601; null when it does not say. */
  published: string | null;
  editedAt: string | null;
  poll: (Omit<RemotePoll, "expiresAt"> & { expiresAt: string | null }) | null;
  /** How other servers name its thread (`conversation`, then `context`), the preferred first. */
  conversationUris: string[];
}

type Loaders = { documentLoader: DocumentLoader; contextLoader: DocumentLoader };

const isoOf = (instant: { epochMilliseconds: number } | null | undefined) =>
  instant ? new Date(instant.epochMilliseconds).toISOString() : null;

/**
 * Reads `post` into plain data. `raw` is its JSON as its sender signed it (what Fedify's parse
 * drops is read from there); what the post gives only by URL (a tag, an attachment) is fetched
 * with `loaders`, which may refuse: the error is thrown.
 */
export async function decodePost(post: PostObject, raw: unknown, loaders: Loaders): Promise<DecodedPost> {
  const id = post.id;
  if (!id) throw new PostRefused("the post has no id");
  const terms = readRawPost(raw);
  const mentions: string[] = [];
  const tags: string[] = [];
  const emojis: RemoteEmoji[] = [];
  for await (const tag of post.getTags(loaders)) {
    if (tag instanceof Mention && tag.href) mentions.push(tag.href.href);
    else if (tag instanceof Hashtag && tag.name) {
      const name = tag.name.toString().replace(/^#/, "").trim();
      if (name) tags.push(name);
    } else if (tag instanceof Emoji) {
      const emoji = await emojiOf(tag);
      if (emoji) emojis.push(emoji);
    }
  }
  const media: RemoteMedia[] = [];
  for await (const item of post.getAttachments(loaders)) {
    if (!(item instanceof Document || item instanceof Image || item instanceof Video || item instanceof Audio))
      continue;
    const url = item.url instanceof URL || item.url instanceof Link ? hrefOf(item.url) : null;
    if (!url || !/^https?:\/\//.test(url)) continue;
    const mime = item.mediaType ?? "";
    const found = terms.media.get(url);
    media.push({
      url,
      type: mediaTypeOf(item, mime),
      description: item.name?.toString() ?? null,
      blurhash: found?.blurhash ?? null,
      width: item.width ?? null,
      height: item.height ?? null,
      focus: found?.focus ?? null,
    });
  }
  const poll = post instanceof Question ? await pollOf(post, { ...loaders, suppressError: true }) : null;
  return {
    uri: id.href,
    url: hrefOf(post.url) ?? id.href,
    attributedTo: post.attributionId?.href ?? null,
    content: post.content?.toString() ?? "",
    spoilerText: post.summary?.toString() ?? "",
    sensitive: post.sensitive === true,
    language: languageOf(post),
    to: post.toIds.map((url) => url.href),
    cc: post.ccIds.map((url) => url.href),
    mentions,
    tags,
    emojis,
    media,
    inReplyTo: post.replyTargetId?.href ?? null,
    published: isoOf(post.published),
    editedAt: isoOf(post.updated),
    poll: poll && { ...poll, expiresAt: poll.expiresAt?.toISOString() ?? null },
    // Mastodon names the thread by `conversation`, Akkoma and FEP-7888 by `context`.
    conversationUris: [terms.conversation, ...post.contextIds.map((uri) => uri.href)].filter(
      (uri): uri is string => uri !== null,
    ),
  };
}

/**
 * Reads `post` of `author` into a status's fields (fetching the accounts and parent it needs);
 * `activity` is the one it arrived in, whose JSON holds what Fedify's parse of the post dropped.
 */
async function readPost(
  read: ReadContext,
  post: PostObject,
  author: AccountRow,
  depth: number,
  activity?: Activity,
): Promise<RemoteStatusData> {
  const { fedCtx } = read;
  const loaders = {
    documentLoader: fedCtx.documentLoader,
    contextLoader: fedCtx.contextLoader,
    suppressError: true as const,
  };
  // Read first: Fedify forgets a post's JSON once it fetches a property given only by its URL.
  const raw = await rawPostOf(post, activity);
  return resolvePost(read, await decodePost(post, raw, loaders), author, depth);
}

/** A decoded post's fields, with what it names by URI looked up (fetched when unknown, within bounds). */
async function resolvePost(
  read: ReadContext,
  post: DecodedPost,
  author: AccountRow,
  depth: number,
): Promise<RemoteStatusData> {
  const { resolver } = read;
  const mentioned: AccountRow[] = [];
  let fetches = 0;
  for (const uri of post.mentions) {
    const known = await resolver.knownAccount(uri);
    if (known) mentioned.push(known);
    else if (fetches++ < MENTION_FETCHES) {
      const fetched = await resolver.accountByUri(uri);
      if (fetched) mentioned.push(fetched);
    }
  }
  if (post.emojis.length > 0 && author.domain) await storeRemoteEmojis(read.ctx, author.domain, post.emojis);
  const parentUri = post.inReplyTo ? URL.parse(post.inReplyTo) : null;
  const parent = parentUri ? await parentOf(read, parentUri, depth) : null;
  return {
    uri: post.uri,
    url: post.url,
    content: post.content,
    spoilerText: post.spoilerText,
    sensitive: post.sensitive,
    language: post.language,
    visibility: visibilityFrom(post.to, post.cc, author),
    parent,
    mentioned,
    tags: post.tags,
    media: post.media,
    published: post.published ? new Date(post.published) : new Date(),
    editedAt: post.editedAt ? new Date(post.editedAt) : null,
    poll: post.poll && { ...post.poll, expiresAt: post.poll.expiresAt ? new Date(post.poll.expiresAt) : null },
    conversationUris: post.conversationUris,
  };
}

/** A Question's poll: its options (exclusive: one choice; inclusive: several) with their votes. */
async function pollOf(
  question: Question,
  loaders: { documentLoader: DocumentLoader; contextLoader: DocumentLoader; suppressError: true },
): Promise<RemotePoll | null> {
  const multiple = question.inclusiveOptionIds.length > 0 || (await hasAny(question.getInclusiveOptions(loaders)));
  const options: string[] = [];
  const tallies: number[] = [];
  for await (const option of multiple ? question.getInclusiveOptions(loaders) : question.getExclusiveOptions(loaders)) {
    const name = option.name?.toString().trim();
    if (!name) continue;
    const replies = await option.getReplies(loaders).catch(() => null);
    options.push(name);
    tallies.push(replies?.totalItems ?? 0);
  }
  if (options.length === 0) return null;
  const end =
    question.endTime ??
    (question.closed instanceof Object && "epochMilliseconds" in question.closed ? question.closed : null);
  return {
    options,
    tallies,
    multiple,
    expiresAt: end ? new Date(end.epochMilliseconds) : null,
    votersCount: question.voters,
  };
}

async function hasAny(items: AsyncIterable<unknown>): Promise<boolean> {
  for await (const _ of items) return true;
  return false;
}

/** A custom emoji as an Emoji tag names it (`:shortcode:` and its image). */
export async function emojiOf(tag: Emoji): Promise<RemoteEmoji | undefined> {
  const shortcode = tag.name?.toString().replace(/^:|:$/g, "");
  const icon = await tag.getIcon().catch(() => null);
  const url =
    icon instanceof Image ? hrefOf(icon.url instanceof URL || icon.url instanceof Link ? icon.url : null) : null;
  if (!shortcode || !url) return undefined;
  return { shortcode, uri: tag.id?.href ?? null, imageUrl: url };
}

/** The custom emoji an actor's name and bio use. */
export async function actorEmojis(
  actor: Actor,
  loaders: { documentLoader: DocumentLoader; contextLoader: DocumentLoader },
) {
  const emojis: RemoteEmoji[] = [];
  for await (const tag of actor.getTags({ ...loaders, suppressError: true }))
    if (tag instanceof Emoji) {
      const emoji = await emojiOf(tag);
      if (emoji) emojis.push(emoji);
    }
  return emojis;
}

/** The stored parent of a reply: known, or fetched (and stored) while `depth` allows. */
async function parentOf(read: ReadContext, uri: URL, depth: number): Promise<StatusRow | null> {
  const known = await statusByUri(read.ctx, uri.href);
  if (known) return known;
  if (depth <= 0) return null;
  return (await fetchPost(read, uri, depth - 1)) ?? null;
}

/** Checks that `post` may be stored as a post of `author`: its id on the author's server, attributed to them. */
export function checkOrigin(post: PostObject, author: AccountRow): void {
  if (!post.id) throw new PostRefused("the post has no id");
  checkDecodedOrigin({ uri: post.id.href, attributedTo: post.attributionId?.href ?? null }, author);
}

function checkDecodedOrigin(post: Pick<DecodedPost, "uri" | "attributedTo">, author: AccountRow): void {
  const host = URL.parse(post.uri)?.host.toLowerCase();
  if (!host || host !== new URL(author.uri).host.toLowerCase())
    throw new PostRefused(`${post.uri} is not on its author's server`);
  if (post.attributedTo !== author.uri) throw new PostRefused(`${post.uri} is not attributed to ${author.uri}`);
}

export interface StoreOptions {
  /** How many missing ancestors may still be fetched. */
  depth?: number;
  /** The activity the post arrived in (its JSON as received holds what Fedify dropped). */
  activity?: Activity;
}

/** Stores `post` (arrived in an activity of `author`, already checked). */
export async function storePost(read: ReadContext, post: PostObject, author: AccountRow, options: StoreOptions = {}) {
  checkOrigin(post, author);
  if (await wasDeleted(read.ctx, post.id!.href)) throw new PostRefused(`${post.id!.href} was deleted`);
  const data = await readPost(read, post, author, options.depth ?? THREAD_DEPTH, options.activity);
  return storeRemoteStatus(read.ctx, author, data);
}

/** Stores a decoded post (arrived in an activity of `author`, whose signature was checked). */
export async function storeDecodedPost(read: ReadContext, post: DecodedPost, author: AccountRow) {
  checkDecodedOrigin(post, author);
  if (await wasDeleted(read.ctx, post.uri)) throw new PostRefused(`${post.uri} was deleted`);
  return storeRemoteStatus(read.ctx, author, await resolvePost(read, post, author, THREAD_DEPTH));
}

/** The fields of an updated `post` (for services/statuses/remote.ts `updateRemoteStatus`). */
export async function postData(
  read: ReadContext,
  post: PostObject,
  author: AccountRow,
  activity?: Activity,
): Promise<RemoteStatusData> {
  checkOrigin(post, author);
  return readPost(read, post, author, 0, activity);
}

/** Fetches the post at `uri` (signed by the instance actor) with its author, and stores it. */
export async function fetchPost(read: ReadContext, uri: URL, depth = THREAD_DEPTH): Promise<StatusRow | undefined> {
  let object: unknown;
  try {
    object = await read.resolver.fetchObject(uri);
  } catch (error) {
    read.ctx.log.info({ err: error, url: uri.href }, "could not fetch a remote post");
    return undefined;
  }
  if (!isPost(object) || object.id?.href !== uri.href || !object.attributionId) return undefined;
  const author = await read.resolver.accountByUri(object.attributionId.href);
  if (!author || author.domain === null || author.suspended_at) return undefined;
  try {
    return await storePost(read, object, author, { depth });
  } catch (error) {
    if (error instanceof PostRefused) return undefined;
    throw error;
  }
}
