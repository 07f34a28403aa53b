import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeStatuses } from "../../entities/status.ts";
import { savedStatuses } from "../../services/statuses/saved.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";

/** The viewer's bookmarks and favourites, newest first, paged by the bookmark/favourite IDs. */
export default async function bookmarkRoutes(app: FastifyInstance, ctx: Ctx) {
  for (const [path, kind, scope] of [
    ["/api/v1/bookmarks", "bookmarks", "read:bookmarks"],
    ["/api/v1/favourites", "favourites", "read:favourites"],
  ] as const) {
    app.get(path, { preHandler: app.auth({ scopes: [scope], user: true }) }, async (req, reply) => {
      const viewer = userOf(req);
      const page = pageParams(req.input, 20, 40);
      const { marks, statuses } = await savedStatuses(ctx, viewer.account, kind, page);
      setLinkHeader(ctx.config, req, reply, { items: marks, cursor: (m) => m.id, limit: page.limit });
      return serializeStatuses(ctx, statuses, viewer.account);
    });
  }
}
