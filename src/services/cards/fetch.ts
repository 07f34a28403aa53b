/**
 * Link preview cards (Mastodon's FetchLinkCardService): the first link of a public or unlisted
 * status is fetched, read for OpenGraph and oEmbed, and stored as a preview card with a small
 * thumbnail; cards are keyed by URL and shared by every status that links there.
 *
 * Failures and the job queue: a link that cannot give a card — refused destination, 4xx, not
 * HTML, too large, too many redirects, no title — leaves the status without a card and returns
 * normally (logged at info), so the job is done. A failure that may pass — timeout, connection
 * error, 5xx or 429 from the page — throws when there is no earlier card to fall back on, so the
 * job is retried with backoff. Problems with the oEmbed endpoint or the image only cost the card
 * its embed or its thumbnail.
 */
import { encode as encodeBlurhash } from "blurhash";
import { Parser } from "htmlparser2";
import type { Kysely } from "kysely";
import sharp from "sharp";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { Database, PreviewCardRow, StatusRow } from "../../db/schema.ts";
import { randomFileName } from "../../media/storage.ts";
import { extractEntities } from "../../text/entities.ts";
import { userAgent } from "../http/outbound.ts";
import { mediaTypeOf, safeFetch, SafeFetchError } from "../http/safe_fetch.ts";
import { parseOEmbed, type OEmbed } from "./oembed.ts";
import { decodeHtml, parsePage, URL_LIMIT, type PageDetails } from "./parse.ts";

/** Cards older than this are fetched again when a new status links to them. */
export const CARD_REFRESH_AFTER_MS = 14 * 24 * 60 * 60 * 1000;
const HTML_LIMIT = 1024 * 1024;
const IMAGE_LIMIT = 8 * 1024 * 1024;
const THUMBNAIL_SIZE = 400;
const MAX_INPUT_PIXELS = 8000 * 8000;
const IMAGE_FORMATS: Record<string, string> = { jpeg: "jpg", png: "png", gif: "gif", webp: "webp", heif: "avif" };

/** The page answered with a status that may change soon (5xx, 429, 408); worth retrying. */
export class CardSourceUnavailable extends Error {
  override name = "CardSourceUnavailable";
  readonly status: number;
  constructor(url: string, status: number) {
    super(`${url} answered ${status}`);
    this.status = status;
  }
}

function isTransient(error: unknown): boolean {
  return error instanceof CardSourceUnavailable || (error instanceof SafeFetchError && error.transient);
}

function isLocalHost(ctx: Ctx, url: URL): boolean {
  const host = url.host.toLowerCase();
  return host === ctx.config.localDomain || host === ctx.config.webDomain;
}

/** A candidate link as stored on a card: http(s), not this server, not absurdly long. */
function cardableUrl(ctx: Ctx, candidate: string): string | undefined {
  try {
    const url = new URL(candidate);
    if (
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      !url.hostname ||
      isLocalHost(ctx, url) ||
      url.href.length > URL_LIMIT
    )
      return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

/** Links of a remote status's HTML, without hashtag and mention links (by microformat class or target). */
function contentLinks(html: string, mentionUrls: ReadonlySet<string>): string[] {
  const links: string[] = [];
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name !== "a" || !attributes.href) return;
      const rel = (attributes.rel ?? "").toLowerCase().split(/\s+/);
      const classes = (attributes.class ?? "").split(/\s+/);
      if (
        rel.includes("tag") ||
        classes.some((c) => c === "mention" || c === "hashtag" || c === "u-url" || c === "h-card") ||
        mentionUrls.has(attributes.href)
      )
        return;
      links.push(attributes.href);
    },
  });
  parser.write(html);
  parser.end();
  return links;
}

/**
 * The link a status's card is made for: the first http(s) link that is not a mention, a hashtag
 * or a page of this server — from the text of a local status, from the HTML of a remote one.
 */
export async function cardLinkOf(ctx: Ctx, status: StatusRow): Promise<string | undefined> {
  let candidates: string[];
  if (status.local) {
    candidates = extractEntities(status.text).flatMap((e) => (e.kind === "url" ? [e.url] : []));
  } else {
    const mentioned = await ctx.db.kysely
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .select(["accounts.uri", "accounts.url"])
      .where("mentions.status_id", "=", status.id)
      .execute();
    candidates = contentLinks(status.content, new Set(mentioned.flatMap((a) => [a.uri, a.url ?? ""])));
  }
  for (const candidate of candidates) {
    const url = cardableUrl(ctx, candidate);
    if (url) return url;
  }
  return undefined;
}

/** A card already made for `url`: stored under it, or reached from it by an earlier status (redirects, canonical URLs). */
async function knownCard(ctx: Ctx, url: string): Promise<PreviewCardRow | undefined> {
  const db = ctx.db.kysely;
  const direct = await db.selectFrom("preview_cards").selectAll().where("url", "=", url).executeTakeFirst();
  if (direct) return direct;
  return db
    .selectFrom("preview_cards_statuses")
    .innerJoin("preview_cards", "preview_cards.id", "preview_cards_statuses.preview_card_id")
    .selectAll("preview_cards")
    .where("preview_cards_statuses.url", "=", url)
    .orderBy("preview_cards.updated_at", "desc")
    .limit(1)
    .executeTakeFirst();
}

