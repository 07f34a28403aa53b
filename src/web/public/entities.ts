/**
 * Mastodon's JSON entities (what the API serializes for a visitor without a token) as HTML for
 * the public pages: a page shows exactly what the API would show an anonymous reader. Posts'
 * `content` and remote profile fields are sanitized HTML already; everything else is escaped.
 */
import type { Account } from "../../entities/account.ts";
import type { CustomEmoji } from "../../entities/custom_emoji.ts";
import type { MediaAttachment } from "../../entities/media_attachment.ts";
import type { Poll } from "../../entities/poll.ts";
import type { Status } from "../../entities/status.ts";
import { html, SafeHtml } from "../html.ts";
import { escapeHtml } from "../../text/escape.ts";

/** `:shortcode:` of the given custom emoji as pictures, in the text parts of `markup` only. */
export function withEmojis(markup: string, emojis: readonly CustomEmoji[]): SafeHtml {
  if (emojis.length === 0) return new SafeHtml(markup);
  const byCode = new Map(emojis.map((e) => [e.shortcode, e]));
  const out = markup
    .split(/(<[^>]*>)/)
    .map((part) =>
      part.startsWith("<")
        ? part
        : part.replace(/:([A-Za-z0-9_]+):/g, (whole, code: string) => {
            const emoji = byCode.get(code);
            return emoji
              ? html`<img class="emoji" src="${emoji.static_url}" alt="${whole}" title="${whole}" draggable="false">`
                  .value
              : whole;
          }),
    )
    .join("");
  return new SafeHtml(out);
}

/** A display name (plain text) with its emoji; the username when it has none. */
export function displayName(account: Account): SafeHtml {
  return withEmojis(escapeHtml(account.display_name || account.username), account.emojis);
}

/** The handle shown under a name: `@user@domain` for everyone, this server's too. */
export function fullHandle(account: Account, localDomain: string): string {
  return `@${account.acct.includes("@") ? account.acct : `${account.acct}@${localDomain}`}`;
}

const dateFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
const dayFormat = new Intl.DateTimeFormat("en", { dateStyle: "long", timeZone: "UTC" });

/** "1 post", "2 posts": a count with its noun. */
export function counted(n: number, singular: string, plural = `${singular}s`): SafeHtml {
  return html`<strong>${n}</strong> ${n === 1 ? singular : plural}`;
}

export const formatDay = (iso: string): string => dayFormat.format(new Date(iso));

function time(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${dateFormat.format(new Date(iso))} UTC</time>`;
}

function mediaItem(media: MediaAttachment): SafeHtml {
  const alt = media.description ?? "";
  const url = media.url ?? media.remote_url;
  if (!url) return html``;
  switch (media.type) {
    case "image":
      return html`<a href="${url}"><img src="${media.preview_url ?? url}" alt="${alt}" loading="lazy"></a>`;
    case "gifv":
      return html`<video src="${url}" aria-label="${alt}" muted loop playsinline controls preload="none"${media.preview_url ? html` poster="${media.preview_url}"` : ""}></video>`;
    case "video":
      return html`<video src="${url}" aria-label="${alt}" controls preload="none"${media.preview_url ? html` poster="${media.preview_url}"` : ""}></video>`;
    case "audio":
      return html`<audio src="${url}" aria-label="${alt}" controls preload="none"></audio>`;
    default:
      return html`<a href="${url}">${alt || "Attachment"}</a>`;
  }
}

function mediaBlock(status: Status): SafeHtml | "" {
  if (status.media_attachments.length === 0) return "";
  const grid = html`<div class="media">${status.media_attachments.map(mediaItem)}</div>`;
  // Sensitive media behind a content warning are inside its <details> already.
  return status.sensitive && !status.spoiler_text
    ? html`<details><summary>Sensitive media</summary>${grid}</details>`
    : grid;
}

function pollBlock(poll: Poll | null): SafeHtml | "" {
  if (!poll) return "";
  const total = poll.votes_count;
  const options = poll.options.map((option) => {
    const votes = option.votes_count;
    const share = votes !== null && total > 0 ? Math.round((votes / total) * 100) : null;
    return html`<li>${withEmojis(escapeHtml(option.title), poll.emojis)}${share !== null ? html` — ${share} % (${votes})<div class="bar" style="width:${share}%"></div>` : ""}</li>`;
  });
  const people = poll.voters_count ?? total;
  const state = poll.expired ? "Closed" : poll.expires_at ? html`Ends ${time(poll.expires_at)}` : "Open";
  return html`<ul class="poll">${options}</ul><p class="muted">${people} ${people === 1 ? "person" : "people"} · ${state}</p>`;
}

/** The body of a post: content warning (collapsed), content, media, poll. */
function statusBody(status: Status): SafeHtml {
  const content = html`<div class="content"${status.language ? html` lang="${status.language}"` : ""}>${withEmojis(status.content ?? "", status.emojis)}</div>${mediaBlock(status)}${pollBlock(status.poll)}`;
  if (!status.spoiler_text) return content;
  return html`<details><summary>${withEmojis(escapeHtml(status.spoiler_text), status.emojis)}</summary>${content}</details>`;
}

export interface StatusOptions {
  /** The post a thread page is about: highlighted, with its full date. */
  focus?: boolean;
  localDomain: string;
}

/** One post (or a boost and the post it boosts) as an `<article>`. */
export function statusArticle(status: Status, options: StatusOptions): SafeHtml {
  const shown = status.reblog ?? status;
  const author = shown.account;
  const boosted = status.reblog
    ? html`<p class="boosted">🔁 <a href="${status.account.url}">${displayName(status.account)}</a> boosted</p>`
    : "";
  const replyTo = shown.in_reply_to_id && !options.focus ? html`<p class="reply-to">Reply in a thread</p>` : "";
  const link = shown.url ?? shown.uri;
  return html`<article class="status${options.focus ? " focus" : ""}" id="status-${shown.id}">${boosted}${replyTo}
<header><a href="${author.url}"><img class="avatar" src="${author.avatar_static}" alt="" width="46" height="46" loading="lazy"></a>
<div class="who"><a href="${author.url}"><span class="name">${displayName(author)}</span><span class="acct">${fullHandle(author, options.localDomain)}</span></a></div>
<a href="${link}">${time(shown.created_at)}</a></header>
${statusBody(shown)}
<footer><span>${shown.replies_count} ${shown.replies_count === 1 ? "reply" : "replies"}</span><span>${shown.reblogs_count} ${shown.reblogs_count === 1 ? "boost" : "boosts"}</span><span>${shown.favourites_count} ${shown.favourites_count === 1 ? "favourite" : "favourites"}</span>${shown.edited_at ? html`<span>edited</span>` : ""}</footer></article>`;
}

/** A post's text without markup, for link previews and feed readers' summaries. */
export function plainText(markup: string): string {
  return markup
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>\s*<p[^>]*>/gi, "\n\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp);/gi, (whole, ref: string) => {
      const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
      if (ref[0] !== "#") return named[ref.toLowerCase()] ?? whole;
      const code =
        ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

/** What a link preview says of a post: its content warning, else its text, else its media. */
export function statusSummary(status: Status): string {
  if (status.spoiler_text) return `Content warning: ${status.spoiler_text}`;
  const text = plainText(status.content ?? "");
  if (text) return text;
  const count = status.media_attachments.length;
  return count ? `${count} attachment${count === 1 ? "" : "s"}` : "";
}
