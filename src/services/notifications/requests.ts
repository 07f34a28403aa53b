/**
 * Notification requests (Mastodon 4.3): the filtered mentions of one sender wait in a request
 * until the receiver accepts it (the sender's filtered notifications join the main list, and later
 * ones are never filtered) or dismisses it (it is hidden and stops counting as pending). Accepting
 * merges in the same transaction, so a merge is never left half done and `merged` is always true
 * once the request answered.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { NotificationRequestRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";

/** A page of the receiver's requests, pending or dismissed, newest first. */
export function requestPage(
  ctx: Ctx,
  receiverId: string,
  dismissed: boolean,
  page: PageParams,
): Promise<NotificationRequestRow[]> {
  const query = ctx.db.kysely
    .selectFrom("notification_requests")
    .selectAll()
    .where("account_id", "=", receiverId)
    .where("dismissed", "=", dismissed);
  return fetchPage(query, "id", page);
}

/** One of the receiver's requests (404 for unknown IDs and other people's). */
export async function requestOf(ctx: Ctx, receiverId: string, id: string | undefined): Promise<NotificationRequestRow> {
  const row = id
    ? await ctx.db.kysely
        .selectFrom("notification_requests")
        .selectAll()
        .where("id", "=", id)
        .where("account_id", "=", receiverId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** How many filtered notifications each sender of `requests` has waiting, by sender. */
export async function filteredCounts(
  ctx: Ctx,
  receiverId: string,
  requests: readonly NotificationRequestRow[],
): Promise<Map<string, number>> {
  if (requests.length === 0) return new Map();
  const rows = await ctx.db.kysely
    .selectFrom("notifications")
    .select((eb) => ["from_account_id", eb.fn.countAll<number | string>().as("n")])
    .where("account_id", "=", receiverId)
    .where(
      "from_account_id",
      "in",
      requests.map((r) => r.from_account_id),
    )
    .where("filtered", "=", true)
    .groupBy("from_account_id")
    .execute();
  return new Map(rows.map((r) => [r.from_account_id, Number(r.n)]));
}

/**
 * Accepts the receiver's requests among `ids` (others' and unknown IDs are ignored): each sender
 * is permitted from now on, their filtered notifications join the main list, the request goes.
 */
export async function acceptRequests(ctx: Ctx, receiverId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const merged = await ctx.db.kysely.transaction().execute(async (tx) => {
    const requests = await tx
      .deleteFrom("notification_requests")
      .where("account_id", "=", receiverId)
      .where("id", "in", ids)
      .returning("from_account_id")
      .execute();
    if (requests.length === 0) return false;
    const now = new Date().toISOString();
    const senders = requests.map((r) => r.from_account_id);
    await tx
      .insertInto("notification_permissions")
      .values(senders.map((from) => ({ id: newId(), account_id: receiverId, from_account_id: from, created_at: now })))
      .onConflict((oc) => oc.columns(["account_id", "from_account_id"]).doNothing())
      .execute();
    await tx
      .updateTable("notifications")
      .set({ filtered: false, updated_at: now })
      .where("account_id", "=", receiverId)
      .where("from_account_id", "in", senders)
      .where("filtered", "=", true)
      .execute();
    return true;
  });
  if (merged) await ctx.dispatcher.emitCommitted({ type: "notifications.merged", accountId: receiverId });
}

/** Dismisses the receiver's requests among `ids`: hidden from the pending list and its counts. */
export async function dismissRequests(ctx: Ctx, receiverId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await ctx.db.kysely
    .updateTable("notification_requests")
    .set({ dismissed: true, updated_at: new Date().toISOString() })
    .where("account_id", "=", receiverId)
    .where("id", "in", ids)
    .execute();
}
