/**
 * The inboxes: each activity family has a file that checks where an activity may come from and
 * calls the same service the client API calls. Fedify has verified the signature and that the
 * signer owns `actor` before a listener runs; what it does not check is checked here: the activity
 * comes from its actor's server, the actor is an account we can store (not of a suspended domain).
 * An activity that is wrong (Refused) is logged and dropped — retrying cannot mend it; a failure
 * of ours (the database) is thrown, and Fedify tries again later.
 */
import type { Federation, InboxContext } from "@fedify/fedify";
import {
  Accept,
  Add,
  Announce,
  Block,
  Create,
  Delete,
  Flag,
  Follow,
  Like,
  Move,
  Reject,
  Remove,
  Undo,
  Update,
  type Activity,
} from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { Resolver } from "../resolver.ts";
import { INSTANCE_ACTOR } from "../instance_actor.ts";
import { onAccept, onBlock, onFollow, onMove, onReject, onUndoBlock, onUndoFollow } from "./follows.ts";
import { onFlag } from "./reports.ts";
import { onAnnounce, onCreate, onDelete, onLike, onPinChange, onUndoReaction, onUpdate } from "./statuses.ts";

/** An Undo, by what it undoes. */
async function onUndo(received: Received<Undo>): Promise<void> {
  const object = await received.activity.getObject(loadersOf(received.fedCtx)).catch(() => null);
  if (!object) throw new Refused("the Undo's object cannot be read");
  if (object instanceof Follow) return onUndoFollow(received, object);
  if (object instanceof Block) return onUndoBlock(received, object);
  if (object instanceof Like || object instanceof Announce) return onUndoReaction(received, object);
}

/** The activity cannot be accepted as it is; the reason is logged. */
export class Refused extends Error {
  override name = "Refused";
}

/** What a listener gets: Rookery's context, Fedify's, and the account that sent the activity. */
export interface Received<A extends Activity> {
  ctx: Ctx;
  fedCtx: InboxContext<void>;
  activity: A;
  sender: AccountRow;
}

const hostOf = (url: URL | null | undefined) => url?.host.toLowerCase();

/** Logs why an activity was refused (it is then done with: not tried again). */
export function logRefused(ctx: Ctx, activity: { id: string | undefined; type: string }, error: Refused): void {
  ctx.log.info({ activity: activity.id, type: activity.type, reason: error.message }, "inbox: activity refused");
}

/**
 * The sender of activity `activityId` by actor `actorId` as an account, after the origin checks;
 * Refused when it is not acceptable.
 */
export async function senderOf(ctx: Ctx, actorId: URL | null, activityId: URL | null): Promise<AccountRow> {
  if (!actorId) throw new Refused("the activity has no actor");
  if (activityId && hostOf(activityId) !== hostOf(actorId))
    throw new Refused(`activity ${activityId.href} is not on its actor's server (${actorId.host})`);
  const resolver = new Resolver(ctx);
  const known = await resolver.accountByUri(actorId.href);
  if (known) {
    if (known.domain === null) throw new Refused("a local account cannot send to our inbox");
    if (known.suspended_at) throw new Refused(`${actorId.href} is suspended`);
    return known;
  }
  throw new Refused(`${actorId.href} could not be fetched or was refused`);
}

type Listener<A extends Activity> = (received: Received<A>) => Promise<void>;

export function registerInbox(
  ctx: Ctx,
  federation: Federation<void>,
  paths: { inbox: `${string}{identifier}${string}`; sharedInbox: string },
): void {
  const guarded =
    <A extends Activity>(listener: Listener<A>) =>
    async (fedCtx: InboxContext<void>, activity: A) => {
      try {
        const sender = await senderOf(ctx, activity.actorId, activity.id);
        await listener({ ctx, fedCtx, activity, sender });
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        logRefused(ctx, { id: activity.id?.href, type: activity.constructor.name }, error);
      }
    };
  federation
    .setInboxListeners(paths.inbox as `${string}{identifier}${string}`, paths.sharedInbox)
    // Keys are fetched signed, as the instance actor, also for the shared inbox.
    .setSharedKeyDispatcher(() => ({ identifier: INSTANCE_ACTOR }))
    .on(Follow, guarded(onFollow))
    .on(Accept, guarded(onAccept))
    .on(Reject, guarded(onReject))
    .on(Undo, guarded(onUndo))
    .on(Create, guarded(onCreate))
    .on(Update, guarded(onUpdate))
    .on(Delete, guarded(onDelete))
    .on(Announce, guarded(onAnnounce))
    .on(Like, guarded(onLike))
    .on(Block, guarded(onBlock))
    .on(Flag, guarded(onFlag))
    .on(Move, guarded(onMove))
    .on(Add, guarded(onPinChange))
    .on(Remove, guarded(onPinChange))
    .onError((_fedCtx, error) => ctx.log.warn({ err: error }, "inbox: an activity could not be handled"));
}

/** The loaders of a listener's context, for dereferencing what an activity only links to. */
export const loadersOf = (fedCtx: InboxContext<void>) => ({
  documentLoader: fedCtx.documentLoader,
  contextLoader: fedCtx.contextLoader,
});
