/**
 * What other servers hear of local accounts: a changed profile (or a suspension, which empties
 * it) is an Update of the actor, and a move to another account a Move, sent to the servers of
 * its remote followers; a deleted account is a Delete of the actor, sent to every known server.
 */
import { Delete, Move, Update } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { DomainEvent } from "../../events/types.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { knownServers, remoteFollowersOf } from "../../services/statuses/audience.ts";
import { localActor } from "../actors.ts";
import { fedContext, send } from "./send.ts";

export async function deliverProfile(ctx: Ctx, event: DomainEvent<"account.updated">): Promise<void> {
  const [account] = await findAccountsByIds(ctx, [event.accountId]);
  if (!account || account.domain !== null) return;
  const followers = await remoteFollowersOf(ctx, account.id);
  if (followers.length === 0) return;
  const actor = await localActor(ctx, fedContext(ctx), account);
  const update = new Update({
    id: new URL(`${account.uri}#updates/${Date.now()}`),
    actor: new URL(account.uri),
    to: new URL("https://www.w3.org/ns/activitystreams#Public"),
    object: actor,
  });
  // A suspended account sends nothing otherwise; its Update says it is suspended.
  await send(ctx, { ...account, suspended_at: null }, followers, update, { shared: true, orderingKey: account.uri });
}

/** A local account moved: its remote followers' servers move them to the new account (Mastodon's Move). */
export async function deliverMove(ctx: Ctx, event: DomainEvent<"account.moved">): Promise<void> {
  const rows = await findAccountsByIds(ctx, [event.accountId, event.targetId]);
  const account = rows.find((r) => r.id === event.accountId);
  const target = rows.find((r) => r.id === event.targetId);
  if (!account || !target || account.domain !== null || account.moved_to_account_id !== target.id) return;
  const followers = await remoteFollowersOf(ctx, account.id);
  if (followers.length === 0) return;
  const move = new Move({
    id: new URL(`${account.uri}#moves/${Date.now()}`),
    actor: new URL(account.uri),
    object: new URL(account.uri),
    target: new URL(target.uri),
    to: account.followers_url ? new URL(account.followers_url) : null,
  });
  await send(ctx, account, followers, move, { shared: true, orderingKey: account.uri });
}

/**
 * A local user deleted their account: every server this one knows hears a Delete of the actor
 * (Mastodon sends it to all the inboxes it knows), and removes what it kept of the account.
 */
export async function deliverAccountDeletion(ctx: Ctx, event: DomainEvent<"account.deleted">): Promise<void> {
  const [account] = await findAccountsByIds(ctx, [event.accountId]);
  if (!account || account.domain !== null || !account.deleted_at) return;
  const servers = await knownServers(ctx);
  if (servers.length === 0) return;
  const deletion = new Delete({
    id: new URL(`${account.uri}#delete`),
    actor: new URL(account.uri),
    object: new URL(account.uri),
    to: new URL("https://www.w3.org/ns/activitystreams#Public"),
  });
  // Signed with the account's own key, which it keeps for this (it sends nothing else once suspended).
  await send(ctx, { ...account, suspended_at: null }, servers, deletion, { shared: true, orderingKey: account.uri });
}
