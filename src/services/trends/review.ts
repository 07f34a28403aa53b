/**
 * Which ranked trends the public may see, after moderators' review (Mastodon's `trendable?` of
 * Tag, Status and PreviewCard, and `Setting.trendable_by_default`):
 * - an item a moderator approved trends, one rejected never does;
 * - a link without a review of its own follows its publisher's (PreviewCardProvider: the longest
 *   of its host's domains that has a row);
 * - anything else unreviewed trends only when the server does not ask for review, that is while the
 *   instance setting `trendable_by_default` is true. Rookery's default is true (trends as they
 *   were before review existed); Mastodon's is false (nothing trends before approval).
 * Rankings hold at most a hundred places, so a check reads a bounded number of rows by key.
 */
import type { Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import { loadSettings } from "../instance/settings.ts";
import type { Database, PreviewCardProviderRow, TrendReviewRow } from "../../db/schema.ts";

export type ReviewKind = TrendReviewRow["kind"];

/** Whether unreviewed tags, statuses and links trend (the instance setting, true unless set false). */
export async function trendableByDefault(db: Kysely<Database>): Promise<boolean> {
  return (await loadSettings(db)).values.trendable_by_default;
}

/** The reviews of `ids` of one kind, by item ID. */
export async function reviewsOf(
  db: Kysely<Database>,
  kind: ReviewKind,
  ids: readonly string[],
): Promise<Map<string, TrendReviewRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("trend_reviews")
    .selectAll()
    .where("kind", "=", kind)
    .where("item_id", "in", [...ids])
    .execute();
  return new Map(rows.map((r) => [r.item_id, r]));
}

/** A URL's host, lowercase, without port (undefined when it has none). */
export function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
    return host || undefined;
  } catch {
    return undefined;
  }
}

/** `host` and each of its parent domains, longest first (`a.b.c` → `a.b.c`, `b.c`, `c`). */
function domainsOf(host: string): string[] {
  const labels = host.split(".");
  return labels.map((_, i) => labels.slice(i).join("."));
}

/** The publisher of each URL (the longest matching domain with a row), by URL. */
export async function providersOfUrls(
  db: Kysely<Database>,
  urls: readonly string[],
): Promise<Map<string, PreviewCardProviderRow>> {
  const hosts = new Map(urls.map((url) => [url, hostOf(url)]));
  const candidates = [...new Set([...hosts.values()].flatMap((host) => (host ? domainsOf(host) : [])))];
  if (candidates.length === 0) return new Map();
  const rows = await db.selectFrom("preview_card_providers").selectAll().where("domain", "in", candidates).execute();
  const byDomain = new Map(rows.map((r) => [r.domain, r]));
  const result = new Map<string, PreviewCardProviderRow>();
  for (const [url, host] of hosts) {
    const provider = host ? domainsOf(host).find((d) => byDomain.has(d)) : undefined;
    if (provider) result.set(url, byDomain.get(provider)!);
  }
  return result;
}

/** What review says of ranked items: whether each trends, and whether it still awaits review. */
export interface ReviewState {
  trendable: boolean;
  requiresReview: boolean;
}

/** The review state of tags or statuses (Mastodon: a status's author review is not kept here). */
export async function reviewStates(
  db: Kysely<Database>,
  kind: "tags" | "statuses",
  ids: readonly string[],
): Promise<Map<string, ReviewState>> {
  const [reviews, byDefault] = await Promise.all([reviewsOf(db, kind, ids), trendableByDefault(db)]);
  return new Map(
    ids.map((id) => {
      const review = reviews.get(id);
      return [id, { trendable: review ? review.trendable : byDefault, requiresReview: !review }];
    }),
  );
}

/** The review state of links (preview cards), their own review first, then their publisher's. */
export async function linkReviewStates(
  db: Kysely<Database>,
  cards: ReadonlyArray<{ id: string; url: string }>,
): Promise<Map<string, ReviewState>> {
  const [reviews, providers, byDefault] = await Promise.all([
    reviewsOf(
      db,
      "links",
      cards.map((c) => c.id),
    ),
    providersOfUrls(
      db,
      cards.map((c) => c.url),
    ),
    trendableByDefault(db),
  ]);
  return new Map(
    cards.map((card) => {
      const review = reviews.get(card.id);
      const provider = providers.get(card.url);
      if (review) return [card.id, { trendable: review.trendable, requiresReview: false }];
      const reviewed = provider?.reviewed_at != null;
      return [card.id, { trendable: provider?.trendable ?? byDefault, requiresReview: !reviewed }];
    }),
  );
}

/**
 * Makes sure each trending link's publisher has a row (for moderators to review), noting when it
 * was first asked for (Mastodon's `request_review`).
 */
export async function ensureProviders(db: Kysely<Database>, urls: readonly string[], now: string): Promise<void> {
  const hosts = [...new Set(urls.map(hostOf).filter((h): h is string => h !== undefined))];
  if (hosts.length === 0) return;
  const known = await providersOfUrls(
    db,
    hosts.map((h) => `https://${h}/`),
  );
  const missing = hosts.filter((h) => !known.has(`https://${h}/`));
  if (missing.length === 0) return;
  await db
    .insertInto("preview_card_providers")
    .values(
      missing.map((domain) => ({
        id: newId(),
        domain,
        trendable: null,
        reviewed_at: null,
        requested_review_at: now,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) => oc.column("domain").doNothing())
    .execute();
}
