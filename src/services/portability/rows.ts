/**
 * Applying one row of an import (Mastodon's BulkImportRowService), through the same services the
 * API uses: the account a row names is found here or asked for on its server (WebFinger and its
 * actor), a post by its URI the same way; then the follow, block, mute, domain block, bookmark or
 * list membership is made as if the user had made it by hand — deliveries and notifications
 * included. A list row also follows the account, as Mastodon's does, since only followed
 * accounts can be members. Each step is idempotent, so a row applied twice (a job that ran
 * again after a crash) changes nothing the second time.
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow, ListRow, StatusRow } from "../../db/schema.ts";
import { ApiError, NotFound, ValidationFailed } from "../../errors.ts";
import { followAccount } from "../accounts/follow.ts";
import { blockAccount, blockDomain, muteAccount } from "../accounts/hiding.ts";
import { lookupOrResolveAccount } from "../accounts/lookup.ts";
import { addListMembers, createList, listsContaining, ownLists } from "../lists/lists.ts";
import { actionTarget, bookmark } from "../statuses/interactions.ts";
import { statusByUri, statusByUrl } from "../statuses/remote.ts";
import type { ImportRowData, ImportType } from "./formats.ts";

/** Why a row was not imported, for the user; thrown inside this module, caught by applyRow. */
class RowFailed extends Error {}

const OWN_ACCOUNT = "That is your own account";

async function accountNamed(ctx: Ctx, acct: string | undefined): Promise<AccountRow> {
  const account = acct ? await lookupOrResolveAccount(ctx, acct) : undefined;
  if (!account || account.suspended_at) throw new RowFailed("Account not found");
  return account;
}

async function follow(ctx: Ctx, owner: AccountRow, target: AccountRow, data: ImportRowData): Promise<void> {
  if (target.id === owner.id) throw new RowFailed(OWN_ACCOUNT);
  if (target.moved_to_account_id) throw new RowFailed("The account has moved; follow its new account instead");
  try {
    await followAccount(ctx, owner, target, {
      reblogs: data.show_reblogs,
      notify: data.notify,
      languages: data.languages,
    });
  } catch (error) {
    // What is left to refuse a follow after the checks above: a block between the two.
    if (error instanceof ApiError && error.status === 403) throw new RowFailed("A block stands between you");
    throw error;
  }
}

function isLocalUrl(ctx: Ctx, uri: string): boolean {
  const host = URL.parse(uri)?.host.toLowerCase();
  return host === ctx.config.localDomain.toLowerCase() || host === ctx.config.webDomain.toLowerCase();
}

/** The post `uri` names: known here, or fetched from its server (never for this server's own URIs). */
async function statusNamed(ctx: Ctx, uri: string): Promise<StatusRow | undefined> {
  const known = (await statusByUri(ctx, uri)) ?? (await statusByUrl(ctx, uri));
  if (known || isLocalUrl(ctx, uri)) return known;
  const found = await ctx.remote.url(uri);
  return found && "status" in found ? found.status : undefined;
}

async function addBookmark(ctx: Ctx, owner: AccountRow, uri: string | undefined): Promise<void> {
  const found = uri ? await statusNamed(ctx, uri) : undefined;
  if (!found) throw new RowFailed("Post not found");
  let status: StatusRow;
  try {
    // A boost stands for the post it boosts; a post the user may not see is not bookmarked.
    status = await actionTarget(ctx, found.id, owner);
  } catch (error) {
    if (error instanceof NotFound) throw new RowFailed("Post not found");
    throw error;
  }
  await bookmark(ctx, owner, status);
}

/** The user's list titled `title`, made when there is none. */
async function listTitled(ctx: Ctx, owner: AccountRow, title: string): Promise<ListRow> {
  const existing = (await ownLists(ctx, owner)).find((list) => list.title === title);
  return existing ?? createList(ctx, owner, { title });
}

async function addToList(ctx: Ctx, owner: AccountRow, data: ImportRowData): Promise<void> {
  const target = await accountNamed(ctx, data.acct);
  const list = await listTitled(ctx, owner, data.list_name ?? "");
  if (target.id !== owner.id) await follow(ctx, owner, target, {});
  const member = (await listsContaining(ctx, owner, target)).some((l) => l.id === list.id);
  if (!member) await addListMembers(ctx, list, [target.id]);
}

async function apply(ctx: Ctx, owner: AccountRow, type: ImportType, data: ImportRowData): Promise<void> {
  switch (type) {
    case "following":
      return follow(ctx, owner, await accountNamed(ctx, data.acct), data);
    case "blocking": {
      const target = await accountNamed(ctx, data.acct);
      if (target.id === owner.id) throw new RowFailed(OWN_ACCOUNT);
      return blockAccount(ctx, owner, target);
    }
    case "muting": {
      const target = await accountNamed(ctx, data.acct);
      if (target.id === owner.id) throw new RowFailed(OWN_ACCOUNT);
      return muteAccount(ctx, owner, target, { notifications: data.hide_notifications ?? true });
    }
    case "domain_blocking":
      return blockDomain(ctx, owner, data.domain);
    case "bookmarks":
      return addBookmark(ctx, owner, data.uri);
    case "lists":
      return addToList(ctx, owner, data);
  }
}

/**
 * Applies one row for `owner`: undefined when it was imported, else why not. Whatever goes wrong
 * with one row is that row's failure (logged when it is unexpected) and never stops the others;
 * when the database itself is gone, recording the failure throws and the job runs again later.
 */
export async function applyRow(
  ctx: Ctx,
  owner: AccountRow,
  type: ImportType,
  data: ImportRowData,
): Promise<string | undefined> {
  try {
    await apply(ctx, owner, type, data);
    return undefined;
  } catch (error) {
    if (error instanceof RowFailed) return error.message;
    if (error instanceof ValidationFailed) return error.reasons.join(", ");
    if (error instanceof ApiError) return error.message;
    ctx.log.warn({ err: error, type, owner: owner.id }, "an import row failed unexpectedly");
    return "Could not be imported because of an error on this server";
  }
}
