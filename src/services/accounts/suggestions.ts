/**
 * Follow suggestions (Mastodon's AccountSuggestions), from two honest sources:
 * - `friends_of_friends`: accounts followed by the accounts the user followed most recently (the
 *   last 50), most shared first;
 * - `most_followed`: the most followed local accounts active in the last 30 days (a ranking the
 *   trends job keeps, services/trends/trends.ts).
 * Only discoverable, shown, unsuspended accounts are suggested, never the user, accounts they
 * follow or asked to follow, block, mute or are blocked by, accounts on domains they block, nor
 * accounts they dismissed (`DELETE /api/v1/suggestions/:id`).
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow } from "../../db/schema.ts";
import { notHiddenFrom } from "../visibility/exclusions.ts";
import { popularAccountIds } from "../trends/trends.ts";

export type SuggestionSource = "friends_of_friends" | "most_followed";

export interface Suggestion {
  account: AccountRow;
  sources: SuggestionSource[];
}

/** How many recent follows of the user the friends-of-friends source looks through. */
const RECENT_FOLLOWS = 50;
const CANDIDATES = 200;

async function friendsOfFriends(ctx: Ctx, viewer: AccountRow): Promise<string[]> {
  const rows = await sql<{ id: string; shared: number | string }>`
    SELECT f2.target_account_id AS id, COUNT(*) AS shared
    FROM (SELECT follows.target_account_id FROM follows WHERE follows.account_id = ${viewer.id}
          ORDER BY follows.id DESC LIMIT ${RECENT_FOLLOWS}) friends
    JOIN follows f2 ON f2.account_id = friends.target_account_id
    GROUP BY f2.target_account_id
    ORDER BY COUNT(*) DESC, f2.target_account_id DESC
    LIMIT ${CANDIDATES}`.execute(ctx.db.kysely);
  return rows.rows.map((r) => String(r.id));
}

/** The suggestions for `viewer`, best first, `offset` … `offset + limit`. */
export async function suggestionsFor(
  ctx: Ctx,
  viewer: AccountRow,
  page: { limit: number; offset: number },
): Promise<Suggestion[]> {
  if (page.limit <= 0) return [];
  const [friends, popular] = await Promise.all([friendsOfFriends(ctx, viewer), popularAccountIds(ctx)]);
  const sources = new Map<string, SuggestionSource[]>();
  for (const id of friends) sources.set(id, ["friends_of_friends"]);
  for (const id of popular) sources.set(id, [...(sources.get(id) ?? []), "most_followed"]);
  const candidates = [...sources.keys()].filter((id) => id !== viewer.id);
  if (candidates.length === 0) return [];
  const v = viewer.id;
  const rows = await ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("accounts.id", "in", candidates)
    .where("accounts.discoverable", "=", true)
    .where("accounts.suspended_at", "is", null)
    .where("accounts.moved_to_account_id", "is", null)
    .where(
      sql<boolean>`(accounts.domain IS NOT NULL OR EXISTS (SELECT 1 FROM users WHERE users.account_id = accounts.id
        AND users.confirmed_at IS NOT NULL AND users.approved = ${true} AND users.disabled = ${false}))`,
    )
    .where(
      sql<boolean>`NOT EXISTS (SELECT 1 FROM follows WHERE follows.account_id = ${v} AND follows.target_account_id = accounts.id)`,
    )
    .where(
      sql<boolean>`NOT EXISTS (SELECT 1 FROM follow_requests WHERE follow_requests.account_id = ${v} AND follow_requests.target_account_id = accounts.id)`,
    )
    .where(
      sql<boolean>`NOT EXISTS (SELECT 1 FROM follow_recommendation_suppressions frs WHERE frs.account_id = ${v} AND frs.target_account_id = accounts.id)`,
    )
    .where(notHiddenFrom(v, "accounts.id"))
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  // Accounts both sources name come first, then friends of friends, then the most followed.
  const rank = (id: string) => (sources.get(id)!.length === 2 ? 0 : 1);
  const ordered = candidates
    .filter((id) => byId.has(id))
    .map((id, index) => ({ id, index }))
    .sort((a, b) => rank(a.id) - rank(b.id) || a.index - b.index);
  return ordered
    .slice(page.offset, page.offset + page.limit)
    .map(({ id }) => ({ account: byId.get(id)!, sources: sources.get(id)! }));
}

/** The viewer dismisses the suggestion of `target`; it is not offered again. */
export async function dismissSuggestion(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<void> {
  await ctx.db.kysely
    .insertInto("follow_recommendation_suppressions")
    .values({ id: newId(), account_id: viewer.id, target_account_id: target.id, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
    .execute();
}
