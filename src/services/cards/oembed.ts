/**
 * oEmbed answers (https://oembed.com) turned into card fields, as Mastodon's FetchOEmbedService
 * reads them: version 1.0, a known type, and for players HTML that is nothing but one iframe.
 */
import { Parser } from "htmlparser2";
import { absoluteUrl, cleanText, dimension, iframeHtml, TITLE_LIMIT } from "./parse.ts";

const NAME_LIMIT = 250;

export interface OEmbed {
  type: "link" | "photo" | "video" | "rich";
  title: string;
  authorName: string;
  authorUrl: string;
  providerName: string;
  providerUrl: string;
  width: number;
  height: number;
  /** For `video` and `rich`: the sanitized iframe, or "" when the provider's HTML was anything else. */
  html: string;
  /** For `photo`: the picture. */
  url: string | undefined;
  thumbnailUrl: string | undefined;
}

const TYPES = new Set(["link", "photo", "video", "rich"]);

/**
 * The provider's embed HTML rebuilt as a sandboxed iframe, when it is exactly one iframe whose
 * `src` is http(s) (resolved against `base`; whitespace and comments are fine); undefined for
 * anything else — scripts, blockquotes, text, several elements.
 */
export function sanitizeEmbedHtml(
  html: string,
  base: string,
  fallbackWidth = 0,
  fallbackHeight = 0,
): string | undefined {
  let elements = 0;
  let iframe: Record<string, string> | undefined;
  let strayText = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        elements++;
        if (name === "iframe" && elements === 1) iframe = attributes;
      },
      // Text beside or inside the iframe (fallback content, or markup an iframe reads as text) is refused too.
      ontext(text) {
        if (text.trim() !== "") strayText = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: false },
  );
  parser.write(html);
  parser.end();
  if (elements !== 1 || !iframe || strayText) return undefined;
  const source = absoluteUrl(iframe.src, base);
  if (!source) return undefined;
  const width = dimension(iframe.width) || fallbackWidth;
  const height = dimension(iframe.height) || fallbackHeight;
  return iframeHtml(source, width, height, iframe.allowfullscreen !== undefined);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;
}

/** An oEmbed JSON answer from `endpointUrl`, or undefined when it is not a usable one. */
export function parseOEmbed(body: Buffer | string, endpointUrl: string): OEmbed | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString());
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const data = json as Record<string, unknown>;
  const version = text(data.version);
  const type = text(data.type)?.toLowerCase();
  if ((version !== "1.0" && version !== "1") || !type || !TYPES.has(type)) return undefined;

  const width = dimension(data.width);
  const height = dimension(data.height);
  const url = absoluteUrl(text(data.url), endpointUrl);
  if (type === "photo" && !url) return undefined;
  const rawHtml = text(data.html);
  if ((type === "video" || type === "rich") && !rawHtml) return undefined;

  return {
    type: type as OEmbed["type"],
    title: cleanText(text(data.title), TITLE_LIMIT),
    authorName: cleanText(text(data.author_name), NAME_LIMIT),
    authorUrl: absoluteUrl(text(data.author_url), endpointUrl) ?? "",
    providerName: cleanText(text(data.provider_name), NAME_LIMIT),
    providerUrl: absoluteUrl(text(data.provider_url), endpointUrl) ?? "",
    width,
    height,
    html: rawHtml ? (sanitizeEmbedHtml(rawHtml, endpointUrl, width, height) ?? "") : "",
    url: type === "photo" ? url : undefined,
    thumbnailUrl: absoluteUrl(text(data.thumbnail_url), endpointUrl),
  };
}
