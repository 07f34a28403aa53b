/** Named lookups of account rows (see db/queries/statuses.ts for the conventions). */
import type { Kysely } from "kysely";
import { isIdLike } from "../ids.ts";
import type { Engine } from "../migrations/types.ts";
import type { AccountRow, Database } from "../schema.ts";
import { idsOnly } from "./statuses.ts";

export async function accountById(db: Kysely<Database>, id: string | undefined): Promise<AccountRow | undefined> {
  if (!id || !isIdLike(id)) return undefined;
  return db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The accounts of `ids` that exist, in no particular order; `activeOnly` leaves suspended ones out. */
export async function accountsByIds(
  db: Kysely<Database>,
  ids: readonly string[],
  options: { activeOnly?: boolean } = {},
): Promise<AccountRow[]> {
  const valid = idsOnly(ids);
  if (valid.length === 0) return [];
  let query = db.selectFrom("accounts").selectAll().where("id", "in", valid);
  if (options.activeOnly) query = query.where("suspended_at", "is", null);
  return query.execute();
}

/** The accounts behind a page of rows, by ID, without suspended or missing ones. */
export async function activeAccountMap(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, AccountRow>> {
  const found = await accountsByIds(db, ids, { activeOnly: true });
  return new Map(found.map((a) => [a.id, a]));
}

/** A page of join rows and their accounts (in the rows' order; suspended or missing ones left out). */
export interface AccountPage {
  /** The rows behind the page (follows, blocks, favourites…): their IDs are the Link header's cursors. */
  rows: Array<{ id: string }>;
  accounts: AccountRow[];
}

/** The accounts named by `accountOf` of each row, in the rows' order. */
export async function accountPageOf<R extends { id: string }>(
  db: Kysely<Database>,
  rows: R[],
  accountOf: (row: R) => string,
): Promise<AccountPage> {
  const byId = await activeAccountMap(db, rows.map(accountOf));
  return { rows, accounts: rows.map((r) => byId.get(accountOf(r))).filter((a) => a !== undefined) };
}

/**
 * Serializes the account's limited actions (pins, scheduled posts) inside a transaction: a check
 * of a limit and the insert it guards then act as one. PostgreSQL locks the account's row until the
 * transaction ends; SQLite's transactions already run one at a time (`begin immediate`).
 */
export async function lockAccountRow(tx: Kysely<Database>, engine: Engine, accountId: string): Promise<void> {
  if (engine === "postgres")
    await tx.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().execute();
}
