import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeInstanceV2 } from "../../entities/instance.ts";
import { loadInstanceFacts } from "../../services/instance/facts.ts";
import { activeUserCount } from "../../services/instance/stats.ts";

export default async function instanceV2Routes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v2/instance", { preHandler: app.auth({ optional: true, alwaysPublic: true }) }, async (_req, reply) => {
    const [facts, activeMonth] = await Promise.all([loadInstanceFacts(ctx), activeUserCount(ctx.db, 30)]);
    reply.header("Cache-Control", "public, max-age=300, must-revalidate");
    return serializeInstanceV2(ctx, facts, activeMonth);
  });
}
