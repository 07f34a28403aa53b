import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import type { ApplicationRow, Database } from "../../db/schema.ts";

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
export async function cliApplication(db: Kysely<Database>): Promise<ApplicationRow> {
  const existing = await db.selectFrom("oauth_applications").selectAll().where("name", "=", CLI_APP_NAME).where("superapp", "=", true).executeTakeFirst();
  if (existing) return existing;
  return insertApplication(db, {
    name: CLI_APP_NAME,
    redirectUris: [OOB_REDIRECT_URI],
    scopes: ["read", "write", "follow", "push", "profile", "admin:read", "admin:write"],
    superapp: true,
  });
}

const FORBIDDEN_SCHEMES = new Set(["data:", "javascript:", "vbscript:"]);

/** Splits `redirect_uris` given as a string (several URIs separated by whitespace) or an array. */
export function splitRedirectUris(value: string | readonly string[] | undefined): string[] {
  const list = typeof value === "string" ? [value] : (value ?? []);
  return list.flatMap((item) => item.split(/\s+/)).filter(Boolean);
}

function redirectUriProblem(uri: string): string | undefined {
  if (uri === OOB_REDIRECT_URI) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return "Redirect URI must be an absolute URI.";
  }
  if (FORBIDDEN_SCHEMES.has(parsed.protocol)) return "Redirect URI is forbidden by the server.";
  if (parsed.hash || uri.includes("#")) return "Redirect URI cannot contain a fragment.";
  return undefined;
}

export interface RegisterApplicationParams {
  name: string | undefined;
  redirectUris: string[];
  scopes: string[];
  website: string | undefined;
}

/** Validates and registers a client application (POST /api/v1/apps); returns the reasons it was refused. */
export function applicationProblems(params: RegisterApplicationParams, isKnownScope: (s: string) => boolean): string[] {
  const problems: string[] = [];
  const name = params.name?.trim() ?? "";
  if (name === "") problems.push("Name can't be blank");
  else if ([...name].length > 60) problems.push("Name is too long (maximum is 60 characters)");
  if (params.redirectUris.length === 0) problems.push("Redirect URI can't be blank");
  for (const uri of params.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem && !problems.includes(problem)) problems.push(problem);
  }
  if (params.scopes.some((s) => !isKnownScope(s))) problems.push("Scopes doesn't match configured on the server.");
  const website = params.website?.trim();
  if (website) {
    try {
      const url = new URL(website);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
    } catch {
      problems.push("Website is not a valid URL");
    }
  }
  return problems;
}
