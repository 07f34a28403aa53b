import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from "fastify";
import type { Ctx } from "../context.ts";
import { AuthenticationRequired, Forbidden, OutsideScopes, Unauthorized } from "../errors.ts";
import { hasPermission, type Permission } from "../services/accounts/roles.ts";
import {
  assertFunctionalUser,
  findViewerByToken,
  recordTokenUse,
  type UserViewer,
  type Viewer,
} from "../services/auth/viewer.ts";
import { scopesAllow } from "../services/auth/scopes.ts";
import { toStringParam } from "./params.ts";
import { API_THROTTLES, applyThrottles, ENDPOINT_THROTTLES } from "./rate_limit.ts";

export interface AuthOptions {
  /** The endpoint accepts a token holding any of these scopes (or a scope above one of them). */
  scopes?: readonly string[];
  /** A user token is required; an app token gets 422. */
  user?: boolean;
  /** No token needed; a token, if sent, is still checked. */
  optional?: boolean;
  /**
   * Public even when the instance requires authentication for its API (instance metadata, apps,
   * registration). Without it, optional endpoints answer 401 to anonymous callers in that mode.
   */
  alwaysPublic?: boolean;
  /** Admin endpoints: the user's role must grant this; failures are 403, as Mastodon's admin API answers. */
  permission?: Permission;
}

declare module "fastify" {
  interface FastifyRequest {
    viewer: Viewer | undefined;
  }
  interface FastifyInstance {
    auth(options: AuthOptions): preHandlerAsyncHookHandler;
  }
}

function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === "string") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) return match[1];
  }
  // Doorkeeper also accepts the token as a parameter.
  return toStringParam(req.input?.access_token) ?? toStringParam(req.input?.bearer_token);
}

/**
 * Whether endpoints that are otherwise public need a user token: DISALLOW_UNAUTHENTICATED_API_ACCESS,
 * limited federation, or authorized fetch (the spec's Authentication rule 6; Mastodon before 4.0 tied
 * this to authorized fetch alone).
 */
function publicApiNeedsUser(config: Ctx["config"]): boolean {
  return config.disallowUnauthenticatedApiAccess || config.authorizedFetch;
}

/** Decorates the app with `app.auth(options)`, the pre-handler every route uses to authenticate. */
export function registerAuth(app: FastifyInstance, ctx: Ctx): void {
  app.decorateRequest("viewer", undefined);
  app.decorate("auth", (options: AuthOptions): preHandlerAsyncHookHandler => {
    const admin = options.permission !== undefined;
    const needsUser = options.optional === true && !options.alwaysPublic && publicApiNeedsUser(ctx.config);
    return async (req, reply) => {
      const viewer = await authenticate(req);
      const throttles = [
        ...API_THROTTLES,
        ...(req.routeOptions.config.throttles ?? []).map((name) => ENDPOINT_THROTTLES[name]),
      ];
      await applyThrottles(ctx.rateLimits, throttles, req, reply, viewer);
    };

    async function authenticate(req: FastifyRequest): Promise<Viewer | undefined> {
      const token = bearerToken(req);
      const found = token ? await findViewerByToken(ctx.db.kysely, token) : undefined;

      if (found === "revoked") throw admin ? new Forbidden() : new Unauthorized("The access token was revoked");
      if (!found) {
        if (options.optional) {
          if (needsUser) throw new AuthenticationRequired();
          return undefined;
        }
        throw admin ? new Forbidden() : new Unauthorized();
      }

      if (options.scopes && !scopesAllow(found.scopes, options.scopes)) throw new OutsideScopes();
      // A disabled or suspended user's tokens read nothing, public endpoints included (Mastodon's require_not_suspended!).
      if (found.user && (found.user.disabled || found.account?.suspended_at))
        throw new Forbidden("Your login is currently disabled");
      // An app's own token has no user, so no role: Mastodon's admin policies refuse it (403), not 422.
      if (admin && !found.user) throw new Forbidden();
      if (options.user || admin) assertFunctionalUser(found);
      if (options.permission && !(found.role && hasPermission(found.role, options.permission))) throw new Forbidden();
      if (needsUser && !found.user) throw new AuthenticationRequired();
      req.viewer = found;
      await recordTokenUse(ctx.db.kysely, found);
      return found;
    }
  });
}

/** The viewer of a `user: true` route (the pre-handler guarantees it). */
export function userOf(req: FastifyRequest): UserViewer {
  const viewer = req.viewer;
  if (!viewer) throw new Unauthorized();
  assertFunctionalUser(viewer);
  return viewer;
}
