/**
 * Grouped notifications (Mastodon 4.3's `/api/v2/notifications`). A page holds up to `limit`
 * groups: walking the receiver's notifications by ID, the first one met of each group stands for
 * it (notifications of types not grouped, and filtered ones, are groups of one). Each group then
 * reports, up to the page's newest notification, how many it holds, its most recent one, up to
 * eight of the latest senders and the oldest member at or above the page's oldest ID — one
 * aggregate query and one window query for the whole page, whatever its length.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import type { PageParams } from "../../db/paging.ts";
import type { NotificationRow } from "../../db/schema.ts";
import type { NotificationGroup } from "../../entities/notification_group.ts";
import { isIdLike } from "../../db/ids.ts";
import { NotFound } from "../../errors.ts";
import { browsable, type NotificationFilter } from "./read.ts";
import { GROUPABLE_TYPES, type NotificationType } from "./types.ts";

/** Senders named per group. */
export const SAMPLE_ACCOUNTS = 8;
/** Notifications read per step of the walk. */
const WALK_CHUNK = 200;

export interface GroupedFilter extends NotificationFilter {
  /** Types folded into groups (default: every groupable type). */
  groupedTypes: readonly NotificationType[];
}

/** One group of a page. */

/** The key a notification is grouped under for a request that groups `groupedTypes`. */
function keyFor(row: NotificationRow, groupedTypes: readonly NotificationType[]): string {
  return row.group_key && groupedTypes.includes(row.type as NotificationType) ? row.group_key : `ungrouped-${row.id}`;
}

/**
 * The notifications standing for the groups of a page, newest first: one per group, found by
 * walking the receiver's notifications (descending, or ascending from `min_id`) in chunks.
 */
async function representatives(
  ctx: Ctx,
  receiverId: string,
  filter: GroupedFilter,
  page: PageParams,
): Promise<NotificationRow[]> {
  const ascending = page.minId !== undefined;
  const seen = new Set<string>();
  const found: NotificationRow[] = [];
  let cursor = ascending ? page.minId : page.maxId;
  for (;;) {
    let query = browsable(ctx.db.kysely, receiverId, filter);
    if (ascending) {
      query = query.where("id", ">", cursor!);
      if (page.maxId) query = query.where("id", "<", page.maxId);
    } else {
      if (cursor) query = query.where("id", "<", cursor);
      if (page.sinceId) query = query.where("id", ">", page.sinceId);
    }
    const chunk = await query
      .orderBy("id", ascending ? "asc" : "desc")
      .limit(WALK_CHUNK)
      .execute();
    for (const row of chunk) {
      const key = keyFor(row, filter.groupedTypes);
      if (seen.has(key)) continue;
      seen.add(key);
      found.push(row);
      if (found.length >= page.limit) break;
    }
    if (found.length >= page.limit || chunk.length < WALK_CHUNK) break;
    cursor = chunk[chunk.length - 1]!.id;
  }
  return ascending ? found.reverse() : found;
}

