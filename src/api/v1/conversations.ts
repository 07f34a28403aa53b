import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeConversations } from "../../entities/conversation.ts";
import {
  conversationsOf,
  markConversation,
  ownConversation,
  removeConversation,
  visibleLastStatuses,
} from "../../services/conversations/conversations.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toId } from "../params.ts";

/** Direct-message conversations: the list (paged by each one's newest status), read/unread, remove. */
export default async function conversationRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:statuses"], user: true });
  const write = app.auth({ scopes: ["write:conversations"], user: true });

  app.get("/api/v1/conversations", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const page = pageParams(req.input, 20, 40);
    const rows = await conversationsOf(ctx, viewer, page);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.last_status_id,
      limit: page.limit,
      nextWhen: "non-empty",
    });
    return serializeConversations(ctx, rows, await visibleLastStatuses(ctx, rows, viewer.id), viewer);
  });

  for (const [action, unread] of [
    ["read", false],
    ["unread", true],
  ] as const) {
    app.post(`/api/v1/conversations/:id/${action}`, { preHandler: write }, async (req) => {
      const viewer = userOf(req).account;
      const row = await markConversation(ctx, await ownConversation(ctx, viewer, toId(req.input.id)), unread);
      return (await serializeConversations(ctx, [row], await visibleLastStatuses(ctx, [row], viewer.id), viewer))[0];
    });
  }

  app.delete("/api/v1/conversations/:id", { preHandler: write }, async (req) => {
    const viewer = userOf(req).account;
    await removeConversation(ctx, await ownConversation(ctx, viewer, toId(req.input.id)));
    return {};
  });
}
