import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import type { ApplicationRow } from "../db/schema.ts";
import { toBoolean, toStringParam } from "../api/params.ts";
import { OOB_REDIRECT_URI } from "../services/auth/applications.ts";
import {
  createAuthorizationCode,
  findApplicationByClientId,
  grantableScopes,
  hasMatchingToken,
  OAUTH_DESCRIPTIONS,
  OAuthError,
  PKCE_METHODS,
  registeredRedirectUris,
  type OAuthErrorCode,
  type PkceMethod,
} from "../services/auth/oauth.ts";
import { hiddenFields, html } from "./html.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, currentWebUser, restrictionOf, type WebUser } from "./session.ts";

const SCOPE_DESCRIPTIONS: Record<string, string> = {
  read: "Read all your account's data",
  write: "Modify all your account's data",
  follow: "Modify account relationships",
  push: "Receive your push notifications",
  profile: "Read only your account's profile information",
  "admin:read": "Read all data on the server",
  "admin:write": "Modify all data on the server",
};

function describeScope(scope: string): string {
  if (SCOPE_DESCRIPTIONS[scope]) return SCOPE_DESCRIPTIONS[scope];
  const [verb, ...rest] = scope.split(":");
  const subject = rest.join(" ").replace(/_/g, " ");
  return `${verb === "read" || (verb === "admin" && rest[0] === "read") ? "Read" : "Modify"} ${subject}`;
}

/** A checked authorization request: the client, where to send the answer, and what it asks for. */
interface AuthorizationRequest {
  app: ApplicationRow;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: PkceMethod | undefined;
  forceLogin: boolean;
}

/** A request whose client or redirect URI cannot be trusted: shown as a page, never redirected. */
class UntrustedRequest extends Error {}

interface RedirectTarget {
  redirectUri: string;
  state: string | undefined;
}

/** An error the client should receive at its (already verified) redirect URI. */
class RedirectableError extends Error {
  readonly code: OAuthErrorCode;
  readonly target: RedirectTarget;
  constructor(code: OAuthErrorCode, target: RedirectTarget) {
    super(code);
    this.code = code;
    this.target = target;
  }
}

async function parseAuthorizationRequest(ctx: Ctx, req: FastifyRequest): Promise<AuthorizationRequest> {
  const input = req.input;
  const app = await findApplicationByClientId(ctx.db.kysely, toStringParam(input.client_id));
  if (!app) throw new UntrustedRequest(OAUTH_DESCRIPTIONS.invalid_client);
  const registered = registeredRedirectUris(app);
  const given = toStringParam(input.redirect_uri);
  const redirectUri = given ?? (registered.length === 1 ? registered[0] : undefined);
  if (!redirectUri || !registered.includes(redirectUri))
    throw new UntrustedRequest("The redirect URI included is not valid.");
  const target: RedirectTarget = { redirectUri, state: toStringParam(input.state) };
  if (toStringParam(input.response_type) !== "code") throw new RedirectableError("unsupported_response_type", target);
  let scopes: string[];
  try {
    scopes = grantableScopes(app, toStringParam(input.scope));
  } catch (error) {
    if (error instanceof OAuthError) throw new RedirectableError("invalid_scope", target);
    throw error;
  }
  const codeChallenge = toStringParam(input.code_challenge) || undefined;
  const method = toStringParam(input.code_challenge_method) || undefined;
  const badMethod = method !== undefined && (!codeChallenge || !(PKCE_METHODS as readonly string[]).includes(method));
  if (badMethod || (codeChallenge && !/^[A-Za-z0-9._~-]{43,128}$/.test(codeChallenge)))
    throw new RedirectableError("invalid_request", target);
  return {
    app,
    ...target,
    scopes,
    codeChallenge,
    codeChallengeMethod: codeChallenge ? ((method as PkceMethod | undefined) ?? "plain") : undefined,
    forceLogin: toBoolean(input.force_login) === true,
  };
}

function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

async function answerWithCode(
  ctx: Ctx,
  reply: FastifyReply,
  request: AuthorizationRequest,
  session: WebUser,
): Promise<FastifyReply> {
  const code = await createAuthorizationCode(ctx.db.kysely, {
    app: request.app,
    user: session.user,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
  });
  if (request.redirectUri === OOB_REDIRECT_URI)
    return reply.redirect(`/oauth/authorize/native?code=${encodeURIComponent(code)}`, 303);
  return reply.redirect(redirectWith(request.redirectUri, { code, state: request.state }), 303);
}

function consentForm(
  token: string,
  request: AuthorizationRequest,
  decision: "approve" | "deny",
  label: string,
  style = "",
) {
  return html`<form method="post" action="/oauth/authorize">
${hiddenFields({
  authenticity_token: token,
  client_id: request.app.client_id,
  redirect_uri: request.redirectUri,
  response_type: "code",
  scope: request.scopes.join(" "),
  state: request.state,
  code_challenge: request.codeChallenge,
  code_challenge_method: request.codeChallengeMethod,
  decision,
})}<button type="submit" class="${style}">${label}</button></form>`;
}

