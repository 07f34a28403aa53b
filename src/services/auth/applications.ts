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
