/**
 * Trends from real activity (Mastodon's Trends::Tags, ::Statuses, ::Links), ranked by the
 * `trends.refresh` job every quarter of an hour and read in order by the API. A new or quiet server
 * has empty lists; nothing is made up.
 * - Hashtags: used in public posts by at least two accounts in the last day, more than their usual
 *   daily number of accounts over the six days before (score: today's accounts minus that average).
 * - Statuses: public original posts of the last two days, not replies, not sensitive and without a
 *   content warning, by discoverable authors, with at least two favourites and boosts together;
 *   score: those interactions halved every twelve hours of age.
 * - Links: preview cards of public posts of the last week shared by at least two accounts; score:
 *   accounts sharing it in the last day plus a seventh of those of the week.
 * - Accounts (for suggestions): the most followed local, discoverable accounts that posted in
 *   the last 30 days.
 * Silenced and suspended authors count for nothing. What the public sees of the hashtags, statuses
 * and links is then what moderators' review allows (review.ts); moderators see every place.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { idFloorForTime } from "../../db/ids.ts";
import { statusesByIds } from "../../db/queries/statuses.ts";
import type { AccountRow, PreviewCardRow, StatusRow, TagRow, TrendsTable } from "../../db/schema.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";
import { filterVisible } from "../visibility/find.ts";
import { ensureProviders, linkReviewStates, reviewStates } from "./review.ts";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** How many places each ranking keeps. */
const KEEP = 100;
const ACCOUNTS_KEEP = 200;

type Kind = TrendsTable["kind"];
interface Ranked {
  id: string;
  score: number;
}

function top(items: Ranked[], keep = KEEP): Ranked[] {
  return items
    .filter((i) => i.score > 0)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1))
    .slice(0, keep);
}

/** Public original posts of live, unsilenced authors since `since` (conditions on `s` and `a`). */
const PUBLIC_RECENT = sql`s.visibility = 'public' AND s.reblog_of_id IS NULL AND s.deleted_at IS NULL
  AND a.suspended_at IS NULL AND a.silenced_at IS NULL`;

async function rankTags(ctx: Ctx, now: number): Promise<Ranked[]> {
  const day = idFloorForTime(new Date(now - DAY));
  const week = idFloorForTime(new Date(now - 7 * DAY));
  const rows = await sql<{ tag_id: string; today: number | string; before: number | string }>`
    SELECT st.tag_id,
      COUNT(DISTINCT CASE WHEN s.id >= ${day} THEN s.account_id END) AS today,
      COUNT(DISTINCT CASE WHEN s.id < ${day} THEN s.account_id END) AS before
    FROM statuses s
    JOIN statuses_tags st ON st.status_id = s.id
    JOIN accounts a ON a.id = s.account_id
    WHERE s.id >= ${week} AND ${PUBLIC_RECENT}
    GROUP BY st.tag_id`.execute(ctx.db.kysely);
  return top(
    rows.rows
      .filter((r) => Number(r.today) >= 2)
      .map((r) => ({ id: String(r.tag_id), score: Number(r.today) - Number(r.before) / 6 })),
  );
}

async function rankStatuses(ctx: Ctx, now: number): Promise<Ranked[]> {
  const since = idFloorForTime(new Date(now - 2 * DAY));
  const rows = await sql<{ id: string; interactions: number | string; created_at: string | Date }>`
    SELECT s.id, s.favourites_count + s.reblogs_count AS interactions, s.created_at
    FROM statuses s
    JOIN accounts a ON a.id = s.account_id
    WHERE s.id >= ${since} AND ${PUBLIC_RECENT} AND s.in_reply_to_id IS NULL
      AND s.sensitive = ${false} AND s.spoiler_text = '' AND a.discoverable = ${true}
      AND s.favourites_count + s.reblogs_count >= 2`.execute(ctx.db.kysely);
  return top(
    rows.rows.map((r) => {
      const ageHours = Math.max(0, now - new Date(r.created_at).getTime()) / HOUR;
      return { id: String(r.id), score: Number(r.interactions) * 0.5 ** (ageHours / 12) };
    }),
  );
}

