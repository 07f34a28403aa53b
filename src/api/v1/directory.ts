import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { directoryAccounts } from "../../services/accounts/directory.ts";
import { offsetParams } from "../pagination.ts";
import { toBoolean, toStringParam } from "../params.ts";

/**
 * The profile directory. Mastodon asks no scope (any token, or none, unless the instance requires
 * sign-in for its API) and sends no Link header: clients page with `offset`. An `order` other than
 * `new` is read as `active`, the default (Mastodon has no answer of its own for one).
 */
export default async function directoryRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v1/directory", { preHandler: app.auth({ optional: true }) }, async (req) => {
    const accounts = await directoryAccounts(ctx, req.viewer?.account ?? undefined, {
      order: toStringParam(req.input.order) === "new" ? "new" : "active",
      local: toBoolean(req.input.local) ?? false,
      ...offsetParams(req.input, 40, 80),
    });
    return serializeAccounts(ctx, accounts);
  });
}
