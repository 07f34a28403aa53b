import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeStatuses } from "../../entities/status.ts";
import { filterVisible } from "../../services/statuses/find.ts";
import { userOf } from "../auth.ts";
import { fetchPage } from "../../db/paging.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";

/** The viewer's bookmarks and favourites, newest first, paged by the bookmark/favourite IDs. */
export default async function bookmarkRoutes(app: FastifyInstance, ctx: Ctx) {
  for (const [path, table, scope] of [
    ["/api/v1/bookmarks", "bookmarks", "read:bookmarks"],
    ["/api/v1/favourites", "favourites", "read:favourites"],
  ] as const) {
    app.get(path, { preHandler: app.auth({ scopes: [scope], user: true }) }, async (req, reply) => {
      const viewer = userOf(req);
      const page = pageParams(req.input, 20, 40);
      const marks = await fetchPage(ctx.db.kysely.selectFrom(table).select(["id", "status_id"]).where("account_id", "=", viewer.account.id), "id", page);
      const rows = marks.length ? await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "in", marks.map((m) => m.status_id)).execute() : [];
      const visible = new Map((await filterVisible(ctx, rows, viewer.account.id)).map((r) => [r.id, r]));
      setLinkHeader(ctx.config, req, reply, { items: marks, cursor: (m) => m.id, limit: page.limit });
      const ordered = marks.map((m) => visible.get(m.status_id)).filter((r) => r !== undefined);
      return serializeStatuses(ctx, ordered, viewer.account);
    });
  }
}
