import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAnnouncements } from "../../entities/announcement.ts";
import {
  addReaction,
  dismissAnnouncement,
  publishedAnnouncements,
  removeReaction,
} from "../../services/announcements/announcements.ts";
import { userOf } from "../auth.ts";
import { toId } from "../params.ts";
import { updateRoute } from "../update_route.ts";

/** Announcements for users: the published ones, dismissing, reactions. */
export default async function announcementRoutes(app: FastifyInstance, ctx: Ctx) {
  const anyUser = app.auth({ user: true });
  const dismiss = app.auth({ scopes: ["write:accounts"], user: true });
  const react = app.auth({ scopes: ["write:favourites"], user: true });

  app.get("/api/v1/announcements", { preHandler: anyUser }, async (req) => {
    const viewer = userOf(req).account;
    return serializeAnnouncements(ctx, await publishedAnnouncements(ctx), viewer);
  });

  app.post<{ Params: { id: string } }>("/api/v1/announcements/:id/dismiss", { preHandler: dismiss }, async (req) => {
    await dismissAnnouncement(ctx, userOf(req).account.id, toId(req.params.id));
    return {};
  });

  updateRoute<{ Params: { id: string; name: string } }>(
    app,
    "/api/v1/announcements/:id/reactions/:name",
    { preHandler: react },
    async (req) => {
      await addReaction(ctx, userOf(req).account.id, toId(req.params.id), req.params.name);
      return {};
    },
  );

  app.delete<{ Params: { id: string; name: string } }>(
    "/api/v1/announcements/:id/reactions/:name",
    { preHandler: react },
    async (req) => {
      await removeReaction(ctx, userOf(req).account.id, toId(req.params.id), req.params.name);
      return {};
    },
  );
}
