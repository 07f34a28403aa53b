import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { NotFound, UserRequired } from "../../errors.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { familiarFollowers, followCollection } from "../../services/accounts/collections.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import { findVisibleAccount, findVisibleAccounts } from "../../services/accounts/lookup.ts";
import { userOf } from "../auth.ts";
import { answerAccountPage, pageParams } from "../pagination.ts";
import { toId, toStringArray } from "../params.ts";

/** Familiar followers are asked for a page of accounts at a time. */
const MAX_FAMILIAR = 40;

/** Followers and following lists, familiar followers, and the retired identity proofs. */
export default async function accountCollectionRoutes(app: FastifyInstance, ctx: Ctx) {
  const readAccounts = app.auth({ optional: true, scopes: ["read:accounts"] });

  for (const which of ["followers", "following"] as const) {
    app.get(`/api/v1/accounts/:id/${which}`, { preHandler: readAccounts }, async (req, reply) => {
      const owner = await targetAccount(ctx, toId(req.input.id));
      const page = pageParams(req.input, 40, 80);
      return answerAccountPage(
        ctx,
        req,
        reply,
        page,
        await followCollection(ctx, owner, which, req.viewer?.account?.id, page),
      );
    });
  }

  app.get(
    "/api/v1/accounts/familiar_followers",
    { preHandler: app.auth({ scopes: ["read:follows"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      const ids = [...new Set(toStringArray(req.input.id))]
        .slice(0, MAX_FAMILIAR)
        .map((id) => toId(id))
        .filter((id): id is string => id !== undefined);
      const targets = (await findVisibleAccounts(ctx, ids)).filter((a) => !a.suspended_at);
      const familiar = await familiarFollowers(ctx, viewer.account, targets);
      const everyone = [...new Map([...familiar.values()].flat().map((a) => [a.id, a])).values()];
      const serialized = new Map((await serializeAccounts(ctx, everyone)).map((a) => [a.id, a]));
      return targets.map((t) => ({ id: t.id, accounts: (familiar.get(t.id) ?? []).map((a) => serialized.get(a.id)) }));
    },
  );

  // Identity proofs are gone since Mastodon 3.5, which still answers `[]` to a signed-in user for an
  // account it knows (a suspended one too), and marks the endpoint deprecated since 2022-03-30. It
  // asks for a user but no scope (`require_user!` alone), so a call without a token is 422, not 401.
  app.get("/api/v1/accounts/:id/identity_proofs", { preHandler: app.auth({ optional: true }) }, async (req, reply) => {
    reply.header("Deprecation", "@1648598400");
    if (!req.viewer) throw new UserRequired();
    userOf(req); // confirmed, approved, not disabled: the 403s of require_user!
    if (!(await findVisibleAccount(ctx, toId(req.input.id)))) throw new NotFound();
    return [];
  });
}
