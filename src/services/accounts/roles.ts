import type { Kysely } from "kysely";
import type { Database, UserRoleRow } from "../../db/schema.ts";

/** Permission bits, as Mastodon numbers them (UserRole::FLAGS). */
export const PERMISSIONS = {
  administrator: 1 << 0,
  view_devops: 1 << 1,
  view_audit_log: 1 << 2,
  view_dashboard: 1 << 3,
  manage_reports: 1 << 4,
  manage_federation: 1 << 5,
  manage_settings: 1 << 6,
  manage_blocks: 1 << 7,
  manage_taxonomies: 1 << 8,
  manage_appeals: 1 << 9,
  manage_users: 1 << 10,
  manage_invites: 1 << 11,
  manage_rules: 1 << 12,
  manage_announcements: 1 << 13,
  manage_custom_emojis: 1 << 14,
  manage_webhooks: 1 << 15,
  invite_users: 1 << 16,
  manage_roles: 1 << 17,
  manage_user_access: 1 << 18,
  delete_user_data: 1 << 19,
  view_feeds: 1 << 20,
} as const;

export type Permission = keyof typeof PERMISSIONS;

/** The role of users without one ("everyone"). */
export const EVERYONE_ROLE_ID = "-99";

/** The roles the CLI can grant by name; seeded by migration 0002. */
export const ROLE_NAMES = ["Owner", "Admin", "Moderator"] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** Whether `role` grants `permission`; the administrator bit grants everything. */
export function hasPermission(role: Pick<UserRoleRow, "permissions">, permission: Permission): boolean {
  return (role.permissions & PERMISSIONS.administrator) !== 0 || (role.permissions & PERMISSIONS[permission]) !== 0;
}

/** The effective role of a user: their own, or "everyone". */
export async function effectiveRole(db: Kysely<Database>, roleId: string | null): Promise<UserRoleRow> {
  const rows = await db
    .selectFrom("user_roles")
    .selectAll()
    .where("id", "in", roleId ? [roleId, EVERYONE_ROLE_ID] : [EVERYONE_ROLE_ID])
    .execute();
  const own = rows.find((r) => r.id === roleId);
  const everyone = rows.find((r) => r.id === EVERYONE_ROLE_ID);
  if (!everyone) throw new Error("The default role is missing; run `rookery db migrate`");
  return own ?? everyone;
}

export async function findRoleByName(db: Kysely<Database>, name: string): Promise<UserRoleRow | undefined> {
  return db
    .selectFrom("user_roles")
    .selectAll()
    .where("name", "=", name)
    .where("id", "!=", EVERYONE_ROLE_ID)
    .executeTakeFirst();
}
