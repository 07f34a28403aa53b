import { createHash, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { accountById } from "../../db/queries/accounts.ts";
import type { AccessTokenRow, ApplicationRow, Database, UserRow } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { verifyPassword } from "../accounts/passwords.ts";
import { parseScopes } from "./scopes.ts";
import { digest, issueAccessToken, randomToken } from "./tokens.ts";

/** An OAuth 2.0 error: `{"error": code, "error_description": text}` with its status. */
export class OAuthError extends ApiError {
  readonly code: string;
  constructor(status: number, code: OAuthErrorCode, description?: string) {
    super(status, code, { error_description: description ?? OAUTH_DESCRIPTIONS[code] });
    this.code = code;
  }
}

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "invalid_scope"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "access_denied";

export const OAUTH_DESCRIPTIONS: Record<OAuthErrorCode, string> = {
  invalid_request:
    "The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.",
  invalid_client:
    "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
  invalid_grant:
    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
  invalid_scope: "The requested scope is invalid, unknown, or malformed.",
  unauthorized_client: "You are not authorized to revoke this token",
  unsupported_grant_type: "The authorization grant type is not supported by the authorization server.",
  unsupported_response_type: "The authorization server does not support this response type.",
  access_denied: "The resource owner or authorization server denied the request.",
};

/** Authorization codes live ten minutes, as Doorkeeper's default. */
const CODE_LIFETIME_MS = 10 * 60 * 1000;

export const PKCE_METHODS = ["S256", "plain"] as const;
export type PkceMethod = (typeof PKCE_METHODS)[number];

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function findApplicationByClientId(
  db: Kysely<Database>,
  clientId: string | undefined,
): Promise<ApplicationRow | undefined> {
  if (!clientId || clientId.length > 200) return undefined;
  return db.selectFrom("oauth_applications").selectAll().where("client_id", "=", clientId).executeTakeFirst();
}

/** Checks client credentials (from the body or HTTP Basic); 401 invalid_client otherwise. */
export async function authenticateClient(
  db: Kysely<Database>,
  clientId: string | undefined,
  clientSecret: string | undefined,
): Promise<ApplicationRow> {
  const app = await findApplicationByClientId(db, clientId);
  if (!app || !clientSecret || !safeEqual(app.client_secret, clientSecret)) throw new OAuthError(401, "invalid_client");
  return app;
}

/** Requested scopes must each be one the application registered (Doorkeeper compares exactly). */
export function grantableScopes(app: ApplicationRow, requested: string | undefined): string[] {
  const scopes = parseScopes(requested);
  const allowed = new Set(parseScopes(app.scopes));
  const result = scopes.length === 0 ? ["read"] : scopes;
  if (!result.every((s) => allowed.has(s))) throw new OAuthError(400, "invalid_scope");
  return result;
}

export function registeredRedirectUris(app: ApplicationRow): string[] {
  return app.redirect_uri.split("\n").filter(Boolean);
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  scope: string;
  created_at: number;
}

export function tokenResponse(token: AccessTokenRow, accessToken: string): TokenResponse {
  return {
    access_token: accessToken,
    token_type: "Bearer",
    scope: token.scopes,
    created_at: Math.floor(Date.parse(token.created_at) / 1000),
  };
}

export interface GrantParams {
  app: ApplicationRow;
  user: UserRow;
  redirectUri: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: PkceMethod;
}

/** Records the user's consent and returns the one-time authorization code. */
export async function createAuthorizationCode(db: Kysely<Database>, params: GrantParams): Promise<string> {
  const code = randomToken();
  const now = Date.now();
  await db
    .insertInto("oauth_access_grants")
    .values({
      id: newId(),
      code_digest: digest(code),
      application_id: params.app.id,
      user_id: params.user.id,
      redirect_uri: params.redirectUri,
      scopes: params.scopes.join(" "),
      code_challenge: params.codeChallenge ?? null,
      code_challenge_method: params.codeChallenge ? (params.codeChallengeMethod ?? "plain") : null,
      expires_at: new Date(now + CODE_LIFETIME_MS).toISOString(),
      created_at: new Date(now).toISOString(),
    })
    .execute();
  return code;
}

function pkceMatches(challenge: string, method: string, verifier: string | undefined): boolean {
  if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = method === "S256" ? createHash("sha256").update(verifier).digest("base64url") : verifier;
  return safeEqual(computed, challenge);
}

/** Exchanges an authorization code (once) for a user token, verifying redirect URI and PKCE. */
export async function exchangeAuthorizationCode(
  db: Kysely<Database>,
  app: ApplicationRow,
  params: { code: string; redirectUri: string | undefined; codeVerifier: string | undefined },
): Promise<TokenResponse> {
  return db.transaction().execute(async (tx) => {
    const grant = await tx
      .selectFrom("oauth_access_grants")
      .selectAll()
      .where("code_digest", "=", digest(params.code))
      .executeTakeFirst();
    const invalid = () => new OAuthError(400, "invalid_grant");
    if (!grant || grant.application_id !== app.id || grant.revoked_at || Date.parse(grant.expires_at) < Date.now())
      throw invalid();
    if (params.redirectUri !== grant.redirect_uri) throw invalid();
    if (
      grant.code_challenge &&
      !pkceMatches(grant.code_challenge, grant.code_challenge_method ?? "plain", params.codeVerifier)
    )
      throw invalid();
    // A code is spent on first use, even a failed one later would not reuse it.
    const spent = await tx
      .updateTable("oauth_access_grants")
      .set({ revoked_at: new Date().toISOString() })
      .where("id", "=", grant.id)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    if (Number(spent.numUpdatedRows) !== 1) throw invalid();
    const { row, accessToken } = await issueAccessToken(tx, {
      applicationId: app.id,
      userId: grant.user_id,
      scopes: grant.scopes,
    });
    return tokenResponse(row, accessToken);
  });
}

/** An app token: `client_credentials`. */
export async function issueClientCredentials(
  db: Kysely<Database>,
  app: ApplicationRow,
  scope: string | undefined,
): Promise<TokenResponse> {
  const scopes = grantableScopes(app, scope);
  const { row, accessToken } = await issueAccessToken(db, {
    applicationId: app.id,
    userId: null,
    scopes: scopes.join(" "),
  });
  return tokenResponse(row, accessToken);
}

/** Finds a local user by e-mail and password; undefined when they do not match. */
/** Whether a user whose password matched may start a session: not disabled, account not suspended. */
export async function canSignIn(ctx: Ctx, user: UserRow): Promise<boolean> {
  const account = await accountById(ctx.db.kysely, user.account_id);
  return !user.disabled && !!account && !account.suspended_at;
}

export async function authenticateUser(ctx: Ctx, email: string, password: string): Promise<UserRow | undefined> {
  const user = await ctx.db.kysely
    .selectFrom("users")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.trim().toLowerCase()))
    .executeTakeFirst();
  if (!user) {
    // Spend the same time as a real check so that response times do not reveal which e-mails exist.
    await verifyPassword(password, "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA");
    return undefined;
  }
  return (await verifyPassword(password, user.encrypted_password)) ? user : undefined;
}

