/**
 * Who follows an account and whom it follows (the followers/following lists), and which of the
 * accounts a viewer follows also follow someone (familiar followers). An owner who hides their
 * collections shows empty lists to everyone else, as does an owner who blocks the viewer.
 */
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountPageOf, accountsByIds, type AccountPage } from "../../db/queries/accounts.ts";
import type { AccountRow } from "../../db/schema.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";

async function collectionHidden(ctx: Ctx, owner: AccountRow, viewerId: string | undefined): Promise<boolean> {
  if (viewerId === owner.id) return false;
  if (owner.hide_collections) return true;
  if (!viewerId) return false;
  const blocked = await ctx.db.kysely
    .selectFrom("blocks")
    .select("id")
    .where("account_id", "=", owner.id)
    .where("target_account_id", "=", viewerId)
    .executeTakeFirst();
  return blocked !== undefined;
}

/**
 * A page of an account's followers (newest follow first) or of the accounts it follows; empty when
 * the owner hides them from this viewer.
 */
export async function followCollection(
  ctx: Ctx,
  owner: AccountRow,
  which: "followers" | "following",
  viewerId: string | undefined,
  page: PageParams,
): Promise<AccountPage> {
  if (await collectionHidden(ctx, owner, viewerId)) return { rows: [], accounts: [] };
  const [ownerColumn, otherColumn] =
    which === "followers"
      ? (["target_account_id", "account_id"] as const)
      : (["account_id", "target_account_id"] as const);
  const query = ctx.db.kysely
    .selectFrom("follows")
    .select(["id", `${otherColumn} as other`])
    .where(ownerColumn, "=", owner.id);
  return accountPageOf(ctx.db.kysely, await fetchPage(query, "id", page), (r) => r.other);
}

/**
 * For each of `targets`: the accounts the viewer follows that follow it (at most `perTarget`),
 * none for a target that hides its collections. One query for all targets.
 */
export async function familiarFollowers(
  ctx: Ctx,
  viewer: AccountRow,
  targets: readonly AccountRow[],
  perTarget = 40,
): Promise<Map<string, AccountRow[]>> {
  const open = targets.filter((t) => !t.hide_collections || t.id === viewer.id).map((t) => t.id);
  const result = new Map<string, AccountRow[]>(targets.map((t) => [t.id, []]));
  if (open.length === 0) return result;
  const pairs = await ctx.db.kysely
    .selectFrom("follows as mine")
    .innerJoin("follows as theirs", "theirs.account_id", "mine.target_account_id")
    .select(["theirs.target_account_id as target", "theirs.account_id as familiar"])
    .where("mine.account_id", "=", viewer.id)
    .where("theirs.target_account_id", "in", open)
    .orderBy("theirs.id", "desc")
    .execute();
  const accounts = await accountsByIds(
    ctx.db.kysely,
    pairs.map((p) => p.familiar),
    { activeOnly: true },
  );
  const hidden = await hiddenAccounts(
    ctx.db.kysely,
    viewer.id,
    accounts.map((a) => a.id),
  );
  const byId = new Map(accounts.filter((a) => !hidden.has(a.id)).map((a) => [a.id, a]));
  for (const pair of pairs) {
    const list = result.get(pair.target);
    const account = byId.get(pair.familiar);
    if (list && account && list.length < perTarget) list.push(account);
  }
  return result;
}
