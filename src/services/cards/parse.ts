/**
 * What a web page says about itself, for its preview card: OpenGraph and Twitter tags, the
 * oEmbed discovery link, and the `<title>` / meta description fallbacks (Mastodon's
 * LinkDetailsExtractor). Parsing only; fetching is fetch.ts's job.
 */
import { Parser } from "htmlparser2";

/** Mastodon's limits on stored card text, in characters. */
export const TITLE_LIMIT = 250;
export const DESCRIPTION_LIMIT = 1000;
const NAME_LIMIT = 250;
/** Longer URLs are not stored (and hardly ever real). */
export const URL_LIMIT = 2048;

export interface PageDetails {
  title: string;
  description: string;
  /** `video` when the page names a player (twitter:player); `link` otherwise. */
  type: "link" | "video";
  /** The player's iframe, or "". */
  html: string;
  width: number;
  height: number;
  authorName: string;
  authorUrl: string;
  providerName: string;
  imageUrl: string | undefined;
  imageDescription: string;
  embedUrl: string;
  /** ISO 639 code, from og:locale or `<html lang>`. */
  language: string | null;
  publishedAt: string | null;
  /** og:url or `<link rel=canonical>`, when on the same host as the page. */
  canonicalUrl: string | undefined;
  /** The JSON oEmbed endpoint the page advertises. */
  oembedUrl: string | undefined;
}

