/**
 * A suspended account's data goes 30 days after a moderator suspended it (Mastodon's
 * AccountDeletionRequest and SuspendedUserCleanupScheduler): the suspension writes a request,
 * lifting it (unsuspend, an approved appeal) withdraws it, and a daily job removes the data of
 * accounts whose request is due — a local account is deleted as its owner would delete it, a
 * remote one has its posts and follows purged. A moderator may still delete the data sooner
 * (Delete User Data).
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { AccountRow, Database } from "../../db/schema.ts";
import { deleteOwnAccount } from "../accounts/deletion.ts";
import { ACCOUNT_PURGE_JOB } from "../accounts/purge.ts";
import { recordAction, type AuditEntry } from "./audit.ts";

/** How long after a suspension its account's data is deleted. */
export const DELETION_DELAY_DAYS = 30;
/** The daily job that deletes what is due. */
export const DELETION_REQUESTS_JOB = "accounts.deletion_requests";
/** Requests handled per run (the next run takes the rest). */
const BATCH = 100;

/** Asks for `accountId`'s data to be deleted later (a second request keeps the first's date). */
export async function requestDataDeletion(tx: Kysely<Database>, accountId: string, now = new Date()): Promise<void> {
  await tx
    .insertInto("account_deletion_requests")
    .values({ account_id: accountId, created_at: now.toISOString() })
    .onConflict((oc) => oc.column("account_id").doNothing())
    .execute();
}

/** Withdraws the request for `accountId`'s data, if any (the suspension was lifted). */
export async function withdrawDataDeletion(tx: Kysely<Database>, accountId: string): Promise<void> {
  await tx.deleteFrom("account_deletion_requests").where("account_id", "=", accountId).execute();
}

/** When `accountId`'s data is due to go, or null when nothing is asked. */
export async function dataDeletionDue(db: Kysely<Database>, accountId: string): Promise<Date | null> {
  const row = await db
    .selectFrom("account_deletion_requests")
    .select("created_at")
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row ? new Date(Date.parse(row.created_at) + DELETION_DELAY_DAYS * 86_400_000) : null;
}

/**
 * Removes a suspended account's data (Mastodon's Admin::AccountDeletionWorker): a local one as its
 * owner's deletion does (signed out, its address freed, other servers told, a job empties it, the
 * username kept), a remote one's follows and posts by the purge job. The request, if any, is done;
 * `audit` is recorded when a moderator asked.
 */
export async function removeSuspendedAccountData(ctx: Ctx, account: AccountRow, audit?: AuditEntry): Promise<void> {
  if (account.domain !== null) {
    await ctx.dispatcher.transaction(async (tx) => {
      await ctx.jobs.enqueueWith(tx, ACCOUNT_PURGE_JOB, { accountId: account.id });
      await withdrawDataDeletion(tx, account.id);
      if (audit) await recordAction(tx, audit);
    });
    return;
  }
  const db = ctx.db.kysely;
  const user = await db.selectFrom("users").selectAll().where("account_id", "=", account.id).executeTakeFirst();
  // deleteOwnAccount commits its own transaction; the rest follows it.
  if (user) await deleteOwnAccount(ctx, user, account);
  await withdrawDataDeletion(db, account.id);
  if (audit) await recordAction(db, audit);
}

/** Deletes the data of the accounts whose request is due; answers how many it handled. */
export async function processDataDeletions(ctx: Ctx, now = new Date()): Promise<number> {
  const db = ctx.db.kysely;
  const due = await db
    .selectFrom("account_deletion_requests")
    .innerJoin("accounts", "accounts.id", "account_deletion_requests.account_id")
    .selectAll("accounts")
    .where(
      "account_deletion_requests.created_at",
      "<=",
      new Date(now.getTime() - DELETION_DELAY_DAYS * 86_400_000).toISOString(),
    )
    .orderBy("account_deletion_requests.created_at")
    .limit(BATCH)
    .execute();
  for (const account of due) {
    // Lifted meanwhile without the request going (it should have), or already deleted: nothing to do.
    if (account.suspended_at && !account.deleted_at) await removeSuspendedAccountData(ctx, account);
    else await withdrawDataDeletion(db, account.id);
  }
  return due.length;
}
