import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializePreviewCard } from "../../entities/preview_card.ts";
import { serializeStatuses } from "../../entities/status.ts";
import { serializeTags } from "../../entities/tag.ts";
import { trendingLinks, trendingStatuses, trendingTags } from "../../services/trends/trends.ts";
import { offsetParams, setOffsetLinkHeader } from "../pagination.ts";

/** Trending hashtags, statuses and links (public; ranked by the trends job). */
export default async function trendRoutes(app: FastifyInstance, ctx: Ctx) {
  // Mastodon asks no scope of these: any token, or none.
  const anyone = app.auth({ optional: true });

  for (const path of ["/api/v1/trends/tags", "/api/v1/trends"]) {
    app.get(path, { preHandler: anyone }, async (req, reply) => {
      const page = offsetParams(req.input, 10, 20);
      const tags = await trendingTags(ctx, page);
      setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: tags.length });
      return serializeTags(ctx, tags, req.viewer?.account ?? undefined);
    });
  }

  app.get("/api/v1/trends/statuses", { preHandler: anyone }, async (req, reply) => {
    const viewer = req.viewer?.account ?? undefined;
    const page = offsetParams(req.input, 20, 40);
    const rows = await trendingStatuses(ctx, viewer, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: rows.length });
    return serializeStatuses(ctx, rows, viewer);
  });

  app.get("/api/v1/trends/links", { preHandler: anyone }, async (req, reply) => {
    const page = offsetParams(req.input, 10, 20);
    const links = await trendingLinks(ctx, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: links.length });
    return links.map(({ card, history }) => ({
      ...serializePreviewCard(ctx, card),
      // Mastodon writes the history's numbers as strings.
      history: history.map((d) => ({ day: String(d.day), accounts: String(d.accounts), uses: String(d.uses) })),
    }));
  });
}
