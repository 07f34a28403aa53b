/**
 * Removing what remote accounts had here, as Mastodon's suspension and account deletion do: the
 * follows between them and our accounts end without telling anyone (nothing is sent to them),
 * pending requests go, and their posts are deleted, a batch per call, so a job can do it in steps.
 * Used when a domain is suspended and when a remote account deletes itself.
 */
import type { SelectQueryBuilder } from "kysely";
import type { Ctx } from "../../context.ts";
import type { AccountRow, Database } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { deleteStatus } from "../statuses/delete.ts";
import { removeFollow } from "./follow.ts";

/** Statuses removed per call (the job queues itself again while there are more). */
const PURGE_BATCH = 200;

/** The job that purges a remote account that deleted itself. */
export const ACCOUNT_PURGE_JOB = "accounts.purge";

type AccountIds = SelectQueryBuilder<Database, "accounts", { id: string }>;

/** Purges a batch of what the accounts `accounts` selects had; returns whether more is left. */
export async function purgeRemoteAccounts(ctx: Ctx, accounts: AccountIds): Promise<boolean> {
  const db = ctx.db.kysely;
  const follows = await db
    .selectFrom("follows")
    .select(["account_id", "target_account_id"])
    .where((eb) => eb.or([eb("account_id", "in", accounts), eb("target_account_id", "in", accounts)]))
    .execute();
  if (follows.length > 0)
    await ctx.dispatcher.transaction(async (tx) => {
      for (const follow of follows)
        await removeFollow(ctx, tx, follow.account_id, follow.target_account_id, { announce: false });
    });
  await db
    .deleteFrom("follow_requests")
    .where((eb) => eb.or([eb("account_id", "in", accounts), eb("target_account_id", "in", accounts)]))
    .execute();
  const statuses = await db
    .selectFrom("statuses")
    .selectAll()
    .where("account_id", "in", accounts)
    .orderBy("id", "desc")
    .limit(PURGE_BATCH)
    .execute();
  for (const status of statuses)
    await deleteStatus(ctx, status).catch((error: unknown) => {
      if (!(error instanceof NotFound)) throw error;
    });
  return statuses.length === PURGE_BATCH;
}

/**
 * A remote account deleted itself (its server sent a Delete of its actor): it is suspended at once
 * (hidden everywhere, refused as a sender) and its follows and posts are purged in the background.
 */
export async function deleteRemoteAccount(ctx: Ctx, account: AccountRow): Promise<void> {
  if (account.domain === null) return;
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .updateTable("accounts")
      .set({ suspended_at: account.suspended_at ?? new Date().toISOString() })
      .where("id", "=", account.id)
      .execute();
    await ctx.jobs.enqueueWith(tx, ACCOUNT_PURGE_JOB, { accountId: account.id });
  });
  await ctx.dispatcher.emitCommitted({ type: "access.changed", accountIds: [account.id] });
}

/** One step of purging a deleted remote account; true while more is left. */
export async function purgeDeletedAccount(ctx: Ctx, accountId: string): Promise<boolean> {
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .select(["id", "suspended_at", "domain"])
    .where("id", "=", accountId)
    .executeTakeFirst();
  if (!account || account.domain === null || !account.suspended_at) return false;
  return purgeRemoteAccounts(ctx, ctx.db.kysely.selectFrom("accounts").select("id").where("id", "=", accountId));
}
