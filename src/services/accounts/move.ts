/**
 * An account moved to another (Mastodon's Move): the old account points to the new one
 * (`moved_to_account_id`: the API shows `moved`, and it can no longer be followed), and its local
 * followers follow the new account with the settings they had — a request where the new one
 * asks for approval, or another server's answer — and stop following the old one. Done in a job
 * for accounts with many followers. (Lists, blocks and mutes are not carried over yet.)
 *
 * A local account moves away (`moveAway`) only to an account that names it among its aliases;
 * its remote followers hear of it through the `account.moved` event (a Move to their servers).
 */
import type { Ctx } from "../../context.ts";
import { accountAliases } from "../../db/columns.ts";
import type { AccountRow } from "../../db/schema.ts";
import { Forbidden, ValidationFailed } from "../../errors.ts";
import { acctOf } from "../../entities/account.ts";
import { followAccount, unfollowAccount } from "./follow.ts";
import { lookupOrResolveAccount } from "./lookup.ts";

/** The job that moves the local followers of an account that moved. */
export const MOVE_FOLLOWERS_JOB = "accounts.move_followers";

/** Records that `from` moved to `to`, and queues the move of its local followers. */
export async function accountMoved(ctx: Ctx, from: AccountRow, to: AccountRow): Promise<void> {
  if (from.id === to.id || to.moved_to_account_id) return;
  await ctx.dispatcher.transaction(async (tx) => {
    await tx
      .updateTable("accounts")
      .set({ moved_to_account_id: to.id, updated_at: new Date().toISOString() })
      .where("id", "=", from.id)
      .execute();
    await ctx.jobs.enqueueWith(tx, MOVE_FOLLOWERS_JOB, { fromId: from.id, toId: to.id });
    await ctx.dispatcher.emit(tx, {
      type: "account.moved",
      accountId: from.id,
      targetId: to.id,
      local: from.domain === null,
    });
  });
}

/**
 * Moves the local account `account` to the account `handle` names (here or on another server):
 * refused unless that account names this one among its aliases now (read from its server), as
 * Mastodon checks before it sends the Move. Returns the new account.
 */
export async function moveAway(ctx: Ctx, account: AccountRow, handle: string): Promise<AccountRow> {
  const text = handle.trim();
  if (!text) throw new ValidationFailed("Handle can't be blank");
  const target = await lookupOrResolveAccount(ctx, text);
  if (!target) throw new ValidationFailed(`No account ${text} could be found`);
  if (target.id === account.id) throw new ValidationFailed("An account cannot move to itself");
  if (target.moved_to_account_id) throw new ValidationFailed(`${acctOf(target)} has moved itself`);
  if (target.suspended_at) throw new ValidationFailed(`${acctOf(target)} is suspended`);
  const aliases = target.domain === null ? accountAliases(target) : await ctx.remote.currentAliases(target.uri);
  if (!aliases) throw new ValidationFailed(`${acctOf(target)} could not be reached to check its aliases`);
  if (!aliases.includes(account.uri))
    throw new ValidationFailed(`${acctOf(target)} does not name this account among its aliases yet`);
  await accountMoved(ctx, account, target);
  return target;
}

/** Moves the local followers of `fromId` to `toId`; returns how many moved. */
export async function moveFollowers(ctx: Ctx, fromId: string, toId: string): Promise<number> {
  const db = ctx.db.kysely;
  const [from, to] = await Promise.all([
    db.selectFrom("accounts").selectAll().where("id", "=", fromId).executeTakeFirst(),
    db.selectFrom("accounts").selectAll().where("id", "=", toId).executeTakeFirst(),
  ]);
  if (!from || !to || from.moved_to_account_id !== to.id || to.suspended_at) return 0;
  const followers = await db
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.account_id")
    .selectAll("accounts")
    .select(["follows.show_reblogs", "follows.notify", "follows.languages"])
    .where("follows.target_account_id", "=", from.id)
    .where("accounts.domain", "is", null)
    .execute();
  let moved = 0;
  for (const { show_reblogs, notify, languages, ...follower } of followers) {
    try {
      await followAccount(ctx, follower as AccountRow, to, {
        reblogs: Boolean(show_reblogs),
        notify: Boolean(notify),
        languages: languages ? (JSON.parse(languages) as string[]) : null,
      });
    } catch (error) {
      // A block between them: the follower does not follow the new account, and keeps the old one.
      if (error instanceof Forbidden) continue;
      throw error;
    }
    await unfollowAccount(ctx, follower as AccountRow, from);
    moved++;
  }
  return moved;
}