/** Collapses whitespace, drops control characters, trims, and cuts to `limit` characters with an ellipsis. */
export function cleanText(value: string | undefined, limit: number): string {
  if (!value) return "";
  const text = value
    .replace(/\p{Cc}/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const characters = [...text];
  return characters.length > limit
    ? `${characters
        .slice(0, limit - 1)
        .join("")
        .trimEnd()}…`
    : text;
}

/** `value` resolved against `base`, if it is an http(s) URL of sensible length; otherwise undefined. */
export function absoluteUrl(value: string | undefined, base: string | URL): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  try {
    const url = new URL(trimmed, base);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname || url.href.length > URL_LIMIT)
      return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

/** A non-negative whole number from an attribute or JSON value ("480", 480), or 0. */
export function dimension(value: unknown): number {
  const number =
    typeof value === "number" ? value : typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(number) && number >= 0 && number <= 100_000 ? Math.floor(number) : 0;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The only embed HTML a card carries: a sandboxed iframe, as Mastodon's MASTODON_OEMBED sanitizer leaves it. */
export function iframeHtml(src: string, width: number, height: number, allowFullscreen = true): string {
  const attributes = [
    `src="${escapeAttribute(src)}"`,
    `width="${width}"`,
    `height="${height}"`,
    `frameborder="0"`,
    ...(allowFullscreen ? [`allowfullscreen="true"`] : []),
    `sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-forms"`,
  ];
  return `<iframe ${attributes.join(" ")}></iframe>`;
}

function languageCode(value: string | undefined): string | null {
  const code = value?.trim().split(/[-_]/)[0].toLowerCase();
  return code && /^[a-z]{2,3}$/.test(code) ? code : null;
}

function timestamp(value: string | undefined): string | null {
  if (!value) return null;
  const time = Date.parse(value.trim());
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}

function isTextEncodingLabel(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

function charsetParameter(contentType: string | undefined): string | undefined {
  for (const part of (contentType ?? "").split(";").slice(1)) {
    const [name, value] = part.split("=");
    if (name?.trim().toLowerCase() === "charset" && value) return value.trim().replace(/^["']|["']$/g, "");
  }
  return undefined;
}

/** The charset a document declares in its first bytes (`<meta charset>` or the http-equiv form). */
function declaredCharset(head: Buffer): string | undefined {
  let found: string | undefined;
  const parser = new Parser({
    onopentag(name, attributes) {
      if (found || name !== "meta") return;
      if (attributes.charset) found = attributes.charset.trim();
      else if (attributes["http-equiv"]?.toLowerCase() === "content-type") found = charsetParameter(attributes.content);
    },
  });
  parser.write(head.toString("latin1"));
  parser.end();
  return found;
}

/**
 * The text of an HTML body: the charset of the Content-Type header, else a byte-order mark, else
 * what the document declares in its first KiB, else UTF-8.
 */
export function decodeHtml(body: Buffer, contentType?: string): string {
  const candidates = [
    charsetParameter(contentType),
    body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? "utf-8" : undefined,
    body[0] === 0xfe && body[1] === 0xff ? "utf-16be" : body[0] === 0xff && body[1] === 0xfe ? "utf-16le" : undefined,
    declaredCharset(body.subarray(0, 1024)),
  ];
  const label = candidates.find((c): c is string => !!c && isTextEncodingLabel(c)) ?? "utf-8";
  return new TextDecoder(label).decode(body);
}

interface Collected {
  metas: Array<{ keys: string[]; content: string }>;
  links: Array<{ rel: string[]; type: string; href: string }>;
  title: string | undefined;
  base: string | undefined;
  lang: string | undefined;
}

function collect(html: string): Collected {
  const found: Collected = { metas: [], links: [], title: undefined, base: undefined, lang: undefined };
  // <title> inside <svg> or <math> names a drawing, not the page.
  let foreignDepth = 0;
  let titleText: string[] | undefined;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "svg" || name === "math") foreignDepth++;
        else if (name === "title" && foreignDepth === 0 && found.title === undefined) titleText = [];
        else if (name === "html") found.lang ??= attributes.lang;
        else if (name === "base" && attributes.href) found.base ??= attributes.href;
        else if (name === "meta" && attributes.content !== undefined) {
          const keys = [...(attributes.property ?? "").split(/\s+/), attributes.name ?? ""]
            .map((k) => k.trim().toLowerCase())
            .filter(Boolean);
          if (keys.length) found.metas.push({ keys, content: attributes.content });
        } else if (name === "link" && attributes.href) {
          found.links.push({
            rel: (attributes.rel ?? "").toLowerCase().split(/\s+/),
            type: (attributes.type ?? "").trim().toLowerCase(),
            href: attributes.href,
          });
        }
      },
      ontext(text) {
        titleText?.push(text);
      },
      onclosetag(name) {
        if (name === "svg" || name === "math") foreignDepth = Math.max(0, foreignDepth - 1);
        else if (name === "title" && titleText) {
          found.title = titleText.join("");
          titleText = undefined;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return found;
}

/** Everything a page's markup says for its card. `pageUrl` is the URL that answered (after redirects). */
export function parsePage(html: string, pageUrl: string): PageDetails {
  const page = collect(html);
  const base = absoluteUrl(page.base, pageUrl) ?? pageUrl;
  const meta = (...keys: string[]): string | undefined => {
    for (const key of keys) {
      const match = page.metas.find((m) => m.keys.includes(key) && m.content.trim() !== "");
      if (match) return match.content;
    }
    return undefined;
  };

  const canonical = absoluteUrl(page.links.find((l) => l.rel.includes("canonical"))?.href ?? meta("og:url"), base);
  // article:author is a profile URL on most sites, a name on some.
  const articleAuthor = meta("article:author")?.trim();
  const authorIsUrl = !!articleAuthor && /^https?:\/\//i.test(articleAuthor);
  const authorUrl = authorIsUrl ? (absoluteUrl(articleAuthor, base) ?? "") : "";
  const playerUrl = absoluteUrl(meta("twitter:player"), base);
  const width = dimension(meta("twitter:player:width"));
  const height = dimension(meta("twitter:player:height"));
  const oembed = page.links.find(
    (l) => l.rel.includes("alternate") && (l.type === "application/json+oembed" || l.type === "text/json+oembed"),
  );

  return {
    title: cleanText(meta("og:title", "twitter:title") ?? page.title, TITLE_LIMIT),
    description: cleanText(meta("og:description", "twitter:description", "description"), DESCRIPTION_LIMIT),
    type: playerUrl ? "video" : "link",
    html: playerUrl ? iframeHtml(playerUrl, width, height) : "",
    width: playerUrl ? width : 0,
    height: playerUrl ? height : 0,
    authorName: cleanText(meta("author") ?? (authorIsUrl ? undefined : articleAuthor), NAME_LIMIT),
    authorUrl,
    providerName: cleanText(meta("og:site_name"), NAME_LIMIT),
    imageUrl: absoluteUrl(
      meta("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"),
      base,
    ),
    imageDescription: cleanText(meta("og:image:alt", "twitter:image:alt"), DESCRIPTION_LIMIT),
    embedUrl: absoluteUrl(meta("twitter:player:stream"), base) ?? "",
    language: languageCode(meta("og:locale") ?? page.lang),
    publishedAt: timestamp(meta("article:published_time")),
    canonicalUrl: canonical && new URL(canonical).host === new URL(pageUrl).host ? canonical : undefined,
    oembedUrl: absoluteUrl(oembed?.href, base),
  };
}
