/**
 * A strike as both its pages show it: the user's (/disputes/strikes, web/disputes.ts) and the
 * moderators' appeals queue (web/admin/appeals.ts) — the decision in words, struck through once
 * an appeal lifted it, and the posts it was about, deleted ones included.
 */
import type { AccountWarningRow } from "../db/schema.ts";
import { strikeTitle, type StrikePost } from "../services/moderation/strikes.ts";
import { html, type SafeHtml } from "./html.ts";

/** Post texts longer than this are cut. */
const POST_TEXT_MAX = 500;

/** The decision's title; struck through, and said to be lifted, once an appeal overruled it. */
export function decisionTitle(warning: Pick<AccountWarningRow, "action" | "overruled_at">): SafeHtml {
  const title = strikeTitle(warning.action);
  return warning.overruled_at ? html`<del>${title}</del> (lifted)` : html`${title}`;
}

/**
 * The strike's posts as list items: the warning and text of each, its attachments, and when it
 * was written (`when` formats the time; linked to the post unless it was deleted).
 */
export function strikePostItems(posts: readonly StrikePost[], when: (iso: string) => SafeHtml | string): SafeHtml {
  const items = posts.map(({ id, post }) => {
    if (!post) return html`<li>Post #${id} <span class="muted">(removed)</span></li>`;
    const chars = [...post.text];
    const text = chars.length > POST_TEXT_MAX ? `${chars.slice(0, POST_TEXT_MAX - 1).join("")}…` : post.text;
    return html`<li>${post.spoilerText ? html`<strong>${post.spoilerText}</strong> ` : ""}${text}${post.media.length ? html`<br><span class="muted">Attached: ${post.media.join(", ")}</span>` : ""}
<br><span class="muted">${post.deleted ? html`${when(post.createdAt)} (removed)` : html`<a href="${post.url}">${when(post.createdAt)}</a>`}</span></li>`;
  });
  return html`${items}`;
}