async function rankLinks(ctx: Ctx, now: number): Promise<Ranked[]> {
  const day = idFloorForTime(new Date(now - DAY));
  const week = idFloorForTime(new Date(now - 7 * DAY));
  const rows = await sql<{ card_id: string; today: number | string; week: number | string }>`
    SELECT pcs.preview_card_id AS card_id,
      COUNT(DISTINCT CASE WHEN s.id >= ${day} THEN s.account_id END) AS today,
      COUNT(DISTINCT s.account_id) AS week
    FROM statuses s
    JOIN preview_cards_statuses pcs ON pcs.status_id = s.id
    JOIN accounts a ON a.id = s.account_id
    WHERE s.id >= ${week} AND ${PUBLIC_RECENT}
    GROUP BY pcs.preview_card_id`.execute(ctx.db.kysely);
  return top(
    rows.rows
      .filter((r) => Number(r.week) >= 2)
      .map((r) => ({ id: String(r.card_id), score: Number(r.today) + Number(r.week) / 7 })),
  );
}

async function rankAccounts(ctx: Ctx, now: number): Promise<Ranked[]> {
  const rows = await ctx.db.kysely
    .selectFrom("accounts")
    .innerJoin("users", "users.account_id", "accounts.id")
    .select(["accounts.id", "accounts.followers_count"])
    .where("accounts.domain", "is", null)
    .where("accounts.discoverable", "=", true)
    .where("accounts.suspended_at", "is", null)
    .where("accounts.silenced_at", "is", null)
    .where("accounts.last_status_at", ">=", new Date(now - 30 * DAY).toISOString())
    .where("users.confirmed_at", "is not", null)
    .where("users.approved", "=", true)
    .where("users.disabled", "=", false)
    .execute();
  // Every active account has a place; followers order them (one more so that none scores 0).
  return top(
    rows.map((r) => ({ id: r.id, score: Number(r.followers_count) + 1 })),
    ACCOUNTS_KEEP,
  );
}

/** Recomputes every ranking from the activity up to `now`, each replaced in one transaction. */
export async function refreshTrends(ctx: Ctx, now: number = Date.now()): Promise<Record<Kind, number>> {
  const rankings: Record<Kind, Ranked[]> = {
    tags: await rankTags(ctx, now),
    statuses: await rankStatuses(ctx, now),
    links: await rankLinks(ctx, now),
    accounts: await rankAccounts(ctx, now),
  };
  const computedAt = new Date(now).toISOString();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    for (const [kind, ranked] of Object.entries(rankings) as Array<[Kind, Ranked[]]>) {
      await tx.deleteFrom("trends").where("kind", "=", kind).execute();
      for (let i = 0; i < ranked.length; i += 200) {
        await tx
          .insertInto("trends")
          .values(
            ranked.slice(i, i + 200).map((r, j) => ({
              kind,
              position: i + j,
              item_id: r.id,
              score: r.score,
              computed_at: computedAt,
            })),
          )
          .execute();
      }
    }
  });
  if (rankings.links.length > 0) {
    const cards = await ctx.db.kysely
      .selectFrom("preview_cards")
      .select("url")
      .where(
        "id",
        "in",
        rankings.links.map((r) => r.id),
      )
      .execute();
    await ensureProviders(
      ctx.db.kysely,
      cards.map((c) => c.url),
      computedAt,
    );
  }
  return {
    tags: rankings.tags.length,
    statuses: rankings.statuses.length,
    links: rankings.links.length,
    accounts: rankings.accounts.length,
  };
}

export interface OffsetPage {
  limit: number;
  offset: number;
  /** Every ranked item, reviewed or not (what moderators see); otherwise only what review allows. */
  unreviewed?: boolean;
}

/** The IDs among `ids` (one ranking, in order) that review lets the public see. */
async function allowedIds(ctx: Ctx, kind: "tags" | "statuses" | "links", ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const db = ctx.db.kysely;
  const states =
    kind === "links"
      ? await linkReviewStates(
          db,
          await db.selectFrom("preview_cards").select(["id", "url"]).where("id", "in", ids).execute(),
        )
      : await reviewStates(db, kind, ids);
  return ids.filter((id) => states.get(id)?.trendable === true);
}