interface Thumbnail {
  data: Buffer;
  extension: string;
  width: number;
  height: number;
  blurhash: string;
}

/** The first frame, fitted into 400×400 (never enlarged), re-encoded (which drops metadata), with its blurhash. */
async function makeThumbnail(data: Buffer): Promise<Thumbnail | undefined> {
  const metadata = await sharp(data, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  const extension = IMAGE_FORMATS[metadata.format ?? ""];
  if (!extension || !metadata.width || !metadata.height) return undefined;
  const alpha = metadata.hasAlpha === true;
  const resized = sharp(data, { animated: false, limitInputPixels: MAX_INPUT_PIXELS })
    .rotate()
    .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: "inside", withoutEnlargement: true });
  const output = await (alpha ? resized.png() : resized.jpeg({ quality: 85, mozjpeg: true })).toBuffer({
    resolveWithObject: true,
  });
  const pixels = await sharp(output.data)
    .resize(32, 32, { fit: "inside" })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    data: output.data,
    extension: alpha ? "png" : "jpg",
    width: output.info.width,
    height: output.info.height,
    blurhash: encodeBlurhash(new Uint8ClampedArray(pixels.data), pixels.info.width, pixels.info.height, 4, 3),
  };
}

async function downloadThumbnail(ctx: Ctx, imageUrl: string): Promise<Thumbnail | undefined> {
  try {
    const response = await safeFetch(ctx, imageUrl, { maxBytes: IMAGE_LIMIT, headers: { accept: "image/*" } });
    if (response.status !== 200) {
      ctx.log.debug({ url: imageUrl, status: response.status }, "preview card image not fetched");
      return undefined;
    }
    return await makeThumbnail(response.body);
  } catch (error) {
    ctx.log.debug({ url: imageUrl, err: error }, "preview card image not usable");
    return undefined;
  }
}

async function fetchOEmbed(ctx: Ctx, endpoint: string): Promise<OEmbed | undefined> {
  try {
    const response = await safeFetch(ctx, endpoint, { maxBytes: HTML_LIMIT, headers: { accept: "application/json" } });
    return response.status === 200 ? parseOEmbed(response.body, response.url) : undefined;
  } catch (error) {
    ctx.log.debug({ url: endpoint, err: error }, "oEmbed endpoint not usable");
    return undefined;
  }
}

type CardFields = Pick<
  PreviewCardRow,
  | "title"
  | "description"
  | "type"
  | "author_name"
  | "author_url"
  | "provider_name"
  | "provider_url"
  | "html"
  | "width"
  | "height"
  | "embed_url"
  | "image_description"
  | "language"
  | "published_at"
>;

/**
 * The card's fields: an oEmbed player or photo when the provider offers an acceptable one, the
 * page's own tags otherwise (oEmbed still filling in what the page lacks). A player whose HTML
 * is anything but an iframe becomes a plain link card.
 */
function composeCard(
  page: PageDetails,
  embed: OEmbed | undefined,
): { fields: CardFields; imageUrl: string | undefined } {
  const common = {
    description: page.description,
    embed_url: page.embedUrl,
    image_description: page.imageDescription,
    language: page.language,
    published_at: page.publishedAt,
  };
  const fromEmbed = {
    title: embed?.title || page.title,
    author_name: embed?.authorName || page.authorName,
    author_url: embed?.authorUrl || page.authorUrl,
    provider_name: embed?.providerName || page.providerName,
    provider_url: embed?.providerUrl || "",
  };
  if (embed && (embed.type === "video" || embed.type === "rich") && embed.html) {
    return {
      fields: { ...common, ...fromEmbed, type: embed.type, html: embed.html, width: embed.width, height: embed.height },
      imageUrl: embed.thumbnailUrl ?? page.imageUrl,
    };
  }
  if (embed?.type === "photo") {
    return {
      fields: {
        ...common,
        ...fromEmbed,
        type: "photo",
        html: "",
        width: embed.width,
        height: embed.height,
        embed_url: embed.url ?? "",
      },
      imageUrl: embed.url,
    };
  }
  if (embed?.type === "link") {
    return {
      fields: { ...common, ...fromEmbed, type: "link", html: "", width: 0, height: 0 },
      imageUrl: embed.thumbnailUrl ?? page.imageUrl,
    };
  }
  return {
    fields: {
      ...common,
      title: page.title || embed?.title || "",
      author_name: page.authorName || embed?.authorName || "",
      author_url: page.authorUrl || embed?.authorUrl || "",
      provider_name: page.providerName || embed?.providerName || "",
      provider_url: embed?.providerUrl || "",
      type: page.type,
      html: page.html,
      width: page.width,
      height: page.height,
    },
    imageUrl: page.imageUrl,
  };
}

