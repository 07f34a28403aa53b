import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeCredentialAccount } from "../../entities/account.ts";
import { Forbidden } from "../../errors.ts";
import { registerUser } from "../../services/accounts/register.ts";
import { issueAccessToken } from "../../services/auth/tokens.ts";
import { tokenResponse } from "../../services/auth/oauth.ts";
import { userOf } from "../auth.ts";
import { toStringParam } from "../params.ts";

export default async function accountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.post(
    "/api/v1/accounts",
    { preHandler: app.auth({ scopes: ["write:accounts"], alwaysPublic: true }), config: { throttles: ["sign_up"] } },
    async (req, reply) => {
      const viewer = req.viewer!;
      if (viewer.user) throw new Forbidden("This method requires an client credentials authentication");
      const application = viewer.applicationId
        ? await ctx.db.kysely.selectFrom("oauth_applications").selectAll().where("id", "=", viewer.applicationId).executeTakeFirst()
        : undefined;
      if (!application) throw new Forbidden("This method requires an client credentials authentication");
      const input = req.input;
      const { user } = await registerUser(
        ctx,
        application,
        {
          username: toStringParam(input.username) ?? "",
          email: toStringParam(input.email) ?? "",
          password: toStringParam(input.password) ?? "",
          // Mastodon accepts only these spellings of consent (not "on").
          agreement: ([true, "true", "1", 1] as unknown[]).includes(input.agreement),
          locale: toStringParam(input.locale) || undefined,
          reason: toStringParam(input.reason),
        },
        req.ip,
      );
      const { row, accessToken } = await issueAccessToken(ctx.db.kysely, { applicationId: application.id, userId: user.id, scopes: application.scopes });
      reply.header("Cache-Control", "no-store");
      return tokenResponse(row, accessToken);
    },
  );

  app.get(
    "/api/v1/accounts/verify_credentials",
    { preHandler: app.auth({ scopes: ["read:accounts", "profile"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      return serializeCredentialAccount(ctx, viewer.account, viewer.user, viewer.role);
    },
  );

}
