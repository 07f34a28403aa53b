/**
 * Accounts as moderators see and handle them (Mastodon's Admin::AccountsController, AccountFilter,
 * AccountPolicy and UserPolicy). Rules:
 * - reading needs Manage Users (checked at the edge); the changes that punish (disable, sensitive,
 *   silence, suspend, a warning) also need the moderator's role to outrank the target's
 *   (`overrides`: a higher `position`; a remote account has no role and is outranked by all);
 *   lifting them (enable, unsilence, unsensitive, unsuspend) does not;
 * - approve, reject and enable concern local users only; approve and reject only pending ones;
 * - DELETE needs Delete User Data and an account suspended and not yet emptied;
 * - every change writes the audit log in its own transaction, and only a change that happened is
 *   logged (unsilencing an account that is not silenced changes and logs nothing).
 * Suspension and silence act where content is read (timelines, visibility and search skip
 * suspended authors; public timelines skip silenced ones), so they take effect at once everywhere.
 */
import { isIP } from "node:net";
import { sql, type Kysely, type SqlBool } from "kysely";
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, AccountWarningRow, Database, ReportRow, UserRoleRow, UserRow } from "../../db/schema.ts";
import { BadRequest, Forbidden, NotFound } from "../../errors.ts";
import { EVERYONE_ROLE_ID, hasPermission } from "../accounts/roles.ts";
import { queueApprovalMail } from "./account_mails.ts";
import { recordAction } from "./audit.ts";
import { removeSuspendedAccountData, withdrawDataDeletion } from "./deletion_requests.ts";

/** Who acts: the moderator's account and effective role. */
export interface Moderator {
  account: AccountRow;
  role: UserRoleRow;
}

export const ORIGINS = ["local", "remote"] as const;
export const STATUSES = ["active", "pending", "disabled", "silenced", "suspended", "sensitized"] as const;

/** Mastodon's AccountFilter keys; strings are matched as Mastodon does (prefixes, substrings). */
export interface AccountFilter {
  origin?: string;
  status?: string;
  /** Users holding one of these roles. */
  roleIds?: string[];
  /** Staff: users whose role can Manage Reports (v1 `staff`, v2 `permissions=staff`). */
  staff?: boolean;
  /** Username starting with this. */
  username?: string;
  /** Accounts of exactly this domain. */
  byDomain?: string;
  /** Display name containing this. */
  displayName?: string;
  /** E-mail address starting with this. */
  email?: string;
  /** Users seen at this address (sign-up or a browser session). */
  ip?: string;
  /** Users invited by this user (Rookery has no invites: nobody). */
  invitedBy?: string;
}

/** `text` as a case-insensitive LIKE pattern of its own (`%` and `_` literal). */
const likePattern = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
const likeLower = (column: string, pattern: string) =>
  sql<SqlBool>`lower(${sql.ref(column)}) LIKE ${pattern} ESCAPE '\\'`;

/** The roles whose holders count as staff (they can Manage Reports). */
async function staffRoleIds(db: Kysely<Database>): Promise<string[]> {
  const roles = await db.selectFrom("user_roles").select(["id", "permissions"]).execute();
  return roles.filter((r) => hasPermission(r, "manage_reports")).map((r) => r.id);
}

