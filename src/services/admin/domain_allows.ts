/**
 * Limited federation mode (`LIMITED_FEDERATION_MODE=true`, Mastodon's old WHITELIST_MODE): the
 * server federates only with the domains an admin allows (Mastodon's DomainAllow,
 * UnallowDomainService). A domain matches exactly — `example.com` does not allow
 * `social.example.com` — and whatever port a server listens on. Outside limited mode every
 * domain is allowed and the list only waits for the mode to be turned on.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { Database, DomainAllowRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { purgeRemoteAccounts } from "../accounts/purge.ts";
import { recordAction } from "./audit.ts";
import { normalizeDomain } from "./domain_names.ts";

/** The job that removes what a domain no longer allowed had here. */
export const UNALLOWED_PURGE_JOB = "domain_allows.purge";

const withoutPort = (host: string) => host.replace(/:\d+$/, "");

/**
 * `text` as the allow-list stores it (trimmed, without a port, lowercase punycode), undefined when
 * it is not a domain name; pure, so that the CLI checks its argument the way allowing does.
 */
export function allowListDomain(text: string): string | undefined {
  return normalizeDomain(withoutPort(text.trim()));
}

export function listDomainAllows(ctx: Ctx, page: PageParams): Promise<DomainAllowRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("domain_allows").selectAll(), "id", page);
}

export async function domainAllowOf(ctx: Ctx, id: string | undefined): Promise<DomainAllowRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("domain_allows").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Every allowed domain, by name (the CLI's list; an allow-list stays short). */
export function allDomainAllows(ctx: Ctx): Promise<DomainAllowRow[]> {
  return ctx.db.kysely.selectFrom("domain_allows").selectAll().orderBy("domain").execute();
}

/** The allow of `text` (normalized like allowing does), if it is on the list. */
export async function domainAllowFor(ctx: Ctx, text: string): Promise<DomainAllowRow | undefined> {
  const domain = allowListDomain(text);
  if (!domain) return undefined;
  return ctx.db.kysely.selectFrom("domain_allows").selectAll().where("domain", "=", domain).executeTakeFirst();
}

/**
 * Allows `domain`; allowing it again answers the existing row, as Mastodon does (and logs nothing).
 * With `actorId` (a moderator through the API) the audit log records it; the CLI has no account to
 * name and records nothing.
 */
export async function allowDomain(ctx: Ctx, text: string | undefined, actorId?: string): Promise<DomainAllowRow> {
  if (!text?.trim()) throw new ValidationFailed("Domain can't be blank");
  const domain = normalizeDomain(withoutPort(text.trim()));
  if (!domain) throw new ValidationFailed("Domain is not a valid domain name");
  const existing = () =>
    ctx.db.kysely.selectFrom("domain_allows").selectAll().where("domain", "=", domain).executeTakeFirst();
  const found = await existing();
  if (found) return found;
  const now = new Date().toISOString();
  try {
    return await ctx.db.kysely.transaction().execute(async (tx) => {
      const row = await tx
        .insertInto("domain_allows")
        .values({ id: newId(), domain, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (actorId)
        await recordAction(tx, {
          actorId,
          action: "create",
          targetType: "DomainAllow",
          targetId: row.id,
          humanIdentifier: row.domain,
        });
      return row;
    });
  } catch (error) {
    // Two admins allowing the same domain at once: one row, both answered with it.
    if (isUniqueViolation(error)) return (await existing())!;
    throw error;
  }
}

/**
 * Takes a domain off the list. In limited federation mode its accounts and everything they had
 * here are removed by a job, as Mastodon's UnallowDomainService does. `actorId`: as for allowDomain.
 */
export async function unallowDomain(ctx: Ctx, id: string | undefined, actorId?: string): Promise<DomainAllowRow> {
  const row = await domainAllowOf(ctx, id);
  const cut = await ctx.db.kysely.transaction().execute(async (tx) => {
    const removed = await tx.deleteFrom("domain_allows").where("id", "=", row.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new NotFound();
    if (actorId)
      await recordAction(tx, {
        actorId,
        action: "destroy",
        targetType: "DomainAllow",
        targetId: row.id,
        humanIdentifier: row.domain,
      });
    if (!ctx.config.limitedFederationMode) return [];
    // Suspended at once (hidden everywhere, refused as senders), purged by the job.
    const accounts = await tx
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "in", accountsOf(tx, row.domain))
      .where("suspended_at", "is", null)
      .returning("id")
      .execute();
    await ctx.jobs.enqueueWith(tx, UNALLOWED_PURGE_JOB, { domain: row.domain });
    return accounts.map((a) => a.id);
  });
  if (cut.length > 0) await ctx.dispatcher.emitCommitted({ type: "access.changed", accountIds: cut });
  return row;
}

/** The accounts of exactly `domain` (on any port): what an allow covered. */
function accountsOf(db: Kysely<Database>, domain: string) {
  return db
    .selectFrom("accounts")
    .select("id")
    .where((eb) => eb.or([eb("domain", "=", domain), eb("domain", "like", `${domain}:%`)]));
}

/** Removes a batch of what a no longer allowed domain had; returns whether more is left. */
export async function purgeUnallowedDomain(ctx: Ctx, domain: string): Promise<boolean> {
  if (!ctx.config.limitedFederationMode || (await isAllowedDomain(ctx, domain))) return false;
  return purgeRemoteAccounts(ctx, accountsOf(ctx.db.kysely, domain));
}

/** Whether this server federates with `host` (a domain, perhaps with a port): always, outside limited mode. */
export async function isAllowedDomain(ctx: Ctx, host: string): Promise<boolean> {
  if (!ctx.config.limitedFederationMode) return true;
  const domain = normalizeDomain(withoutPort(host));
  if (!domain) return false;
  const row = await ctx.db.kysely
    .selectFrom("domain_allows")
    .select("id")
    .where("domain", "=", domain)
    .executeTakeFirst();
  return row !== undefined;
}

/** The hosts among `hosts` this server does not federate with in limited mode (none outside it). */
export async function unallowedAmong(ctx: Ctx, hosts: readonly string[]): Promise<Set<string>> {
  if (!ctx.config.limitedFederationMode || hosts.length === 0) return new Set();
  const domains = new Map(hosts.map((host) => [host, normalizeDomain(withoutPort(host.toLowerCase()))]));
  const wanted = [...new Set([...domains.values()].filter((d): d is string => d !== undefined))];
  const allowed = wanted.length
    ? new Set(
        (await ctx.db.kysely.selectFrom("domain_allows").select("domain").where("domain", "in", wanted).execute()).map(
          (r) => r.domain,
        ),
      )
    : new Set<string>();
  return new Set(hosts.filter((host) => !allowed.has(domains.get(host) ?? "")));
}
