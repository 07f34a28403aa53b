/**
 * Endorsements (accounts a user features on their profile) and private notes about accounts.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountPageOf, type AccountPage } from "../../db/queries/accounts.ts";
import type { AccountRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";

/** Mastodon's limit on a private note. */
export const NOTE_LIMIT = 2000;

/** Features `target` on the user's profile; only accounts the user follows (idempotent). */
export async function endorseAccount(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<void> {
  const following = await ctx.db.kysely
    .selectFrom("follows")
    .select("id")
    .where("account_id", "=", viewer.id)
    .where("target_account_id", "=", target.id)
    .executeTakeFirst();
  if (!following) throw new ValidationFailed("You must be already following the person you want to endorse");
  await ctx.db.kysely
    .insertInto("account_pins")
    .values({ id: newId(), account_id: viewer.id, target_account_id: target.id, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
    .execute();
}

export async function unendorseAccount(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<void> {
  await ctx.db.kysely
    .deleteFrom("account_pins")
    .where("account_id", "=", viewer.id)
    .where("target_account_id", "=", target.id)
    .execute();
}

/** A page of the accounts `owner` features, newest first, paged by the endorsement rows' IDs. */
export async function endorsedAccounts(ctx: Ctx, owner: AccountRow, page: PageParams): Promise<AccountPage> {
  const query = ctx.db.kysely
    .selectFrom("account_pins")
    .select(["id", "target_account_id"])
    .where("account_id", "=", owner.id);
  return accountPageOf(ctx.db.kysely, await fetchPage(query, "id", page), (r) => r.target_account_id);
}

/** Sets the user's private note about `target`; an empty comment removes it. */
export async function setAccountNote(ctx: Ctx, viewer: AccountRow, target: AccountRow, comment: string): Promise<void> {
  const text = comment.trim();
  const db = ctx.db.kysely;
  if (text === "") {
    await db
      .deleteFrom("account_notes")
      .where("account_id", "=", viewer.id)
      .where("target_account_id", "=", target.id)
      .execute();
    return;
  }
  if ([...text].length > NOTE_LIMIT)
    throw new ValidationFailed(`Comment is too long (maximum is ${NOTE_LIMIT} characters)`);
  const now = new Date().toISOString();
  await db
    .insertInto("account_notes")
    .values({
      id: newId(),
      account_id: viewer.id,
      target_account_id: target.id,
      comment: text,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doUpdateSet({ comment: text, updated_at: now }))
    .execute();
}
