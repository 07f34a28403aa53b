import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeCredentialAccount } from "../../entities/account.ts";
import { userOf } from "../auth.ts";

export default async function accountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get(
    "/api/v1/accounts/verify_credentials",
    { preHandler: app.auth({ scopes: ["read:accounts", "profile"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      return serializeCredentialAccount(ctx, viewer.account, viewer.user, viewer.role);
    },
  );
}
