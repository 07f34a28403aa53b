/**
 * Who boosted or favourited a status (reblogged_by, favourited_by), paged by the IDs of the boosts
 * and favourites, so the Link header's cursors are those rows' IDs. Suspended accounts are left out, and
 * for a signed-in viewer the accounts hidden from them (services/accounts/exclusions.ts).
 */
import type { Ctx } from "../../context.ts";
import { accountPageOf, type AccountPage } from "../../db/queries/accounts.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";

async function accountsOf(
  ctx: Ctx,
  rows: Array<{ id: string; account_id: string }>,
  viewerId: string | undefined,
): Promise<AccountPage> {
  const page = await accountPageOf(ctx.db.kysely, rows, (r) => r.account_id);
  if (!viewerId) return page;
  // A signed-in viewer does not see the accounts hidden from them (blocks, mutes, domain blocks).
  const hidden = await hiddenAccounts(
    ctx.db.kysely,
    viewerId,
    page.accounts.map((a) => a.id),
  );
  return { rows, accounts: page.accounts.filter((a) => !hidden.has(a.id)) };
}

/** Boosters of a status; followers-only boosts stay out, as Mastodon lists only public and unlisted ones. */
export async function rebloggedBy(
  ctx: Ctx,
  statusId: string,
  page: PageParams,
  viewerId: string | undefined,
): Promise<AccountPage> {
  const query = ctx.db.kysely
    .selectFrom("statuses")
    .select(["id", "account_id"])
    .where("reblog_of_id", "=", statusId)
    .where("visibility", "in", ["public", "unlisted"]);
  return accountsOf(ctx, await fetchPage(query, "id", page), viewerId);
}

export async function favouritedBy(
  ctx: Ctx,
  statusId: string,
  page: PageParams,
  viewerId: string | undefined,
): Promise<AccountPage> {
  const query = ctx.db.kysely.selectFrom("favourites").select(["id", "account_id"]).where("status_id", "=", statusId);
  return accountsOf(ctx, await fetchPage(query, "id", page), viewerId);
}
