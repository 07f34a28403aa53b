/**
 * RSS 2.0 feeds of an account's public posts and of a hashtag, shaped like Mastodon's
 * (`/@alice.rss`, `/tags/cats.rss`): a post's HTML as the item's description, its attachments as
 * Media RSS `media:content`, its hashtags as categories.
 */
import type { FastifyReply } from "fastify";
import type { Status } from "../../entities/status.ts";
import { escapeHtml } from "../../text/escape.ts";
import { varyOnAccept } from "../negotiation.ts";

export interface Feed {
  title: string;
  description: string;
  /** The page the feed is of. */
  link: string;
  /** The feed's own address. */
  self: string;
  image?: string;
  items: readonly Status[];
}

const xml = (text: string) =>
  escapeHtml(text).replace(
    // XML 1.0 has no place for most control characters: drop them rather than write a broken feed.
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
    "",
  );

const rfc822 = (iso: string) => new Date(iso).toUTCString();

function mediaRating(status: Status): string {
  return status.sensitive ? "adult" : "nonadult";
}

function item(status: Status): string {
  const link = status.url ?? status.uri;
  const warning = status.spoiler_text ? `<p>${escapeHtml(status.spoiler_text)}</p><hr />` : "";
  const media = status.media_attachments
    .filter((m) => m.url ?? m.remote_url)
    .map((m) => {
      const medium = m.type === "image" ? "image" : m.type === "audio" ? "audio" : "video";
      const alt = m.description ? `<media:description type="plain">${xml(m.description)}</media:description>` : "";
      return `<media:content url="${xml((m.url ?? m.remote_url)!)}" medium="${medium}"><media:rating scheme="urn:simple">${mediaRating(status)}</media:rating>${alt}</media:content>`;
    })
    .join("");
  const categories = status.tags.map((t) => `<category>${xml(t.name)}</category>`).join("");
  return `<item><guid isPermaLink="true">${xml(link)}</guid><link>${xml(link)}</link><pubDate>${rfc822(status.created_at)}</pubDate><description>${xml(warning + (status.content ?? ""))}</description>${media}${categories}</item>`;
}

export function rssDocument(feed: Feed): string {
  const image = feed.image
    ? `<image><url>${xml(feed.image)}</url><title>${xml(feed.title)}</title><link>${xml(feed.link)}</link></image>`
    : "";
  const built = feed.items[0] ? `<lastBuildDate>${rfc822(feed.items[0].created_at)}</lastBuildDate>` : "";
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:webfeeds="http://webfeeds.org/rss/1.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>${xml(feed.title)}</title><description>${xml(feed.description)}</description><link>${xml(feed.link)}</link><atom:link href="${xml(feed.self)}" rel="self" type="application/rss+xml" />${image}${built}<generator>Rookery</generator>${feed.items.map(item).join("")}</channel></rss>
`;
}

export function sendFeed(reply: FastifyReply, feed: Feed, shared: boolean): FastifyReply {
  varyOnAccept(reply);
  return reply
    .header("Cache-Control", shared ? "public, max-age=60" : "private, no-store")
    .header("X-Content-Type-Options", "nosniff")
    .type("application/rss+xml; charset=utf-8")
    .send(rssDocument(feed));
}
