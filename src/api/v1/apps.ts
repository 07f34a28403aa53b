import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeApplication, serializeCredentialApplication } from "../../entities/application.ts";
import { vapidKeys } from "../../services/push/vapid.ts";
import { ValidationFailed } from "../../errors.ts";
import {
  applicationOfToken,
  applicationProblems,
  insertApplication,
  splitRedirectUris,
} from "../../services/auth/applications.ts";
import { isKnownScope, parseScopes } from "../../services/auth/scopes.ts";
import { toStringArray, toStringParam } from "../params.ts";

export default async function appRoutes(app: FastifyInstance, ctx: Ctx) {
  app.post(
    "/api/v1/apps",
    { preHandler: app.auth({ optional: true, alwaysPublic: true }), config: { throttles: ["apps"] } },
    async (req) => {
      const input = req.input;
      const rawUris = Array.isArray(input.redirect_uris)
        ? toStringArray(input.redirect_uris)
        : toStringParam(input.redirect_uris);
      const params = {
        name: toStringParam(input.client_name),
        redirectUris: splitRedirectUris(rawUris),
        scopes: parseScopes(
          Array.isArray(input.scopes) ? toStringArray(input.scopes).join(" ") : (toStringParam(input.scopes) ?? "read"),
        ),
        website: toStringParam(input.website),
      };
      if (params.scopes.length === 0) params.scopes = ["read"];
      const problems = applicationProblems(params, isKnownScope);
      if (problems.length > 0) throw new ValidationFailed(problems);
      const row = await insertApplication(ctx.db.kysely, {
        name: params.name!.trim(),
        website: params.website?.trim() || null,
        redirectUris: params.redirectUris,
        scopes: params.scopes,
      });
      return serializeCredentialApplication(row, (await vapidKeys(ctx)).publicKey);
    },
  );

  app.get("/api/v1/apps/verify_credentials", { preHandler: app.auth({}) }, async (req) => {
    const row = await applicationOfToken(ctx, req.viewer?.applicationId);
    return serializeApplication(row, (await vapidKeys(ctx)).publicKey);
  });
}