/** The groups of `rows` (representatives, newest first), measured up to the page's newest ID. */
async function measure(
  ctx: Ctx,
  receiverId: string,
  rows: readonly NotificationRow[],
  groupedTypes: readonly NotificationType[],
): Promise<NotificationGroup[]> {
  if (rows.length === 0) return [];
  const pageMax = rows[0]!.id;
  const pageMin = rows[rows.length - 1]!.id;
  const keys = [...new Set(rows.filter((r) => keyFor(r, groupedTypes) === r.group_key).map((r) => r.group_key!))];
  const db = ctx.db.kysely;
  const stats = new Map<string, { count: number; latest: string; latestAt: string; pageMin: string }>();
  const samples = new Map<string, string[]>();
  if (keys.length > 0) {
    const aggregates = await db
      .selectFrom("notifications")
      .select((eb) => [
        "group_key",
        eb.fn.countAll<number | string>().as("count"),
        eb.fn.max("id").as("latest"),
        eb.fn.max("created_at").as("latest_at"),
        sql<string | number>`min(CASE WHEN id >= ${pageMin} THEN id END)`.as("page_min"),
      ])
      .where("account_id", "=", receiverId)
      .where("group_key", "in", keys)
      .where("id", "<=", pageMax)
      .groupBy("group_key")
      .execute();
    for (const a of aggregates)
      stats.set(a.group_key!, {
        count: Number(a.count),
        latest: String(a.latest),
        latestAt: String(a.latest_at),
        pageMin: String(a.page_min),
      });
    const ranked = await sql<{ group_key: string; from_account_id: string | number; position: number | string }>`
      SELECT group_key, from_account_id, position FROM (
        SELECT group_key, from_account_id, ROW_NUMBER() OVER (PARTITION BY group_key ORDER BY id DESC) AS position
        FROM notifications
        WHERE account_id = ${receiverId} AND group_key IN (${sql.join(keys)}) AND id <= ${pageMax}
      ) ranked WHERE position <= ${SAMPLE_ACCOUNTS}`.execute(db);
    const newestFirst = [...ranked.rows].sort((a, b) => Number(a.position) - Number(b.position));
    for (const r of newestFirst) {
      const list = samples.get(r.group_key) ?? [];
      list.push(String(r.from_account_id));
      samples.set(r.group_key, list);
    }
  }
  return rows.map((row) => {
    const key = keyFor(row, groupedTypes);
    const stat = key === row.group_key ? stats.get(key) : undefined;
    return {
      groupKey: key,
      type: row.type,
      representative: row,
      count: stat?.count ?? 1,
      mostRecentId: stat?.latest ?? row.id,
      latestAt: stat?.latestAt ?? row.created_at,
      sampleAccountIds: samples.get(key) ?? [row.from_account_id],
      pageMinId: stat?.pageMin ?? row.id,
      pageMaxId: stat?.latest ?? row.id,
    };
  });
}

/** A page of the receiver's notification groups, newest first. */
export async function groupedPage(
  ctx: Ctx,
  receiverId: string,
  filter: GroupedFilter,
  page: PageParams,
): Promise<NotificationGroup[]> {
  if (page.limit <= 0) return [];
  const rows = await representatives(ctx, receiverId, filter, page);
  return measure(ctx, receiverId, rows, filter.groupedTypes);
}

/** The receiver's group `groupKey` as a whole (404 when they have none by that key). */
export async function groupOf(ctx: Ctx, receiverId: string, groupKey: string): Promise<NotificationGroup> {
  const row = await groupMembers(ctx, receiverId, groupKey).orderBy("id", "desc").limit(1).executeTakeFirst();
  if (!row) throw new NotFound();
  const [group] = await measure(ctx, receiverId, [row], GROUPABLE_TYPES);
  return group!;
}

/** The notification ID of an `ungrouped-<id>` key ("0", which names none, for an ID out of range). */
function singleId(groupKey: string): string | undefined {
  const id = /^ungrouped-(\d+)$/.exec(groupKey)?.[1];
  if (id === undefined) return undefined;
  return isIdLike(id) ? id : "0";
}

/** The notifications of a group key: a stored group, or `ungrouped-<id>` for one notification. */
function groupMembers(ctx: Ctx, receiverId: string, groupKey: string) {
  const query = ctx.db.kysely.selectFrom("notifications").selectAll().where("account_id", "=", receiverId);
  const single = singleId(groupKey);
  return single ? query.where("id", "=", single) : query.where("group_key", "=", groupKey);
}

/** Removes every notification of the receiver's group (nothing to remove is fine). */
export async function dismissGroup(ctx: Ctx, receiverId: string, groupKey: string): Promise<void> {
  const single = singleId(groupKey);
  let query = ctx.db.kysely.deleteFrom("notifications").where("account_id", "=", receiverId);
  query = single ? query.where("id", "=", single) : query.where("group_key", "=", groupKey);
  await query.execute();
}

/** The senders of the receiver's group, newest first, each once (404 for an unknown group). */
export async function groupSenderIds(ctx: Ctx, receiverId: string, groupKey: string): Promise<string[]> {
  const rows = await groupMembers(ctx, receiverId, groupKey)
    .clearSelect()
    .select(["from_account_id"])
    .orderBy("id", "desc")
    .limit(1000)
    .execute();
  if (rows.length === 0) throw new NotFound();
  return [...new Set(rows.map((r) => r.from_account_id))];
}

/** How many groups are newer than the marker, counting at most `cap`. */
export async function unreadGroupCount(
  ctx: Ctx,
  receiverId: string,
  readUpTo: string,
  filter: GroupedFilter,
  cap: number,
): Promise<number> {
  return (await representatives(ctx, receiverId, filter, { sinceId: readUpTo, limit: cap })).length;
}
