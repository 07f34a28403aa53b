import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeScheduledStatus, serializeScheduledStatuses } from "../../entities/scheduled_status.ts";
import {
  cancelScheduledStatus,
  findOwnScheduledStatus,
  listScheduledStatuses,
  rescheduleStatus,
} from "../../services/statuses/schedule.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { scheduledAtParam, toId } from "../params.ts";
import { updateRoute } from "../update_route.ts";

export default async function scheduledStatusRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:statuses"], user: true });
  const write = app.auth({ scopes: ["write:statuses"], user: true });

  app.get("/api/v1/scheduled_statuses", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req);
    const page = pageParams(req.input, 20, 40);
    const rows = await listScheduledStatuses(ctx, viewer.account, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return serializeScheduledStatuses(ctx, rows);
  });

  app.get("/api/v1/scheduled_statuses/:id", { preHandler: read }, async (req) => {
    const viewer = userOf(req);
    return serializeScheduledStatus(ctx, await findOwnScheduledStatus(ctx, viewer.account, toId(req.input.id)));
  });

  updateRoute(app, "/api/v1/scheduled_statuses/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    const row = await findOwnScheduledStatus(ctx, viewer.account, toId(req.input.id));
    return serializeScheduledStatus(ctx, await rescheduleStatus(ctx, row, scheduledAtParam(req.input.scheduled_at)));
  });

  app.delete("/api/v1/scheduled_statuses/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req);
    await cancelScheduledStatus(ctx, await findOwnScheduledStatus(ctx, viewer.account, toId(req.input.id)));
    return {};
  });
}
