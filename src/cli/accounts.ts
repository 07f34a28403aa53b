import type { Ctx } from "../context.ts";
import { ValidationFailed } from "../errors.ts";
import { createLocalUser, findLocalUser } from "../services/accounts/create.ts";
import { generatePassword, hashPassword } from "../services/accounts/passwords.ts";
import { findRoleByName, ROLE_NAMES } from "../services/accounts/roles.ts";
import { EMAIL_PATTERN } from "../services/accounts/validation.ts";
import { loadSettings } from "../services/instance/settings.ts";
import { UsageError, type Command } from "./command.ts";

async function roleIdFor(ctx: Ctx, name: string | undefined): Promise<string | null | undefined> {
  if (name === undefined) return undefined;
  if (name.toLowerCase() === "user" || name === "") return null;
  const canonical = ROLE_NAMES.find((r) => r.toLowerCase() === name.toLowerCase()) ?? name;
  const role = await findRoleByName(ctx.db.kysely, canonical);
  if (!role) throw new UsageError(`unknown role "${name}" (use ${ROLE_NAMES.join(", ")} or User)`);
  return role.id;
}

export const accountsCreate: Command = {
  path: ["accounts", "create"],
  summary: "Creates a local user. Without --password a random password is generated and printed.",
  usage:
    "accounts create USERNAME --email EMAIL [--password P] [--role Owner|Admin|Moderator] [--confirmed] [--approved]",
  positionals: [1, 1],
  options: {
    email: { type: "string", description: "E-mail address (required)" },
    password: { type: "string", description: "Password (at least 8 characters); generated when absent" },
    role: { type: "string", description: "Owner, Admin or Moderator (default: none)" },
    confirmed: { type: "boolean", description: "Mark the e-mail address as confirmed" },
    approved: { type: "boolean", description: "Approve the account (needed when sign-ups require approval)" },
  },
  async run(ctx, { values, positionals }, io) {
    const email = values.email;
    if (typeof email !== "string") throw new UsageError("--email is required");
    const generated = typeof values.password === "string" ? undefined : generatePassword();
    const { values: settings } = await loadSettings(ctx.db.kysely);
    try {
      await createLocalUser(ctx, {
        username: positionals[0],
        email,
        password: (values.password as string | undefined) ?? generated!,
        roleId: await roleIdFor(ctx, values.role as string | undefined),
        confirmed: values.confirmed === true,
        // Approval matters only when registrations need review; the flag forces it either way.
        approved: values.approved === true || settings.registrations_mode !== "approved",
        allowReserved: true,
      });
    } catch (error) {
      if (error instanceof ValidationFailed) {
        for (const reason of error.reasons) io.err(reason);
        return 1;
      }
      throw error;
    }
    io.out("OK");
    if (generated) io.out(`New password: ${generated}`);
    return 0;
  },
};

