/**
 * `rookery roles`: Mastodon's roles — a name, a position (higher outranks lower: a moderator acts
 * only on users below them) and a set of permissions — listed, made, changed and removed from the
 * shell. `rookery accounts modify USERNAME --role NAME` gives a user a role.
 */
import { UsageError, type Command } from "./command.ts";

/** The services, loaded when a command runs (not for --help). */
const roles = () => import("../services/accounts/roles.ts");

const PERMISSIONS_HELP =
  "Comma-separated permission names (administrator, view_audit_log, view_dashboard, manage_reports, manage_federation, manage_settings, manage_blocks, manage_taxonomies, manage_appeals, manage_users, manage_invites, manage_rules, manage_announcements, manage_custom_emojis, manage_webhooks, invite_users, manage_roles, manage_user_access, delete_user_data, view_feeds, view_devops)";

const names = (text: unknown) =>
  typeof text === "string"
    ? text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

function integer(text: unknown, option: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (typeof text !== "string" || !/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value))
    throw new UsageError(`--${option} must be a whole number`);
  return value;
}

/** Refusals of the service (a name taken, an unknown permission) as usage errors. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  const { ValidationFailed } = await import("../errors.ts");
  try {
    return await work();
  } catch (error) {
    if (error instanceof ValidationFailed) throw new UsageError(error.reasons.join(", "));
    throw error;
  }
}

export const rolesList: Command = {
  path: ["roles", "list"],
  summary: "Lists the roles, highest first, with their position, permissions and number of users.",
  usage: "roles list [--json]",
  positionals: [0, 0],
  options: { json: { type: "boolean", description: "Print JSON" } },
  async run(ctx, { values }, io) {
    const { listRoles, permissionNames, EVERYONE_ROLE_ID } = await roles();
    const rows = await listRoles(ctx.db.kysely);
    const shown = rows.map((r) => ({
      id: r.id,
      name: r.id === EVERYONE_ROLE_ID ? "(everyone)" : r.name,
      position: r.position,
      permissions: permissionNames(r.permissions),
      highlighted: r.highlighted,
      color: r.color,
      users: r.id === EVERYONE_ROLE_ID ? null : r.users,
    }));
    if (values.json) {
      io.out(JSON.stringify(shown, null, 2));
      return 0;
    }
    for (const r of shown)
      io.out(
        `${r.name}  position ${r.position}${r.users === null ? "" : `  ${r.users} user${r.users === 1 ? "" : "s"}`}  ${r.permissions.join(",") || "(no permissions)"}`,
      );
    return 0;
  },
};

export const rolesCreate: Command = {
  path: ["roles", "create"],
  summary: "Makes a role.",
  usage: "roles create NAME [--permissions LIST] [--position N] [--color #RRGGBB] [--highlighted]",
  positionals: [1, 1],
  options: {
    permissions: { type: "string", description: PERMISSIONS_HELP },
    position: { type: "string", description: "Higher outranks lower (Moderator 10, Admin 100, Owner 1000; default 0)" },
    color: { type: "string", description: "Shown beside the name, e.g. #5562e8" },
    highlighted: { type: "boolean", description: "Show the role on the users' profiles" },
  },
  async run(ctx, { values, positionals }, io) {
    const { createRole, permissionBits } = await roles();
    const role = await asUsage(async () =>
      createRole(ctx.db.kysely, {
        name: positionals[0],
        permissions: permissionBits(names(values.permissions)),
        position: integer(values.position, "position"),
        color: typeof values.color === "string" ? values.color : undefined,
        highlighted: values.highlighted === true,
      }),
    );
    io.out(`Created the role ${role.name} (position ${role.position})`);
    return 0;
  },
};

export const rolesModify: Command = {
  path: ["roles", "modify"],
  summary: 'Changes a role (name the role of everyone "everyone": only its permissions change).',
  usage:
    "roles modify NAME [--name NEW] [--permissions LIST] [--add-permissions LIST] [--remove-permissions LIST] [--position N] [--color #RRGGBB] [--highlighted|--not-highlighted]",
  positionals: [1, 1],
  options: {
    name: { type: "string", description: "A new name" },
    permissions: { type: "string", description: `Replaces the permissions. ${PERMISSIONS_HELP}` },
    "add-permissions": { type: "string", description: "Permissions to add" },
    "remove-permissions": { type: "string", description: "Permissions to take away" },
    position: { type: "string", description: "A new position" },
    color: { type: "string", description: "A new color" },
    highlighted: { type: "boolean", description: "Show the role on the users' profiles" },
    "not-highlighted": { type: "boolean", description: "Do not show it" },
  },
  async run(ctx, { values, positionals }, io) {
    const { findRoleByName, permissionBits, updateRole, EVERYONE_ROLE_ID } = await roles();
    if (values.highlighted && values["not-highlighted"])
      throw new UsageError("--highlighted and --not-highlighted contradict each other");
    const db = ctx.db.kysely;
    const role =
      positionals[0] === "everyone"
        ? await db.selectFrom("user_roles").selectAll().where("id", "=", EVERYONE_ROLE_ID).executeTakeFirst()
        : await findRoleByName(db, positionals[0]);
    if (!role) {
      io.err(`No role named ${positionals[0]}`);
      return 1;
    }
    const updated = await asUsage(async () => {
      let permissions = values.permissions !== undefined ? permissionBits(names(values.permissions)) : role.permissions;
      permissions |= permissionBits(names(values["add-permissions"]));
      permissions &= ~permissionBits(names(values["remove-permissions"]));
      return updateRole(db, role, {
        name: typeof values.name === "string" ? values.name : undefined,
        permissions,
        position: integer(values.position, "position"),
        color: typeof values.color === "string" ? values.color : undefined,
        highlighted: values.highlighted ? true : values["not-highlighted"] ? false : undefined,
      });
    });
    io.out(`Updated the role ${updated.name || "of everyone"}`);
    return 0;
  },
};

export const rolesRemove: Command = {
  path: ["roles", "remove"],
  summary: "Removes a role; its users keep only what everyone may do.",
  usage: "roles remove NAME",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const { findRoleByName, removeRole } = await roles();
    const role = await findRoleByName(ctx.db.kysely, positionals[0]);
    if (!role) {
      io.err(`No role named ${positionals[0]}`);
      return 1;
    }
    const holders = await ctx.db.kysely
      .selectFrom("users")
      .select("account_id")
      .where("role_id", "=", role.id)
      .execute();
    await asUsage(() => removeRole(ctx.db.kysely, role));
    // Their open streams end, to reconnect with what they may do now.
    if (holders.length)
      await ctx.dispatcher.emitCommitted({ type: "access.changed", accountIds: holders.map((h) => h.account_id) });
    io.out(`Removed the role ${role.name}`);
    return 0;
  },
};
