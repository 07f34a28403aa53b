import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import {
  authenticateClient,
  exchangeAuthorizationCode,
  issueClientCredentials,
  OAuthError,
  passwordGrant,
  revokeToken,
} from "../../services/auth/oauth.ts";
import { toStringParam } from "../params.ts";
import { applyThrottles, ENDPOINT_THROTTLES } from "../rate_limit.ts";

/** Client credentials from HTTP Basic (client_secret_basic) or the body (client_secret_post). */
function clientCredentials(req: FastifyRequest): { clientId?: string; clientSecret?: string } {
  const header = req.headers.authorization;
  if (typeof header === "string" && /^Basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ""), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) {
      try {
        return {
          clientId: decodeURIComponent(decoded.slice(0, colon)),
          clientSecret: decodeURIComponent(decoded.slice(colon + 1)),
        };
      } catch {
        throw new OAuthError(401, "invalid_client");
      }
    }
  }
  return { clientId: toStringParam(req.input.client_id), clientSecret: toStringParam(req.input.client_secret) };
}

function required(req: FastifyRequest, name: string): string {
  const value = toStringParam(req.input[name]);
  if (!value) throw new OAuthError(400, "invalid_request", `Missing required parameter: ${name}.`);
  return value;
}

export default async function oauthTokenRoutes(app: FastifyInstance, ctx: Ctx) {
  app.post("/oauth/token", async (req, reply) => {
    reply.header("Cache-Control", "no-store").header("Pragma", "no-cache");
    const grantType = required(req, "grant_type");
    if (!["authorization_code", "client_credentials", "password"].includes(grantType))
      throw new OAuthError(400, "unsupported_grant_type");
    const { clientId, clientSecret } = clientCredentials(req);
    // Password guesses are throttled like the sign-in form.
    if (grantType === "password")
      await applyThrottles(ctx.rateLimits, [ENDPOINT_THROTTLES.sign_in], req, reply, undefined);
    const client = await authenticateClient(ctx.db.kysely, clientId, clientSecret);
    switch (grantType) {
      case "authorization_code":
        return exchangeAuthorizationCode(ctx.db.kysely, client, {
          code: required(req, "code"),
          redirectUri: toStringParam(req.input.redirect_uri),
          codeVerifier: toStringParam(req.input.code_verifier),
        });
      case "client_credentials":
        return issueClientCredentials(ctx.db.kysely, client, toStringParam(req.input.scope));
      default:
        return passwordGrant(ctx, client, {
          username: required(req, "username"),
          password: required(req, "password"),
          scope: toStringParam(req.input.scope),
        });
    }
  });

  app.post("/oauth/revoke", async (req, reply) => {
    reply.header("Cache-Control", "no-store");
    const { clientId, clientSecret } = clientCredentials(req);
    const client = await authenticateClient(ctx.db.kysely, clientId, clientSecret);
    await revokeToken(ctx, client, required(req, "token"));
    return {};
  });
}
