/**
 * Blocking other servers (Mastodon's DomainBlock, BlockDomainService, UnblockDomainService). A block
 * covers its domain and every subdomain. Its severity is applied to the accounts already known
 * there: `suspend` suspends them (hidden everywhere, as any suspended account), `silence` limits
 * them (off the public and hashtag timelines, their notifications filtered as from limited
 * accounts), `noop` changes nothing but `reject_media` / `reject_reports`, which federation
 * enforces. The marks carry the block's creation time, so lifting or softening a block undoes
 * exactly what it did and keeps what a moderator did to an account by hand.
 */
import type { ExpressionBuilder, Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { Database, DomainBlockRow, DomainBlockSeverity } from "../../db/schema.ts";
import { ApiError, NotFound, Unprocessable, ValidationFailed } from "../../errors.ts";
import { normalizeDomain, SEVERITIES } from "./domain_names.ts";
import { purgeRemoteAccounts } from "../accounts/purge.ts";
import { recordAction } from "./audit.ts";

export { normalizeDomain, SEVERITIES } from "./domain_names.ts";

export interface DomainBlockParams {
  domain?: string;
  severity?: string;
  rejectMedia?: boolean;
  rejectReports?: boolean;
  privateComment?: string | null;
  publicComment?: string | null;
  obfuscate?: boolean;
}

/** The domain and each domain above it: `a.b.example` → itself, `b.example`, `example`. */
/** A host without its port: blocks name domains, accounts of servers on other ports are covered too. */
const withoutPort = (host: string) => host.replace(/:\d+$/, "");

function selfAndParents(domain: string): string[] {
  const labels = domain.split(".");
  return labels.map((_, i) => labels.slice(i).join("."));
}

/** The block that applies to `domain`: its own or the most specific one above it. */
export async function blockFor(db: Kysely<Database>, domain: string): Promise<DomainBlockRow | undefined> {
  const normalized = normalizeDomain(withoutPort(domain));
  if (!normalized) return undefined;
  const rows = await db
    .selectFrom("domain_blocks")
    .selectAll()
    .where("domain", "in", selfAndParents(normalized))
    .execute();
  return rows.sort((a, b) => b.domain.length - a.domain.length)[0];
}

/** Whether `block` limits more than `other` (Mastodon's `stricter_than?`). */
function stricterThan(
  block: Pick<DomainBlockRow, "severity" | "reject_media" | "reject_reports">,
  other: DomainBlockRow,
) {
  return (
    (block.severity === "suspend" && other.severity !== "suspend") ||
    (block.severity === "silence" && other.severity === "noop") ||
    (block.reject_media && !other.reject_media) ||
    (block.reject_reports && !other.reject_reports)
  );
}

/** Accounts of `domain` and its subdomains (on any port). */
export const onDomain = (domain: string) => (eb: ExpressionBuilder<Database, "accounts">) =>
  eb.or([
    eb("domain", "=", domain),
    eb("domain", "like", `%.${domain}`),
    eb("domain", "like", `${domain}:%`),
    eb("domain", "like", `%.${domain}:%`),
  ]);

/** The accounts a block on `domain` covers: the domain's own and its subdomains'. */
function coveredAccounts(tx: Kysely<Database>, domain: string) {
  return tx.updateTable("accounts").where(onDomain(domain));
}

/** The job that removes what a suspended domain had here. */
export const PURGE_JOB = "domain_blocks.purge";

/**
 * Marks the covered accounts as the block's severity asks (those not already marked); a
 * suspension also queues the removal of their follows and posts.
 */
async function applyBlock(ctx: Ctx, tx: Kysely<Database>, block: DomainBlockRow): Promise<void> {
  // Media of a server that may not have them kept here go (the links stay).
  if (block.reject_media || block.severity === "suspend")
    await ctx.jobs.enqueueWith(tx, "media.purge_domain" /* PURGE_DOMAIN_MEDIA_JOB */, { domain: block.domain });
  if (block.severity === "suspend") {
    await coveredAccounts(tx, block.domain)
      .set({ suspended_at: block.created_at })
      .where("suspended_at", "is", null)
      .execute();
    await ctx.jobs.enqueueWith(tx, PURGE_JOB, { domain: block.domain });
  }
  if (block.severity === "silence")
    await coveredAccounts(tx, block.domain)
      .set({ silenced_at: block.created_at })
      .where("silenced_at", "is", null)
      .execute();
}

/** Takes back the marks `block` made (those with its time), leaving moderators' own. */
async function liftBlock(tx: Kysely<Database>, block: DomainBlockRow): Promise<void> {
  await coveredAccounts(tx, block.domain)
    .set({ suspended_at: null })
    .where("suspended_at", "=", block.created_at)
    .execute();
  await coveredAccounts(tx, block.domain)
    .set({ silenced_at: null })
    .where("silenced_at", "=", block.created_at)
    .execute();
}

/** The log entry of a moderator's change to `block` (Mastodon's action names). */
function auditEntry(actorId: string, action: "create" | "update" | "destroy", block: DomainBlockRow) {
  return {
    actorId,
    action,
    targetType: "DomainBlock" as const,
    targetId: block.id,
    humanIdentifier: block.domain,
    detail: block.severity,
  };
}

export function listDomainBlocks(ctx: Ctx, page: PageParams): Promise<DomainBlockRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("domain_blocks").selectAll(), "id", page);
}

