import type { Ctx } from "../context.ts";
import type { AccountRow, TagRow } from "../db/schema.ts";
import { featuredAmong, followedAmong, tagHistories, unusedHistory } from "../db/queries/tags.ts";

/** Tag: a hashtag with a week of use; `following` and `featuring` (Mastodon 4.4) only for a signed-in viewer. */
export interface Tag {
  id: string;
  name: string;
  url: string;
  history: Array<{ day: string; accounts: string; uses: string }>;
  following?: boolean;
  featuring?: boolean;
}

/** A tag known only by name (never used here): what Mastodon shows for it, with an empty week. */
export type NamedTag = Pick<TagRow, "name"> & { id: string | null };

/** Tags for a viewer: their histories and the viewer's follows and featured tags in one query each. */
export async function serializeTags(
  ctx: Ctx,
  tags: readonly NamedTag[],
  viewer: AccountRow | undefined,
): Promise<Tag[]> {
  const ids = tags.map((t) => t.id).filter((id): id is string => id !== null);
  const [histories, followed, featured] = await Promise.all([
    tagHistories(ctx.db.kysely, ids),
    viewer ? followedAmong(ctx.db.kysely, viewer.id, ids) : undefined,
    viewer ? featuredAmong(ctx.db.kysely, viewer.id, ids) : undefined,
  ]);
  const emptyWeek = unusedHistory();
  return tags.map((tag) => {
    const name = tag.name.toLowerCase();
    const week = (tag.id ? histories.get(tag.id) : undefined) ?? emptyWeek;
    const result: Tag = {
      id: tag.id ?? "",
      name,
      url: `${ctx.config.baseUrl}/tags/${encodeURIComponent(name)}`,
      // Mastodon writes the history's numbers as strings.
      history: week.map((d) => ({ day: String(d.day), accounts: String(d.accounts), uses: String(d.uses) })),
    };
    if (followed) result.following = tag.id !== null && followed.has(tag.id);
    if (featured) result.featuring = tag.id !== null && featured.has(tag.id);
    return result;
  });
}

export async function serializeTag(ctx: Ctx, tag: NamedTag, viewer: AccountRow | undefined): Promise<Tag> {
  return (await serializeTags(ctx, [tag], viewer))[0];
}
