/**
 * Verified profile links (Mastodon's VerifyAccountLinksWorker and VerifyLinkService): a field of a
 * local account whose value is an https URL is verified when the page there links back to the
 * account's profile with `rel="me"`, and its `verified_at` is then set. It runs as the `verify_links`
 * job of `account.updated`, after the profile is saved, so no request waits for other sites.
 *
 * Policy, as Mastodon's:
 * - Only fields not verified yet are checked; a field whose value changes loses its verification
 *   when it is saved (profile.ts), and is checked again here.
 * - A value qualifies when it is an https URL without credentials whose host is written in its
 *   normal form (lower-case ASCII: an internationalized or upper-case host does not qualify).
 * - The page is fetched through the SSRF-safe fetch (1 MiB, 10 s, three redirects); only a 200
 *   answer counts. A match is an `<a>` or `<link>` whose `rel` holds the word `me` and whose `href`
 *   equals the profile URL, ignoring case. When the page has rel=me links but none matches, the
 *   first is asked (HEAD, redirects not followed) whether it redirects to the profile.
 * - Anything that goes wrong with a page (refused, unreachable, slow, too large, not HTML) leaves its
 *   field unverified and the job done: like Mastodon's worker, the job is not retried, and saving
 *   the profile again checks again.
 *
 * Divergences: `rel` words are compared ignoring case (HTML's rule; Mastodon's XPath is
 * case-sensitive), and a relative rel=me `href` is resolved against the page before the HEAD.
 * Other servers' accounts are not verified here: their fields are replaced, unverified, each time
 * they are fetched (accounts/remote.ts), and no event follows that write.
 */
import { Parser } from "htmlparser2";
import { request as httpRequest } from "undici";
import type { Ctx } from "../../context.ts";
import { accountById, lockAccountRow } from "../../db/queries/accounts.ts";
import { accountUrl, storedFields } from "../../entities/account.ts";
import { createOutboundAgent, userAgent } from "../http/outbound.ts";
import { safeFetch, SafeFetchError } from "../http/safe_fetch.ts";

/** The largest page read, in bytes (Mastodon's default body limit). */
export const LINK_PAGE_LIMIT = 1024 * 1024;
/** How long one page (redirects included), or one redirect check, may take. */
export const LINK_TIMEOUT_MS = 10_000;
/** Longer values are not URLs anyone means. */
const URL_LENGTH_LIMIT = 2048;

/**
 * The URL a local field's value names, if it qualifies for verification: https, no user or
 * password, a host already in normal form.
 */
export function verifiableUrl(value: string): string | undefined {
  const text = value.trim();
  if (text.length === 0 || text.length > URL_LENGTH_LIMIT) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" || url.username || url.password || !url.hostname) return undefined;
  // The host as written must be the parsed one: the URL parser would quietly turn `Bücher.example`
  // into `xn--bcher-kva.example` and `EXAMPLE.com` into `example.com`, which Mastodon refuses.
  const written = /^https:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(text)?.[1];
  if (written !== url.hostname) return undefined;
  return url.href;
}

/** The rel=me links of a page, in document order: `href` as written (undefined when absent). */
export function relMeLinks(html: string): Array<string | undefined> {
  const links: Array<string | undefined> = [];
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name !== "a" && name !== "link") return;
      const rel = (attributes.rel ?? "").toLowerCase().split(/[\t\n\f\r ]+/);
      if (rel.includes("me")) links.push(attributes.href);
    },
  });
  parser.write(html);
  parser.end();
  return links;
}

/** The `Location` a URL answers a HEAD with, redirects not followed (undefined on any failure). */
async function redirectLocation(ctx: Ctx, url: string): Promise<string | undefined> {
  // safeFetch always follows redirects; the same outbound rules are applied through an agent of ours.
  const agent = createOutboundAgent(ctx.config, { responseTimeoutMs: LINK_TIMEOUT_MS, maxResponseBytes: 0 });
  try {
    const response = await httpRequest(url, {
      method: "HEAD",
      dispatcher: agent,
      headers: { "user-agent": userAgent(ctx.config), accept: "text/html" },
      signal: AbortSignal.timeout(LINK_TIMEOUT_MS),
    });
    await response.body.dump();
    const location = response.headers.location;
    return typeof location === "string" ? location : undefined;
  } catch {
    return undefined;
  } finally {
    await agent.close().catch(() => {});
  }
}

/** Whether the page at `url` links back to `profileUrl` with rel=me (directly, or by a redirect). */
async function linksBack(ctx: Ctx, url: string, profileUrl: string): Promise<boolean> {
  let html: string;
  try {
    const response = await safeFetch(ctx, url, {
      headers: { accept: "text/html" },
      maxBytes: LINK_PAGE_LIMIT,
      timeoutMs: LINK_TIMEOUT_MS,
    });
    if (response.status !== 200) return false;
    html = response.body.toString("utf8");
  } catch (error) {
    if (!(error instanceof SafeFetchError)) throw error;
    ctx.log.debug({ url, err: error }, "profile link not fetched");
    return false;
  }
  const links = relMeLinks(html);
  const wanted = profileUrl.toLowerCase();
  if (links.some((href) => href?.trim().toLowerCase() === wanted)) return true;
  const first = links[0]?.trim();
  if (!first) return false;
  let target: string;
  try {
    target = new URL(first, url).href;
  } catch {
    return false;
  }
  return (await redirectLocation(ctx, target)) === profileUrl;
}

/** `verified_at` as Mastodon renders it: milliseconds and a `+00:00` offset. */
function verifiedNow(): string {
  return new Date().toISOString().replace(/Z$/, "+00:00");
}

/**
 * Checks the unverified link fields of a local account and marks those whose page links back.
 * A missing or remote account, or one without such fields, costs one query and no request.
 */
export async function verifyAccountLinks(ctx: Ctx, accountId: string): Promise<void> {
  const account = await accountById(ctx.db.kysely, accountId);
  if (!account || account.domain !== null) return;
  const profileUrl = accountUrl(ctx, account);
  const pending = new Map<string, string>();
  for (const field of storedFields(account)) {
    if (field.verified_at) continue;
    const url = verifiableUrl(field.value);
    if (url) pending.set(field.value, url);
  }
  if (pending.size === 0) return;

  // At most a few fields (four by default), usually on different sites: checked side by side.
  const checked = await Promise.all(
    [...pending].map(async ([value, url]) => ((await linksBack(ctx, url, profileUrl)) ? value : undefined)),
  );
  const verified = new Set(checked.filter((value) => value !== undefined));
  if (verified.size === 0) return;

  await ctx.db.kysely.transaction().execute(async (tx) => {
    // Read again under the row's lock: the fields may have changed while the pages were fetched,
    // and only a value that was checked is marked.
    await lockAccountRow(tx, ctx.db.engine, accountId);
    const current = await accountById(tx, accountId);
    if (!current) return;
    const at = verifiedNow();
    let changed = false;
    const fields = storedFields(current).map((field) => {
      if (field.verified_at || !verified.has(field.value)) return field;
      changed = true;
      return { ...field, verified_at: at };
    });
    if (!changed) return;
    await tx
      .updateTable("accounts")
      .set({ fields: JSON.stringify(fields), updated_at: new Date().toISOString() })
      .where("id", "=", accountId)
      .execute();
  });
}
