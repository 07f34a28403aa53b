import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { pingDatabase } from "../db/queries/health.ts";

export default async function healthRoutes(app: FastifyInstance, ctx: Ctx) {
  // Load balancers poll this: "OK" while the database answers, 503 otherwise.
  app.get("/health", async (req, reply) => {
    reply.header("Cache-Control", "no-store");
    try {
      await pingDatabase(ctx.db.kysely);
    } catch (error) {
      req.log.error({ err: error }, "health check: database unreachable");
      return reply.code(503).send({ error: "Database unavailable" });
    }
    return reply.type("text/plain; charset=utf-8").send("OK");
  });
}
