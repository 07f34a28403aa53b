import type { Kysely } from "kysely";
import type { AccountRow, Database, UserRoleRow, UserRow } from "../../db/schema.ts";
import { Forbidden, UserRequired } from "../../errors.ts";
import { effectiveRole } from "../accounts/roles.ts";
import { digest } from "./tokens.ts";
import { parseScopes } from "./scopes.ts";

/** Who is calling: the token, and for a user token the user, their account and role. */
export interface Viewer {
  tokenId: string;
  scopes: string[];
  applicationId: string | null;
  user: UserRow | null;
  account: AccountRow | null;
  role: UserRoleRow | null;
}

/** A viewer known to act for a user (what `user: true` routes receive). */
export interface UserViewer extends Viewer {
  user: UserRow;
  account: AccountRow;
  role: UserRoleRow;
}

/** Mastodon's `require_user!`: the user must be confirmed, approved and enabled. */
export function assertFunctionalUser(viewer: Viewer): asserts viewer is UserViewer {
  if (!viewer.user || !viewer.account || !viewer.role) throw new UserRequired();
  if (!viewer.user.confirmed_at) throw new Forbidden("Your login is missing a confirmed e-mail address");
  if (!viewer.user.approved) throw new Forbidden("Your login is currently pending approval");
  if (viewer.user.disabled || viewer.account.suspended_at) throw new Forbidden("Your login is currently disabled");
}

/**
 * Resolves a bearer token: the viewer it stands for, "revoked" for a revoked token, or undefined
 * for an unknown one (public endpoints then treat the caller as anonymous).
 */
export async function findViewerByToken(db: Kysely<Database>, token: string): Promise<Viewer | "revoked" | undefined> {
  if (token.length > 512) return undefined;
  const row = await db
    .selectFrom("oauth_access_tokens")
    .select(["id", "scopes", "application_id", "user_id", "revoked_at", "last_used_at"])
    .where("token_digest", "=", digest(token))
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.revoked_at) return "revoked";
  const viewer: Viewer = {
    tokenId: row.id,
    scopes: parseScopes(row.scopes),
    applicationId: row.application_id,
    user: null,
    account: null,
    role: null,
  };
  if (row.user_id) {
    const user = await db.selectFrom("users").selectAll().where("id", "=", row.user_id).executeTakeFirst();
    if (!user) return undefined;
    const [account, role] = await Promise.all([
      db.selectFrom("accounts").selectAll().where("id", "=", user.account_id).executeTakeFirstOrThrow(),
      effectiveRole(db, user.role_id),
    ]);
    viewer.user = user;
    viewer.account = account;
    viewer.role = role;
  }
  lastUse.set(row.id, row.last_used_at ? Date.parse(row.last_used_at) : 0);
  return viewer;
}

const TOUCH_INTERVAL_MS = 60 * 60 * 1000;
const lastUse = new Map<string, number>();
const recordedDays = new Set<string>();

/**
 * Notes that a token was used: `last_used_at` at most hourly, and one activity row per user and
 * day (weekly logins and monthly active users in the instance statistics come from these rows).
 */
export async function recordTokenUse(db: Kysely<Database>, viewer: Viewer, now = new Date()): Promise<void> {
  const previous = lastUse.get(viewer.tokenId) ?? 0;
  if (now.getTime() - previous > TOUCH_INTERVAL_MS) {
    lastUse.set(viewer.tokenId, now.getTime());
    await db
      .updateTable("oauth_access_tokens")
      .set({ last_used_at: now.toISOString() })
      .where("id", "=", viewer.tokenId)
      .execute();
  }
  if (lastUse.size > 100_000) lastUse.clear();
  if (!viewer.user) return;
  const day = now.toISOString().slice(0, 10);
  const key = `${viewer.user.id}:${day}`;
  if (recordedDays.has(key)) return;
  if (recordedDays.size > 100_000) recordedDays.clear();
  recordedDays.add(key);
  await db
    .insertInto("user_activity_days")
    .values({ user_id: viewer.user.id, day })
    .onConflict((oc) => oc.columns(["user_id", "day"]).doNothing())
    .execute();
}