export const accountsModify: Command = {
  path: ["accounts", "modify"],
  summary: "Changes a local user's role or state.",
  usage:
    "accounts modify USERNAME [--role R] [--confirm] [--approve] [--disable] [--enable] [--suspend] [--unsuspend] [--email E] [--reset-password]",
  positionals: [1, 1],
  options: {
    role: { type: "string", description: "Owner, Admin, Moderator, or User to remove the role" },
    confirm: { type: "boolean", description: "Mark the e-mail address as confirmed" },
    approve: { type: "boolean", description: "Approve a pending account" },
    disable: { type: "boolean", description: "Disable sign-in (the account stays visible)" },
    enable: { type: "boolean", description: "Allow sign-in again" },
    suspend: { type: "boolean", description: "Suspend the account" },
    unsuspend: { type: "boolean", description: "Lift a suspension" },
    email: { type: "string", description: "Change the e-mail address" },
    "reset-password": { type: "boolean", description: "Generate and print a new password" },
  },
  async run(ctx, { values, positionals }, io) {
    if (values.disable && values.enable) throw new UsageError("--disable and --enable contradict each other");
    if (values.suspend && values.unsuspend) throw new UsageError("--suspend and --unsuspend contradict each other");
    const found = await findLocalUser(ctx, positionals[0]);
    if (!found) {
      io.err(`No user with the username ${positionals[0]}`);
      return 1;
    }
    const now = new Date().toISOString();
    const roleId = await roleIdFor(ctx, values.role as string | undefined);
    const userChanges: Record<string, unknown> = {};
    if (roleId !== undefined) userChanges.role_id = roleId;
    if (values.confirm && !found.user.confirmed_at) userChanges.confirmed_at = now;
    if (values.approve) userChanges.approved = true;
    if (values.disable) userChanges.disabled = true;
    if (values.enable) userChanges.disabled = false;
    if (typeof values.email === "string") {
      const email = values.email.trim();
      const taken = await ctx.db.kysely
        .selectFrom("users")
        .select("id")
        .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
        .where("id", "!=", found.user.id)
        .executeTakeFirst();
      if (!EMAIL_PATTERN.test(email) || taken) {
        io.err(taken ? "E-mail is already taken" : "E-mail is invalid");
        return 1;
      }
      userChanges.email = email;
    }
    let newPassword: string | undefined;
    if (values["reset-password"]) {
      newPassword = generatePassword();
      userChanges.encrypted_password = await hashPassword(newPassword);
    }
    const accountChanges: Record<string, unknown> = {};
    if (values.suspend) accountChanges.suspended_at = found.account.suspended_at ?? now;
    if (values.unsuspend) accountChanges.suspended_at = null;

    await ctx.db.kysely.transaction().execute(async (tx) => {
      if (Object.keys(userChanges).length > 0) {
        await tx
          .updateTable("users")
          .set({ ...userChanges, updated_at: now })
          .where("id", "=", found.user.id)
          .execute();
      }
      if (Object.keys(accountChanges).length > 0) {
        await tx
          .updateTable("accounts")
          .set({ ...accountChanges, updated_at: now })
          .where("id", "=", found.account.id)
          .execute();
      }
      // A new password ends every session; disabled and suspended users keep their tokens but get 403s.
      if (values["reset-password"]) {
        await tx
          .updateTable("oauth_access_tokens")
          .set({ revoked_at: now })
          .where("user_id", "=", found.user.id)
          .where("revoked_at", "is", null)
          .execute();
      }
    });
    // Open streams end with the user's access (reconnecting then fails, or asks for the new password),
    // and with a new role, so they reconnect with what it allows. Without Redis the signal reaches the
    // servers through the database (src/realtime/signals.ts).
    if (values.suspend || values.disable || values["reset-password"] || roleId !== undefined)
      await ctx.dispatcher.emitCommitted({ type: "access.changed", accountIds: [found.account.id] });
    // Other servers read the actor again: a suspended one shows no profile.
    if (values.suspend || values.unsuspend)
      await ctx.dispatcher.emitCommitted({ type: "account.updated", accountId: found.account.id });
    io.out("OK");
    if (newPassword) io.out(`New password: ${newPassword}`);
    return 0;
  },
};

export const accountsDelete: Command = {
  path: ["accounts", "delete"],
  summary:
    "Deletes a local account as its owner would: signed out everywhere, other servers told, its content removed by the job workers, the username kept taken.",
  usage: "accounts delete USERNAME --yes",
  positionals: [1, 1],
  options: {
    yes: { type: "boolean", description: "Confirm: the deletion cannot be undone" },
  },
  async run(ctx, { values, positionals }, io) {
    const found = await findLocalUser(ctx, positionals[0]);
    if (!found) {
      io.err(`No user with the username ${positionals[0]}`);
      return 1;
    }
    if (found.account.deleted_at) {
      io.err(`${found.account.username} is already deleted`);
      return 1;
    }
    if (!values.yes) throw new UsageError("this cannot be undone: add --yes to delete the account");
    const { deleteOwnAccount } = await import("../services/accounts/deletion.ts");
    await deleteOwnAccount(ctx, found.user, found.account);
    io.out(`OK: ${found.account.username} is deleted; the job workers remove its content and tell other servers.`);
    return 0;
  },
};