async function handleError(ctx: Ctx, reply: FastifyReply, error: unknown): Promise<FastifyReply> {
  if (error instanceof UntrustedRequest) {
    return renderPage(ctx, reply, {
      title: "Authorization error",
      status: 400,
      alert: error.message,
      body: html`<p class="muted">Go back to the app and try signing in again.</p>`,
    });
  }
  if (error instanceof RedirectableError) {
    const { target } = error;
    if (target.redirectUri === OOB_REDIRECT_URI) {
      return renderPage(ctx, reply, {
        title: "Authorization error",
        status: 400,
        alert: OAUTH_DESCRIPTIONS[error.code],
        body: html``,
      });
    }
    return reply.redirect(
      redirectWith(target.redirectUri, {
        error: error.code,
        error_description: OAUTH_DESCRIPTIONS[error.code],
        state: target.state,
      }),
      303,
    );
  }
  throw error;
}

type Prologue = { request: AuthorizationRequest; session: WebUser } | { answer: FastifyReply };

/**
 * What showing the consent page (GET) and deciding on it (POST) both do first: read and check the
 * authorization request, find the signed-in user (or send them to sign in), check the form's CSRF
 * token on a decision, and refuse users who may not authorize apps yet. Either the request and its
 * user, or the answer to send instead.
 */
async function authorizationPrologue(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  step: "ask" | "decide",
): Promise<Prologue> {
  let request: AuthorizationRequest;
  try {
    request = await parseAuthorizationRequest(ctx, req);
  } catch (error) {
    return { answer: await handleError(ctx, reply, error) };
  }
  const session = await currentWebUser(ctx, req);
  if (!session) {
    // A decision cannot be replayed after signing in (its form is gone): the app starts again.
    const signIn = step === "ask" ? `/auth/sign_in?return_to=${encodeURIComponent(req.url)}` : "/auth/sign_in";
    return { answer: await reply.redirect(signIn, 303) };
  }
  if (step === "decide" && !csrfValid(req)) {
    const alert = "This form has expired. Go back to the app and try again.";
    return {
      answer: await renderPage(ctx, reply, { title: "Authorization required", status: 422, alert, body: html`` }),
    };
  }
  const blocked = restrictionOf(session);
  if (blocked) {
    return {
      answer: await renderPage(ctx, reply, {
        title: "Authorize",
        status: 403,
        alert: blocked,
        body: html`<nav><a href="/settings">Your account</a></nav>`,
      }),
    };
  }
  return { request, session };
}

export default async function webOauthRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/oauth/authorize", async (req, reply) => {
    const prologue = await authorizationPrologue(ctx, req, reply, "ask");
    if ("answer" in prologue) return prologue.answer;
    const { request, session } = prologue;
    if (
      request.app.superapp ||
      (!request.forceLogin && (await hasMatchingToken(ctx.db.kysely, request.app, session.user, request.scopes)))
    ) {
      return answerWithCode(ctx, reply, request, session);
    }
    const token = csrfToken(ctx, req, reply);
    return renderPage(ctx, reply, {
      title: "Authorization required",
      popup: true,
      body: html`<p><strong>${request.app.name}</strong>${request.app.website ? html` (<span class="muted">${request.app.website}</span>)` : ""} would like to access your account <strong>@${session.account.username}</strong>. It will be able to:</p>
<ul class="scopes">${request.scopes.map((scope) => html`<li>${describeScope(scope)} <span class="muted">(${scope})</span></li>`)}</ul>
<p class="muted">Only approve apps you trust. You can revoke access at any time in your account settings.</p>
<div class="row">${consentForm(token, request, "approve", "Authorize")}${consentForm(token, request, "deny", "Deny", "secondary")}</div>
<form method="post" action="/auth/sign_out">${hiddenFields({ authenticity_token: token, return_to: req.url })}<p class="muted">Not @${session.account.username}? <button type="submit" class="secondary">Use another account</button></p></form>`,
    });
  });

  app.post("/oauth/authorize", async (req, reply) => {
    const prologue = await authorizationPrologue(ctx, req, reply, "decide");
    if ("answer" in prologue) return prologue.answer;
    const { request, session } = prologue;
    if (toStringParam(req.input.decision) !== "approve")
      return handleError(ctx, reply, new RedirectableError("access_denied", request));
    return answerWithCode(ctx, reply, request, session);
  });

  app.get("/oauth/authorize/native", async (req, reply) => {
    const code = toStringParam(req.input.code) ?? "";
    return renderPage(ctx, reply, {
      title: "Authorization code",
      body: html`<p>Copy this authorization code and paste it into the application:</p><p><code>${code}</code></p>`,
    });
  });
}
