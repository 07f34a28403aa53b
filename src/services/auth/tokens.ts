import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import type { AccessTokenRow, Database } from "../../db/schema.ts";

/** SHA-256 of a secret, hex; tokens and codes are stored only as digests. */
export function digest(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A 43-character URL-safe random string, the shape of Mastodon's tokens. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

export interface IssuedToken {
  row: AccessTokenRow;
  /** The bearer string; shown once, never stored. */
  accessToken: string;
}

/** Issues a bearer token for `userId` (null for an app token) through `applicationId`. */
export async function issueAccessToken(
  db: Kysely<Database>,
  params: { applicationId: string | null; userId: string | null; scopes: string },
): Promise<IssuedToken> {
  const accessToken = randomToken();
  const row = await db
    .insertInto("oauth_access_tokens")
    .values({
      id: newId(),
      token_digest: digest(accessToken),
      application_id: params.applicationId,
      user_id: params.userId,
      scopes: params.scopes,
      created_at: new Date().toISOString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, accessToken };
}