export async function domainBlockOf(ctx: Ctx, id: string | undefined): Promise<DomainBlockRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("domain_blocks").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** A block covering the new one already (the same domain, or a parent at least as strict). */
export class DomainAlreadyBlocked extends Unprocessable {
  readonly existing: DomainBlockRow;
  constructor(existing: DomainBlockRow, rendered: unknown) {
    super(`You have already imposed stricter limits on ${existing.domain}.`, { existing_domain_block: rendered });
    this.existing = existing;
  }
}

/**
 * The domain and limits a new block of `params` would have, checked as createDomainBlock checks
 * them (the same errors); nothing is stored. The admin pages ask it before their confirmation step.
 */
export async function checkNewDomainBlock(
  ctx: Ctx,
  params: DomainBlockParams,
  render: (existing: DomainBlockRow) => unknown,
): Promise<Pick<DomainBlockRow, "domain" | "severity" | "reject_media" | "reject_reports">> {
  if (!params.domain?.trim()) throw new ValidationFailed("Domain can't be blank");
  const domain = normalizeDomain(params.domain);
  if (!domain) throw new ValidationFailed("Domain is not a valid domain name");
  const severity = (params.severity ?? "silence") as DomainBlockSeverity;
  if (!SEVERITIES.includes(severity)) throw new ValidationFailed("Severity is not included in the list");
  const wanted = {
    severity,
    reject_media: params.rejectMedia ?? false,
    reject_reports: params.rejectReports ?? false,
  };
  const existing = await blockFor(ctx.db.kysely, domain);
  if (existing && (existing.domain === domain || !stricterThan(wanted, existing)))
    throw new DomainAlreadyBlocked(existing, render(existing));
  return { domain, ...wanted };
}

/**
 * Blocks a domain. 422 `Domain can't be blank` without one; DomainAlreadyBlocked when a block of
 * the same domain exists, or one above it that is at least as strict (`render` shapes it for the
 * answer). With `actorId` (a moderator through the API) the audit log records it; the CLI has no
 * account to name and records nothing.
 */
export async function createDomainBlock(
  ctx: Ctx,
  params: DomainBlockParams,
  render: (existing: DomainBlockRow) => unknown,
  actorId?: string,
): Promise<DomainBlockRow> {
  const { domain, ...wanted } = await checkNewDomainBlock(ctx, params, render);
  const now = new Date().toISOString();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const block = await tx
      .insertInto("domain_blocks")
      .values({
        id: newId(),
        domain,
        ...wanted,
        private_comment: params.privateComment || null,
        public_comment: params.publicComment || null,
        obfuscate: params.obfuscate ?? false,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await applyBlock(ctx, tx, block);
    if (actorId) await recordAction(tx, auditEntry(actorId, "create", block));
    return block;
  });
}

/**
 * Changes a block's settings and applies the new severity to the covered accounts. An unknown
 * severity is the spec's 500 (Mastodon's enum raises). `actorId`: as for createDomainBlock.
 */
