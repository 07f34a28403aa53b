/**
 * The home and list timelines, read from the stored feeds (timelines/feeds.ts) for the retention
 * window and from `statuses` below it, so every page is full whatever its age:
 * - the stored part is one backward range scan of the feed's primary key, joined to `statuses`,
 *   minus authors (and boosted authors) hidden from the viewer or suspended now: a block or mute
 *   takes effect on the next page even for entries written before it. The fan-out checked the
 *   rest of who may see what, so no second visibility pass runs;
 * - the older part scans `statuses` backwards by ID with the same rules as the fan-out, one probe
 *   of the viewer's follows (or the list's members) per row.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { ListRow, StatusRow } from "../../db/schema.ts";
import { compareIds } from "../../db/ids.ts";
import { notHiddenFrom } from "../visibility/exclusions.ts";
import { homeRules, listRules, stillShown } from "./feed_rules.ts";
import { feedCutoffId } from "./feeds.ts";

type PageReader = (page: PageParams) => Promise<StatusRow[]>;

/**
 * Stitches the stored part of a feed (`stored`, IDs ≥ cutoff) and the part older than the
 * retention (`older`) into one page.
 */
async function stitch(stored: PageReader, older: PageReader, page: PageParams, cutoff: string): Promise<StatusRow[]> {
  if (page.limit <= 0) return [];
  const olderMax = page.maxId && compareIds(page.maxId, cutoff) < 0 ? page.maxId : cutoff;
  const reachesOlder = (bound: string | undefined) => !bound || compareIds(bound, cutoff) < 0;
  if (page.minId) {
    // Oldest first above min_id: the older part comes first, then the stored one.
    const first = reachesOlder(page.minId)
      ? await older({ minId: page.minId, maxId: olderMax, limit: page.limit })
      : [];
    if (first.length >= page.limit) return first;
    const rest = await stored({ ...page, limit: page.limit - first.length });
    return [...rest, ...first];
  }
  const newer = await stored(page);
  if (newer.length >= page.limit || !reachesOlder(page.sinceId)) return newer;
  const rest = await older({ maxId: olderMax, sinceId: page.sinceId, limit: page.limit - newer.length });
  return [...newer, ...rest];
}

/**
 * The viewer's home timeline: their own posts, the posts and boosts of the accounts they follow
 * and the public posts of the hashtags they follow, as Mastodon's home feed rules decide.
 */
export async function homeTimeline(ctx: Ctx, viewerId: string, page: PageParams): Promise<StatusRow[]> {
  const db = ctx.db.kysely;
  const cutoff = feedCutoffId();
  const stored = db
    .selectFrom("home_feed_entries as e")
    .innerJoin("statuses", "statuses.id", "e.status_id")
    .selectAll("statuses")
    .where("e.account_id", "=", viewerId)
    .where("statuses.deleted_at", "is", null)
    .where(notHiddenFrom(viewerId, "statuses.account_id"))
    .where(stillShown(viewerId, "statuses"))
    .where("e.status_id", ">=", cutoff);
  const older = db
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.deleted_at", "is", null)
    .where(stillShown(viewerId, "statuses"))
    .where((eb) =>
      eb.or([
        eb("statuses.account_id", "=", viewerId),
        eb.and([
          sql<boolean>`EXISTS (SELECT 1 FROM follows hf WHERE hf.account_id = ${viewerId} AND hf.target_account_id = statuses.account_id LIMIT 1 OFFSET 0)`,
          homeRules(sql.val(viewerId), "statuses", { exclusiveLists: true }),
        ]),
      ]),
    );
  const rows = await stitch(
    (p) => fetchPage(stored, "e.status_id", p),
    (p) => fetchPage(older, "statuses.id", p),
    page,
    cutoff,
  );
  return rows;
}

/** A list's timeline: the posts and boosts of its members, by its replies policy. */
export async function listTimeline(ctx: Ctx, list: ListRow, page: PageParams): Promise<StatusRow[]> {
  const db = ctx.db.kysely;
  const owner = list.account_id;
  const cutoff = feedCutoffId();
  const stored = db
    .selectFrom("list_feed_entries as e")
    .innerJoin("statuses", "statuses.id", "e.status_id")
    .selectAll("statuses")
    .where("e.list_id", "=", list.id)
    .where("statuses.deleted_at", "is", null)
    .where(notHiddenFrom(owner, "statuses.account_id"))
    .where(stillShown(owner, "statuses"))
    .where("e.status_id", ">=", cutoff);
  const older = db
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.deleted_at", "is", null)
    .where(stillShown(owner, "statuses"))
    .where(
      sql<boolean>`EXISTS (SELECT 1 FROM list_accounts lm WHERE lm.list_id = ${list.id} AND lm.account_id = statuses.account_id LIMIT 1 OFFSET 0)`,
    )
    .where(
      listRules(
        { id: sql.val(list.id), accountId: sql.val(owner), repliesPolicy: sql.val(list.replies_policy) },
        "statuses",
      ),
    )
    .where(homeRules(sql.val(owner), "statuses", { exclusiveLists: false }));
  const rows = await stitch(
    (p) => fetchPage(stored, "e.status_id", p),
    (p) => fetchPage(older, "statuses.id", p),
    page,
    cutoff,
  );
  return rows;
}
