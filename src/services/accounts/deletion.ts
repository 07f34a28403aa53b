/**
 * A local user deletes their account (Mastodon's self-deletion, DeleteAccountService with the
 * username reserved). At once: the account is suspended (hidden everywhere, its actor answers
 * 410), the user can no longer sign in, every token and browser session ends, and the
 * `account.deleted` event tells every known server (a Delete of the actor). Then a job removes
 * what the account had — follows both ways, requests, posts, favourites, bookmarks, lists,
 * filters, blocks, mutes, notifications, media — and empties the profile. The row stays, so the
 * username is never given to someone else.
 */
import { randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { AccountRow, Database, UserRow } from "../../db/schema.ts";
import { purgeRemoteAccounts } from "./purge.ts";

/** The job that removes what a deleted local account had. */
export const ACCOUNT_DELETION_JOB = "accounts.delete_local";

/** Starts the deletion of the local account `account` of `user` (its follows and posts go in a job). */
export async function deleteOwnAccount(ctx: Ctx, user: UserRow, account: AccountRow): Promise<void> {
  if (account.domain !== null || account.deleted_at) return;
  const now = new Date().toISOString();
  await ctx.dispatcher.transaction(async (tx) => {
    await tx
      .updateTable("accounts")
      .set({ suspended_at: account.suspended_at ?? now, deleted_at: now, updated_at: now })
      .where("id", "=", account.id)
      .execute();
    // No way back in: a random password nobody knows, the address freed for a new sign-up.
    await tx
      .updateTable("users")
      .set({
        disabled: true,
        email: `deleted-${user.id}@deleted.invalid`,
        unconfirmed_email: null,
        encrypted_password: `!deleted ${randomBytes(16).toString("hex")}`,
      })
      .where("id", "=", user.id)
      .execute();
    await endAccess(tx, user.id);
    await ctx.jobs.enqueueWith(tx, ACCOUNT_DELETION_JOB, { accountId: account.id });
    await ctx.dispatcher.emit(tx, { type: "account.deleted", accountId: account.id });
    await ctx.dispatcher.emit(tx, { type: "access.changed", accountIds: [account.id] });
  });
}

/** Every token, grant, push subscription and browser session of the user. */
async function endAccess(tx: Kysely<Database>, userId: string): Promise<void> {
  await tx.deleteFrom("web_push_subscriptions").where("user_id", "=", userId).execute();
  await tx.deleteFrom("oauth_access_grants").where("user_id", "=", userId).execute();
  await tx.deleteFrom("oauth_access_tokens").where("user_id", "=", userId).execute();
  await tx.deleteFrom("web_sessions").where("user_id", "=", userId).execute();
}

/** One step of removing what a deleted local account had; true while more is left. */
export async function purgeDeletedLocalAccount(ctx: Ctx, accountId: string): Promise<boolean> {
  const db = ctx.db.kysely;
  const account = await db.selectFrom("accounts").selectAll().where("id", "=", accountId).executeTakeFirst();
  if (!account || account.domain !== null || !account.deleted_at) return false;
  // Follows both ways, follow requests and posts, a batch of posts a step (as for remote accounts).
  if (await purgeRemoteAccounts(ctx, db.selectFrom("accounts").select("id").where("id", "=", accountId))) return true;
  await db.transaction().execute(async (tx) => {
    const own = <T extends keyof Database>(table: T) =>
      sql`DELETE FROM ${sql.table(table)} WHERE account_id = ${accountId}`.execute(tx);
    // Counters of what it favourited, then what it kept of others'.
    await sql`UPDATE statuses SET favourites_count = favourites_count - 1
      WHERE id IN (SELECT status_id FROM favourites WHERE account_id = ${accountId}) AND favourites_count > 0`.execute(
      tx,
    );
    for (const table of [
      "favourites",
      "bookmarks",
      "status_pins",
      "account_pins",
      "account_notes",
      "blocks",
      "mutes",
      "account_domain_blocks",
      "tag_follows",
      "featured_tags",
      "conversation_mutes",
      "account_conversations",
      "home_feed_entries",
      "notification_requests",
      "notification_permissions",
      "notification_policies",
      "announcement_reads",
      "announcement_reactions",
      "follow_recommendation_suppressions",
    ] as const)
      await own(table);
    await tx.deleteFrom("notifications").where("account_id", "=", accountId).execute();
    await tx.deleteFrom("notifications").where("from_account_id", "=", accountId).execute();
    await tx.deleteFrom("blocks").where("target_account_id", "=", accountId).execute();
    await tx.deleteFrom("mutes").where("target_account_id", "=", accountId).execute();
    await tx.deleteFrom("list_accounts").where("account_id", "=", accountId).execute();
    const lists = tx.selectFrom("lists").select("id").where("account_id", "=", accountId);
    await tx.deleteFrom("list_accounts").where("list_id", "in", lists).execute();
    await tx.deleteFrom("list_feed_entries").where("list_id", "in", lists).execute();
    await tx.deleteFrom("lists").where("account_id", "=", accountId).execute();
    const filters = tx.selectFrom("custom_filters").select("id").where("account_id", "=", accountId);
    await tx.deleteFrom("custom_filter_keywords").where("custom_filter_id", "in", filters).execute();
    await tx.deleteFrom("custom_filter_statuses").where("custom_filter_id", "in", filters).execute();
    await tx.deleteFrom("custom_filters").where("account_id", "=", accountId).execute();
    await tx.deleteFrom("scheduled_statuses").where("account_id", "=", accountId).execute();
    // The profile emptied, as a suspended account shows it.
    await tx
      .updateTable("accounts")
      .set({
        display_name: "",
        note: "",
        fields: "[]",
        avatar_file: null,
        avatar_static_file: null,
        header_file: null,
        header_static_file: null,
        also_known_as: null,
        updated_at: new Date().toISOString(),
      })
      .where("id", "=", accountId)
      .execute();
  });
  return false;
}
