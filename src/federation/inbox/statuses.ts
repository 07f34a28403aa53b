/**
 * Posts and reactions from other servers: Create and Update of a Note (or Article, Page,
 * Question), Delete of a post, Announce (a boost) and its Undo, Like and its Undo — through the
 * writer of remote statuses and the same interaction services the client API uses. What an
 * activity touches must belong to its sender: a post is created, edited or deleted only by its
 * author, a boost undone only by its booster.
 */
import {
  Add,
  Announce,
  isActor,
  Like,
  Note,
  type Remove,
  type Create,
  type Delete,
  type Undo,
  type Update,
} from "@fedify/vocab";
import { deleteRemoteAccount } from "../../services/accounts/purge.ts";
import { favourite, setRemotePin, unfavourite } from "../../services/statuses/interactions.ts";
import { deleteStatus } from "../../services/statuses/delete.ts";
import { pollById, recordRemoteVote } from "../../services/polls/vote.ts";
import {
  rememberDeletion,
  statusByUri,
  storeRemoteReblog,
  updateRemoteStatus,
  updateRemoteTallies,
} from "../../services/statuses/remote.ts";
import { NotFound } from "../../errors.ts";
import {
  fetchPost,
  isPost,
  postData,
  PostRefused,
  storePost,
  type PostObject,
  type ReadContext,
} from "../note_rows.ts";
import { Resolver } from "../resolver.ts";
import { loadersOf, Refused, type Received } from "./inbox.ts";

const readContext = (received: Received<Create | Update | Announce | Add | Remove>): ReadContext => ({
  ctx: received.ctx,
  resolver: new Resolver(received.ctx),
  fedCtx: received.fedCtx,
});

