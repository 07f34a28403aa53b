/**
 * What other servers hear of follows (the send matrix of reference/federation.md §5): a local
 * account's request to a remote one is a Follow; a remote account's follow of a local one is
 * answered by an Accept, or a Reject when it is declined or later removed; a local account's
 * unfollow, or a withdrawn request, is an Undo of its Follow. Run by the `deliver` subscribers.
 */
import { Accept, Block, Follow, Reject, Undo } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { newId } from "../../db/ids.ts";
import type { DomainEvent } from "../../events/types.ts";
import { followUriOf } from "../../services/accounts/follow.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { send } from "./send.ts";

async function pair(ctx: Ctx, followerId: string, targetId: string) {
  const rows = await findAccountsByIds(ctx, [followerId, targetId]);
  const follower = rows.find((r) => r.id === followerId);
  const target = rows.find((r) => r.id === targetId);
  return follower && target ? { follower, target } : undefined;
}

const followOf = (follower: AccountRow, target: AccountRow, uri: string | null) =>
  new Follow({ id: uri ? new URL(uri) : null, actor: new URL(follower.uri), object: new URL(target.uri) });

/** A local account asked to follow a remote one: the Follow goes to it. */
export async function sendFollow(ctx: Ctx, event: DomainEvent<"follow_request.created">): Promise<void> {
  const accounts = await pair(ctx, event.accountId, event.targetAccountId);
  if (!accounts || accounts.follower.domain !== null || accounts.target.domain === null) return;
  const uri = await followUriOf(ctx, "follow_requests", event.requestId);
  if (!uri) return;
  await send(ctx, accounts.follower, [accounts.target], followOf(accounts.follower, accounts.target, uri));
}

/** The answer to a remote account's Follow (`uri`) of a local one. */
export async function sendFollowAnswer(
  ctx: Ctx,
  answer: { follower: AccountRow; target: AccountRow; uri: string; accept: boolean },
): Promise<void> {
  const { follower, target, uri, accept } = answer;
  const values = {
    id: new URL(`${target.uri}#${accept ? "accepts" : "rejects"}/follows/${newId()}`),
    actor: new URL(target.uri),
    object: followOf(follower, target, uri),
  };
  await send(ctx, target, [follower], accept ? new Accept(values) : new Reject(values));
}

/** A remote account now follows a local one (at once, or its request authorized): Accept. */
export async function acceptFollow(ctx: Ctx, event: DomainEvent<"follow.created">): Promise<void> {
  const accounts = await pair(ctx, event.accountId, event.targetAccountId);
  if (!accounts || accounts.follower.domain === null || accounts.target.domain !== null) return;
  const uri = await followUriOf(ctx, "follows", event.followId);
  if (!uri) return;
  await sendFollowAnswer(ctx, { ...accounts, uri, accept: true });
}

/**
 * A follow or request across servers ended here: the local follower's server sends an Undo of its
 * Follow; the local followed account's server a Reject of the remote follower's Follow.
 */
export async function sendFollowEnd(
  ctx: Ctx,
  event: DomainEvent<"follow.removed"> | DomainEvent<"follow_request.ended">,
): Promise<void> {
  const accounts = await pair(ctx, event.accountId, event.targetAccountId);
  if (!accounts) return;
  const { follower, target } = accounts;
  if (follower.domain === null && target.domain !== null) {
    const follow = followOf(follower, target, event.uri);
    const id = new URL(
      event.uri?.startsWith(follower.uri) ? `${event.uri}/undo` : `${follower.uri}#follows/undo/${newId()}`,
    );
    await send(ctx, follower, [target], new Undo({ id, actor: new URL(follower.uri), object: follow }));
  } else if (follower.domain !== null && target.domain === null && event.uri) {
    await sendFollowAnswer(ctx, { follower, target, uri: event.uri, accept: false });
  }
}

/** The Block of a remote account by a local one (its id under the blocker, as Mastodon names it). */
const blockOf = (blocker: AccountRow, target: AccountRow, blockId: string) =>
  new Block({
    id: new URL(`${blocker.uri}#blocks/${blockId}`),
    actor: new URL(blocker.uri),
    object: new URL(target.uri),
  });

/** A local account blocked or unblocked a remote one: Block, or Undo of it, to the blocked account. */
export async function sendBlock(
  ctx: Ctx,
  event: DomainEvent<"block.created"> | DomainEvent<"block.removed">,
): Promise<void> {
  const accounts = await pair(ctx, event.accountId, event.targetAccountId);
  if (!accounts || accounts.follower.domain !== null || accounts.target.domain === null) return;
  const { follower: blocker, target } = accounts;
  const block = blockOf(blocker, target, event.blockId);
  const activity =
    event.type === "block.created"
      ? block
      : new Undo({ id: new URL(`${block.id!.href}/undo`), actor: new URL(blocker.uri), object: block });
  await send(ctx, blocker, [target], activity, { orderingKey: `${blocker.uri} ${target.uri}` });
}