/** A page of accounts matching `filter`, newest first. 400 `Unknown origin: …` / `Unknown status: …`. */
export async function listAccounts(ctx: Ctx, filter: AccountFilter, page: PageParams): Promise<AccountRow[]> {
  const db = ctx.db.kysely;
  if (filter.origin && !(ORIGINS as readonly string[]).includes(filter.origin))
    throw new BadRequest(`Unknown origin: ${filter.origin}`);
  if (filter.status && !(STATUSES as readonly string[]).includes(filter.status))
    throw new BadRequest(`Unknown status: ${filter.status}`);
  // A filter on the user keeps only accounts that have one (local ones). Saying so lets the planner
  // start from the users' indexes (pending, disabled, by role, by address), and the page goes by the
  // user's account ID (the same value), the order those indexes hold.
  const byUser =
    filter.status === "pending" ||
    filter.status === "disabled" ||
    Boolean(filter.roleIds?.length || filter.staff) ||
    Boolean(filter.email?.trim()) ||
    (filter.ip !== undefined && filter.ip !== "");
  let query = db.selectFrom("accounts").leftJoin("users", "users.account_id", "accounts.id").selectAll("accounts");
  if (byUser) query = query.where("users.id", "is not", null);
  // On SQLite the unary `+` keeps the planner from reading every local account through
  // index_accounts_on_domain and sorting them when a user's index gives the order (as in directory.ts).
  if (filter.origin === "local")
    query = query.where(
      byUser && ctx.db.engine === "sqlite"
        ? sql<SqlBool>`+accounts.domain IS NULL`
        : sql<SqlBool>`accounts.domain IS NULL`,
    );
  if (filter.origin === "remote") query = query.where("accounts.domain", "is not", null);
  switch (filter.status) {
    case "active":
      query = query.where("accounts.suspended_at", "is", null);
      break;
    case "pending":
      query = query.where("users.approved", "=", false);
      break;
    case "disabled":
      query = query.where("users.disabled", "=", true).where("accounts.suspended_at", "is", null);
      break;
    case "silenced":
      query = query.where("accounts.silenced_at", "is not", null);
      break;
    case "suspended":
      query = query.where("accounts.suspended_at", "is not", null);
      break;
    case "sensitized":
      query = query.where("accounts.sensitized_at", "is not", null);
      break;
  }
  const roleIds = [...(filter.roleIds ?? []), ...(filter.staff ? await staffRoleIds(db) : [])].filter(isIdLike);
  if (filter.roleIds?.length || filter.staff) {
    if (roleIds.length === 0) return [];
    query = query.where("users.role_id", "in", roleIds);
  }
  if (filter.invitedBy?.trim()) return [];
  if (filter.username?.trim())
    query = query.where(likeLower("accounts.username", `${likePattern(filter.username.trim())}%`));
  if (filter.byDomain?.trim()) query = query.where("accounts.domain", "=", filter.byDomain.trim().toLowerCase());
  if (filter.displayName?.trim())
    query = query.where(likeLower("accounts.display_name", `%${likePattern(filter.displayName.trim())}%`));
  if (filter.email?.trim()) query = query.where(likeLower("users.email", `${likePattern(filter.email.trim())}%`));
  if (filter.ip !== undefined && filter.ip !== "") {
    const ip = filter.ip.trim();
    if (!isIP(ip)) return [];
    // The users seen there, found by the address (one index each) rather than by probing every user.
    query = query.where("users.id", "in", (eb) =>
      eb
        .selectFrom("users as seen")
        .select("seen.id")
        .where("seen.sign_up_ip", "=", ip)
        .union(eb.selectFrom("web_sessions").select("web_sessions.user_id as id").where("web_sessions.ip", "=", ip)),
    );
  }
  return fetchPage(query, byUser ? "users.account_id" : "accounts.id", page);
}