/** Fetches `url` and stores its card (inserted, or updated in place under the same URL); undefined when the page gives none. */
async function buildCard(ctx: Ctx, url: string): Promise<PreviewCardRow | undefined> {
  const page = await safeFetch(ctx, url, {
    maxBytes: HTML_LIMIT,
    headers: { accept: "text/html", "user-agent": `${userAgent(ctx.config)} Bot` },
  });
  if (page.status >= 500 || page.status === 429 || page.status === 408)
    throw new CardSourceUnavailable(page.url, page.status);
  if (page.status !== 200 || mediaTypeOf(page.headers) !== "text/html") {
    ctx.log.info({ url, status: page.status, type: mediaTypeOf(page.headers) }, "link gives no preview card");
    return undefined;
  }
  const details = parsePage(decodeHtml(page.body, page.headers["content-type"]), page.url);
  const embed = details.oembedUrl ? await fetchOEmbed(ctx, details.oembedUrl) : undefined;
  const { fields, imageUrl } = composeCard(details, embed);
  if (!fields.title && !fields.html) {
    ctx.log.info({ url }, "link gives no preview card: the page has no title");
    return undefined;
  }

  const cardUrl = details.canonicalUrl ?? page.url;
  const db = ctx.db.kysely;
  const previous = await db.selectFrom("preview_cards").selectAll().where("url", "=", cardUrl).executeTakeFirst();
  const id = previous?.id ?? newId();
  const thumbnail = imageUrl ? await downloadThumbnail(ctx, imageUrl) : undefined;
  let imageFile: string | null = null;
  let blurhash: string | null = null;
  if (thumbnail) {
    imageFile = `cache/preview_cards/images/${id}/original/${randomFileName(thumbnail.extension)}`;
    blurhash = thumbnail.blurhash;
    await ctx.media.put(imageFile, thumbnail.data);
    // Mastodon sizes link cards by their image.
    if (fields.type === "link") Object.assign(fields, { width: thumbnail.width, height: thumbnail.height });
  } else if (imageUrl && previous?.image_file) {
    // The image could not be fetched this time: keep the one we have.
    imageFile = previous.image_file;
    blurhash = previous.blurhash;
  }

  const now = new Date().toISOString();
  const row = await db
    .insertInto("preview_cards")
    .values({ id, url: cardUrl, ...fields, image_file: imageFile, blurhash, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column("url").doUpdateSet({ ...fields, image_file: imageFile, blurhash, updated_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
  if (previous?.image_file && previous.image_file !== imageFile) await ctx.media.delete(previous.image_file);
  return row;
}

/** Links the card to the status, unless the status got one meanwhile (one card per status). */
async function attachCard(ctx: Ctx, statusId: string, cardId: string, url: string): Promise<boolean> {
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const existing = await tx
      .selectFrom("preview_cards_statuses")
      .select("status_id")
      .where("status_id", "=", statusId)
      .executeTakeFirst();
    if (existing) return false;
    // Two jobs for one status may get here at once (each saw no card): the second link is a no-op.
    const inserted = await tx
      .insertInto("preview_cards_statuses")
      .values({ status_id: statusId, preview_card_id: cardId, url })
      .onConflict((oc) => oc.columns(["status_id", "preview_card_id"]).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  });
}

/**
 * Gives a status its preview card (the `cards.fetch` job). Does nothing for statuses that are
 * gone, boosts, private or direct, that already have a card, or that link nowhere. Returns the
 * card attached, if any. See the top of this file for which failures throw.
 */
export async function fetchCardForStatus(ctx: Ctx, statusId: string): Promise<PreviewCardRow | undefined> {
  const db = ctx.db.kysely;
  const status = await db.selectFrom("statuses").selectAll().where("id", "=", statusId).executeTakeFirst();
  if (
    !status ||
    status.deleted_at ||
    status.reblog_of_id ||
    (status.visibility !== "public" && status.visibility !== "unlisted")
  )
    return undefined;
  if (
    await db
      .selectFrom("preview_cards_statuses")
      .select("status_id")
      .where("status_id", "=", statusId)
      .executeTakeFirst()
  )
    return undefined;
  const url = await cardLinkOf(ctx, status);
  if (!url) return undefined;

  let card = await knownCard(ctx, url);
  if (!card || Date.parse(card.updated_at) < Date.now() - CARD_REFRESH_AFTER_MS) {
    try {
      card = (await buildCard(ctx, url)) ?? card;
    } catch (error) {
      const expected = error instanceof SafeFetchError || error instanceof CardSourceUnavailable;
      // Passing failures (and unexpected ones) are retried by the job, unless an older card can stand in.
      if (!card && (!expected || isTransient(error))) throw error;
      ctx.log[expected ? "info" : "warn"]({ url, statusId, err: error }, "could not fetch the preview card");
    }
  }
  if (!card) return undefined;
  return (await attachCard(ctx, statusId, card.id, url)) ? card : undefined;
}

/**
 * Unlinks a status from its card (its text was edited), so that the next `cards.fetch` job looks
 * at its links again. The card itself stays for the other statuses that link there.
 */
export async function detachCard(db: Kysely<Database>, statusId: string): Promise<void> {
  await db.deleteFrom("preview_cards_statuses").where("status_id", "=", statusId).execute();
}
