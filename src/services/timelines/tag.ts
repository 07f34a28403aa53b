/**
 * The hashtag timeline (Mastodon's TagFeed): public posts (not boosts) with the tag or any of the
 * `any` tags, with every `all` tag and none of the `none` tags, local or remote only on request, by
 * authors neither suspended nor hidden from the viewer. Each tag's posts are read newest first from
 * the statuses_tags primary key (tag_id, status_id), one range per tag that stops after the page,
 * and the ranges are merged; a rare tag is as cheap as a popular one.
 */
import type { Ctx } from "../../context.ts";
import type { PageParams } from "../../db/paging.ts";
import type { StatusRow, TagRow } from "../../db/schema.ts";
import { notHiddenFrom } from "../visibility/exclusions.ts";
import { hasMedia } from "./conditions.ts";

export interface TagTimelineOptions {
  /** The tag of the path and the `any[]` tags: a post needs one of them. */
  anyOf: TagRow[];
  /** `all[]`: a post needs every one (unknown names: nothing matches). */
  allOf: TagRow[];
  /** `none[]`: a post may have none of them. */
  noneOf: TagRow[];
  local: boolean;
  remote: boolean;
  onlyMedia: boolean;
}

/** One tag's posts for the page: a range of its statuses_tags rows, filtered, newest first (oldest first for min_id). */
export function tagRangeQuery(
  ctx: Ctx,
  tagId: string,
  viewerId: string | undefined,
  options: TagTimelineOptions,
  page: PageParams,
) {
  let query = ctx.db.kysely
    .selectFrom("statuses_tags")
    .innerJoin("statuses", "statuses.id", "statuses_tags.status_id")
    .selectAll("statuses")
    .where("statuses_tags.tag_id", "=", tagId)
    .where("statuses.visibility", "=", "public")
    .where("statuses.reblog_of_id", "is", null)
    .where("statuses.deleted_at", "is", null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("accounts")
            .select("accounts.id")
            .whereRef("accounts.id", "=", "statuses.account_id")
            .where((inner) =>
              inner.or([inner("accounts.suspended_at", "is not", null), inner("accounts.silenced_at", "is not", null)]),
            )
            .limit(1)
            .offset(0),
        ),
      ),
    );
  for (const tag of options.allOf) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("statuses_tags as required")
          .select("required.tag_id")
          .where("required.tag_id", "=", tag.id)
          .whereRef("required.status_id", "=", "statuses.id")
          .limit(1)
          .offset(0),
      ),
    );
  }
  for (const tag of options.noneOf) {
    query = query.where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("statuses_tags as excluded")
            .select("excluded.tag_id")
            .where("excluded.tag_id", "=", tag.id)
            .whereRef("excluded.status_id", "=", "statuses.id")
            .limit(1)
            .offset(0),
        ),
      ),
    );
  }
  if (options.local && !options.remote) query = query.where("statuses.local", "=", true);
  if (options.remote && !options.local) query = query.where("statuses.local", "=", false);
  if (options.onlyMedia) query = query.where(hasMedia());
  if (viewerId) query = query.where(notHiddenFrom(viewerId, "statuses.account_id"));
  if (page.maxId) query = query.where("statuses_tags.status_id", "<", page.maxId);
  if (page.minId)
    return query
      .where("statuses_tags.status_id", ">", page.minId)
      .orderBy("statuses_tags.status_id", "asc")
      .limit(page.limit);
  if (page.sinceId) query = query.where("statuses_tags.status_id", ">", page.sinceId);
  return query.orderBy("statuses_tags.status_id", "desc").limit(page.limit);
}

export async function tagTimeline(
  ctx: Ctx,
  viewerId: string | undefined,
  options: TagTimelineOptions,
  page: PageParams,
): Promise<StatusRow[]> {
  if (page.limit <= 0 || options.anyOf.length === 0) return [];
  const ranges = await Promise.all(
    options.anyOf.map((tag) => tagRangeQuery(ctx, tag.id, viewerId, options, page).execute()),
  );
  const byId = new Map(ranges.flat().map((s) => [s.id, s]));
  const ascending = (a: StatusRow, b: StatusRow) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);
  const merged = [...byId.values()].sort(ascending);
  // min_id reads the oldest above the cursor; the answer is newest first either way.
  const pageRows = page.minId ? merged.slice(0, page.limit) : merged.slice(-page.limit);
  return pageRows.reverse();
}
