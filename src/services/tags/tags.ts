/**
 * Hashtags as things to look at and follow (Mastodon's TagsController, TagFollow): a tag's page
 * with a week of use, following and unfollowing, and the tags a user follows. Names compare
 * case-insensitively; a tag is created when first followed, as Mastodon does.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import { lockAccountRow } from "../../db/queries/accounts.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, TagRow } from "../../db/schema.ts";
import type { FeaturedTagFacts } from "../../db/queries/tags.ts";

export type { FeaturedTagFacts };
import { NotFound, ValidationFailed } from "../../errors.ts";
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

// ---- Featured tags: hashtags an account shows on its profile, with its use of each. ----

/** Mastodon's limit of featured hashtags per account. */
export const FEATURED_TAGS_LIMIT = 10;

/** The account's featured tags, oldest first, with its use of each (one query for all). */
export async function featuredTags(ctx: Ctx, account: AccountRow): Promise<FeaturedTagFacts[]> {
  const rows = await ctx.db.kysely
    .selectFrom("featured_tags")
    .innerJoin("tags", "tags.id", "featured_tags.tag_id")
    .selectAll("tags")
    .select(["featured_tags.id as featured_id"])
    .where("featured_tags.account_id", "=", account.id)
    .orderBy("featured_tags.id")
    .execute();
  if (rows.length === 0) return [];
  const uses = await ctx.db.kysely
    .selectFrom("statuses_tags")
    .innerJoin("statuses", "statuses.id", "statuses_tags.status_id")
    .select(["statuses_tags.tag_id"])
    .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max("statuses.created_at").as("last")])
    .where(
      "statuses_tags.tag_id",
      "in",
      rows.map((r) => r.id),
    )
    .where("statuses.account_id", "=", account.id)
    .where("statuses.visibility", "in", ["public", "unlisted"])
    .where("statuses.deleted_at", "is", null)
    .groupBy("statuses_tags.tag_id")
    .execute();
  const byTag = new Map(uses.map((u) => [u.tag_id, u]));
  return rows.map(({ featured_id, ...tag }) => ({
    id: featured_id,
    tag,
    statusesCount: Number(byTag.get(tag.id)?.n ?? 0),
    lastStatusAt: (byTag.get(tag.id)?.last as string | null | undefined) ?? null,
  }));
}

