/**
 * Moderators' review of trends (Mastodon's Api::V1::Admin::Trends::*Controller, Trends::*Batch):
 * approving or rejecting a trending hashtag, status or link, or a publisher of links. A review is
 * one row (services/trends/review.ts reads it), written with its audit entry in one transaction;
 * reviewing again replaces the earlier decision. Approving a publisher keeps the reviews of its
 * individual links, as Mastodon's API does (only its batch form in the web admin resets them).
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { statusById } from "../../db/queries/statuses.ts";
import type {
  AccountRow,
  Database,
  PreviewCardProviderRow,
  PreviewCardRow,
  StatusRow,
  TagRow,
  TrendReviewRow,
} from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { linkReviewStates, reviewStates, type ReviewState } from "../trends/review.ts";
import { trendingLinks, trendingStatuses, trendingTags, withHistories, type TrendingLink } from "../trends/trends.ts";
import { recordAction } from "./audit.ts";

export type { ReviewState };
export { withHistories };

/** A moderator's decision: approve (may trend) or reject (never trends). */
export type Decision = "approve" | "reject";

/** Mastodon's log names links by their model, PreviewCard (not yet among audit.ts's target names). */

async function saveReview(
  tx: Kysely<Database>,
  kind: TrendReviewRow["kind"],
  itemId: string,
  decision: Decision,
): Promise<void> {
  const trendable = decision === "approve";
  const reviewedAt = new Date().toISOString();
  await tx
    .insertInto("trend_reviews")
    .values({ kind, item_id: itemId, trendable, reviewed_at: reviewedAt })
    .onConflict((oc) => oc.columns(["kind", "item_id"]).doUpdateSet({ trendable, reviewed_at: reviewedAt }))
    .execute();
}

export async function reviewTag(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  decision: Decision,
): Promise<TagRow> {
  const tag = id
    ? await ctx.db.kysely.selectFrom("tags").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!tag) throw new NotFound();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await saveReview(tx, "tags", tag.id, decision);
    await recordAction(tx, {
      actorId,
      action: decision,
      targetType: "Tag",
      targetId: tag.id,
      humanIdentifier: tag.name,
    });
  });
  return tag;
}

export async function reviewStatus(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  decision: Decision,
): Promise<StatusRow> {
  const status = id ? await statusById(ctx.db.kysely, id) : undefined;
  if (!status || status.deleted_at) throw new NotFound();
  const author = await ctx.db.kysely
    .selectFrom("accounts")
    .select(["username", "domain"])
    .where("id", "=", status.account_id)
    .executeTakeFirst();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await saveReview(tx, "statuses", status.id, decision);
    await recordAction(tx, {
      actorId,
      action: decision,
      targetType: "Status",
      targetId: status.id,
      // Mastodon names a status in its log by its author.
      humanIdentifier: author ? (author.domain ? `${author.username}@${author.domain}` : author.username) : null,
    });
  });
  return status;
}

export async function reviewLink(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  decision: Decision,
): Promise<PreviewCardRow> {
  const card = id
    ? await ctx.db.kysely.selectFrom("preview_cards").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!card) throw new NotFound();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await saveReview(tx, "links", card.id, decision);
    await recordAction(tx, {
      actorId,
      action: decision,
      targetType: "PreviewCard",
      targetId: card.id,
      humanIdentifier: card.url,
    });
  });
  return card;
}

/** The publishers of links, a page at a time (by ID, as Mastodon pages them). */
export function listProviders(ctx: Ctx, page: PageParams): Promise<PreviewCardProviderRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("preview_card_providers").selectAll(), "id", page);
}

export async function reviewProvider(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  decision: Decision,
): Promise<PreviewCardProviderRow> {
  if (!id) throw new NotFound();
  const now = new Date().toISOString();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable("preview_card_providers")
      .set({ trendable: decision === "approve", reviewed_at: now, updated_at: now })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: decision,
      targetType: "PreviewCardProvider",
      targetId: row.id,
      humanIdentifier: row.domain,
    });
    return row;
  });
}

/** Every trending hashtag, reviewed or not, with its review state (what moderators list). */
export async function trendingTagsForReview(
  ctx: Ctx,
  page: { limit: number; offset: number },
): Promise<{ tags: TagRow[]; states: Map<string, ReviewState> }> {
  const tags = await trendingTags(ctx, { ...page, unreviewed: true });
  return {
    tags,
    states: await reviewStates(
      ctx.db.kysely,
      "tags",
      tags.map((t) => t.id),
    ),
  };
}

/** Every trending status the moderator may see, reviewed or not, with its review state. */
export async function trendingStatusesForReview(
  ctx: Ctx,
  viewer: AccountRow,
  page: { limit: number; offset: number },
): Promise<{ statuses: StatusRow[]; states: Map<string, ReviewState> }> {
  const statuses = await trendingStatuses(ctx, viewer, { ...page, unreviewed: true });
  return {
    statuses,
    states: await reviewStates(
      ctx.db.kysely,
      "statuses",
      statuses.map((s) => s.id),
    ),
  };
}

/** Every trending link, reviewed or not, with its review state. */
export async function trendingLinksForReview(
  ctx: Ctx,
  page: { limit: number; offset: number },
): Promise<{ links: TrendingLink[]; states: Map<string, ReviewState> }> {
  const links = await trendingLinks(ctx, { ...page, unreviewed: true });
  return {
    links,
    states: await linkReviewStates(
      ctx.db.kysely,
      links.map((l) => l.card),
    ),
  };
}

/** The review state of one status, tag or link just reviewed (for the answer). */
export async function reviewStateOf(ctx: Ctx, kind: "tags" | "statuses", id: string): Promise<ReviewState> {
  return (await reviewStates(ctx.db.kysely, kind, [id])).get(id)!;
}

export async function linkReviewStateOf(ctx: Ctx, card: PreviewCardRow): Promise<ReviewState> {
  return (await linkReviewStates(ctx.db.kysely, [card])).get(card.id)!;
}
