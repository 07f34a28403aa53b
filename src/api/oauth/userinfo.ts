import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { accountUrl } from "../../entities/account.ts";
import { userOf } from "../auth.ts";

/** OpenID-Connect-style user information for tokens with the `profile` scope. */
export default async function oauthUserinfoRoutes(app: FastifyInstance, ctx: Ctx) {
  const handler = async (req: FastifyRequest) => {
    const { account } = userOf(req);
    return {
      iss: `${ctx.config.baseUrl}/`,
      sub: account.uri,
      name: account.display_name || account.username,
      preferred_username: account.username,
      profile: accountUrl(ctx, account),
      picture: account.avatar_file
        ? `${ctx.config.baseUrl}/system/${account.avatar_file}`
        : `${ctx.config.baseUrl}/avatars/original/missing.png`,
    };
  };
  const options = { preHandler: app.auth({ scopes: ["profile"], user: true }) };
  app.get("/oauth/userinfo", options, handler);
  app.post("/oauth/userinfo", options, handler);
}