/** PostRefused (a post that is not the sender's) is a refused activity. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PostRefused) throw new Refused(error.message);
    throw error;
  }
}

/** The activity's object; Refused when it cannot be read (a forged id Fedify fetched again, a dead link). */
async function objectOf(received: Received<Create | Update>) {
  try {
    return await received.activity.getObject(loadersOf(received.fedCtx));
  } catch (error) {
    throw new Refused(`the object cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** How old an unknown post may be for its Update to store it (Mastodon: a day). */
const LATE_CREATE_MS = 24 * 60 * 60 * 1000;

export async function onCreate(received: Received<Create>): Promise<void> {
  // GoToSocial sends the choices of a multiple-choice vote as several objects of one Create.
  if (received.activity.objectIds.length > 1) {
    try {
      for await (const object of received.activity.getObjects(loadersOf(received.fedCtx)))
        if (isPost(object)) await isVote(received, object);
    } catch (error) {
      throw new Refused(`the objects cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    return;
  }
  const object = await objectOf(received);
  if (!isPost(object)) return;
  if (await isVote(received, object)) return;
  await refusing(() => storePost(readContext(received), object, received.sender, { activity: received.activity }));
}

/**
 * A vote in a local poll, as Mastodon sends one: a Note named by the option, replying to the poll,
 * without content, attributed to the voter. It is counted (or not), never stored as a post.
 */
async function isVote(received: Received<Create>, object: PostObject): Promise<boolean> {
  if (!(object instanceof Note) || !object.name || !object.replyTargetId || object.content) return false;
  if (object.attributionId && object.attributionId.href !== received.sender.uri) return false;
  const status = await statusByUri(received.ctx, object.replyTargetId.href);
  if (!status?.local || !status.poll_id) return false;
  const poll = await pollById(received.ctx, status.poll_id);
  if (poll) await recordRemoteVote(received.ctx, received.sender, poll, object.name.toString());
  return true;
}

export async function onUpdate(received: Received<Update>): Promise<void> {
  const { ctx, sender } = received;
  const object = await objectOf(received);
  if (!object?.id) throw new Refused("an Update of nothing");
  if (object.id.href === sender.uri) {
    // A profile update, signed by the actor itself: what it embeds is its own word.
    if (isActor(object)) await new Resolver(ctx).storeActor(object);
    return;
  }
  if (!isPost(object)) return;
  const status = await statusByUri(ctx, object.id.href);
  if (!status) {
    // As Mastodon: an Update of a post never seen creates it (its Create is late or lost), unless it is old.
    const published = object.published?.epochMilliseconds ?? 0;
    if (Date.now() - published < LATE_CREATE_MS)
      await refusing(() => storePost(readContext(received), object, sender, { activity: received.activity }));
    return;
  }
  if (status.account_id !== sender.id) throw new Refused(`${sender.uri} edits a post of someone else`);
  const data = await refusing(() => postData(readContext(received), object, sender, received.activity));
  // A poll's new tallies alone are no edit; nor is an Update without a newer `updated`.
  if (await updateRemoteTallies(ctx, status, data)) return;
  const last = Date.parse(status.edited_at ?? status.created_at);
  if (!data.editedAt || data.editedAt.getTime() <= last) return;
  await updateRemoteStatus(ctx, status, data);
}

export async function onDelete(received: Received<Delete>): Promise<void> {
  const { ctx, sender, activity } = received;
  const objectId = activity.objectId;
  if (!objectId) throw new Refused("a Delete of nothing");
  if (objectId.href === sender.uri) {
    await deleteRemoteAccount(ctx, sender);
    return;
  }
  // Only the author's server may delete its posts; the deletion is remembered, so the post's
  // Create arriving later (out of order, or again) does not bring it back.
  if (objectId.host.toLowerCase() !== new URL(sender.uri).host.toLowerCase())
    throw new Refused(`${sender.uri} deletes a post of another server`);
  await rememberDeletion(ctx, objectId.href);
  const status = await statusByUri(ctx, objectId.href);
  if (!status) return;
  if (status.account_id !== sender.id) throw new Refused(`${sender.uri} deletes a post of someone else`);
  await deleteStatus(ctx, status).catch((error: unknown) => {
    if (!(error instanceof NotFound)) throw error;
  });
}

export async function onAnnounce(received: Received<Announce>): Promise<void> {
  const { ctx, sender, activity } = received;
  const objectId = activity.objectId;
  if (!activity.id || !objectId) throw new Refused("an Announce without an id or an object");
  const status = (await statusByUri(ctx, objectId.href)) ?? (await fetchPost(readContext(received), objectId));
  if (!status) return;
  const published = activity.published ? new Date(activity.published.epochMilliseconds) : new Date();
  await storeRemoteReblog(ctx, sender, status, activity.id.href, published);
}

export async function onLike(received: Received<Like>): Promise<void> {
  const { ctx, sender, activity } = received;
  const status = activity.objectId ? await statusByUri(ctx, activity.objectId.href) : undefined;
  // Only likes of our posts matter here: Mastodon counts no others.
  if (!status?.local || status.visibility === "direct") return;
  await favourite(ctx, sender, status);
}

/** Undo of a Like or an Announce (by id, or by what the embedded activity names). */
export async function onUndoReaction(received: Received<Undo>, object: Like | Announce) {
  const { ctx, sender } = received;
  if (object.actorId && object.actorId.href !== sender.uri) throw new Refused("an Undo of someone else's activity");
  if (object instanceof Like) {
    const status = object.objectId ? await statusByUri(ctx, object.objectId.href) : undefined;
    if (status) await unfavourite(ctx, sender, status);
    return;
  }
  const boost = object.id ? await statusByUri(ctx, object.id.href) : undefined;
  if (!boost || !boost.reblog_of_id) return;
  if (boost.account_id !== sender.id) throw new Refused("an Undo of someone else's boost");
  await deleteStatus(ctx, boost).catch((error: unknown) => {
    if (!(error instanceof NotFound)) throw error;
  });
}

/** Add / Remove of one of the sender's posts to its featured collection: a pin, or its end. */
export async function onPinChange(received: Received<Add | Remove>): Promise<void> {
  const { ctx, sender, activity } = received;
  if (!activity.targetId || activity.targetId.href !== sender.featured_url || !activity.objectId) return;
  const status =
    (await statusByUri(ctx, activity.objectId.href)) ??
    (activity instanceof Add ? await fetchPost(readContext(received), activity.objectId) : undefined);
  if (status) await setRemotePin(ctx, sender, status, activity instanceof Add);
}
