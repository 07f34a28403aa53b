/**
 * How the admin pages show what recurs on all of them: an account (its handle, a link to its
 * page), a time, a long text cut to a line, a count. Times are UTC, as the tables' headers say.
 */
import type { AccountRow } from "../../db/schema.ts";
import { handleOf } from "../../services/admin/accounts.ts";
import { html, type SafeHtml } from "../html.ts";

type Named = Pick<AccountRow, "username" | "domain">;

/** The admin page of account `id`. */
export const accountPath = (id: string) => `/admin/accounts/${id}`;

/** `@alice` for a local account, `@rita@remote.example` for a remote one. */
export const atHandle = (account: Named) => `@${handleOf(account)}`;

/** An account's handle, linked to its admin page. */
export function accountLink(account: Named & { id: string }): SafeHtml {
  return html`<a href="${accountPath(account.id)}">${atHandle(account)}</a>`;
}

/** A time as text, to the minute: `2026-11-27 04:41` (UTC). */
export function shortTime(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : "";
}

/** A time as an element, readable and machine-readable: `2026-11-27 04:41 UTC`. */
export function timeOf(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${shortTime(iso)} UTC</time>`;
}

/** A long text on one line, cut to `max` characters with an ellipsis: at a word, unless that loses half. */
export function clipped(text: string, max: number): string {
  const chars = [...text.replace(/\s+/g, " ").trim()];
  if (chars.length <= max) return chars.join("");
  const head = chars.slice(0, max).join("");
  const space = head.lastIndexOf(" ");
  return `${space > head.length / 2 ? head.slice(0, space) : chars.slice(0, max - 1).join("")}…`;
}

/** `1 post`, `1,204 posts`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}
