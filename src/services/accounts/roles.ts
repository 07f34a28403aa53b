import type { Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import type { Database, UserRoleRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";

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

/**
 * Whether a moderator with role `actor` may act on someone with role `target` (Mastodon's
 * `UserRole#overrides?`): only on a lower position; everyone's role (no role) is the lowest.
 */
export function outranks(
  actor: Pick<UserRoleRow, "position">,
  target: Pick<UserRoleRow, "position"> | undefined,
): boolean {
  return target === undefined || actor.position > target.position;
}

/** The names of the permissions a bit set grants, in Mastodon's order. */
export function permissionNames(bits: number): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((name) => (bits & PERMISSIONS[name]) !== 0);
}

/** A bit set from permission names (`manage_reports,manage_users`); unknown names are listed in the error. */
export function permissionBits(names: readonly string[]): number {
  const unknown = names.filter((name) => !Object.hasOwn(PERMISSIONS, name));
  if (unknown.length) throw new ValidationFailed(`Unknown permission ${unknown.join(", ")}`);
  return names.reduce((bits, name) => bits | PERMISSIONS[name as Permission], 0);
}

export interface RoleSummary extends UserRoleRow {
  users: number;
}

/** Every role, highest first, with how many users hold it (everyone's role last, without a count). */
export async function listRoles(db: Kysely<Database>): Promise<RoleSummary[]> {
  const [roles, counts] = await Promise.all([
    db.selectFrom("user_roles").selectAll().orderBy("position", "desc").execute(),
    db
      .selectFrom("users")
      .select(["role_id", (eb) => eb.fn.countAll<number>().as("n")])
      .where("role_id", "is not", null)
      .groupBy("role_id")
      .execute(),
  ]);
  const byRole = new Map(counts.map((c) => [String(c.role_id), Number(c.n)]));
  return roles.map((role) => ({ ...role, users: byRole.get(role.id) ?? 0 }));
}

export interface RoleParams {
  name?: string;
  permissions?: number;
  position?: number;
  color?: string;
  highlighted?: boolean;
}

const COLOR = /^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6})?$/;

function checkRole(params: RoleParams): void {
  if (params.name !== undefined && (!params.name.trim() || params.name.length > 100))
    throw new ValidationFailed("Name can't be blank (and is at most 100 characters)");
  if (params.color !== undefined && !COLOR.test(params.color)) throw new ValidationFailed("Color must be like #a1b2c3");
  if (params.position !== undefined && (!Number.isInteger(params.position) || Math.abs(params.position) > 65535))
    throw new ValidationFailed("Position must be a whole number");
}

export async function createRole(db: Kysely<Database>, params: RoleParams & { name: string }): Promise<UserRoleRow> {
  checkRole(params);
  if (await findRoleByName(db, params.name.trim())) throw new ValidationFailed(`A role named ${params.name} exists`);
  const now = new Date().toISOString();
  return db
    .insertInto("user_roles")
    .values({
      id: newId(),
      name: params.name.trim(),
      permissions: params.permissions ?? 0,
      position: params.position ?? 0,
      color: params.color ?? "",
      highlighted: params.highlighted ?? false,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Changes a role; everyone's role keeps its empty name and lowest position. */
export async function updateRole(db: Kysely<Database>, role: UserRoleRow, params: RoleParams): Promise<UserRoleRow> {
  checkRole(params);
  if (role.id === EVERYONE_ROLE_ID && (params.name !== undefined || params.position !== undefined))
    throw new ValidationFailed("The role of everyone keeps its name and position");
  if (params.name !== undefined && params.name.trim() !== role.name && (await findRoleByName(db, params.name.trim())))
    throw new ValidationFailed(`A role named ${params.name} exists`);
  return db
    .updateTable("user_roles")
    .set({
      ...params,
      ...(params.name !== undefined ? { name: params.name.trim() } : {}),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", role.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Removes a role; its users fall back to everyone's role (the foreign key sets theirs to null). */
export async function removeRole(db: Kysely<Database>, role: UserRoleRow): Promise<void> {
  if (role.id === EVERYONE_ROLE_ID) throw new ValidationFailed("The role of everyone cannot be removed");
  await db.deleteFrom("user_roles").where("id", "=", role.id).execute();
}
