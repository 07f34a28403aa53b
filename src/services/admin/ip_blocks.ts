/**
 * IP blocks (Mastodon's IpBlock): networks whose sign-ups need approval (`sign_up_requires_approval`),
 * are refused (`sign_up_block`), or that may not reach the server at all (`no_access`, Mastodon's
 * Rack::Attack blocklist: every request answered 403, this machine's own 127.0.0.1 and ::1 excepted).
 *
 * Every request asks about `no_access`, so each process keeps the unexpired blocks in memory and
 * answers from there. A change clears the copy of the process that made it at once and tells the
 * others over the event bus (Redis with several processes); a copy also expires after
 * REFRESH_MS, or when its first block does, so that a lost message costs at most that long.
 * An expired block stops applying; its row stays listed until a moderator removes it.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { IpBlockRow, IpBlockSeverity } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { recordAction } from "./audit.ts";
import { NetworkSet, parseNetwork } from "./ip_networks.ts";

export const IP_BLOCK_SEVERITIES: readonly IpBlockSeverity[] = [
  "sign_up_requires_approval",
  "sign_up_block",
  "no_access",
];

/** What a moderator sends; undefined leaves a field as it is (on update). */
export interface IpBlockParams {
  ip?: string;
  severity?: string;
  comment?: string;
  /** Seconds from now; "" (or null) clears the expiry. */
  expiresIn?: string | number | null;
}

const REFRESH_MS = 60_000;
const CHANNEL = "admin:ip_blocks";
/** The latest expiry both engines store (ISO 8601 in four-digit years). */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59);

export function listIpBlocks(ctx: Ctx, page: PageParams): Promise<IpBlockRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("ip_blocks").selectAll(), "id", page);
}

export async function ipBlockOf(ctx: Ctx, id: string | undefined): Promise<IpBlockRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("ip_blocks").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

function networkOf(text: string | undefined): string {
  if (!text?.trim()) throw new ValidationFailed("Ip can't be blank");
  const network = parseNetwork(text);
  if (!network) throw new ValidationFailed("Ip is invalid");
  return network.cidr;
}

function severityOf(text: string | undefined): IpBlockSeverity {
  if (!text?.trim()) throw new ValidationFailed("Severity can't be blank");
  if (!IP_BLOCK_SEVERITIES.includes(text as IpBlockSeverity))
    throw new ValidationFailed("Severity is not included in the list");
  return text as IpBlockSeverity;
}

/** Mastodon's Expireable: a number of seconds from now, or nothing (never expires). */
function expiryOf(expiresIn: string | number | null): string | null {
  const text = String(expiresIn ?? "").trim();
  if (text === "") return null;
  if (!/^\d+$/.test(text) || Number(text) === 0) throw new ValidationFailed("Expires in must be greater than 0");
  const at = Date.now() + Number(text) * 1000;
  if (!(at <= LATEST_TIME)) throw new ValidationFailed("Expires in is too long");
  return new Date(at).toISOString();
}

const TAKEN = "Ip has already been taken";

/** Blocks a network; 422 for a missing or bad `ip` or `severity`, or a network already blocked. */
export async function createIpBlock(ctx: Ctx, actorId: string, params: IpBlockParams): Promise<IpBlockRow> {
  const ip = networkOf(params.ip);
  const severity = severityOf(params.severity);
  const expiresAt = expiryOf(params.expiresIn ?? null);
  const now = new Date().toISOString();
  try {
    const row = await ctx.db.kysely.transaction().execute(async (tx) => {
      const taken = await tx.selectFrom("ip_blocks").select("id").where("ip", "=", ip).executeTakeFirst();
      if (taken) throw new ValidationFailed(TAKEN);
      const block = await tx
        .insertInto("ip_blocks")
        .values({
          id: newId(),
          ip,
          severity,
          comment: params.comment ?? "",
          expires_at: expiresAt,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAction(tx, {
        actorId,
        action: "create",
        targetType: "IpBlock",
        targetId: block.id,
        humanIdentifier: block.ip,
        detail: block.severity,
      });
      return block;
    });
    await ipBlocksChanged(ctx);
    return row;
  } catch (error) {
    // Two moderators blocking the same network at once.
    if (isUniqueViolation(error)) throw new ValidationFailed(TAKEN);
    throw error;
  }
}

/** Changes the given fields of a block. */
export async function updateIpBlock(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  params: IpBlockParams,
): Promise<IpBlockRow> {
  const current = await ipBlockOf(ctx, id);
  const changes = {
    ...(params.ip !== undefined ? { ip: networkOf(params.ip) } : {}),
    ...(params.severity !== undefined ? { severity: severityOf(params.severity) } : {}),
    ...(params.comment !== undefined ? { comment: params.comment } : {}),
    ...(params.expiresIn !== undefined ? { expires_at: expiryOf(params.expiresIn) } : {}),
  };
  try {
    const row = await ctx.db.kysely.transaction().execute(async (tx) => {
      if (changes.ip !== undefined && changes.ip !== current.ip) {
        const taken = await tx.selectFrom("ip_blocks").select("id").where("ip", "=", changes.ip).executeTakeFirst();
        if (taken) throw new ValidationFailed(TAKEN);
      }
      const updated = await tx
        .updateTable("ip_blocks")
        .set({ ...changes, updated_at: new Date().toISOString() })
        .where("id", "=", current.id)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw new NotFound();
      await recordAction(tx, {
        actorId,
        action: "update",
        targetType: "IpBlock",
        targetId: updated.id,
        humanIdentifier: updated.ip,
        detail: updated.severity,
      });
      return updated;
    });
    await ipBlocksChanged(ctx);
    return row;
  } catch (error) {
    if (isUniqueViolation(error)) throw new ValidationFailed(TAKEN);
    throw error;
  }
}

export async function removeIpBlock(ctx: Ctx, actorId: string, id: string | undefined): Promise<IpBlockRow> {
  const current = await ipBlockOf(ctx, id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const removed = await tx.deleteFrom("ip_blocks").where("id", "=", current.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: "destroy",
      targetType: "IpBlock",
      targetId: current.id,
      humanIdentifier: current.ip,
      detail: current.severity,
    });
  });
  await ipBlocksChanged(ctx);
  return current;
}

