/**
 * A local user's plain text → Mastodon's HTML: escaped text, links, mentions, hashtags, paragraphs.
 * Pure: the accounts that mentions name are found by the caller (services/text/format.ts looks
 * them up in the database) and handed in as `mentioned`.
 */
import { extractEntities, type TextEntity } from "./entities.ts";
import { escapeHtml } from "./escape.ts";

/** A mention as written: `@user` (domain null) or `@user@domain`, the local domains already folded to null. */
export interface MentionRef {
  username: string;
  domain: string | null;
}

/** What a mention links to. */
export interface MentionTarget<A> {
  account: A;
  username: string;
  domain: string | null;
  url: string;
}

export interface RenderedText<A> {
  html: string;
  /** Accounts mentioned, in order of first appearance, each once. */
  mentions: A[];
  /** Hashtag names as typed, each once (compared case-insensitively). */
  tags: string[];
}

export interface FormatOptions {
  /** Paragraphs and line breaks (statuses, bios); false for one-line values (profile fields). */
  multiline: boolean;
  /** Extra link relations, e.g. `me` for profile fields. */
  rel?: string;
}

export interface RenderOptions<A> extends FormatOptions {
  /** The server's base URL, for hashtag links. */
  baseUrl: string;
  /** Domains that mean this server in `@user@domain`. */
  localDomains: readonly string[];
  /** The target of a mention, if the account is known (keyed by `mentionKey`). */
  mentioned: ReadonlyMap<string, MentionTarget<A>>;
}

const VISIBLE_URL_LENGTH = 30;

/** The three-span link markup: invisible scheme, visible part (with ellipsis when long), invisible rest. */
export function linkHtml(url: string, rel = "nofollow noopener"): string {
  const href = new URL(url).href;
  // Only these prefixes are hidden (Mastodon's URL_PREFIX_REGEX); other schemes stay visible.
  const prefix = /^(?:https?:\/\/(?:www\.)?|xmpp:)/i.exec(url)?.[0] ?? "";
  const display = url.slice(prefix.length);
  const chars = [...display];
  const long = chars.length > VISIBLE_URL_LENGTH + 1;
  const visible = long ? chars.slice(0, VISIBLE_URL_LENGTH).join("") : display;
  const rest = long ? chars.slice(VISIBLE_URL_LENGTH).join("") : "";
  return (
    `<a href="${escapeHtml(href)}" target="_blank" rel="${rel}" translate="no">` +
    `<span class="invisible">${escapeHtml(prefix)}</span>` +
    `<span class="${long ? "ellipsis" : ""}">${escapeHtml(visible)}</span>` +
    `<span class="invisible">${escapeHtml(rest)}</span></a>`
  );
}

function mentionHtml(url: string, label: string): string {
  return `<span class="h-card" translate="no"><a href="${escapeHtml(url)}" class="u-url mention">@<span>${escapeHtml(label)}</span></a></span>`;
}

function hashtagHtml(baseUrl: string, name: string): string {
  return `<a href="${escapeHtml(`${baseUrl}/tags/${encodeURIComponent(name)}`)}" class="mention hashtag" rel="tag">#<span>${escapeHtml(name)}</span></a>`;
}

/** Rails' simple_format: two or more newlines split paragraphs, a single newline becomes <br />. */
function paragraphs(htmlText: string): string {
  const normalized = htmlText.replace(/\r\n?/g, "\n");
  if (normalized.trim() === "") return "";
  return normalized
    .split(/\n\n+/)
    .map((p) => `<p>${p.replace(/^\n+|\n+$/g, "").replace(/\n/g, "<br />")}</p>`)
    .join("");
}

/** How a mention target is keyed: lower-case username and domain (empty for local accounts). */
export const mentionKey = (username: string, domain: string | null): string =>
  `${username.toLowerCase()}@${domain?.toLowerCase() ?? ""}`;

const refOf = (entity: Extract<TextEntity, { kind: "mention" }>, localDomains: readonly string[]): MentionRef => ({
  username: entity.username,
  domain:
    !entity.domain || localDomains.some((d) => d.toLowerCase() === entity.domain!.toLowerCase()) ? null : entity.domain,
});

/** The mentions written in `text`, in order, repeats included. */
export function mentionRefs(text: string, localDomains: readonly string[]): MentionRef[] {
  return extractEntities(text)
    .filter((e): e is Extract<TextEntity, { kind: "mention" }> => e.kind === "mention")
    .map((e) => refOf(e, localDomains));
}

/** Renders `text`; mentions of accounts not in `options.mentioned` stay plain text. */
export function renderText<A>(text: string, options: RenderOptions<A>): RenderedText<A> {
  const entities = extractEntities(text);
  const lookup = (e: Extract<TextEntity, { kind: "mention" }>) => {
    const ref = refOf(e, options.localDomains);
    return options.mentioned.get(mentionKey(ref.username, ref.domain));
  };
  const mentioned = entities
    .filter((e): e is Extract<TextEntity, { kind: "mention" }> => e.kind === "mention")
    .map(lookup)
    .filter((t): t is MentionTarget<A> => !!t);
  const usernameCounts = new Map<string, number>();
  for (const target of new Map(mentioned.map((t) => [mentionKey(t.username, t.domain), t])).values()) {
    usernameCounts.set(target.username.toLowerCase(), (usernameCounts.get(target.username.toLowerCase()) ?? 0) + 1);
  }

  let out = "";
  let at = 0;
  const tags = new Map<string, string>();
  for (const entity of entities) {
    out += escapeHtml(text.slice(at, entity.start));
    const source = text.slice(entity.start, entity.end);
    if (entity.kind === "url") {
      out += linkHtml(entity.url, options.rel ? `nofollow noopener ${options.rel}` : "nofollow noopener");
    } else if (entity.kind === "mention") {
      const target = lookup(entity);
      if (target) {
        const ambiguous = (usernameCounts.get(target.username.toLowerCase()) ?? 0) > 1 || !options.multiline;
        const label = ambiguous && target.domain ? `${target.username}@${target.domain}` : target.username;
        out += mentionHtml(target.url, label);
      } else {
        out += escapeHtml(source);
      }
    } else {
      out += hashtagHtml(options.baseUrl, entity.name);
      if (!tags.has(entity.name.toLowerCase())) tags.set(entity.name.toLowerCase(), entity.name);
    }
    at = entity.end;
  }
  out += escapeHtml(text.slice(at));
  const unique = new Map(mentioned.map((t) => [mentionKey(t.username, t.domain), t.account]));
  return {
    html: options.multiline ? paragraphs(out) : out.replace(/\r?\n/g, " "),
    mentions: [...unique.values()],
    tags: [...tags.values()],
  };
}
