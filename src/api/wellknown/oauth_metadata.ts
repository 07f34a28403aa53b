import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { PKCE_METHODS } from "../../services/auth/oauth.ts";
import { ALL_SCOPES } from "../../services/auth/scopes.ts";

/** RFC 8414 authorization server metadata; clients such as Phanpy read it to choose PKCE. */
export default async function oauthMetadataRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/.well-known/oauth-authorization-server", async (_req, reply) => {
    const base = ctx.config.baseUrl;
    reply.header("Cache-Control", "public, max-age=900");
    return {
      issuer: `${base}/`,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      scopes_supported: ALL_SCOPES,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "client_credentials", "password"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: [...PKCE_METHODS],
      app_registration_endpoint: `${base}/api/v1/apps`,
    };
  });
}
