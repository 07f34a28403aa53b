import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import {
  serializeAdminPreviewCardProvider,
  serializeAdminTags,
  serializeAdminTrendLink,
  serializeAdminTrendStatuses,
} from "../../../entities/admin_trends.ts";
import {
  linkReviewStateOf,
  listProviders,
  reviewLink,
  reviewProvider,
  reviewStateOf,
  reviewStatus,
  reviewTag,
  trendingLinksForReview,
  trendingStatusesForReview,
  trendingTagsForReview,
  withHistories,
  type Decision,
} from "../../../services/admin/trends_review.ts";
import { userOf } from "../../auth.ts";
import { offsetParams, pageParams, setLinkHeader, setOffsetLinkHeader } from "../../pagination.ts";
import { toId } from "../../params.ts";

const DECISIONS: readonly Decision[] = ["approve", "reject"];

/**
 * Review of trends (Mastodon's Api::V1::Admin::Trends::TagsController, StatusesController,
 * LinksController and Links::PreviewCardProvidersController): every ranked item with its review
 * state, and approve / reject, each written to the audit log. Manage Taxonomies, with `admin:read`
 * to list and `admin:write` to decide. Lists page by `offset` and `limit` as the public trends do;
 * publishers by ID (`max_id`, `since_id`, `min_id`, limit 100).
 */
export default async function adminTrendRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read"], permission: "manage_taxonomies" });
  const write = app.auth({ scopes: ["admin:write"], permission: "manage_taxonomies" });

  app.get("/api/v1/admin/trends/tags", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const page = offsetParams(req.input, 10, 20);
    const { tags, states } = await trendingTagsForReview(ctx, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: tags.length });
    return serializeAdminTags(ctx, tags, viewer, states);
  });
  app.get("/api/v1/admin/trends/statuses", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const page = offsetParams(req.input, 20, 40);
    const { statuses, states } = await trendingStatusesForReview(ctx, viewer, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: statuses.length });
    return serializeAdminTrendStatuses(ctx, statuses, viewer, states);
  });
  app.get("/api/v1/admin/trends/links", { preHandler: read }, async (req, reply) => {
    const page = offsetParams(req.input, 10, 20);
    const { links, states } = await trendingLinksForReview(ctx, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: links.length });
    return links.map(({ card, history }) => serializeAdminTrendLink(ctx, card, history, states.get(card.id)!));
  });
  app.get("/api/v1/admin/trends/links/publishers", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 100);
    const rows = await listProviders(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return rows.map(serializeAdminPreviewCardProvider);
  });

  for (const decision of DECISIONS) {
    app.post(`/api/v1/admin/trends/tags/:id/${decision}`, { preHandler: write }, async (req) => {
      const viewer = userOf(req).account;
      const tag = await reviewTag(ctx, viewer.id, toId(req.input.id), decision);
      const state = await reviewStateOf(ctx, "tags", tag.id);
      return (await serializeAdminTags(ctx, [tag], viewer, new Map([[tag.id, state]])))[0];
    });
    app.post(`/api/v1/admin/trends/statuses/:id/${decision}`, { preHandler: write }, async (req) => {
      const viewer = userOf(req).account;
      const status = await reviewStatus(ctx, viewer.id, toId(req.input.id), decision);
      const state = await reviewStateOf(ctx, "statuses", status.id);
      return (await serializeAdminTrendStatuses(ctx, [status], viewer, new Map([[status.id, state]])))[0];
    });
    app.post(`/api/v1/admin/trends/links/:id/${decision}`, { preHandler: write }, async (req) => {
      const viewer = userOf(req).account;
      const card = await reviewLink(ctx, viewer.id, toId(req.input.id), decision);
      const [{ history }] = await withHistories(ctx, [card]);
      return serializeAdminTrendLink(ctx, card, history, await linkReviewStateOf(ctx, card));
    });
    app.post(`/api/v1/admin/trends/links/publishers/:id/${decision}`, { preHandler: write }, async (req) =>
      serializeAdminPreviewCardProvider(
        await reviewProvider(ctx, userOf(req).account.id, toId(req.input.id), decision),
      ),
    );
  }
}
