import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeRelationship } from "../../entities/relationship.ts";
import {
  endorseAccount,
  endorsedAccounts,
  setAccountNote,
  unendorseAccount,
} from "../../services/accounts/endorsements.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import { userOf } from "../auth.ts";
import { answerAccountPage, pageParams } from "../pagination.ts";
import { toId, toStringParam } from "../params.ts";

/** Endorsed (featured) accounts and private notes. */
export default async function endorsementRoutes(app: FastifyInstance, ctx: Ctx) {
  const writeAccounts = app.auth({ scopes: ["write:accounts"], user: true });

  // `endorse`/`unendorse` since Mastodon 4.4; `pin`/`unpin` are the older names clients still use.
  for (const [name, act] of [
    ["endorse", endorseAccount],
    ["pin", endorseAccount],
    ["unendorse", unendorseAccount],
    ["unpin", unendorseAccount],
  ] as const) {
    app.post(`/api/v1/accounts/:id/${name}`, { preHandler: writeAccounts }, async (req) => {
      const viewer = userOf(req);
      const target = await targetAccount(ctx, toId(req.input.id));
      await act(ctx, viewer.account, target);
      return serializeRelationship(ctx, viewer.account.id, target.id);
    });
  }

  app.post("/api/v1/accounts/:id/note", { preHandler: writeAccounts }, async (req) => {
    const viewer = userOf(req);
    const target = await targetAccount(ctx, toId(req.input.id));
    await setAccountNote(ctx, viewer.account, target, toStringParam(req.input.comment) ?? "");
    return serializeRelationship(ctx, viewer.account.id, target.id);
  });

  app.get(
    "/api/v1/endorsements",
    { preHandler: app.auth({ scopes: ["read:accounts"], user: true }) },
    async (req, reply) => {
      const viewer = userOf(req);
      const page = pageParams(req.input, 40, 80);
      return answerAccountPage(ctx, req, reply, page, await endorsedAccounts(ctx, viewer.account, page));
    },
  );

  app.get(
    "/api/v1/accounts/:id/endorsements",
    { preHandler: app.auth({ optional: true, scopes: ["read:accounts"] }) },
    async (req, reply) => {
      const owner = await targetAccount(ctx, toId(req.input.id));
      const page = pageParams(req.input, 40, 80);
      return answerAccountPage(ctx, req, reply, page, await endorsedAccounts(ctx, owner, page));
    },
  );
}
