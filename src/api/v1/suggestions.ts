import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import { dismissSuggestion, suggestionsFor } from "../../services/accounts/suggestions.ts";
import { userOf } from "../auth.ts";
import { offsetParams, setOffsetLinkHeader } from "../pagination.ts";
import { toId } from "../params.ts";

/** The deprecated `source` of a suggestion, from its sources (as Mastodon maps them). */
function legacySource(sources: readonly string[]): "global" | "past_interactions" {
  return sources.includes("friends_of_friends") ? "past_interactions" : "global";
}

/** Follow suggestions: `GET /api/v2/suggestions`, the older `GET /api/v1/suggestions`, dismissing one. */
export default async function suggestionRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:accounts"], user: true });

  app.get("/api/v2/suggestions", { preHandler: read }, async (req, reply) => {
    const page = offsetParams(req.input, 40, 80);
    const suggestions = await suggestionsFor(ctx, userOf(req).account, page);
    setOffsetLinkHeader(ctx.config, req, reply, { ...page, count: suggestions.length });
    const accounts = await serializeAccounts(
      ctx,
      suggestions.map((s) => s.account),
    );
    return suggestions.map((s, i) => ({ source: legacySource(s.sources), sources: s.sources, account: accounts[i] }));
  });

  app.get("/api/v1/suggestions", { preHandler: read }, async (req) => {
    const suggestions = await suggestionsFor(ctx, userOf(req).account, offsetParams(req.input, 40, 80));
    return serializeAccounts(
      ctx,
      suggestions.map((s) => s.account),
    );
  });

  app.delete(
    "/api/v1/suggestions/:account_id",
    { preHandler: app.auth({ scopes: ["write:accounts"], user: true }) },
    async (req) => {
      await dismissSuggestion(ctx, userOf(req).account, await targetAccount(ctx, toId(req.input.account_id)));
      return {};
    },
  );
}
