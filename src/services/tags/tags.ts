/**
 * Hashtags as things to look at and follow (Mastodon's TagsController, TagFollow): a tag's page
 * with a week of use, following and unfollowing, and the tags a user follows. Names compare
 * case-insensitively; a tag is created when first followed, as Mastodon does.
 */
import type { Ctx } from "../../context.ts";
import { idFloorForTime, newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, TagRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { upsertTags } from "../statuses/tags.ts";

/** A hashtag name as statuses write it: letters, marks, digits and `_`, not only digits. */
const TAG_NAME = /^[\p{L}\p{M}\p{N}_·・\u200c]{1,100}$/u;

export function isTagName(name: string): boolean {
  return TAG_NAME.test(name) && /[^\p{N}]/u.test(name);
}

/** A name from a path (`#` and surrounding space dropped), or 404 when it cannot be a hashtag. */
export function tagNameOf(raw: string | undefined): string {
  const name = (raw ?? "").trim().replace(/^[#＃]/, "");
  if (!isTagName(name)) throw new NotFound();
  return name;
}

export async function findTag(ctx: Ctx, name: string): Promise<TagRow | undefined> {
  return ctx.db.kysely
    .selectFrom("tags")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["name"]), "=", name.toLowerCase()))
    .executeTakeFirst();
}

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
  ctx: Ctx,
  tagIds: readonly string[],
  days = 7,
  now = Date.now(),
): Promise<Map<string, TagDay[]>> {
  const today = startOfDay(now);
  const since = today - (days - 1) * DAY_MS;
  const rows = tagIds.length
    ? await ctx.db.kysely
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

/** The tags among `tagIds` that `account` follows. */
export async function followedAmong(ctx: Ctx, account: AccountRow, tagIds: readonly string[]): Promise<Set<string>> {
  if (tagIds.length === 0) return new Set();
  const rows = await ctx.db.kysely
    .selectFrom("tag_follows")
    .select("tag_id")
    .where("account_id", "=", account.id)
    .where("tag_id", "in", [...tagIds])
    .execute();
  return new Set(rows.map((r) => r.tag_id));
}

/** Follows a hashtag (created if new); following it again changes nothing. */
export async function followTag(ctx: Ctx, account: AccountRow, name: string): Promise<TagRow> {
  const [tag] = await upsertTags(ctx.db.kysely, [name]);
  await ctx.db.kysely
    .insertInto("tag_follows")
    .values({ id: newId(), account_id: account.id, tag_id: tag.id, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(["account_id", "tag_id"]).doNothing())
    .execute();
  return tag;
}

/** Stops following a hashtag; a tag never used is 404. */
export async function unfollowTag(ctx: Ctx, account: AccountRow, name: string): Promise<TagRow> {
  const tag = await findTag(ctx, name);
  if (!tag) throw new NotFound();
  await ctx.db.kysely
    .deleteFrom("tag_follows")
    .where("account_id", "=", account.id)
    .where("tag_id", "=", tag.id)
    .execute();
  return tag;
}

/** A page of the tags `account` follows, newest follow first, paged by the follow rows' IDs. */
export async function followedTags(
  ctx: Ctx,
  account: AccountRow,
  page: PageParams,
): Promise<{ rows: Array<{ id: string }>; tags: TagRow[] }> {
  const query = ctx.db.kysely.selectFrom("tag_follows").select(["id", "tag_id"]).where("account_id", "=", account.id);
  const rows = await fetchPage(query, "id", page);
  const tags = rows.length
    ? await ctx.db.kysely
        .selectFrom("tags")
        .selectAll()
        .where(
          "id",
          "in",
          rows.map((r) => r.tag_id),
        )
        .execute()
    : [];
  const byId = new Map(tags.map((t) => [t.id, t]));
  return { rows, tags: rows.map((r) => byId.get(r.tag_id)).filter((t) => t !== undefined) };
}
