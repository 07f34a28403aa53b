/**
 * An account's statuses as a viewer may see them (Mastodon's AccountStatusesFilter): the author
 * sees everything; followers also see followers-only posts; anyone sees posts that mention them;
 * everyone else public and unlisted ones. An owner who blocks the viewer, or whose domain the
 * viewer blocks, shows nothing. Filtered in SQL on the (account_id, id) index, so a page is one
 * range scan of the account's own statuses.
 */
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { hasMedia } from "./conditions.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { filterVisible } from "../visibility/find.ts";
import type { Visibility } from "../statuses/validate.ts";

export interface AccountStatusesOptions {
  onlyMedia: boolean;
  /** Leaves out replies to others (replies to oneself stay, as threads). */
  excludeReplies: boolean;
  excludeReblogs: boolean;
  pinned: boolean;
  /** Only statuses with this hashtag (without `#`). */
  tagged?: string;
}

async function relation(
  ctx: Ctx,
  owner: AccountRow,
  viewerId: string | undefined,
): Promise<"author" | "anonymous" | "blocked" | "follower" | "other"> {
  if (!viewerId) return "anonymous";
  if (viewerId === owner.id) return "author";
  const db = ctx.db.kysely;
  const [blocked, domainBlocked, following] = await Promise.all([
    db
      .selectFrom("blocks")
      .select("id")
      .where("account_id", "=", owner.id)
      .where("target_account_id", "=", viewerId)
      .executeTakeFirst(),
    owner.domain
      ? db
          .selectFrom("account_domain_blocks")
          .select("id")
          .where("account_id", "=", viewerId)
          .where("domain", "=", owner.domain)
          .executeTakeFirst()
      : undefined,
    db
      .selectFrom("follows")
      .select("id")
      .where("account_id", "=", viewerId)
      .where("target_account_id", "=", owner.id)
      .executeTakeFirst(),
  ]);
  if (blocked || domainBlocked) return "blocked";
  return following ? "follower" : "other";
}

/** The query of an account's statuses for a viewer, before paging (the plan tests read it too). */
export async function accountStatusesQuery(
  ctx: Ctx,
  owner: AccountRow,
  viewerId: string | undefined,
  options: AccountStatusesOptions,
) {
  const seen = await relation(ctx, owner, viewerId);
  if (seen === "blocked" || owner.suspended_at) return undefined;
  let query = ctx.db.kysely
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.account_id", "=", owner.id)
    .where("statuses.deleted_at", "is", null);
  if (seen !== "author") {
    const open: Visibility[] = seen === "follower" ? ["public", "unlisted", "private"] : ["public", "unlisted"];
    query = query.where((eb) =>
      viewerId
        ? eb.or([
            eb("statuses.visibility", "in", open),
            eb.exists(
              eb
                .selectFrom("mentions")
                .select("mentions.id")
                .whereRef("mentions.status_id", "=", "statuses.id")
                .where("mentions.account_id", "=", viewerId)
                .limit(1)
                .offset(0),
            ),
          ])
        : eb("statuses.visibility", "in", open),
    );
  }
  if (options.pinned) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("status_pins")
          .select("status_pins.id")
          .whereRef("status_pins.status_id", "=", "statuses.id")
          .where("status_pins.account_id", "=", owner.id)
          .limit(1)
          .offset(0),
      ),
    );
  }
  if (options.onlyMedia) {
    query = query.where(hasMedia());
  }
  if (options.excludeReplies) {
    query = query.where((eb) =>
      eb.or([eb("statuses.in_reply_to_id", "is", null), eb("statuses.in_reply_to_account_id", "=", owner.id)]),
    );
  }
  if (options.excludeReblogs) query = query.where("statuses.reblog_of_id", "is", null);
  const tag = options.tagged?.trim().replace(/^#/, "").toLowerCase();
  if (tag) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("statuses_tags")
          .innerJoin("tags", "tags.id", "statuses_tags.tag_id")
          .select("statuses_tags.tag_id")
          .whereRef("statuses_tags.status_id", "=", "statuses.id")
          .where((inner) => inner(inner.fn("lower", ["tags.name"]), "=", tag))
          .limit(1)
          .offset(0),
      ),
    );
  }
  return query;
}

/** A page of an account's statuses for the viewer; boosts of statuses the viewer may not see are left out. */
export async function accountStatuses(
  ctx: Ctx,
  owner: AccountRow,
  viewerId: string | undefined,
  options: AccountStatusesOptions,
  page: PageParams,
): Promise<StatusRow[]> {
  const query = await accountStatusesQuery(ctx, owner, viewerId, options);
  if (!query) return [];
  return filterVisible(ctx, await fetchPage(query, "statuses.id", page), viewerId);
}
