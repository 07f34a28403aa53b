/**
 * Blocks, mutes and a user's own domain blocks (Mastodon's BlockService, MuteService,
 * AfterBlockDomainFromAccountService). A block ends follows and pending requests both ways; a
 * domain block ends the follows between the user and that domain's accounts. What they hide is
 * decided in one place, services/accounts/exclusions.ts.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountPageOf, activeAccountMap, type AccountPage } from "../../db/queries/accounts.ts";
import type { AccountRow } from "../../db/schema.ts";
import { Forbidden, ValidationFailed } from "../../errors.ts";
import { removeFollow } from "./follow.ts";

/** Open streams of these accounts drop what they knew of blocks and mutes. */
async function relationsChanged(ctx: Ctx, ...accountIds: string[]): Promise<void> {
  await ctx.dispatcher.emitCommitted({ type: "relations.changed", accountIds });
}

/** Blocking or muting oneself makes no sense; Rookery refuses it. */
function refuseSelf(viewer: AccountRow, target: AccountRow): void {
  if (viewer.id === target.id) throw new Forbidden();
}

/**
 * `viewer` blocks `target`: the follows between them end both ways, pending requests go, an
 * endorsement goes. `uri` is the Block activity's id when the block came from another server
 * (then the blocker's own follow ends quietly: its server knows). Blocks of a remote account
 * are sent to its server (`block.created`).
 */
