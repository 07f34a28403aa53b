/**
 * A local account's aliases (Mastodon's account aliases, `alsoKnownAs`): the accounts elsewhere
 * that are the same person. Naming the old account here is the first step of moving to this one:
 * the old server's Move is accepted only when the new account names it.
 */
import type { Ctx } from "../../context.ts";
import { accountAliases, encodeAccountAliases } from "../../db/columns.ts";
import type { AccountRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { lookupOrResolveAccount } from "./lookup.ts";

/** Mastodon keeps no fixed limit; this keeps an actor document small. */
export const ALIASES_MAX = 20;

/** The accounts `account` names as its aliases, as actor ids. */
export function aliasesOf(account: Pick<AccountRow, "also_known_as">): string[] {
  return accountAliases(account);
}

async function saveAliases(ctx: Ctx, account: AccountRow, uris: string[]): Promise<AccountRow> {
  return ctx.dispatcher.transaction(async (tx) => {
    const row = await tx
      .updateTable("accounts")
      .set({ also_known_as: encodeAccountAliases(uris), updated_at: new Date().toISOString() })
      .where("id", "=", account.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // Other servers read the aliases from the actor: they hear of the change.
    await ctx.dispatcher.emit(tx, { type: "account.updated", accountId: account.id });
    return row;
  });
}

/** Names the account `handle` (`user@domain`, here or elsewhere, found and stored if need be) as an alias. */
export async function addAlias(ctx: Ctx, account: AccountRow, handle: string): Promise<AccountRow> {
  const text = handle.trim();
  if (!text) throw new ValidationFailed("Handle can't be blank");
  const other = await lookupOrResolveAccount(ctx, text);
  if (!other) throw new ValidationFailed(`No account ${text} could be found`);
  if (other.id === account.id) throw new ValidationFailed("An account cannot be its own alias");
  const current = aliasesOf(account);
  if (current.includes(other.uri)) return account;
  if (current.length >= ALIASES_MAX) throw new ValidationFailed(`An account can have at most ${ALIASES_MAX} aliases`);
  return saveAliases(ctx, account, [...current, other.uri]);
}

/** Stops naming `uri` as an alias (nothing happens when it was not one). */
export async function removeAlias(ctx: Ctx, account: AccountRow, uri: string): Promise<AccountRow> {
  const current = aliasesOf(account);
  if (!current.includes(uri)) return account;
  return saveAliases(
    ctx,
    account,
    current.filter((alias) => alias !== uri),
  );
}

/** The aliases of `account` with the handle of each this server knows, in the order they were added. */
export async function describeAliases(
  ctx: Ctx,
  account: Pick<AccountRow, "also_known_as">,
): Promise<Array<{ uri: string; acct?: string }>> {
  const uris = aliasesOf(account);
  if (uris.length === 0) return [];
  const known = await ctx.db.kysely
    .selectFrom("accounts")
    .select(["uri", "username", "domain"])
    .where("uri", "in", uris)
    .execute();
  const handles = new Map(known.map((row) => [row.uri, row.domain ? `${row.username}@${row.domain}` : row.username]));
  return uris.map((uri) => ({ uri, acct: handles.get(uri) }));
}
