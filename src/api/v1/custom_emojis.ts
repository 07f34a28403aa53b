import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeCustomEmoji } from "../../entities/custom_emoji.ts";
import { listEnabledCustomEmojis } from "../../services/emoji/manage.ts";

export default async function customEmojiRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get(
    "/api/v1/custom_emojis",
    { preHandler: app.auth({ optional: true, alwaysPublic: true }) },
    async (_req, reply) => {
      const rows = await listEnabledCustomEmojis(ctx);
      reply.header("Cache-Control", "public, max-age=300, must-revalidate");
      return rows.map((row) => serializeCustomEmoji(ctx, row));
    },
  );
}
