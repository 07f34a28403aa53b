/**
 * Who boosted or favourited a status (reblogged_by, favourited_by), paged by the IDs of the boosts
 * and favourites, so the Link header's cursors are those rows' IDs. Suspended accounts are left out, and
 * for a signed-in viewer the accounts hidden from them (services/accounts/exclusions.ts).
 */
import type { Ctx } from "../../context.ts";
import { accountsByIds } from "../../db/queries/accounts.ts";
import { hiddenAccounts } from "../accounts/exclusions.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow } from "../../db/schema.ts";

export interface InteractingAccounts {
  /** The page of join rows, newest first: the cursors for the Link header. */
  rows: Array<{ cursor: string; account_id: string }>;
  /** Their accounts, in the same order, without suspended ones. */
  accounts: AccountRow[];
}

async function accountsOf(
  ctx: Ctx,
  rows: InteractingAccounts["rows"],
  viewerId: string | undefined,
): Promise<InteractingAccounts> {
  const found = await accountsByIds(
    ctx.db.kysely,
    rows.map((r) => r.account_id),
    { activeOnly: true },
  );
  // A signed-in viewer does not see the accounts hidden from them (blocks, mutes, domain blocks).
  const hidden = viewerId
    ? await hiddenAccounts(
        ctx.db.kysely,
        viewerId,
        found.map((a) => a.id),
      )
    : new Set<string>();
  const byId = new Map(found.filter((a) => !hidden.has(a.id)).map((a) => [a.id, a]));
  return { rows, accounts: rows.map((r) => byId.get(r.account_id)).filter((a) => a !== undefined) };
}

/** Boosters of a status; followers-only boosts stay out, as Mastodon lists only public and unlisted ones. */
export async function rebloggedBy(
  ctx: Ctx,
  statusId: string,
  page: PageParams,
  viewerId: string | undefined,
): Promise<InteractingAccounts> {
  const query = ctx.db.kysely
    .selectFrom("statuses")
    .select(["id as cursor", "account_id"])
    .where("reblog_of_id", "=", statusId)
    .where("visibility", "in", ["public", "unlisted"]);
  return accountsOf(ctx, await fetchPage(query, "id", page), viewerId);
}

export async function favouritedBy(
  ctx: Ctx,
  statusId: string,
  page: PageParams,
  viewerId: string | undefined,
): Promise<InteractingAccounts> {
  const query = ctx.db.kysely
    .selectFrom("favourites")
    .select(["id as cursor", "account_id"])
    .where("status_id", "=", statusId);
  return accountsOf(ctx, await fetchPage(query, "id", page), viewerId);
}
