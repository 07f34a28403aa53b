/**
 * What the report queue (reports.ts), a report's page (report.ts) and the pages that list an
 * account's reports show alike: a category in words, and an account as a report names it.
 */
import type { ReportCategory } from "../../db/schema.ts";
import type { AdminAccountJson } from "../../entities/admin_account.ts";
import { html, type SafeHtml } from "../html.ts";
import { displayName } from "../public/entities.ts";
import { accountLink, accountPath, atHandle } from "./display.ts";

export const CATEGORY_LABELS: Record<ReportCategory, string> = {
  spam: "Spam",
  legal: "Illegal content",
  violation: "Breaks server rules",
  other: "Other",
};

/** An account linked to its admin page by its name, then its handle and what limits it. */
export function accountCell(account: AdminAccountJson): SafeHtml {
  const flags = [
    account.suspended && "suspended",
    account.silenced && "limited",
    account.disabled && "frozen",
    account.sensitized && "media sensitive",
  ].filter((f): f is string => !!f);
  return html`<a href="${accountPath(account.id)}">${displayName(account.account)}</a> <span class="muted">${atHandle(account)}</span>${flags.map((f) => html` <span class="badge">${f}</span>`)}`;
}

/** A moderator (or anyone else) by handle, linked to their admin page; nothing for nobody. */
export const handleLink = (account: AdminAccountJson | null): SafeHtml | string =>
  account ? accountLink(account) : "";
