/**
 * An account moved to another (Mastodon's Move): the old account points to the new one
 * (`moved_to_account_id`: the API shows `moved`, and it can no longer be followed), and its local
 * followers follow the new account with the settings they had — a request where the new one
 * asks for approval, or another server's answer — and stop following the old one. Done in a job
 * for accounts with many followers. (Lists, blocks and mutes are not carried over yet.)
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { Forbidden } from "../../errors.ts";
import { followAccount, unfollowAccount } from "./follow.ts";

/** The job that moves the local followers of an account that moved. */
export const MOVE_FOLLOWERS_JOB = "accounts.move_followers";

/** Records that `from` moved to `to`, and queues the move of its local followers. */
export async function accountMoved(ctx: Ctx, from: AccountRow, to: AccountRow): Promise<void> {
  if (from.id === to.id || to.moved_to_account_id) return;
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .updateTable("accounts")
      .set({ moved_to_account_id: to.id, updated_at: new Date().toISOString() })
      .where("id", "=", from.id)
      .execute();
    await ctx.jobs.enqueueWith(tx, MOVE_FOLLOWERS_JOB, { fromId: from.id, toId: to.id });
  });
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
