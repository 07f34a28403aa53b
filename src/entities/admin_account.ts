/**
 * The Admin::Account entity (Mastodon's REST::Admin::AccountSerializer): an account as moderators
 * see it, with its user's e-mail, role, state and the addresses it was used from. A remote account
 * has no user: its e-mail, role and locale are null, its flags false, its addresses empty.
 */
import type { Ctx } from "../context.ts";
import type { AccountRow, UserRoleRow, UserRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";

export interface AdminIpJson {
  ip: string;
  used_at: string;
}

export interface RoleJson {
  id: string;
  name: string;
  permissions: string;
  color: string;
  highlighted: boolean;
}

export interface AdminAccountJson {
  id: string;
  username: string;
  domain: string | null;
  created_at: string;
  email: string | null;
  ip: string | null;
  role: RoleJson | null;
  confirmed: boolean;
  suspended: boolean;
  silenced: boolean;
  sensitized: boolean;
  disabled: boolean;
  approved: boolean;
  locale: string | null;
  invite_request: string | null;
  created_by_application_id?: string;
  ips: AdminIpJson[];
  account: Account;
}

/** The Role entity as Mastodon's REST::RoleSerializer writes it. */
export function serializeRole(role: UserRoleRow): RoleJson {
  return {
    id: role.id,
    name: role.name,
    permissions: String(role.permissions),
    color: role.color,
    highlighted: role.highlighted,
  };
}

/** The addresses each user was seen at (sign-up, browser sessions), the latest use of each first. */
async function ipsOf(ctx: Ctx, users: readonly UserRow[]): Promise<Map<string, AdminIpJson[]>> {
  const byUser = new Map<string, Map<string, string>>();
  const seen = (userId: string, ip: string | null, at: string) => {
    if (!ip) return;
    const ips = byUser.get(userId) ?? new Map<string, string>();
    const previous = ips.get(ip);
    if (!previous || previous < at) ips.set(ip, at);
    byUser.set(userId, ips);
  };
  for (const user of users) seen(user.id, user.sign_up_ip, user.created_at);
  if (users.length > 0) {
    const sessions = await ctx.db.kysely
      .selectFrom("web_sessions")
      .select(["user_id", "ip", "last_seen_at"])
      .where(
        "user_id",
        "in",
        users.map((u) => u.id),
      )
      .where("ip", "is not", null)
      .execute();
    for (const session of sessions) seen(session.user_id, session.ip, session.last_seen_at);
  }
  const result = new Map<string, AdminIpJson[]>();
  for (const [userId, ips] of byUser)
    result.set(
      userId,
      [...ips]
        .map(([ip, used_at]) => ({ ip, used_at }))
        .sort((a, b) => (a.used_at < b.used_at ? 1 : a.used_at > b.used_at ? -1 : 0)),
    );
  return result;
}

/** Serializes accounts for moderators with a fixed number of queries whatever their number. */
export async function serializeAdminAccounts(ctx: Ctx, rows: readonly AccountRow[]): Promise<AdminAccountJson[]> {
  if (rows.length === 0) return [];
  const local = rows.filter((r) => r.domain === null).map((r) => r.id);
  const users =
    local.length === 0
      ? []
      : await ctx.db.kysely.selectFrom("users").selectAll().where("account_id", "in", local).execute();
  const roleIds = [...new Set(users.map((u) => u.role_id ?? "-99"))];
  const [roles, accounts, ips] = await Promise.all([
    roleIds.length === 0
      ? Promise.resolve([])
      : ctx.db.kysely.selectFrom("user_roles").selectAll().where("id", "in", roleIds).execute(),
    serializeAccounts(ctx, rows),
    ipsOf(ctx, users),
  ]);
  const userOf = new Map(users.map((u) => [u.account_id, u]));
  const roleById = new Map(roles.map((r) => [r.id, r]));
  return rows.map((row, i) => {
    const user = userOf.get(row.id);
    const role = user ? roleById.get(user.role_id ?? "-99") : undefined;
    const userIps = user ? (ips.get(user.id) ?? []) : [];
    const json: AdminAccountJson = {
      id: row.id,
      username: row.username,
      domain: row.domain,
      created_at: row.created_at,
      email: user?.email ?? null,
      ip: userIps[0]?.ip ?? null,
      role: role ? serializeRole(role) : null,
      confirmed: !!user?.confirmed_at,
      suspended: row.suspended_at !== null,
      silenced: row.silenced_at !== null,
      sensitized: row.sensitized_at !== null,
      disabled: user?.disabled ?? false,
      approved: user?.approved ?? false,
      locale: user?.locale ?? null,
      invite_request: user?.reason ?? null,
      ips: userIps,
      account: accounts[i],
    };
    if (user?.created_by_application_id) json.created_by_application_id = user.created_by_application_id;
    return json;
  });
}

export async function serializeAdminAccount(ctx: Ctx, row: AccountRow): Promise<AdminAccountJson> {
  return (await serializeAdminAccounts(ctx, [row]))[0];
}
