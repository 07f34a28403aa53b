import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { applicationById } from "../../db/queries/applications.ts";
import type { ApplicationRow, Database } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";

export const OOB_REDIRECT_URI = "urn:ietf:wg:oauth:2.0:oob";

export interface NewApplication {
  name: string;
  website?: string | null;
  redirectUris: readonly string[];
  scopes: readonly string[];
  superapp?: boolean;
}

export async function insertApplication(db: Kysely<Database>, app: NewApplication): Promise<ApplicationRow> {
  const now = new Date().toISOString();
  return db
    .insertInto("oauth_applications")
    .values({
      id: newId(),
      name: app.name,
      website: app.website ?? null,
      redirect_uri: app.redirectUris.join("\n"),
      scopes: app.scopes.join(" "),
      client_id: randomBytes(32).toString("base64url"),
      client_secret: randomBytes(32).toString("base64url"),
      superapp: app.superapp ?? false,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const CLI_APP_NAME = "Rookery CLI";

/** The application that tokens made by `rookery tokens create` belong to (created on first use). */
/** The app a token belongs to (GET /api/v1/apps/verify_credentials), or 404. */
export async function applicationOfToken(ctx: Ctx, applicationId: string | null | undefined): Promise<ApplicationRow> {
  const row = await applicationById(ctx.db.kysely, applicationId);
  if (!row) throw new NotFound();
  return row;
}

export async function cliApplication(db: Kysely<Database>): Promise<ApplicationRow> {
  const existing = await db
    .selectFrom("oauth_applications")
    .selectAll()
    .where("name", "=", CLI_APP_NAME)
    .where("superapp", "=", true)
    .executeTakeFirst();
  if (existing) return existing;
  return insertApplication(db, {
    name: CLI_APP_NAME,
    redirectUris: [OOB_REDIRECT_URI],
    scopes: ["read", "write", "follow", "push", "profile", "admin:read", "admin:write"],
    superapp: true,
  });
}

/** Mastodon's limits on a registered application (APP_NAME_LIMIT, APP_REDIRECT_URI_LIMIT, APP_WEBSITE_LIMIT). */
const APP_NAME_LIMIT = 60;
const APP_REDIRECT_URI_LIMIT = 2000;
const APP_WEBSITE_LIMIT = 2000;

/**
 * Schemes a browser would run or read locally instead of handing to an app. Mastodon forbids the
 * first three; `file:` is refused too, since no client can receive a code there.
 */
const FORBIDDEN_SCHEMES = new Set(["data", "javascript", "vbscript", "file"]);

/** Characters an RFC 3986 URI never holds raw: controls, spaces, non-ASCII and `<>"{}|\^\``. */
const NOT_URI_CHARACTERS = /[^\x21-\x7e]|[<>"{}|\\^`]/;

/** Splits `redirect_uris` given as a string (several URIs separated by whitespace) or an array. */
export function splitRedirectUris(value: string | readonly string[] | undefined): string[] {
  const list = typeof value === "string" ? [value] : (value ?? []);
  return list.flatMap((item) => item.split(/\s+/)).filter(Boolean);
}

/**
 * The first reason one redirect URI is refused, checked in the order Doorkeeper checks them:
 * the out-of-band URN, absolute http(s) URLs with a host and custom app schemes
 * (`ivory://callback`, `com.example.app:/oauth`) pass; relative, opaque (`myapp:callback`,
 * `localhost:3000`), fragment-carrying and forbidden-scheme URIs do not.
 */
function redirectUriProblem(uri: string): string | undefined {
  if (uri === OOB_REDIRECT_URI) return undefined;
  const invalid = "Redirect URI must be a valid URI.";
  if (NOT_URI_CHARACTERS.test(uri) || uri.indexOf("#") !== uri.lastIndexOf("#")) return invalid;
  const match = /^([a-z][a-z\d+.-]*):(.*)$/is.exec(uri);
  if (!match) return "Redirect URI must be an absolute URI.";
  const scheme = match[1].toLowerCase();
  const rest = match[2];
  if (FORBIDDEN_SCHEMES.has(scheme)) return "Redirect URI is forbidden by the server.";
  if (rest.includes("#")) return "Redirect URI cannot contain a fragment.";
  // `localhost:3000/cb` reads as scheme "localhost": the author forgot the scheme.
  if (scheme === "localhost" || (rest !== "" && !rest.startsWith("/"))) return "Redirect URI must specify a scheme.";
  if (scheme === "http" || scheme === "https") {
    if (!rest.startsWith("//") || !URL.canParse(uri) || new URL(uri).hostname === "") return invalid;
  }
  return undefined;
}

const characters = (text: string) => [...text].length;

export interface RegisterApplicationParams {
  name: string | undefined;
  redirectUris: string[];
  scopes: string[];
  website: string | undefined;
}

/**
 * Validates a client application (POST /api/v1/apps); returns the reasons it is refused, in the
 * order Mastodon lists them (Doorkeeper's checks, then Mastodon's length limits and website check).
 */
export function applicationProblems(params: RegisterApplicationParams, isKnownScope: (s: string) => boolean): string[] {
  const problems: string[] = [];
  const name = params.name?.trim() ?? "";
  if (name === "") problems.push("Name can't be blank");
  if (params.redirectUris.length === 0) problems.push("Redirect URI can't be blank");
  for (const uri of params.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem && !problems.includes(problem)) problems.push(problem);
  }
  if (params.scopes.some((s) => !isKnownScope(s))) problems.push("Scopes doesn't match configured on the server.");
  if (characters(name) > APP_NAME_LIMIT) problems.push(`Name is too long (maximum is ${APP_NAME_LIMIT} characters)`);
  // Stored as one text, a URI a line, and limited as a whole.
  if (characters(params.redirectUris.join("\n")) > APP_REDIRECT_URI_LIMIT) {
    problems.push(`Redirect URI is too long (maximum is ${APP_REDIRECT_URI_LIMIT} characters)`);
  }
  const website = params.website?.trim();
  if (website) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(website);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.hostname === "") {
      problems.push("Website is not a valid URL");
    }
    if (characters(website) > APP_WEBSITE_LIMIT) {
      problems.push(`Website is too long (maximum is ${APP_WEBSITE_LIMIT} characters)`);
    }
  }
  return problems;
}
