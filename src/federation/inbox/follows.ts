/**
 * Follow, Accept, Reject and Undo(Follow) from other servers, through the same follow services
 * the client API uses. A Follow of a local account becomes a follow (answered with an Accept by
 * the follow.created subscriber) or a request (the owner decides); a Follow we have already
 * accepted is accepted again, and one the account cannot take (a block, a move) is rejected at
 * once. An Accept or Reject must come from the account that was asked to be followed. Blocks
 * and their Undo go through the block service.
 */
import { Follow, type Accept, type Block, type Move, type Reject, type Undo } from "@fedify/vocab";
import { accountAliases } from "../../db/columns.ts";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { followAccepted, followByUri, followEndedRemotely, receiveFollow } from "../../services/accounts/follow.ts";
import { blockAccount, unblockAccount } from "../../services/accounts/hiding.ts";
import { accountMoved } from "../../services/accounts/move.ts";
import { accountByUri } from "../../services/accounts/remote.ts";
import { Resolver } from "../resolver.ts";
import { sendFollowAnswer } from "../outbox/follows.ts";
import { loadersOf, Refused, type Received } from "./inbox.ts";

/** The local account an actor id names, or Refused. */
async function localAccount(ctx: Ctx, id: URL | null): Promise<AccountRow> {
  const account = id ? await accountByUri(ctx, id.href) : undefined;
  if (!account || account.domain !== null) throw new Refused(`${id?.href ?? "nothing"} is not an account of ours`);
  return account;
}

export async function onFollow(received: Received<Follow>): Promise<void> {
  const { ctx, activity, sender } = received;
  if (!activity.id) throw new Refused("a Follow without an id cannot be answered");
  const target = await localAccount(ctx, activity.objectId);
  const outcome = await receiveFollow(ctx, sender, target, activity.id.href);
  if (outcome === "already" || outcome === "refused")
    await sendFollowAnswer(ctx, { follower: sender, target, uri: activity.id.href, accept: outcome === "already" });
}

/**
 * Which follow (or request) of a local account an Accept or Reject answers: the Follow it names by
 * id, or the one its embedded Follow describes; its target must be the sender.
 */
async function answeredFollow(received: Received<Accept | Reject>): Promise<AccountRow> {
  const { ctx, activity, sender } = received;
  const objectId = activity.objectId;
  if (objectId) {
    const known = await followByUri(ctx, objectId.href);
    if (known) {
      if (known.target_account_id !== sender.id) throw new Refused(`${sender.uri} answers a follow of someone else`);
      if (known.follower.domain === null) return known.follower;
    }
  }
  const object = await activity.getObject(loadersOf(received.fedCtx)).catch(() => null);
  if (!(object instanceof Follow)) throw new Refused("the answer names no Follow we sent");
  if (object.objectId?.href !== sender.uri) throw new Refused(`${sender.uri} answers a follow of someone else`);
  return localAccount(ctx, object.actorId);
}

export async function onAccept(received: Received<Accept>): Promise<void> {
  const follower = await answeredFollow(received);
  await followAccepted(received.ctx, follower, received.sender);
}

export async function onReject(received: Received<Reject>): Promise<void> {
  const follower = await answeredFollow(received);
  await followEndedRemotely(received.ctx, follower, received.sender);
}

export async function onUndoFollow(received: Received<Undo>, follow: Follow): Promise<void> {
  if (follow.actorId?.href !== received.sender.uri) throw new Refused("an Undo of someone else's Follow");
  const target = await localAccount(received.ctx, follow.objectId);
  await followEndedRemotely(received.ctx, received.sender, target);
}

/** A remote account blocks a local one: the follows between them end, and it is hidden as blocks hide. */
export async function onBlock(received: Received<Block>): Promise<void> {
  const { ctx, activity, sender } = received;
  const target = await localAccount(ctx, activity.objectId);
  await blockAccount(ctx, sender, target, { uri: activity.id?.href ?? null });
}

export async function onUndoBlock(received: Received<Undo>, block: Block): Promise<void> {
  if (block.actorId?.href !== received.sender.uri) throw new Refused("an Undo of someone else's Block");
  const target = await localAccount(received.ctx, block.objectId);
  await unblockAccount(received.ctx, received.sender, target);
}

/**
 * A Move of the sender to another account: accepted when the new actor, read from its server,
 * names the old one among its aliases (`alsoKnownAs`); local followers then follow the new one.
 */
export async function onMove(received: Received<Move>): Promise<void> {
  const { ctx, sender, activity } = received;
  if (activity.objectId?.href !== sender.uri) throw new Refused("a Move of someone else");
  const targetId = activity.targetId;
  if (!targetId) throw new Refused("a Move to nowhere");
  let target: AccountRow | undefined;
  if (targetId.host === new URL(ctx.config.baseUrl).host) {
    // Someone moving here: the local account must name the old one.
    target = await accountByUri(ctx, targetId.href);
    if (target && !accountAliases(target).includes(sender.uri))
      throw new Refused(`${targetId.href} does not name ${sender.uri} among its aliases`);
  } else {
    const resolver = new Resolver(ctx);
    const actor = await resolver.fetchActor(targetId);
    if (!actor || !actor.aliasIds.some((alias) => alias.href === sender.uri))
      throw new Refused(`${targetId.href} does not name ${sender.uri} among its aliases`);
    target = await resolver.storeActor(actor);
  }
  if (!target || target.suspended_at) throw new Refused(`${targetId.href} cannot be moved to`);
  await accountMoved(ctx, sender, target);
}
