/**
 * What other servers hear of local accounts: a changed profile (or a suspension, which empties
 * it) is an Update of the actor, sent to the servers of its remote followers.
 */
import { Update } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { DomainEvent } from "../../events/types.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { remoteFollowersOf } from "../../services/statuses/audience.ts";
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
