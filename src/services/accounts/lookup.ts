import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";

/**
 * Accounts the API may show: every remote account, and local accounts whose user has confirmed
 * the e-mail address and been approved. Suspended accounts are shown (rendered as suspended).
 */
async function visibleAmong(ctx: Ctx, rows: AccountRow[]): Promise<AccountRow[]> {
  const local = rows.filter((r) => r.domain === null).map((r) => r.id);
  if (local.length === 0) return rows;
  const ready = await ctx.db.kysely
    .selectFrom("users")
    .select("account_id")
    .where("account_id", "in", local)
    .where("confirmed_at", "is not", null)
    .where("approved", "=", true)
    .execute();
  const readyIds = new Set(ready.map((r) => r.account_id));
  return rows.filter((r) => r.domain !== null || readyIds.has(r.id));
}

export async function findVisibleAccount(ctx: Ctx, id: string | undefined): Promise<AccountRow | undefined> {
  if (!id) return undefined;
  const row = await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? (await visibleAmong(ctx, [row]))[0] : undefined;
}

/** The visible accounts among `ids`, in the order asked, each once. */
export async function findVisibleAccounts(ctx: Ctx, ids: readonly string[]): Promise<AccountRow[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "in", unique).execute();
  const visible = new Map((await visibleAmong(ctx, rows)).map((r) => [r.id, r]));
  return unique.map((id) => visible.get(id)).filter((r): r is AccountRow => !!r);
}

/** The accounts among `ids`, whatever their state (for federation, which speaks of every account). */
export async function findAccountsByIds(ctx: Ctx, ids: readonly string[]): Promise<AccountRow[]> {
  if (ids.length === 0) return [];
  return ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("id", "in", [...new Set(ids)])
    .execute();
}

/** The local account with this username (any case), suspended or not: what federation serves. */
export async function findLocalAccount(ctx: Ctx, username: string): Promise<AccountRow | undefined> {
  if (!username || username.length > 100) return undefined;
  return ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("domain", "is", null)
    .where((eb) => eb(eb.fn("lower", ["username"]), "=", username.toLowerCase()))
    .executeTakeFirst();
}

/** Whether `domain` (of a handle; none: this server) names this server. */
const isLocalDomain = (ctx: Ctx, domain: string | undefined) =>
  !domain || domain === ctx.config.localDomain || domain === ctx.config.webDomain;

/** `user`, `@user`, `user@domain`: an account this server knows (no WebFinger). */
export async function lookupAccount(ctx: Ctx, acct: string): Promise<AccountRow | undefined> {
  const [username, rawDomain] = acct.trim().replace(/^@/, "").split("@", 2);
  if (!username || username.length > 100) return undefined;
  const domain = rawDomain?.toLowerCase();
  const local = isLocalDomain(ctx, domain);
  const query = ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["username"]), "=", username.toLowerCase()));
  const row = await (local ? query.where("domain", "is", null) : query.where("domain", "=", domain)).executeTakeFirst();
  return row ? (await visibleAmong(ctx, [row]))[0] : undefined;
}

/**
 * `lookupAccount`, and when the handle names another server's account this server does not know
 * yet, found there (WebFinger and the actor document) and stored.
 */
export async function lookupOrResolveAccount(ctx: Ctx, acct: string): Promise<AccountRow | undefined> {
  const known = await lookupAccount(ctx, acct);
  const domain = acct.trim().replace(/^@/, "").split("@", 2)[1]?.toLowerCase();
  // A handle of this server is what lookupAccount found (or hid: unconfirmed, unapproved), never resolved.
  if (known || isLocalDomain(ctx, domain)) return known;
  return ctx.remote.account(acct);
}