export async function updateDomainBlock(
  ctx: Ctx,
  id: string | undefined,
  params: DomainBlockParams,
  actorId?: string,
): Promise<DomainBlockRow> {
  const current = await domainBlockOf(ctx, id);
  if (params.severity !== undefined && !SEVERITIES.includes(params.severity as DomainBlockSeverity))
    throw new ApiError(500, `'${params.severity}' is not a valid severity`);
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable("domain_blocks")
      .set({
        ...(params.severity !== undefined ? { severity: params.severity as DomainBlockSeverity } : {}),
        ...(params.rejectMedia !== undefined ? { reject_media: params.rejectMedia } : {}),
        ...(params.rejectReports !== undefined ? { reject_reports: params.rejectReports } : {}),
        ...(params.privateComment !== undefined ? { private_comment: params.privateComment || null } : {}),
        ...(params.publicComment !== undefined ? { public_comment: params.publicComment || null } : {}),
        ...(params.obfuscate !== undefined ? { obfuscate: params.obfuscate } : {}),
        updated_at: new Date().toISOString(),
      })
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirst();
    if (!updated) throw new NotFound();
    if (updated.severity !== current.severity || (updated.reject_media && !current.reject_media)) {
      await liftBlock(tx, current);
      await applyBlock(ctx, tx, updated);
    }
    if (actorId) await recordAction(tx, auditEntry(actorId, "update", updated));
    return updated;
  });
}

/** Lifts a block: the accounts it suspended or silenced are restored. `actorId`: as for createDomainBlock. */
export async function removeDomainBlock(ctx: Ctx, id: string | undefined, actorId?: string): Promise<DomainBlockRow> {
  const current = await domainBlockOf(ctx, id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const removed = await tx.deleteFrom("domain_blocks").where("id", "=", current.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new NotFound();
    await liftBlock(tx, current);
    if (actorId) await recordAction(tx, auditEntry(actorId, "destroy", current));
  });
  return current;
}

/** What suspending `domain` would cut: the accounts known there, and their follows with people here. */
export interface SuspensionImpact {
  /** Accounts of the domain and its subdomains. */
  accounts: number;
  /** Local accounts following them. */
  followers: number;
  /** Local accounts they follow. */
  follows: number;
}

/** The impact of suspending `domain` (a normalized domain), for the confirmation an admin sees first. */
export async function suspensionImpact(ctx: Ctx, domain: string): Promise<SuspensionImpact> {
  const db = ctx.db.kysely;
  const covered = db.selectFrom("accounts").select("id").where(onDomain(domain));
  const local = db.selectFrom("accounts").select("id").where("domain", "is", null);
  const [accounts, followers, follows] = await Promise.all([
    db
      .selectFrom("accounts")
      .select((eb) => eb.fn.countAll().as("n"))
      .where(onDomain(domain))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("follows")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("target_account_id", "in", covered)
      .where("account_id", "in", local)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("follows")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("account_id", "in", covered)
      .where("target_account_id", "in", local)
      .executeTakeFirstOrThrow(),
  ]);
  return { accounts: Number(accounts.n), followers: Number(followers.n), follows: Number(follows.n) };
}

/** Blocks with limits users notice (silence, suspend), for the public list, by domain. */
export function publicDomainBlocks(ctx: Ctx): Promise<DomainBlockRow[]> {
  return ctx.db.kysely
    .selectFrom("domain_blocks")
    .selectAll()
    .where("severity", "in", ["silence", "suspend"])
    .orderBy("domain")
    .execute();
}

/** The hosts among `hosts` (without their ports) that a `suspend` block covers, for refusing to send there. */
export async function suspendedAmong(db: Kysely<Database>, hosts: readonly string[]): Promise<Set<string>> {
  const names = [...new Set(hosts.map((host) => withoutPort(host.toLowerCase())))];
  const suspended = new Set<string>();
  if (names.length === 0) return suspended;
  const candidates = [...new Set(names.flatMap((host) => selfAndParents(normalizeDomain(host) ?? host)))];
  const blocks = await db
    .selectFrom("domain_blocks")
    .select("domain")
    .where("severity", "=", "suspend")
    .where("domain", "in", candidates)
    .execute();
  const blocked = new Set(blocks.map((b) => b.domain));
  for (const host of names)
    if (selfAndParents(normalizeDomain(host) ?? host).some((domain) => blocked.has(domain))) suspended.add(host);
  return suspended;
}

/**
 * What a suspended domain had here goes (services/accounts/purge.ts), a batch per run; returns
 * whether more is left. A block lifted meanwhile stops it.
 */
export async function purgeSuspendedDomain(ctx: Ctx, domain: string): Promise<boolean> {
  const block = await blockFor(ctx.db.kysely, domain);
  if (block?.severity !== "suspend") return false;
  return purgeRemoteAccounts(ctx, ctx.db.kysely.selectFrom("accounts").select("id").where(onDomain(domain)));
}