/** The IDs of a ranking's places `offset` … `offset + limit`, in order. */
async function rankingIds(ctx: Ctx, kind: Kind, page: OffsetPage): Promise<string[]> {
  if (page.limit <= 0) return [];
  if (kind !== "accounts" && !page.unreviewed) {
    // A ranking keeps at most KEEP places: all of them are read, and review filters them.
    const ranked = await ctx.db.kysely
      .selectFrom("trends")
      .select("item_id")
      .where("kind", "=", kind)
      .orderBy("position")
      .limit(KEEP)
      .execute();
    const allowed = await allowedIds(
      ctx,
      kind,
      ranked.map((r) => r.item_id),
    );
    return allowed.slice(page.offset, page.offset + page.limit);
  }
  const rows = await ctx.db.kysely
    .selectFrom("trends")
    .select("item_id")
    .where("kind", "=", kind)
    .orderBy("position")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return rows.map((r) => r.item_id);
}

/** Keeps `rows` in the order of `ids`. */
function inOrder<T extends { id: string }>(ids: readonly string[], rows: readonly T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is T => r !== undefined);
}

export async function trendingTags(ctx: Ctx, page: OffsetPage): Promise<TagRow[]> {
  const ids = await rankingIds(ctx, "tags", page);
  if (ids.length === 0) return [];
  return inOrder(ids, await ctx.db.kysely.selectFrom("tags").selectAll().where("id", "in", ids).execute());
}

/** Trending statuses the viewer may see, minus authors hidden from them. */
export async function trendingStatuses(
  ctx: Ctx,
  viewer: AccountRow | undefined,
  page: OffsetPage,
): Promise<StatusRow[]> {
  const ids = await rankingIds(ctx, "statuses", page);
  const rows = await filterVisible(ctx, inOrder(ids, await statusesByIds(ctx.db.kysely, ids)), viewer?.id);
  if (!viewer) return rows;
  const hidden = await hiddenAccounts(
    ctx.db.kysely,
    viewer.id,
    rows.map((r) => r.account_id),
  );
  return rows.filter((r) => !hidden.has(r.account_id));
}

export interface TrendingLink {
  card: PreviewCardRow;
  /** The last seven days, newest first: distinct accounts sharing it and posts linking it. */
  history: Array<{ day: number; accounts: number; uses: number }>;
}

export async function trendingLinks(ctx: Ctx, page: OffsetPage, now: number = Date.now()): Promise<TrendingLink[]> {
  const ids = await rankingIds(ctx, "links", page);
  if (ids.length === 0) return [];
  const cards = inOrder(
    ids,
    await ctx.db.kysely.selectFrom("preview_cards").selectAll().where("id", "in", ids).execute(),
  );
  return withHistories(ctx, cards, now);
}

/** Each card with its last seven days of public shares (one query for all of them). */
export async function withHistories(
  ctx: Ctx,
  cards: readonly PreviewCardRow[],
  now: number = Date.now(),
): Promise<TrendingLink[]> {
  if (cards.length === 0) return [];
  const ids = cards.map((c) => c.id);
  const today = Math.floor(now / DAY) * DAY;
  const shares = await ctx.db.kysely
    .selectFrom("preview_cards_statuses as pcs")
    .innerJoin("statuses as s", "s.id", "pcs.status_id")
    .select(["pcs.preview_card_id", "s.account_id", "s.created_at"])
    .where("pcs.preview_card_id", "in", ids)
    .where("s.id", ">=", idFloorForTime(new Date(today - 6 * DAY)))
    .where("s.visibility", "=", "public")
    .where("s.deleted_at", "is", null)
    .execute();
  return cards.map((card) => {
    const days = Array.from({ length: 7 }, (_, i) => ({
      day: (today - i * DAY) / 1000,
      accounts: new Set<string>(),
      uses: 0,
    }));
    for (const share of shares) {
      if (share.preview_card_id !== card.id) continue;
      const index = Math.floor((today + DAY - 1 - new Date(share.created_at).getTime()) / DAY);
      const bucket = days[index];
      if (!bucket) continue;
      bucket.accounts.add(share.account_id);
      bucket.uses++;
    }
    return { card, history: days.map((d) => ({ day: d.day, accounts: d.accounts.size, uses: d.uses })) };
  });
}

/** The ranking of active accounts suggestions draw on (IDs, most followed first). */
export async function popularAccountIds(ctx: Ctx, limit = ACCOUNTS_KEEP): Promise<string[]> {
  return rankingIds(ctx, "accounts", { limit, offset: 0 });
}
