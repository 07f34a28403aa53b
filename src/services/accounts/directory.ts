/**
 * The profile directory (Mastodon's `Api::V1::DirectoriesController` over `Account.discoverable`):
 * accounts that chose to be listed (`discoverable`), are not suspended, silenced or moved, and — for
 * a local account — belong to a confirmed, approved user that is not disabled (the rule the follow
 * suggestions apply). A signed-in viewer does not see accounts hidden from them (blocks either way,
 * mutes, domain blocks), as Mastodon leaves out `excluded_from_timeline_account_ids` and domains.
 *
 * Orders: `active`, by the last post, most recent first, accounts that never posted last (Mastodon's
 * `last_status_at DESC NULLS LAST`), then newest account first so that offset pages are stable;
 * `new`, newest account first.
 *
 * How a page is read: the listed accounts come in order from one partial index per order and reach
 * (migration 0027), a query with no other condition, so both engines read that index and stop; the
 * user check and the viewer's exclusions are then batch lookups over what was read, and reading goes
 * on only when they left too few. (With them as conditions of the query, PostgreSQL guesses that each
 * keeps half the rows, and on a directory of a few hundred accounts reads all and sorts them.)
 */
import { sql, type SqlBool } from "kysely";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";

export type DirectoryOrder = "active" | "new";

export interface DirectoryQuery {
  /** `active` (the default) or `new`. */
  order: DirectoryOrder;
  /** Local accounts only. */
  local: boolean;
  limit: number;
  offset: number;
}

/** Listed accounts read beyond those a page needs, for the few the checks leave out. */
const SLACK = 20;
/** The most listed accounts read at once (a deep offset reads in several steps). */
const MAX_READ = 1000;

/** A page of the directory as `viewer` (undefined: anonymous) sees it. */
export async function directoryAccounts(
  ctx: Ctx,
  viewer: AccountRow | undefined,
  query: DirectoryQuery,
): Promise<AccountRow[]> {
  if (query.limit <= 0) return [];
  const wanted = query.offset + query.limit;
  const page: AccountRow[] = [];
  let shown = 0;
  let read = 0;
  for (;;) {
    const size = Math.min(MAX_READ, wanted - shown + SLACK);
    const rows = await listedAccounts(ctx, query, size, read);
    read += rows.length;
    for (const row of await shownAmong(ctx, viewer, rows)) {
      if (shown >= query.offset) page.push(row);
      if (++shown === wanted) return page;
    }
    if (rows.length < size) return page;
  }
}

/**
 * `size` listed accounts in the directory's order, after the first `skip`. The conditions repeat
 * the partial indexes' predicates word for word: SQLite uses a partial index only when it finds its
 * terms, unparameterized, in the query.
 */
async function listedAccounts(
  ctx: Ctx,
  query: Pick<DirectoryQuery, "order" | "local">,
  size: number,
  skip: number,
): Promise<AccountRow[]> {
  let select = ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where(sql<SqlBool>`accounts.discoverable`)
    .where(sql<SqlBool>`accounts.suspended_at IS NULL`)
    .where(sql<SqlBool>`accounts.silenced_at IS NULL`)
    .where(sql<SqlBool>`accounts.moved_to_account_id IS NULL`);
  // On SQLite the unary `+` stops the planner from reading every local account through
  // index_accounts_on_domain and sorting them, so it takes the local partial index, already in order.
  if (query.local)
    select = select.where(
      ctx.db.engine === "postgres" ? sql<SqlBool>`accounts.domain IS NULL` : sql<SqlBool>`+accounts.domain IS NULL`,
    );
  select =
    query.order === "new"
      ? select.orderBy("accounts.id", "desc")
      : select.orderBy("accounts.last_status_at", (ob) => ob.desc().nullsLast()).orderBy("accounts.id", "desc");
  return select.limit(size).offset(skip).execute();
}

/** The rows, in their order, that the directory shows `viewer`: usable users only, hidden accounts left out. */
async function shownAmong(ctx: Ctx, viewer: AccountRow | undefined, rows: AccountRow[]): Promise<AccountRow[]> {
  if (rows.length === 0) return [];
  const local = rows.filter((r) => r.domain === null).map((r) => r.id);
  const [usable, hidden] = await Promise.all([
    local.length === 0
      ? new Set<string>()
      : ctx.db.kysely
          .selectFrom("users")
          .select("account_id")
          .where("account_id", "in", local)
          .where("confirmed_at", "is not", null)
          .where("approved", "=", true)
          .where("disabled", "=", false)
          .execute()
          .then((users) => new Set(users.map((u) => u.account_id))),
    viewer
      ? hiddenAccounts(
          ctx.db.kysely,
          viewer.id,
          rows.map((r) => r.id),
        )
      : new Set<string>(),
  ]);
  return rows.filter((r) => (r.domain !== null || usable.has(r.id)) && !hidden.has(r.id));
}
