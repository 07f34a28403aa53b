import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";

export interface PublicTimelineOptions {
  /** Only statuses of this server. */
  local: boolean;
  /** Only statuses from other servers. */
  remote: boolean;
  /** Only statuses with media attachments. */
  onlyMedia: boolean;
}

/**
 * The public timeline (Mastodon's PublicFeed): public statuses that are not boosts and not replies
 * to someone else, by authors who are neither suspended nor silenced; for a signed-in viewer, minus
 * authors the viewer blocks or is blocked by. Filtered in SQL, so every page is full.
 */
export async function publicTimeline(ctx: Ctx, viewerAccountId: string | undefined, options: PublicTimelineOptions, page: PageParams): Promise<StatusRow[]> {
  const db = ctx.db.kysely;
  let query = db
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.visibility", "=", "public")
    .where("statuses.reblog_of_id", "is", null)
    .where("statuses.deleted_at", "is", null)
    .where((eb) => eb.or([eb("statuses.in_reply_to_id", "is", null), eb("statuses.in_reply_to_account_id", "=", eb.ref("statuses.account_id"))]))
    .where("statuses.account_id", "not in", db.selectFrom("accounts").select("id").where((eb) => eb.or([eb("suspended_at", "is not", null), eb("silenced_at", "is not", null)])));
  // Both at once means neither, as in Mastodon.
  if (options.local && !options.remote) query = query.where("statuses.local", "=", true);
  if (options.remote && !options.local) query = query.where("statuses.local", "=", false);
  if (options.onlyMedia) {
    query = query.where((eb) => eb.exists(eb.selectFrom("media_attachments").select("media_attachments.id").whereRef("media_attachments.status_id", "=", "statuses.id")));
  }
  if (viewerAccountId) {
    query = query
      .where("statuses.account_id", "not in", db.selectFrom("blocks").select("target_account_id").where("account_id", "=", viewerAccountId))
      .where("statuses.account_id", "not in", db.selectFrom("blocks").select("account_id").where("target_account_id", "=", viewerAccountId));
  }
  return fetchPage(query, "statuses.id", page);
}
