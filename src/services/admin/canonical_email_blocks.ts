/**
 * Canonical e-mail blocks (Mastodon's CanonicalEmailBlock): one address refused at sign-up however
 * it is dressed up. The canonical form is Mastodon's `email_to_canonical_email` for every domain —
 * lowercase, the dots of the local part removed, and what follows its first `+` — and only its
 * SHA-256 is kept, so the list does not hold the addresses themselves. A blocked address signs up
 * to Mastodon's answer, `has already been taken` (ERR_TAKEN), which tells the person nothing more.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { CanonicalEmailBlockRow, Database } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { recordAction } from "./audit.ts";

/** `First.Last+news@Example.com` → `firstlast@example.com`. */
export function canonicalEmail(email: string): string {
  const lower = email.toLowerCase();
  const at = lower.indexOf("@");
  const local = at === -1 ? lower : lower.slice(0, at);
  const domain = at === -1 ? "" : lower.slice(at + 1);
  return `${local.replaceAll(".", "").split("+")[0]}@${domain}`;
}

export function canonicalEmailHash(email: string): string {
  return createHash("sha256").update(canonicalEmail(email)).digest("hex");
}

export interface CanonicalEmailBlockParams {
  email?: string;
  canonicalEmailHash?: string;
}

export function listCanonicalEmailBlocks(ctx: Ctx, page: PageParams): Promise<CanonicalEmailBlockRow[]> {
  return fetchPage(ctx.db.kysely.selectFrom("canonical_email_blocks").selectAll(), "id", page);
}

export async function canonicalEmailBlockOf(ctx: Ctx, id: string | undefined): Promise<CanonicalEmailBlockRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("canonical_email_blocks").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** The blocks an address falls under (none or one): the `test` endpoint. */
export function canonicalEmailBlocksMatching(db: Kysely<Database>, email: string): Promise<CanonicalEmailBlockRow[]> {
  return db
    .selectFrom("canonical_email_blocks")
    .selectAll()
    .where("canonical_email_hash", "=", canonicalEmailHash(email))
    .execute();
}

/** Whether sign-ups with `email` are refused. */
export async function canonicalEmailBlocked(db: Kysely<Database>, email: string): Promise<boolean> {
  return (await canonicalEmailBlocksMatching(db, email)).length > 0;
}

const TAKEN = "Canonical email hash has already been taken";

/**
 * Blocks an address (`email`, hashed here) or a hash a moderator already has; 422 when neither
 * is given, when the hash is not a SHA-256 in hex, or when it is blocked already.
 */
export async function createCanonicalEmailBlock(
  ctx: Ctx,
  actorId: string,
  params: CanonicalEmailBlockParams,
): Promise<CanonicalEmailBlockRow> {
  const hash = params.email?.trim()
    ? canonicalEmailHash(params.email.trim())
    : params.canonicalEmailHash?.trim().toLowerCase();
  if (!hash) throw new ValidationFailed("Canonical email hash can't be blank");
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new ValidationFailed("Canonical email hash is invalid");
  const now = new Date().toISOString();
  try {
    return await ctx.db.kysely.transaction().execute(async (tx) => {
      const taken = await tx
        .selectFrom("canonical_email_blocks")
        .select("id")
        .where("canonical_email_hash", "=", hash)
        .executeTakeFirst();
      if (taken) throw new ValidationFailed(TAKEN);
      const block = await tx
        .insertInto("canonical_email_blocks")
        .values({ id: newId(), canonical_email_hash: hash, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAction(tx, {
        actorId,
        action: "create",
        targetType: "CanonicalEmailBlock",
        targetId: block.id,
        humanIdentifier: block.canonical_email_hash,
      });
      return block;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ValidationFailed(TAKEN);
    throw error;
  }
}

export async function removeCanonicalEmailBlock(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
): Promise<CanonicalEmailBlockRow> {
  const current = await canonicalEmailBlockOf(ctx, id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const removed = await tx.deleteFrom("canonical_email_blocks").where("id", "=", current.id).executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: "destroy",
      targetType: "CanonicalEmailBlock",
      targetId: current.id,
      humanIdentifier: current.canonical_email_hash,
    });
  });
  return current;
}
