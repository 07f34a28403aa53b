import type { Ctx } from "../context.ts";
import { relationshipFacts } from "../db/queries/relationships.ts";

/** Relationship: how the viewer and one account relate (keys in Mastodon's order). */
export interface Relationship {
  id: string;
  following: boolean;
  showing_reblogs: boolean;
  notifying: boolean;
  languages: string[] | null;
  followed_by: boolean;
  blocking: boolean;
  blocked_by: boolean;
  muting: boolean;
  muting_notifications: boolean;
  requested: boolean;
  requested_by: boolean;
  domain_blocking: boolean;
  endorsed: boolean;
  note: string;
}

/** The viewer's relationships with `accountIds`, in that order, with a fixed number of queries. */
export async function serializeRelationships(
  ctx: Ctx,
  viewerId: string,
  accountIds: readonly string[],
): Promise<Relationship[]> {
  const facts = await relationshipFacts(ctx.db.kysely, viewerId, accountIds);
  return accountIds.map((id) => {
    // A pending request's settings show as well (Mastodon: "my Follow (or pending request)").
    const mine = facts.following.get(id) ?? facts.requested.get(id);
    return {
      id,
      following: facts.following.has(id),
      showing_reblogs: mine?.showReblogs ?? false,
      notifying: mine?.notify ?? false,
      languages: mine?.languages ?? null,
      followed_by: facts.followedBy.has(id),
      blocking: facts.blocking.has(id),
      blocked_by: facts.blockedBy.has(id),
      muting: facts.muting.has(id),
      muting_notifications: facts.muting.get(id) ?? false,
      requested: facts.requested.has(id),
      requested_by: facts.requestedBy.has(id),
      domain_blocking: facts.domainBlocking.has(id),
      endorsed: facts.endorsed.has(id),
      note: facts.notes.get(id) ?? "",
    };
  });
}

export async function serializeRelationship(ctx: Ctx, viewerId: string, accountId: string): Promise<Relationship> {
  return (await serializeRelationships(ctx, viewerId, [accountId]))[0];
}
