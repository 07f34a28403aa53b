import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeCustomEmoji } from "../../entities/custom_emoji.ts";

export default async function customEmojiRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v1/custom_emojis", { preHandler: app.auth({ optional: true, alwaysPublic: true }) }, async (_req, reply) => {
    const rows = await ctx.db.kysely
      .selectFrom("custom_emojis")
      .selectAll()
      .where("domain", "is", null)
      .where("disabled", "=", false)
      .orderBy("shortcode")
      .execute();
    reply.header("Cache-Control", "public, max-age=300, must-revalidate");
    return rows.map((row) => serializeCustomEmoji(ctx, row));
  });
}
