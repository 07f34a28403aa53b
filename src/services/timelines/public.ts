import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { hasMedia } from "./conditions.ts";
import { notHiddenFrom } from "../visibility/exclusions.ts";

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
 * authors hidden from them (blocks both ways, mutes, domain blocks: services/accounts/exclusions.ts).
 * Filtered in SQL on the partial public-timeline index, so every page is full and one index scan.
 */
export async function publicTimeline(
  ctx: Ctx,
  viewerAccountId: string | undefined,
  options: PublicTimelineOptions,
  page: PageParams,
): Promise<StatusRow[]> {
  const db = ctx.db.kysely;
  let query = db
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.visibility", "=", "public")
    .where("statuses.reblog_of_id", "is", null)
    .where("statuses.deleted_at", "is", null)
    .where((eb) =>
      eb.or([
        eb("statuses.in_reply_to_id", "is", null),
        eb("statuses.in_reply_to_account_id", "=", eb.ref("statuses.account_id")),
      ]),
    )
    // One primary-key probe per candidate row (a NOT IN list would read every account per request).
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
  // Both at once means neither, as in Mastodon.
  if (options.local && !options.remote) query = query.where("statuses.local", "=", true);
  if (options.remote && !options.local) query = query.where("statuses.local", "=", false);
  if (options.onlyMedia) {
    query = query.where(hasMedia());
  }
  if (viewerAccountId) query = query.where(notHiddenFrom(viewerAccountId, "statuses.account_id"));
  return fetchPage(query, "statuses.id", page);
}
