/**
 * E-mail domain blocks (Mastodon's EmailDomainBlock): sign-ups with an address at a blocked domain,
 * at any domain under it (a block of `example` covers `mail.example` and every `.example` address),
 * or at a domain whose mail servers are blocked, are refused. The table is the one
 * `rookery email-domain-blocks` keeps.
 *
 * Blocking a domain also blocks its mail servers, as Mastodon's admin does: the MX records are
 * looked up and each server's name gets a block of its own whose parent is the new block (removed
 * with it), so that another domain served by the same throwaway-mail provider is refused too. The
 * lookup goes through `ctx.mailDomains`, so it is off where the sign-up DNS check is
 * (EMAIL_DOMAIN_DNS_CHECK=false, a loopback LOCAL_DOMAIN). Each refused sign-up is recorded for
 * the block's history (the last 7 days: attempts, and the distinct addresses they came from).
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { Database, EmailDomainBlockRow } from "../../db/schema.ts";
import type { EmailDomainBlockWithHistory } from "../../entities/email_domain_block.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { recordAction } from "./audit.ts";
import { normalizeDomain } from "./domain_names.ts";

const DAY_MS = 86_400_000;
/**
 * Days of history an entity shows, today first: each day's refused sign-ups (`uses`) and the
 * distinct addresses they came from (`accounts`), as Mastodon's Trends::History counts them.
 */
export const HISTORY_DAYS = 7;

export function listEmailDomainBlocks(ctx: Ctx, page: PageParams): Promise<EmailDomainBlockRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("email_domain_blocks").selectAll(), "id", page);
}

export async function emailDomainBlockOf(ctx: Ctx, id: string | undefined): Promise<EmailDomainBlockRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("email_domain_blocks").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** The domains of the blocks `ids` (the parents a page of blocks names), by ID. */
export async function emailDomainBlockDomains(ctx: Ctx, ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await ctx.db.kysely
    .selectFrom("email_domain_blocks")
    .select(["id", "domain"])
    .where("id", "in", wanted)
    .execute();
  return new Map(rows.map((r) => [r.id, r.domain]));
}

/**
 * Blocks `text` (a domain) and the mail servers its MX records name; every block made is
 * recorded in the audit log. 422 for a blank or invalid domain or one blocked already. A mail
 * server blocked already, or the domain itself, gets no second block.
 */
export async function createEmailDomainBlock(
  ctx: Ctx,
  actorId: string,
  text: string | undefined,
): Promise<EmailDomainBlockRow> {
  if (!text?.trim()) throw new ValidationFailed("Domain can't be blank");
  const domain = normalizeDomain(text.trim().replace(/^@/, ""));
  if (!domain) throw new ValidationFailed("Domain is not a valid domain name");
  const existing = await ctx.db.kysely
    .selectFrom("email_domain_blocks")
    .select("id")
    .where("domain", "=", domain)
    .executeTakeFirst();
  if (existing) throw new ValidationFailed("Domain has already been taken");
  const servers = ctx.mailDomains.mailServers ? await ctx.mailDomains.mailServers(domain) : [];
  const serverDomains = [
    ...new Set(servers.map((host) => normalizeDomain(host)).filter((d): d is string => !!d && d !== domain)),
  ];
  const now = new Date().toISOString();
  try {
    return await ctx.db.kysely.transaction().execute(async (tx) => {
      const block = await tx
        .insertInto("email_domain_blocks")
        .values({ id: newId(), domain, parent_id: null, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAction(tx, {
        actorId,
        action: "create",
        targetType: "EmailDomainBlock",
        targetId: block.id,
        humanIdentifier: domain,
      });
      const known = serverDomains.length
        ? new Set(
            (
              await tx.selectFrom("email_domain_blocks").select("domain").where("domain", "in", serverDomains).execute()
            ).map((r) => r.domain),
          )
        : new Set<string>();
      for (const server of serverDomains.filter((d) => !known.has(d))) {
        const child = await tx
          .insertInto("email_domain_blocks")
          .values({ id: newId(), domain: server, parent_id: block.id, created_at: now })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordAction(tx, {
          actorId,
          action: "create",
          targetType: "EmailDomainBlock",
          targetId: child.id,
          humanIdentifier: server,
          detail: `mail server of ${domain}`,
        });
      }
      return block;
    });
  } catch (error) {
    // Another moderator blocked the domain (or one of its mail servers) at the same moment.
    if (isUniqueViolation(error)) throw new ValidationFailed("Domain has already been taken");
    throw error;
  }
}

/** Lifts a block, and the blocks of mail servers made with it. */
export async function removeEmailDomainBlock(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
): Promise<EmailDomainBlockRow> {
  const current = await emailDomainBlockOf(ctx, id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    // Children first: the engines' cascades are not relied on for rows the log names.
    await tx.deleteFrom("email_domain_blocks").where("parent_id", "=", current.id).execute();
    const removed = await tx.deleteFrom("email_domain_blocks").where("id", "=", current.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: "destroy",
      targetType: "EmailDomainBlock",
      targetId: current.id,
      humanIdentifier: current.domain,
    });
  });
  return current;
}