export async function blockAccount(
  ctx: Ctx,
  viewer: AccountRow,
  target: AccountRow,
  { uri = null }: { uri?: string | null } = {},
): Promise<void> {
  refuseSelf(viewer, target);
  await ctx.dispatcher.transaction(async (tx) => {
    const id = newId();
    const inserted = await tx
      .insertInto("blocks")
      .values({
        id,
        account_id: viewer.id,
        target_account_id: target.id,
        uri,
        created_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0)
      await ctx.dispatcher.emit(tx, {
        type: "block.created",
        blockId: id,
        accountId: viewer.id,
        targetAccountId: target.id,
      });
    await removeFollow(ctx, tx, viewer.id, target.id, { announce: uri === null });
    await removeFollow(ctx, tx, target.id, viewer.id);
    await tx
      .deleteFrom("follow_requests")
      .where((eb) =>
        eb.or([
          eb.and([eb("account_id", "=", viewer.id), eb("target_account_id", "=", target.id)]),
          eb.and([eb("account_id", "=", target.id), eb("target_account_id", "=", viewer.id)]),
        ]),
      )
      .execute();
    await tx
      .deleteFrom("account_pins")
      .where("account_id", "=", viewer.id)
      .where("target_account_id", "=", target.id)
      .execute();
  });
  await relationsChanged(ctx, viewer.id, target.id);
}

export async function unblockAccount(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<void> {
  await ctx.dispatcher.transaction(async (tx) => {
    const removed = await tx
      .deleteFrom("blocks")
      .where("account_id", "=", viewer.id)
      .where("target_account_id", "=", target.id)
      .returning(["id", "uri"])
      .execute();
    for (const block of removed)
      await ctx.dispatcher.emit(tx, {
        type: "block.removed",
        blockId: block.id,
        accountId: viewer.id,
        targetAccountId: target.id,
      });
  });
  await relationsChanged(ctx, viewer.id, target.id);
}

export interface MuteOptions {
  /** Hide notifications from the account too (default true). */
  notifications?: boolean;
  /** Seconds until the mute ends by itself; 0 or absent: never. */
  duration?: number;
}

/** Mutes an account, or changes an existing mute's settings (both are rewritten, as Mastodon does). */
export async function muteAccount(
  ctx: Ctx,
  viewer: AccountRow,
  target: AccountRow,
  options: MuteOptions,
): Promise<void> {
  refuseSelf(viewer, target);
  const now = new Date();
  const duration = options.duration && options.duration > 0 ? Math.min(options.duration, 100 * 365 * 86_400) : 0;
  const expiresAt = duration ? new Date(now.getTime() + duration * 1000).toISOString() : null;
  const hide = options.notifications ?? true;
  await ctx.db.kysely
    .insertInto("mutes")
    .values({
      id: newId(),
      account_id: viewer.id,
      target_account_id: target.id,
      hide_notifications: hide,
      expires_at: expiresAt,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    })
    .onConflict((oc) =>
      oc
        .columns(["account_id", "target_account_id"])
        .doUpdateSet({ hide_notifications: hide, expires_at: expiresAt, updated_at: now.toISOString() }),
    )
    .execute();
  await relationsChanged(ctx, viewer.id);
}

export async function unmuteAccount(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<void> {
  await ctx.db.kysely
    .deleteFrom("mutes")
    .where("account_id", "=", viewer.id)
    .where("target_account_id", "=", target.id)
    .execute();
  await relationsChanged(ctx, viewer.id);
}

/** Deletes mutes whose time is up (the `mutes.expire` job); reads already ignore them. */
export async function removeExpiredMutes(ctx: Ctx, now = new Date()): Promise<number> {
  const result = await ctx.db.kysely
    .deleteFrom("mutes")
    .where("expires_at", "is not", null)
    .where("expires_at", "<=", now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A page of muted accounts: each with the time its mute ends (null: never). */
export interface MutedPage {
  rows: Array<{ id: string }>;
  accounts: Array<{ account: AccountRow; expiresAt: string | null }>;
}

export async function blockedAccounts(ctx: Ctx, viewer: AccountRow, page: PageParams): Promise<AccountPage> {
  const query = ctx.db.kysely
    .selectFrom("blocks")
    .select(["id", "target_account_id"])
    .where("account_id", "=", viewer.id);
  return accountPageOf(ctx.db.kysely, await fetchPage(query, "id", page), (r) => r.target_account_id);
}

export async function mutedAccounts(ctx: Ctx, viewer: AccountRow, page: PageParams): Promise<MutedPage> {
  const now = new Date().toISOString();
  const query = ctx.db.kysely
    .selectFrom("mutes")
    .select(["id", "target_account_id", "expires_at"])
    .where("account_id", "=", viewer.id)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]));
  const rows = await fetchPage(query, "id", page);
  const byId = await activeAccountMap(
    ctx.db.kysely,
    rows.map((r) => r.target_account_id),
  );
  const accounts = rows.flatMap((r) => {
    const account = byId.get(r.target_account_id);
    return account ? [{ account, expiresAt: r.expires_at }] : [];
  });
  return { rows, accounts };
}

const DOMAIN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

/** A domain as users type it (`Example.COM`, `https://example.com/`), normalized; 422 when it is not one. */
export function normalizeDomain(value: string | undefined): string {
  const text = (value ?? "").trim().toLowerCase();
  if (text === "") throw new ValidationFailed("Domain can't be blank");
  let host = text;
  try {
    host = new URL(text.includes("://") ? text : `https://${text}`).hostname;
  } catch {
    throw new ValidationFailed("Domain is not a valid domain name");
  }
  if (!DOMAIN.test(host)) throw new ValidationFailed("Domain is not a valid domain name");
  return host;
}

/** Blocks a whole domain for the user and ends the follows between them and its accounts. */
export async function blockDomain(ctx: Ctx, viewer: AccountRow, rawDomain: string | undefined): Promise<void> {
  const domain = normalizeDomain(rawDomain);
  if (domain === ctx.config.localDomain.split(":")[0]) throw new ValidationFailed("Domain is not a valid domain name");
  await ctx.dispatcher.transaction(async (tx) => {
    await tx
      .insertInto("account_domain_blocks")
      .values({ id: newId(), account_id: viewer.id, domain, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(["account_id", "domain"]).doNothing())
      .execute();
    const theirs = await tx.selectFrom("accounts").select("id").where("domain", "=", domain).execute();
    const ids = theirs.map((r) => r.id);
    if (ids.length === 0) return;
    const follows = await tx
      .selectFrom("follows")
      .select(["account_id", "target_account_id"])
      .where((eb) =>
        eb.or([
          eb.and([eb("account_id", "=", viewer.id), eb("target_account_id", "in", ids)]),
          eb.and([eb("target_account_id", "=", viewer.id), eb("account_id", "in", ids)]),
        ]),
      )
      .execute();
    for (const follow of follows) await removeFollow(ctx, tx, follow.account_id, follow.target_account_id);
  });
  await relationsChanged(ctx, viewer.id);
}

export async function unblockDomain(ctx: Ctx, viewer: AccountRow, rawDomain: string | undefined): Promise<void> {
  const domain = normalizeDomain(rawDomain);
  await ctx.db.kysely
    .deleteFrom("account_domain_blocks")
    .where("account_id", "=", viewer.id)
    .where("domain", "=", domain)
    .execute();
  await relationsChanged(ctx, viewer.id);
}

/** A page of the user's blocked domains, newest first, paged by the block rows' IDs. */
export async function blockedDomains(
  ctx: Ctx,
  viewer: AccountRow,
  page: PageParams,
): Promise<Array<{ id: string; domain: string }>> {
  const query = ctx.db.kysely
    .selectFrom("account_domain_blocks")
    .select(["id", "domain"])
    .where("account_id", "=", viewer.id);
  return fetchPage(query, "id", page);
}