/** The `password` grant (username is the e-mail); refused for disabled or suspended users. */
export async function passwordGrant(
  ctx: Ctx,
  app: ApplicationRow,
  params: { username: string; password: string; scope: string | undefined },
): Promise<TokenResponse> {
  const scopes = grantableScopes(app, params.scope);
  const user = await authenticateUser(ctx, params.username, params.password);
  if (!user || user.disabled) throw new OAuthError(400, "invalid_grant");
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .select("suspended_at")
    .where("id", "=", user.account_id)
    .executeTakeFirst();
  if (!account || account.suspended_at) throw new OAuthError(400, "invalid_grant");
  const { row, accessToken } = await issueAccessToken(ctx.db.kysely, {
    applicationId: app.id,
    userId: user.id,
    scopes: scopes.join(" "),
  });
  return tokenResponse(row, accessToken);
}

/** Revokes a token of `app` (RFC 7009): unknown tokens succeed silently; another client's token is refused. */
export async function revokeToken(ctx: Ctx, app: ApplicationRow, token: string): Promise<void> {
  const db = ctx.db.kysely;
  const row = await db
    .selectFrom("oauth_access_tokens")
    .select(["id", "application_id"])
    .where("token_digest", "=", digest(token))
    .executeTakeFirst();
  if (!row) return;
  if (row.application_id !== app.id) throw new OAuthError(403, "unauthorized_client");
  await db
    .updateTable("oauth_access_tokens")
    .set({ revoked_at: new Date().toISOString() })
    .where("id", "=", row.id)
    .where("revoked_at", "is", null)
    .execute();
  // Its open streams end.
  await ctx.dispatcher.emitCommitted({ type: "tokens.revoked", tokenIds: [row.id] });
}

/** Whether the user already holds a live token of `app` with exactly these scopes (consent can be skipped). */
export async function hasMatchingToken(
  db: Kysely<Database>,
  app: ApplicationRow,
  user: UserRow,
  scopes: readonly string[],
): Promise<boolean> {
  const rows = await db
    .selectFrom("oauth_access_tokens")
    .select("scopes")
    .where("application_id", "=", app.id)
    .where("user_id", "=", user.id)
    .where("revoked_at", "is", null)
    .execute();
  const wanted = [...scopes].sort().join(" ");
  return rows.some((r) => parseScopes(r.scopes).sort().join(" ") === wanted);
}
