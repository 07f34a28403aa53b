import type { Ctx } from "../context.ts";
import type { AccountRow } from "../db/schema.ts";
import { accountUrl } from "../entities/account.ts";
import { extractEntities, type TextEntity } from "./entities.ts";
import { escapeHtml } from "./escape.ts";

export interface FormattedText {
  html: string;
  /** Accounts mentioned, in order of first appearance, each once. */
  mentions: AccountRow[];
  /** Hashtag names as typed, each once (compared case-insensitively). */
  tags: string[];
}

export interface FormatOptions {
  /** Paragraphs and line breaks (statuses, bios); false for one-line values (profile fields). */
  multiline: boolean;
  /** Extra link relations, e.g. `me` for profile fields. */
  rel?: string;
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

const mentionKey = (username: string, domain: string | null) => `${username.toLowerCase()}@${domain ?? ""}`;

/** Looks up the accounts that mentions name, with one query per kind (local, remote). */
async function resolveMentions(ctx: Ctx, entities: TextEntity[]): Promise<Map<string, AccountRow>> {
  const local = new Set<string>();
  const remote: Array<{ username: string; domain: string }> = [];
  for (const entity of entities) {
    if (entity.kind !== "mention") continue;
    if (!entity.domain || entity.domain === ctx.config.localDomain || entity.domain === ctx.config.webDomain)
      local.add(entity.username.toLowerCase());
    else remote.push({ username: entity.username.toLowerCase(), domain: entity.domain });
  }
  const found = new Map<string, AccountRow>();
  const db = ctx.db.kysely;
  if (local.size > 0) {
    const rows = await db
      .selectFrom("accounts")
      .selectAll()
      .where("domain", "is", null)
      .where((eb) => eb(eb.fn("lower", ["username"]), "in", [...local]))
      .where("suspended_at", "is", null)
      .execute();
    for (const row of rows) found.set(mentionKey(row.username, null), row);
  }
  if (remote.length > 0) {
    const rows = await db
      .selectFrom("accounts")
      .selectAll()
      .where((eb) =>
        eb.or(
          remote.map((r) => eb.and([eb(eb.fn("lower", ["username"]), "=", r.username), eb("domain", "=", r.domain)])),
        ),
      )
      .where("suspended_at", "is", null)
      .execute();
    for (const row of rows) found.set(mentionKey(row.username, row.domain), row);
  }
  return found;
}

/**
 * Turns a local user's plain text into Mastodon's HTML: escaped text, links, mentions of known
 * accounts, hashtags, paragraphs. Custom emoji stay as `:shortcode:` text.
 */
export async function formatText(ctx: Ctx, text: string, options: FormatOptions): Promise<FormattedText> {
  const entities = extractEntities(text);
  const accounts = await resolveMentions(ctx, entities);
  const lookup = (e: Extract<TextEntity, { kind: "mention" }>) =>
    accounts.get(
      mentionKey(
        e.username,
        e.domain === ctx.config.localDomain || e.domain === ctx.config.webDomain ? null : e.domain,
      ),
    );
  const mentioned = entities
    .filter((e): e is Extract<TextEntity, { kind: "mention" }> => e.kind === "mention")
    .map(lookup)
    .filter((a): a is AccountRow => !!a);
  const usernameCounts = new Map<string, number>();
  for (const account of new Map(mentioned.map((a) => [a.id, a])).values()) {
    usernameCounts.set(account.username.toLowerCase(), (usernameCounts.get(account.username.toLowerCase()) ?? 0) + 1);
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
      const account = lookup(entity);
      if (account) {
        const ambiguous = (usernameCounts.get(account.username.toLowerCase()) ?? 0) > 1 || !options.multiline;
        const label = ambiguous && account.domain ? `${account.username}@${account.domain}` : account.username;
        out += mentionHtml(accountUrl(ctx, account), label);
      } else {
        out += escapeHtml(source);
      }
    } else {
      out += hashtagHtml(ctx.config.baseUrl, entity.name);
      if (!tags.has(entity.name.toLowerCase())) tags.set(entity.name.toLowerCase(), entity.name);
    }
    at = entity.end;
  }
  out += escapeHtml(text.slice(at));
  const unique = new Map(mentioned.map((a) => [a.id, a]));
  return {
    html: options.multiline ? paragraphs(out) : out.replace(/\r?\n/g, " "),
    mentions: [...unique.values()],
    tags: [...tags.values()],
  };
}
