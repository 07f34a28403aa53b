import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializePoll, serializePollFor } from "../../entities/poll.ts";
import { ParameterMissing } from "../../errors.ts";
import { findVisiblePoll, votePoll } from "../../services/polls/vote.ts";
import { userOf } from "../auth.ts";
import { toId, toInteger, toStringArray } from "../params.ts";

export default async function pollRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v1/polls/:id", { preHandler: app.auth({ optional: true, scopes: ["read:statuses"] }) }, async (req) => {
    const viewer = req.viewer?.account ?? undefined;
    const poll = await findVisiblePoll(ctx, toId(req.input.id), viewer?.id);
    return serializePollFor(ctx, poll, viewer);
  });

  app.post(
    "/api/v1/polls/:id/votes",
    { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      const poll = await findVisiblePoll(ctx, toId(req.input.id), viewer.account.id);
      const raw = toStringArray(req.input.choices);
      if (raw.length === 0) throw new ParameterMissing("choices");
      const choices = raw.map((c) => (/^\s*\d+\s*$/.test(c) ? (toInteger(c) ?? -1) : -1));
      const updated = await votePoll(ctx, viewer.account, poll, choices);
      return serializePoll(updated, {
        accountId: viewer.account.id,
        ownVotes: [...new Set(choices)].sort((a, b) => a - b),
      });
    },
  );
}