/** The unexpired blocks of one moment, by severity. */
interface IpRules {
  bySeverity: Record<IpBlockSeverity, NetworkSet>;
  /** When this copy must be read again (REFRESH_MS, or the first expiry). */
  validUntil: number;
}

interface IpRulesCache {
  rules?: IpRules;
  loading?: Promise<IpRules>;
  /** Bumped by every change, so that a read begun before one is not kept. */
  generation: number;
  listening: boolean;
}

const caches = new WeakMap<Ctx, IpRulesCache>();

function cacheOf(ctx: Ctx): IpRulesCache {
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = { generation: 0, listening: false }));
  return cache;
}

function forget(cache: IpRulesCache): void {
  cache.generation++;
  cache.rules = undefined;
  cache.loading = undefined;
}

/** Clears this process's copy and tells the other processes to clear theirs. */
async function ipBlocksChanged(ctx: Ctx): Promise<void> {
  forget(cacheOf(ctx));
  await ctx.events.publish(CHANNEL, { event: "changed" }).catch((error: unknown) => {
    ctx.log.warn({ err: error }, "could not announce an IP block change");
  });
}

async function loadRules(ctx: Ctx, cache: IpRulesCache): Promise<IpRules> {
  if (!cache.listening) {
    cache.listening = true;
    await ctx.events
      .subscribe(CHANNEL, () => forget(cache))
      .catch((error: unknown) => {
        cache.listening = false;
        ctx.log.warn({ err: error }, "could not listen for IP block changes");
      });
  }
  const generation = cache.generation;
  const now = Date.now();
  const rows = await ctx.db.kysely.selectFrom("ip_blocks").select(["ip", "severity", "expires_at"]).execute();
  const rules: IpRules = {
    bySeverity: {
      sign_up_requires_approval: new NetworkSet(),
      sign_up_block: new NetworkSet(),
      no_access: new NetworkSet(),
    },
    validUntil: now + REFRESH_MS,
  };
  for (const row of rows) {
    const expires = row.expires_at ? Date.parse(row.expires_at) : Infinity;
    if (expires <= now) continue;
    rules.validUntil = Math.min(rules.validUntil, expires);
    const network = parseNetwork(row.ip);
    if (network) rules.bySeverity[row.severity]?.add(network);
  }
  if (cache.generation === generation) cache.rules = rules;
  return rules;
}

/** The rules in force, from this process's copy when it is fresh. */
function currentRules(ctx: Ctx): IpRules | Promise<IpRules> {
  const cache = cacheOf(ctx);
  if (cache.rules && Date.now() < cache.rules.validUntil) return cache.rules;
  if (!cache.loading) {
    const loading = loadRules(ctx, cache).finally(() => {
      if (cache.loading === loading) cache.loading = undefined;
    });
    cache.loading = loading;
  }
  return cache.loading;
}

const THIS_MACHINE = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/**
 * Whether a `no_access` block covers `ip` (the request's client address). Answered from memory,
 * synchronously, but for the first request after a change or REFRESH_MS (then a promise): every
 * request asks, so the common answer costs no promise.
 */
export function ipAccessDenied(ctx: Ctx, ip: string | undefined): boolean | Promise<boolean> {
  if (!ip || THIS_MACHINE.has(ip)) return false;
  const rules = currentRules(ctx);
  return rules instanceof Promise
    ? rules.then((loaded) => loaded.bySeverity.no_access.has(ip))
    : rules.bySeverity.no_access.has(ip);
}

/** The strictest sign-up severity that covers `ip`, if any (`no_access` counts as a refusal). */
export async function signUpIpRule(
  ctx: Ctx,
  ip: string | undefined,
): Promise<"sign_up_block" | "sign_up_requires_approval" | undefined> {
  if (!ip) return undefined;
  const { bySeverity } = await currentRules(ctx);
  if (bySeverity.no_access.has(ip) || bySeverity.sign_up_block.has(ip)) return "sign_up_block";
  if (bySeverity.sign_up_requires_approval.has(ip)) return "sign_up_requires_approval";
  return undefined;
}
