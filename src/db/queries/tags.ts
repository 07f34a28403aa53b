/**
 * Named queries of hashtags that serializers need for a page of tags: each tag's recent use, and
 * which of them a viewer follows or features (one query each, whatever the number of tags).
 */
import type { Kysely } from "kysely";
import { idFloorForTime } from "../ids.ts";
import type { Database, TagRow } from "../schema.ts";

/** One day of a tag's use: the day (UTC midnight, seconds), posts using it, and their distinct authors. */
export interface TagDay {
  day: number;
  uses: number;
  accounts: number;
}

/**
 * The last `days` days of each tag's use, newest day first: one query over the tags' statuses of
 * those days (by the time-ordered status IDs, on the statuses_tags primary key).
 */
export async function tagHistories(
  db: Kysely<Database>,
  tagIds: readonly string[],
  days = 7,
  now = Date.now(),
): Promise<Map<string, TagDay[]>> {
  const today = startOfDay(now);
  const since = today - (days - 1) * DAY_MS;
  const rows = tagIds.length
    ? await db
        .selectFrom("statuses_tags")
        .innerJoin("statuses", "statuses.id", "statuses_tags.status_id")
        .select(["statuses_tags.tag_id", "statuses.account_id", "statuses.created_at"])
        .where("statuses_tags.tag_id", "in", [...tagIds])
        .where("statuses_tags.status_id", ">=", idFloorForTime(new Date(since)))
        .where("statuses.deleted_at", "is", null)
        .execute()
    : [];
  const result = new Map<string, TagDay[]>();
  for (const tagId of tagIds) {
    const history = Array.from({ length: days }, (_, i) => ({
      day: (today - i * DAY_MS) / 1000,
      uses: 0,
      authors: new Set<string>(),
    }));
    for (const row of rows.filter((r) => r.tag_id === tagId)) {
      const index = (today - startOfDay(Date.parse(row.created_at))) / DAY_MS;
      const day = history[index];
      if (!day) continue;
      day.uses++;
      day.authors.add(row.account_id);
    }
    result.set(
      tagId,
      history.map((d) => ({ day: d.day, uses: d.uses, accounts: d.authors.size })),
    );
  }
  return result;
}

const DAY_MS = 86_400_000;

function startOfDay(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

/** A week (or `days`) without any use: the history of a tag never used. */
export function unusedHistory(days = 7, now = Date.now()): TagDay[] {
  const today = startOfDay(now);
  return Array.from({ length: days }, (_, i) => ({ day: (today - i * DAY_MS) / 1000, uses: 0, accounts: 0 }));
}

/** The tags among `tagIds` that `accountId` has a row for in `table`. */
async function tagsAmong(
  db: Kysely<Database>,
  table: "tag_follows" | "featured_tags",
  accountId: string,
  tagIds: readonly string[],
): Promise<Set<string>> {
  if (tagIds.length === 0) return new Set();
  const rows = await db
    .selectFrom(table)
    .select("tag_id")
    .where("account_id", "=", accountId)
    .where("tag_id", "in", [...tagIds])
    .execute();
  return new Set(rows.map((r) => r.tag_id));
}

/** The tags among `tagIds` that `accountId` follows. */
export const followedAmong = (db: Kysely<Database>, accountId: string, tagIds: readonly string[]) =>
  tagsAmong(db, "tag_follows", accountId, tagIds);

/** The tags among `tagIds` that `accountId` features on its profile. */
export const featuredAmong = (db: Kysely<Database>, accountId: string, tagIds: readonly string[]) =>
  tagsAmong(db, "featured_tags", accountId, tagIds);

/** A featured tag with the account's use of it. */
export interface FeaturedTagFacts {
  id: string;
  tag: TagRow;
  /** The account's public and unlisted posts with the tag. */
  statusesCount: number;
  lastStatusAt: string | null;
}
