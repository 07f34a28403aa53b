/**
 * What an account withholds from another server's request for its documents (Mastodon's
 * `permitted_for` with a signed requester): nothing to an account it blocks, nor to anyone on a
 * server it blocks.
 */
import type { Ctx } from "../../context.ts";

export interface RemoteRequester {
  host: string;
  /** The requester's account here, when known (an unknown one cannot have been blocked). */
  accountId?: string;
}

/** Whether the local account `ownerId` blocks the requester or its server. */
export async function blocksRequester(ctx: Ctx, ownerId: string, requester: RemoteRequester): Promise<boolean> {
  const db = ctx.db.kysely;
  const [blocked, domainBlocked] = await Promise.all([
    requester.accountId
      ? db
          .selectFrom("blocks")
          .select("id")
          .where("account_id", "=", ownerId)
          .where("target_account_id", "=", requester.accountId)
          .executeTakeFirst()
      : undefined,
    db
      .selectFrom("account_domain_blocks")
      .select("id")
      .where("account_id", "=", ownerId)
      .where("domain", "=", requester.host.replace(/:\d+$/, ""))
      .executeTakeFirst(),
  ]);
  return blocked !== undefined || domainBlocked !== undefined;
}
