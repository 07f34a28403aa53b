/**
 * Browser sessions of the server's own pages (sign-in, consent, settings). The cookie holds a
 * random value; the database holds only its digest. Cookies and CSRF stay in web/session.ts.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { accountById } from "../../db/queries/accounts.ts";
import type { AccountRow, UserRow } from "../../db/schema.ts";
import { digest } from "./tokens.ts";

/** A session is forgotten after 30 days without use. */
export const SESSION_LIFETIME_S = 30 * 24 * 60 * 60;
/** `last_seen_at` is written at most this often. */
const TOUCH_INTERVAL_MS = 60 * 60 * 1000;

export interface WebUser {
  sessionId: string;
  user: UserRow;
  account: AccountRow;
}

/** The user behind a session cookie's value, if the session is known and still alive. */
export async function findWebSession(ctx: Ctx, value: string): Promise<WebUser | undefined> {
  const db = ctx.db.kysely;
  const session = await db
    .selectFrom("web_sessions")
    .selectAll()
    .where("session_digest", "=", digest(value))
    .executeTakeFirst();
  if (!session || Date.parse(session.last_seen_at) + SESSION_LIFETIME_S * 1000 < Date.now()) return undefined;
  const user = await db.selectFrom("users").selectAll().where("id", "=", session.user_id).executeTakeFirst();
  const account = user ? await accountById(db, user.account_id) : undefined;
  if (!user || !account) return undefined;
  if (Date.now() - Date.parse(session.last_seen_at) > TOUCH_INTERVAL_MS) {
    await db
      .updateTable("web_sessions")
      .set({ last_seen_at: new Date().toISOString() })
      .where("id", "=", session.id)
      .execute();
  }
  return { sessionId: session.id, user, account };
}

/** Records a new session for `user` under the digest of `value`, and the sign-in times. */
export async function createWebSession(
  ctx: Ctx,
  user: UserRow,
  value: string,
  client: { ip: string; userAgent: string },
): Promise<void> {
  const now = new Date().toISOString();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .insertInto("web_sessions")
      .values({
        id: newId(),
        session_digest: digest(value),
        user_id: user.id,
        ip: client.ip,
        user_agent: client.userAgent.slice(0, 500),
        created_at: now,
        last_seen_at: now,
      })
      .execute();
    await tx
      .updateTable("users")
      .set((eb) => ({ last_sign_in_at: eb.ref("current_sign_in_at"), current_sign_in_at: now }))
      .where("id", "=", user.id)
      .execute();
  });
}

export async function deleteWebSession(ctx: Ctx, sessionId: string): Promise<void> {
  await ctx.db.kysely.deleteFrom("web_sessions").where("id", "=", sessionId).execute();
}