/** The account `id` (404 for an unknown one or a value that is not an ID). */
export async function accountOf(db: Kysely<Database>, id: string | undefined): Promise<AccountRow> {
  const row =
    id && isIdLike(id)
      ? await db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst()
      : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** The user of a local account (403 for a remote one: Mastodon's `require_local_account!`). */
async function localUserOf(db: Kysely<Database>, account: AccountRow): Promise<UserRow> {
  const user =
    account.domain === null
      ? await db.selectFrom("users").selectAll().where("account_id", "=", account.id).executeTakeFirst()
      : undefined;
  if (!user) throw new Forbidden();
  return user;
}

/** The role of `account`'s user (everyone's when none); null for a remote account. */
export async function roleOfAccount(db: Kysely<Database>, account: AccountRow): Promise<UserRoleRow | null> {
  if (account.domain !== null) return null;
  const row = await db
    .selectFrom("users")
    .innerJoin("user_roles", (join) =>
      join.on((eb) => eb("user_roles.id", "=", eb.fn.coalesce("users.role_id", eb.val(EVERYONE_ROLE_ID)))),
    )
    .selectAll("user_roles")
    .where("users.account_id", "=", account.id)
    .executeTakeFirst();
  return row ?? null;
}

/** Mastodon's UserRole#overrides?: the moderator outranks the target (403 otherwise). */
export async function assertOutranks(db: Kysely<Database>, moderator: Moderator, target: AccountRow): Promise<void> {
  const role = await roleOfAccount(db, target);
  if (role && !(moderator.role.position > role.position)) throw new Forbidden();
}

/** A readable name of an account for the audit log: `alice` or `rita@remote.example`. */
export const handleOf = (account: Pick<AccountRow, "username" | "domain">) =>
  account.domain === null ? account.username : `${account.username}@${account.domain}`;

/** Approves a pending sign-up; the user hears of it by e-mail once their address is confirmed. */
export async function approveAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AccountRow> {
  const account = await accountOf(ctx.db.kysely, id);
  const user = await localUserOf(ctx.db.kysely, account);
  if (user.approved) throw new Forbidden();
  await ctx.dispatcher.transaction(async (tx) => {
    await tx
      .updateTable("users")
      .set({ approved: true, updated_at: new Date().toISOString() })
      .where("id", "=", user.id)
      .execute();
    await recordAction(tx, {
      actorId: moderator.account.id,
      action: "approve",
      targetType: "User",
      targetId: user.id,
      humanIdentifier: handleOf(account),
    });
    if (user.confirmed_at) await queueApprovalMail(ctx, tx, user.email, account.username);
  });
  return account;
}

/** Rejects a pending sign-up: the account and its user are removed, the username and address freed. */
export async function rejectAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<void> {
  const account = await accountOf(ctx.db.kysely, id);
  const user = await localUserOf(ctx.db.kysely, account);
  if (user.approved) throw new Forbidden();
  await ctx.dispatcher.transaction(async (tx) => {
    await recordAction(tx, {
      actorId: moderator.account.id,
      action: "reject",
      targetType: "User",
      targetId: user.id,
      humanIdentifier: handleOf(account),
    });
    // The user, its tokens, sessions and notifications about the sign-up go with the account.
    await tx.deleteFrom("accounts").where("id", "=", account.id).execute();
  });
}

/** Lets a disabled user sign in again. */
export async function enableAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AccountRow> {
  const account = await accountOf(ctx.db.kysely, id);
  const user = await localUserOf(ctx.db.kysely, account);
  if (!user.disabled) return account;
  await ctx.dispatcher.transaction(async (tx) => {
    await tx
      .updateTable("users")
      .set({ disabled: false, updated_at: new Date().toISOString() })
      .where("id", "=", user.id)
      .execute();
    await recordAction(tx, {
      actorId: moderator.account.id,
      action: "enable",
      targetType: "User",
      targetId: user.id,
      humanIdentifier: handleOf(account),
    });
  });
  return account;
}

type Mark = "silenced_at" | "sensitized_at";

async function lift(
  ctx: Ctx,
  moderator: Moderator,
  id: string | undefined,
  column: Mark,
  action: string,
): Promise<AccountRow> {
  const account = await accountOf(ctx.db.kysely, id);
  if (account[column] === null) return account;
  return ctx.dispatcher.transaction(async (tx) => {
    const updated = await tx
      .updateTable("accounts")
      .set({ [column]: null, updated_at: new Date().toISOString() })
      .where("id", "=", account.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAction(tx, {
      actorId: moderator.account.id,
      action,
      targetType: "Account",
      targetId: account.id,
      humanIdentifier: handleOf(account),
    });
    return updated;
  });
}

/** Lifts a silence (the account's public posts return to the public timelines). */
export function unsilenceAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AccountRow> {
  return lift(ctx, moderator, id, "silenced_at", "unsilence");
}

/** Stops marking the account's media as sensitive. */
export function unsensitiveAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AccountRow> {
  return lift(ctx, moderator, id, "sensitized_at", "unsensitive");
}

/**
 * Lifts a suspension: the account's posts show again wherever they were, and other servers read
 * the restored profile. 403 for an account that is not suspended or whose data is already gone.
 */
export async function unsuspendAccount(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AccountRow> {
  const account = await accountOf(ctx.db.kysely, id);
  if (!account.suspended_at || account.deleted_at) throw new Forbidden();
  return ctx.dispatcher.transaction(async (tx) => {
    const updated = await tx
      .updateTable("accounts")
      .set({ suspended_at: null, updated_at: new Date().toISOString() })
      .where("id", "=", account.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await withdrawDataDeletion(tx, account.id);
    await recordAction(tx, {
      actorId: moderator.account.id,
      action: "unsuspend",
      targetType: "Account",
      targetId: account.id,
      humanIdentifier: handleOf(account),
    });
    await ctx.dispatcher.emit(tx, { type: "account.updated", accountId: account.id });
    return updated;
  });
}

/** Removes a suspended account's data now (deletion_requests.ts); 403 unless suspended and not yet emptied. */
export async function deleteAccountData(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<void> {
  const account = await accountOf(ctx.db.kysely, id);
  if (!account.suspended_at || account.deleted_at) throw new Forbidden();
  await removeSuspendedAccountData(ctx, account, {
    actorId: moderator.account.id,
    action: "destroy",
    targetType: "Account",
    targetId: account.id,
    humanIdentifier: handleOf(account),
  });
}

/** An account as the admin pages show it: its user and role (local accounts; null for remote ones). */
export interface AccountWithUser {
  account: AccountRow;
  user: UserRow | null;
  /** The user's effective role (everyone's when none); null for a remote account. */
  role: UserRoleRow | null;
}

/** The users and roles of `rows`, in their order, with two queries whatever their number. */
export async function withUsers(ctx: Ctx, rows: readonly AccountRow[]): Promise<AccountWithUser[]> {
  const db = ctx.db.kysely;
  const local = rows.filter((r) => r.domain === null).map((r) => r.id);
  const users = local.length ? await db.selectFrom("users").selectAll().where("account_id", "in", local).execute() : [];
  const roleIds = [...new Set(users.map((u) => u.role_id ?? EVERYONE_ROLE_ID))];
  const roles = roleIds.length
    ? await db.selectFrom("user_roles").selectAll().where("id", "in", roleIds).execute()
    : [];
  const userOf = new Map(users.map((u) => [u.account_id, u]));
  const roleOf = new Map(roles.map((r) => [r.id, r]));
  return rows.map((account) => {
    const user = userOf.get(account.id) ?? null;
    return { account, user, role: user ? (roleOf.get(user.role_id ?? EVERYONE_ROLE_ID) ?? null) : null };
  });
}

/** Whether `moderator` may take the punishing actions on `target` (the rule assertOutranks enforces). */
export async function mayActOn(db: Kysely<Database>, moderator: Moderator, target: AccountRow): Promise<boolean> {
  const role = await roleOfAccount(db, target);
  return !role || moderator.role.position > role.position;
}

/** A strike with the handle of the moderator who gave it (null once their account is gone). */
export interface Strike extends AccountWarningRow {
  moderator: string | null;
}

/** The strikes on account `id`, newest first (Mastodon's account page lists them all; a page at most). */
export async function strikesOf(ctx: Ctx, id: string, limit = 100): Promise<Strike[]> {
  const rows = await ctx.db.kysely
    .selectFrom("account_warnings")
    .leftJoin("accounts", "accounts.id", "account_warnings.account_id")
    .selectAll("account_warnings")
    .select(["accounts.username as moderator_username", "accounts.domain as moderator_domain"])
    .where("account_warnings.target_account_id", "=", id)
    .orderBy("account_warnings.id", "desc")
    .limit(limit)
    .execute();
  return rows.map(({ moderator_username, moderator_domain, ...warning }) => ({
    ...warning,
    moderator: moderator_username ? [moderator_username, moderator_domain].filter(Boolean).join("@") : null,
  }));
}

/** The latest reports against account `id` and by it, newest first, with how many there are of each. */
export interface AccountReports {
  against: ReportRow[];
  by: ReportRow[];
  againstCount: number;
  byCount: number;
}

export async function reportsOfAccount(ctx: Ctx, id: string, limit = 20): Promise<AccountReports> {
  const db = ctx.db.kysely;
  const latest = (column: "target_account_id" | "account_id") =>
    db.selectFrom("reports").selectAll().where(column, "=", id).orderBy("id", "desc").limit(limit).execute();
  const count = async (column: "target_account_id" | "account_id") =>
    Number(
      (
        await db
          .selectFrom("reports")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where(column, "=", id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    against: await latest("target_account_id"),
    by: await latest("account_id"),
    againstCount: await count("target_account_id"),
    byCount: await count("account_id"),
  };
}