/** Features a hashtag on the account's profile (at most ten; each once). */
export async function featureTag(
  ctx: Ctx,
  account: AccountRow,
  rawName: string | undefined,
): Promise<FeaturedTagFacts> {
  const name = (rawName ?? "").trim().replace(/^[#＃]/, "");
  if (name === "") throw new ValidationFailed("Name can't be blank");
  if (!isTagName(name)) throw new ValidationFailed("Name is invalid");
  const [tag] = await upsertTags(ctx.db.kysely, [name]);
  const id = await addFeaturedTag(ctx, account, tag, { again: "refuse" });
  const featured = (await featuredTags(ctx, account)).find((f) => f.id === id);
  if (!featured) throw new NotFound();
  return featured;
}

/**
 * Features the hashtag `name` (a valid name, created if new) on the account's profile, as
 * `POST /api/v1/tags/:name/feature` does (Mastodon 4.4): featuring it again changes nothing; a new
 * one past the limit is refused as `POST /api/v1/featured_tags` refuses it.
 */
export async function featureTagNamed(ctx: Ctx, account: AccountRow, name: string): Promise<TagRow> {
  const [tag] = await upsertTags(ctx.db.kysely, [name]);
  await addFeaturedTag(ctx, account, tag, { again: "keep" });
  return tag;
}

/**
 * Stops featuring the hashtag `name` (a valid name); one not featured, or never used here, changes
 * nothing. Returns the tag, or undefined when it does not exist.
 */
export async function unfeatureTagNamed(ctx: Ctx, account: AccountRow, name: string): Promise<TagRow | undefined> {
  const tag = await findTag(ctx, name);
  if (!tag) return undefined;
  await ctx.db.kysely
    .deleteFrom("featured_tags")
    .where("account_id", "=", account.id)
    .where("tag_id", "=", tag.id)
    .execute();
  return tag;
}

/**
 * Adds `tag` to the account's featured tags and returns the featured tag's ID. The limit is checked
 * and the row inserted under the account's lock, so two requests cannot both take the tenth place.
 * A tag featured already is refused ("Tag has already been taken") or kept as it is.
 */
async function addFeaturedTag(
  ctx: Ctx,
  account: AccountRow,
  tag: TagRow,
  options: { again: "refuse" | "keep" },
): Promise<string> {
  return ctx.db.kysely.transaction().execute(async (tx) => {
    await lockAccountRow(tx, ctx.db.engine, account.id);
    const existing = await tx
      .selectFrom("featured_tags")
      .select(["id", "tag_id"])
      .where("account_id", "=", account.id)
      .execute();
    const same = existing.find((f) => f.tag_id === tag.id);
    if (same && options.again === "keep") return same.id;
    if (same) throw new ValidationFailed("Tag has already been taken");
    if (existing.length >= FEATURED_TAGS_LIMIT)
      throw new ValidationFailed("You have already featured the maximum number of hashtags");
    const id = newId();
    await tx
      .insertInto("featured_tags")
      .values({ id, account_id: account.id, tag_id: tag.id, created_at: new Date().toISOString() })
      .execute();
    return id;
  });
}

/** Stops featuring a hashtag; someone else's or an unknown one is 404. */
export async function unfeatureTag(ctx: Ctx, account: AccountRow, id: string | undefined): Promise<void> {
  const removed =
    id && isIdLike(id)
      ? await ctx.db.kysely
          .deleteFrom("featured_tags")
          .where("id", "=", id)
          .where("account_id", "=", account.id)
          .executeTakeFirst()
      : undefined;
  if (!removed || Number(removed.numDeletedRows) === 0) throw new NotFound();
}

/** The hashtags the account used most in its last 500 posts and does not feature yet (at most ten). */
export async function featuredTagSuggestions(ctx: Ctx, account: AccountRow): Promise<TagRow[]> {
  const recent = ctx.db.kysely
    .selectFrom("statuses")
    .select("statuses.id")
    .where("statuses.account_id", "=", account.id)
    .where("statuses.deleted_at", "is", null)
    .orderBy("statuses.id", "desc")
    .limit(500);
  const used = await ctx.db.kysely
    .selectFrom("statuses_tags")
    .select(["statuses_tags.tag_id"])
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("statuses_tags.status_id", "in", recent)
    .where(
      "statuses_tags.tag_id",
      "not in",
      ctx.db.kysely.selectFrom("featured_tags").select("tag_id").where("account_id", "=", account.id),
    )
    .groupBy("statuses_tags.tag_id")
    .execute();
  const top = used.sort((a, b) => Number(b.n) - Number(a.n)).slice(0, FEATURED_TAGS_LIMIT);
  if (top.length === 0) return [];
  const tags = await ctx.db.kysely
    .selectFrom("tags")
    .selectAll()
    .where(
      "id",
      "in",
      top.map((t) => t.tag_id),
    )
    .execute();
  const byId = new Map(tags.map((t) => [t.id, t]));
  return top.map((t) => byId.get(t.tag_id)).filter((t) => t !== undefined);
}

/** The known tags among `names` (case-insensitive; names that cannot be tags are skipped), one query. */
export async function tagsByNames(ctx: Ctx, names: readonly string[]): Promise<TagRow[]> {
  const lower = [
    ...new Set(
      names
        .map((n) =>
          n
            .trim()
            .replace(/^[#＃]/, "")
            .toLowerCase(),
        )
        .filter(isTagName),
    ),
  ];
  if (lower.length === 0) return [];
  return ctx.db.kysely
    .selectFrom("tags")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["name"]), "in", lower))
    .execute();
}