/** `a.b.example` → itself, `b.example`, `example` (Mastodon's domains with variants). */
function selfAndParents(domain: string): string[] {
  const labels = domain.split(".");
  return labels.map((_, i) => labels.slice(i).join("."));
}

/**
 * The most specific block covering any of `domains` (an address's domain, its mail servers), if
 * one does; the refused attempt from `ip` is recorded on it for its history.
 */
export async function emailDomainBlockMatching(
  ctx: Ctx,
  domains: readonly string[],
  ip: string | null,
): Promise<EmailDomainBlockRow | undefined> {
  const candidates = [
    ...new Set(
      domains
        .map((d) => normalizeDomain(d))
        .filter((d): d is string => d !== undefined)
        .flatMap(selfAndParents),
    ),
  ];
  if (candidates.length === 0) return undefined;
  const rows = await ctx.db.kysely
    .selectFrom("email_domain_blocks")
    .selectAll()
    .where("domain", "in", candidates)
    .execute();
  const block = rows.sort((a, b) => b.domain.length - a.domain.length)[0];
  if (block) await recordAttempt(ctx.db.kysely, block.id, ip);
  return block;
}

async function recordAttempt(db: Kysely<Database>, blockId: string, ip: string | null): Promise<void> {
  const now = Date.now();
  await db
    .insertInto("email_domain_block_attempts")
    .values({ id: newId(), email_domain_block_id: blockId, ip, created_at: new Date(now).toISOString() })
    .execute();
  // Older attempts no longer show in any history.
  await db
    .deleteFrom("email_domain_block_attempts")
    .where("email_domain_block_id", "=", blockId)
    .where("created_at", "<", new Date(startOfDay(now) - HISTORY_DAYS * DAY_MS).toISOString())
    .execute();
}

const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** `rows` with the last HISTORY_DAYS days of their history, today first, in one query. */
export async function withHistories(
  ctx: Ctx,
  rows: readonly EmailDomainBlockRow[],
): Promise<EmailDomainBlockWithHistory[]> {
  const today = startOfDay(Date.now());
  const since = today - (HISTORY_DAYS - 1) * DAY_MS;
  const ids = rows.map((r) => r.id);
  const attempts = ids.length
    ? await ctx.db.kysely
        .selectFrom("email_domain_block_attempts")
        .select(["email_domain_block_id", "ip", "created_at"])
        .where("email_domain_block_id", "in", ids)
        .where("created_at", ">=", new Date(since).toISOString())
        .execute()
    : [];
  const tally = new Map<string, { uses: number; ips: Set<string> }>();
  for (const attempt of attempts) {
    const key = `${attempt.email_domain_block_id}:${startOfDay(Date.parse(attempt.created_at))}`;
    let day = tally.get(key);
    if (!day) tally.set(key, (day = { uses: 0, ips: new Set() }));
    day.uses++;
    day.ips.add(attempt.ip ?? "");
  }
  return rows.map((row) => ({
    row,
    history: Array.from({ length: HISTORY_DAYS }, (_, i) => {
      const day = today - i * DAY_MS;
      const counted = tally.get(`${row.id}:${day}`);
      return { day: day / 1000, accounts: counted?.ips.size ?? 0, uses: counted?.uses ?? 0 };
    }),
  }));
}
