/**
 * Reading and removing a user's notifications (Mastodon's v1 notifications API): pages by ID with
 * type and sender filters, one by ID, dismiss, clear, and the count of those newer than the
 * notifications marker. Filtered notifications (held back by the policy) stay out unless asked
 * for, or unless the list is of one sender's notifications.
 */
import { sql, type Kysely, type SelectQueryBuilder } from "kysely";
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { Database, NotificationRow, StatusRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { findVisibleStatuses } from "../visibility/find.ts";
import { STATUS_TYPES, type NotificationType } from "./types.ts";

export interface NotificationFilter {
  /** Only these types (absent: all; empty: none, as when a client asks only for unknown types). */
  types?: readonly NotificationType[];
  excludeTypes: readonly NotificationType[];
  /** Only notifications from this account (filtered ones included). */
  fromAccountId?: string;
  includeFiltered: boolean;
}

type NotificationQuery = SelectQueryBuilder<Database, "notifications", NotificationRow>;

/** The receiver's notifications that pass `filter`, as a query to page or count. */
export function browsable(db: Kysely<Database>, receiverId: string, filter: NotificationFilter): NotificationQuery {
  let query = db.selectFrom("notifications").selectAll().where("account_id", "=", receiverId);
  if (filter.types) query = filter.types.length ? query.where("type", "in", filter.types) : query.where(sql.lit(false));
  if (filter.excludeTypes.length > 0) query = query.where("type", "not in", filter.excludeTypes);
  if (filter.fromAccountId) query = query.where("from_account_id", "=", filter.fromAccountId);
  else if (!filter.includeFiltered) query = query.where("filtered", "=", false);
  return query;
}

/** A page of the receiver's notifications, newest first. */
export function notificationPage(
  ctx: Ctx,
  receiverId: string,
  filter: NotificationFilter,
  page: PageParams,
): Promise<NotificationRow[]> {
  return fetchPage(browsable(ctx.db.kysely, receiverId, filter), "id", page);
}

/** One of the receiver's notifications (404 for unknown IDs and other people's). */
export async function notificationOf(ctx: Ctx, receiverId: string, id: string | undefined): Promise<NotificationRow> {
  const row = id
    ? await ctx.db.kysely
        .selectFrom("notifications")
        .selectAll()
        .where("id", "=", id)
        .where("account_id", "=", receiverId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Removes one notification of the receiver (404 when it is not theirs). */
export async function dismissNotification(ctx: Ctx, receiverId: string, id: string | undefined): Promise<void> {
  const row = await notificationOf(ctx, receiverId, id);
  await ctx.db.kysely.deleteFrom("notifications").where("id", "=", row.id).execute();
}

/** Removes every notification of the receiver, filtered ones too (requests stay, as in Mastodon). */
export async function clearNotifications(ctx: Ctx, receiverId: string): Promise<void> {
  await ctx.db.kysely.deleteFrom("notifications").where("account_id", "=", receiverId).execute();
}

/** Where the user's notifications marker stands (0: never read). */
export async function notificationsReadUpTo(ctx: Ctx, userId: string): Promise<string> {
  const marker = await ctx.db.kysely
    .selectFrom("markers")
    .select("last_read_id")
    .where("user_id", "=", userId)
    .where("timeline", "=", "notifications")
    .executeTakeFirst();
  return marker ? String(marker.last_read_id) : "0";
}

/** How many notifications passing `filter` are newer than the marker, counting at most `cap`. */
export async function unreadCount(
  ctx: Ctx,
  receiverId: string,
  userId: string,
  filter: NotificationFilter,
  cap: number,
): Promise<number> {
  const readUpTo = await notificationsReadUpTo(ctx, userId);
  const rows = await browsable(ctx.db.kysely, receiverId, filter)
    .clearSelect()
    .select("id")
    .where("id", ">", readUpTo)
    .orderBy("id", "desc")
    .limit(cap)
    .execute();
  return rows.length;
}

/** Notifications ready to show: each with its status when its type has one. */
export interface ShownNotifications {
  rows: NotificationRow[];
  statuses: Map<string, StatusRow>;
}

/**
 * The notifications of `rows` that can still be shown to the receiver, with their statuses: one
 * whose status is gone or no longer visible to the receiver is left out.
 */
export async function presentable(
  ctx: Ctx,
  receiverId: string,
  rows: readonly NotificationRow[],
): Promise<ShownNotifications> {
  const ids = rows.filter((r) => r.status_id && STATUS_TYPES.has(r.type as NotificationType)).map((r) => r.status_id!);
  const statuses = new Map((await findVisibleStatuses(ctx, ids, receiverId)).map((s) => [s.id, s]));
  return {
    rows: rows.filter(
      (r) => !(r.status_id && STATUS_TYPES.has(r.type as NotificationType)) || statuses.has(r.status_id),
    ),
    statuses,
  };
}
