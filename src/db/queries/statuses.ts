/**
 * Named lookups of status rows, so that no route or service spells the same query out again.
 * They take a Kysely handle (the database or a transaction). A value that is not an ID finds
 * nothing, on both engines, without reaching the database.
 */
import type { Kysely } from "kysely";
import { isIdLike } from "../ids.ts";
import type { Database, ScheduledStatusRow, StatusEditRow, StatusRow } from "../schema.ts";

/** Only the values that can be IDs, once each. */
export function idsOnly(values: readonly string[]): string[] {
  return [...new Set(values.filter(isIdLike))];
}

export async function statusById(db: Kysely<Database>, id: string | undefined): Promise<StatusRow | undefined> {
  if (!id || !isIdLike(id)) return undefined;
  return db.selectFrom("statuses").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The rows of `ids` that exist, in no particular order. */
export async function statusesByIds(db: Kysely<Database>, ids: readonly string[]): Promise<StatusRow[]> {
  const valid = idsOnly(ids);
  if (valid.length === 0) return [];
  return db.selectFrom("statuses").selectAll().where("id", "in", valid).execute();
}

/** A live status of `accountId` (not deleted). */
export async function ownStatusById(
  db: Kysely<Database>,
  id: string | undefined,
  accountId: string,
): Promise<StatusRow | undefined> {
  if (!id || !isIdLike(id)) return undefined;
  return db
    .selectFrom("statuses")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

/** `accountId`'s boosts of a status (normally at most one). */
export async function boostsBy(db: Kysely<Database>, accountId: string, statusId: string): Promise<StatusRow[]> {
  return db
    .selectFrom("statuses")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("reblog_of_id", "=", statusId)
    .execute();
}

/** The recorded versions of a status, oldest first (empty when it was never edited). */
export async function statusEdits(db: Kysely<Database>, statusId: string): Promise<StatusEditRow[]> {
  return db.selectFrom("status_edits").selectAll().where("status_id", "=", statusId).orderBy("id").execute();
}

export async function scheduledStatusById(
  db: Kysely<Database>,
  id: string | undefined,
): Promise<ScheduledStatusRow | undefined> {
  if (!id || !isIdLike(id)) return undefined;
  return db.selectFrom("scheduled_statuses").selectAll().where("id", "=", id).executeTakeFirst();
}
