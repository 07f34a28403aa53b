/**
 * The first step of an import in overwrite mode (Mastodon's BulkImportService): what the user has
 * now and the file does not list goes, through the same services as by hand — unfollows are
 * sent, blocks lifted, mutes ended, domain blocks removed, bookmarks dropped. Lists named in the
 * file are kept but emptied (their rows fill them again) and the others deleted, as Mastodon
 * does. Accounts are matched by address (`user@domain`, this server's domain or none for local
 * ones, any case), posts by URI or URL, domains as normalized. Running it again after a crash
 * removes nothing more: what the file lists is never touched.
 */
import type { Ctx } from "../../context.ts";
import { fetchPage } from "../../db/paging.ts";
import { accountsByIds } from "../../db/queries/accounts.ts";
import { statusesByIds } from "../../db/queries/statuses.ts";
import type { AccountRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { unfollowAccount } from "../accounts/follow.ts";
import { normalizeDomain, unblockAccount, unblockDomain, unmuteAccount } from "../accounts/hiding.ts";
import { deleteList, ownLists, removeListMembers } from "../lists/lists.ts";
import { unbookmark } from "../statuses/interactions.ts";
import type { ImportRowData, ImportType } from "./formats.ts";

/** Rows of the user's relationships read at a time. */
const BATCH = 500;

/** An address as overwrite compares them: lower case, without this server's domain. */
function addressKey(ctx: Ctx, acct: string): string {
  const [user = "", domain] = acct.toLowerCase().split("@", 2);
  const local =
    !domain || domain === ctx.config.localDomain.toLowerCase() || domain === ctx.config.webDomain.toLowerCase();
  return local ? user : `${user}@${domain}`;
}

const keyOfAccount = (account: Pick<AccountRow, "username" | "domain">) =>
  (account.domain ? `${account.username}@${account.domain}` : account.username).toLowerCase();

function domainKey(domain: string): string | undefined {
  try {
    return normalizeDomain(domain);
  } catch (error) {
    if (error instanceof ValidationFailed) return undefined;
    throw error;
  }
}

/** Walks a relationship table of `owner` in ID order, a batch at a time (rows removed meanwhile do not matter). */
async function eachBatch<R extends { id: string }>(
  page: (maxId: string | undefined) => Promise<R[]>,
  handle: (rows: R[]) => Promise<void>,
): Promise<void> {
  let maxId: string | undefined;
  for (;;) {
    const rows = await page(maxId);
    if (rows.length === 0) return;
    await handle(rows);
    if (rows.length < BATCH) return;
    maxId = rows[rows.length - 1]!.id;
  }
}

type AccountTable = "follows" | "blocks" | "mutes";

/** Ends `owner`'s follows, blocks or mutes of accounts the file does not list. */
async function removeUnlistedAccounts(
  ctx: Ctx,
  owner: AccountRow,
  table: AccountTable,
  listed: ReadonlySet<string>,
): Promise<void> {
  const remove = { follows: unfollowAccount, blocks: unblockAccount, mutes: unmuteAccount }[table];
  const query = ctx.db.kysely.selectFrom(table).select(["id", "target_account_id"]).where("account_id", "=", owner.id);
  await eachBatch(
    (maxId) => fetchPage(query, "id", { maxId, limit: BATCH }),
    async (rows) => {
      const accounts = await accountsByIds(
        ctx.db.kysely,
        rows.map((r) => r.target_account_id),
      );
      for (const account of accounts) if (!listed.has(keyOfAccount(account))) await remove(ctx, owner, account);
    },
  );
}

async function removeUnlistedDomains(ctx: Ctx, owner: AccountRow, listed: ReadonlySet<string>): Promise<void> {
  const query = ctx.db.kysely
    .selectFrom("account_domain_blocks")
    .select(["id", "domain"])
    .where("account_id", "=", owner.id);
  await eachBatch(
    (maxId) => fetchPage(query, "id", { maxId, limit: BATCH }),
    async (rows) => {
      for (const row of rows) if (!listed.has(row.domain)) await unblockDomain(ctx, owner, row.domain);
    },
  );
}

async function removeUnlistedBookmarks(ctx: Ctx, owner: AccountRow, listed: ReadonlySet<string>): Promise<void> {
  const query = ctx.db.kysely.selectFrom("bookmarks").select(["id", "status_id"]).where("account_id", "=", owner.id);
  await eachBatch(
    (maxId) => fetchPage(query, "id", { maxId, limit: BATCH }),
    async (rows) => {
      const statuses = await statusesByIds(
        ctx.db.kysely,
        rows.map((r) => r.status_id),
      );
      for (const status of statuses)
        if (!listed.has(status.uri) && !(status.url && listed.has(status.url))) await unbookmark(ctx, owner, status);
    },
  );
}

/** Deletes the lists the file does not name and empties the others. */
async function resetLists(ctx: Ctx, owner: AccountRow, titles: ReadonlySet<string>): Promise<void> {
  for (const list of await ownLists(ctx, owner)) {
    if (!titles.has(list.title)) {
      await deleteList(ctx, list);
      continue;
    }
    await removeListMembers(ctx, list, await memberIds(ctx, list.id));
  }
}

/** Every member of a list, suspended accounts too. */
async function memberIds(ctx: Ctx, listId: string): Promise<string[]> {
  const rows = await ctx.db.kysely
    .selectFrom("list_accounts")
    .select("account_id")
    .where("list_id", "=", listId)
    .execute();
  return rows.map((r) => r.account_id);
}

/** Removes what `owner` has of `type` and `rows` (the import's rows still to apply) does not list. */
export async function removeUnlisted(
  ctx: Ctx,
  owner: AccountRow,
  type: ImportType,
  rows: readonly ImportRowData[],
): Promise<void> {
  switch (type) {
    case "following":
    case "blocking":
    case "muting": {
      const listed = new Set(rows.flatMap((r) => (r.acct ? [addressKey(ctx, r.acct)] : [])));
      const table = ({ following: "follows", blocking: "blocks", muting: "mutes" } as const)[type];
      return removeUnlistedAccounts(ctx, owner, table, listed);
    }
    case "domain_blocking":
      return removeUnlistedDomains(ctx, owner, new Set(rows.flatMap((r) => domainKey(r.domain ?? "") ?? [])));
    case "bookmarks":
      return removeUnlistedBookmarks(ctx, owner, new Set(rows.flatMap((r) => r.uri ?? [])));
    case "lists":
      return resetLists(ctx, owner, new Set(rows.flatMap((r) => r.list_name ?? [])));
  }
}
