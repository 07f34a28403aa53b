/**
 * The apps a user has authorized (the settings page's list), and revoking one: every token and
 * pending grant of that app for that user.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import { parseScopes } from "./scopes.ts";

export interface AuthorizedApplication {
  id: string;
  name: string;
  website: string | null;
  /** The union of the scopes of the user's live tokens for the app. */
  scopes: string[];
  lastUsedAt: string | null;
}

/** Apps with a live token of the user, most recently authorized first. */
export async function authorizedApplications(ctx: Ctx, userId: string): Promise<AuthorizedApplication[]> {
  const rows = await ctx.db.kysely
    .selectFrom("oauth_access_tokens")
    .innerJoin("oauth_applications", "oauth_applications.id", "oauth_access_tokens.application_id")
    .select([
      "oauth_applications.id",
      "oauth_applications.name",
      "oauth_applications.website",
      "oauth_access_tokens.scopes",
      "oauth_access_tokens.last_used_at",
    ])
    .where("oauth_access_tokens.user_id", "=", userId)
    .where("oauth_access_tokens.revoked_at", "is", null)
    .orderBy("oauth_access_tokens.created_at", "desc")
    .execute();
  const apps = new Map<string, AuthorizedApplication & { scopeSet: Set<string> }>();
  for (const row of rows) {
    const entry = apps.get(row.id) ?? {
      id: row.id,
      name: row.name,
      website: row.website,
      scopes: [],
      scopeSet: new Set<string>(),
      lastUsedAt: null,
    };
    for (const scope of parseScopes(row.scopes)) entry.scopeSet.add(scope);
    if (row.last_used_at && (!entry.lastUsedAt || row.last_used_at > entry.lastUsedAt))
      entry.lastUsedAt = row.last_used_at;
    apps.set(row.id, entry);
  }
  return [...apps.values()].map(({ scopeSet, ...app }) => ({ ...app, scopes: [...scopeSet] }));
}

/** Revokes the user's tokens and grants of one app; an ID that names nothing changes nothing. */
export async function revokeAuthorization(ctx: Ctx, userId: string, applicationId: string): Promise<void> {
  if (!isIdLike(applicationId)) return;
  const now = new Date().toISOString();
  const revoked = await ctx.db.kysely.transaction().execute(async (tx) => {
    const tokens = await tx
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: now })
      .where("user_id", "=", userId)
      .where("application_id", "=", applicationId)
      .where("revoked_at", "is", null)
      .returning("id")
      .execute();
    await tx
      .updateTable("oauth_access_grants")
      .set({ revoked_at: now })
      .where("user_id", "=", userId)
      .where("application_id", "=", applicationId)
      .where("revoked_at", "is", null)
      .execute();
    return tokens.map((t) => t.id);
  });
  if (revoked.length > 0) await ctx.dispatcher.emitCommitted({ type: "tokens.revoked", tokenIds: revoked });
}
