/**
 * What moderators see of trends (Mastodon's REST::Admin::TagSerializer,
 * REST::Admin::Trends::StatusSerializer, ::LinkSerializer and ::Links::PreviewCardProviderSerializer):
 * the public entities plus the review state.
 */
import type { Ctx } from "../context.ts";
import type { AccountRow, PreviewCardProviderRow, PreviewCardRow, StatusRow, TagRow } from "../db/schema.ts";
import { serializePreviewCard } from "./preview_card.ts";
import { serializeStatuses, type Status } from "./status.ts";
import { serializeTags, type Tag } from "./tag.ts";

/** Whether an item trends and whether it still awaits review (services/trends/review.ts decides). */
export interface ReviewFlags {
  trendable: boolean;
  requiresReview: boolean;
}

const UNREVIEWED: ReviewFlags = { trendable: false, requiresReview: true };

export interface AdminTag extends Tag {
  trendable: boolean;
  /** Rookery has no switch to stop a hashtag from linking or being listed: always true. */
  usable: boolean;
  listable: boolean;
  requires_review: boolean;
}

export async function serializeAdminTags(
  ctx: Ctx,
  tags: readonly TagRow[],
  viewer: AccountRow,
  states: ReadonlyMap<string, ReviewFlags>,
): Promise<AdminTag[]> {
  const serialized = await serializeTags(ctx, tags, viewer);
  return serialized.map((tag, i) => {
    const state = states.get(tags[i].id) ?? UNREVIEWED;
    return { ...tag, trendable: state.trendable, usable: true, listable: true, requires_review: state.requiresReview };
  });
}

export async function serializeAdminTrendStatuses(
  ctx: Ctx,
  rows: readonly StatusRow[],
  viewer: AccountRow,
  states: ReadonlyMap<string, ReviewFlags>,
): Promise<Array<Status & { requires_review: boolean }>> {
  const serialized = await serializeStatuses(ctx, [...rows], viewer);
  return serialized.map((status, i) => ({
    ...status,
    requires_review: (states.get(rows[i].id) ?? UNREVIEWED).requiresReview,
  }));
}

/** A day of a link's use, newest first (numbers; written as strings as Mastodon does). */
export interface LinkDay {
  day: number;
  accounts: number;
  uses: number;
}

/** The Trends::Link entity: a preview card and its week of shares. */
export function serializeTrendLink(ctx: Ctx, card: PreviewCardRow, history: readonly LinkDay[]) {
  return {
    ...serializePreviewCard(ctx, card),
    history: history.map((d) => ({ day: String(d.day), accounts: String(d.accounts), uses: String(d.uses) })),
  };
}

export function serializeAdminTrendLink(
  ctx: Ctx,
  card: PreviewCardRow,
  history: readonly LinkDay[],
  state: ReviewFlags,
) {
  return { id: card.id, ...serializeTrendLink(ctx, card, history), requires_review: state.requiresReview };
}

export interface AdminPreviewCardProvider {
  id: string;
  domain: string;
  /** Null until reviewed, as Mastodon writes it. */
  trendable: boolean | null;
  reviewed_at: string | null;
  requested_review_at: string | null;
  requires_review: boolean;
}

export function serializeAdminPreviewCardProvider(row: PreviewCardProviderRow): AdminPreviewCardProvider {
  return {
    id: row.id,
    domain: row.domain,
    trendable: row.trendable,
    reviewed_at: row.reviewed_at,
    requested_review_at: row.requested_review_at,
    requires_review: row.reviewed_at === null,
  };
}
