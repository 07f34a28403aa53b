/**
 * What other servers hear of local statuses and favourites: a post is a Create of its Note, sent to
 * the author's remote followers (shared inboxes) and the remote accounts it mentions — a direct
 * post only to those, at their own inboxes; an edit is an Update of the Note; a deletion a Delete
 * with a Tombstone; a boost an Announce (its removal an Undo); a favourite of a remote post a Like
 * (its removal an Undo). The activities about one status keep their order per server.
 */
import { Add, Announce, Like, Remove, Undo, type Activity } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { serializeStatus } from "../../entities/status.ts";
import type { DomainEvent } from "../../events/types.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { remoteFollowersOf, statusLinks, type StatusLinks } from "../../services/statuses/audience.ts";
import { announceOf, createOf, deleteOf, noteOf, updateOf } from "../notes.ts";
import { send, type Addressee } from "./send.ts";

/** The remote accounts a local status goes to. */
async function audienceOf(ctx: Ctx, links: StatusLinks): Promise<Addressee[]> {
  const { status, author, mentioned, reblogOf } = links;
  const followers = status.visibility === "direct" ? [] : await remoteFollowersOf(ctx, author.id);
  const extra = [...mentioned, ...(reblogOf ? [reblogOf.author] : [])];
  return [...followers, ...extra].filter((account) => account.domain !== null);
}

async function deliver(ctx: Ctx, links: StatusLinks, activity: Activity): Promise<void> {
  await send(ctx, links.author, await audienceOf(ctx, links), activity, {
    shared: links.status.visibility !== "direct",
    orderingKey: links.status.uri,
  });
}

/** A local status was published: Create, or Announce for a boost. */
export async function deliverStatus(ctx: Ctx, event: DomainEvent<"status.created">): Promise<void> {
  const links = await statusLinks(ctx, event.statusId);
  if (!links || links.author.domain !== null || !links.status.local) return;
  if (links.reblogOf) {
    const announce = announceOf(links);
    if (announce) await deliver(ctx, links, announce);
    return;
  }
  const note = noteOf(links, await serializeStatus(ctx, links.status));
  await deliver(ctx, links, createOf(note, links));
}

/** A local status was edited: Update. */
export async function deliverEdit(ctx: Ctx, event: DomainEvent<"status.updated">): Promise<void> {
  const links = await statusLinks(ctx, event.statusId);
  if (!links || links.author.domain !== null || !links.status.local || links.reblogOf) return;
  const note = noteOf(links, await serializeStatus(ctx, links.status));
  await deliver(ctx, links, updateOf(note, links));
}

/** A local status was deleted: Delete, or Undo of the Announce for a boost. */
export async function deliverDeletion(ctx: Ctx, event: DomainEvent<"status.deleted">): Promise<void> {
  const gone = event.federated;
  if (!gone) return;
  const [author] = await findAccountsByIds(ctx, [gone.authorId]);
  if (!author || author.domain !== null) return;
  const followers = gone.visibility === "direct" ? [] : await remoteFollowersOf(ctx, author.id);
  const audience = [...followers, ...(await findAccountsByIds(ctx, gone.remoteAudienceIds))];
  const activity = gone.reblogOfUri
    ? new Undo({
        id: new URL(`${gone.uri}#undo`),
        actor: new URL(author.uri),
        // The Undo names the Announce by id; actor and object let servers that keep no ids match it.
        object: new Announce({ id: new URL(gone.uri), actor: new URL(author.uri), object: new URL(gone.reblogOfUri) }),
      })
    : deleteOf(author.uri, gone.uri);
  await send(ctx, author, audience, activity, { shared: gone.visibility !== "direct", orderingKey: gone.uri });
}

/** The Like of a favourite, named under its account as Mastodon does. */
function likeOf(account: AccountRow, favouriteId: string, statusUri: string): Like {
  return new Like({
    id: new URL(`${account.uri}#likes/${favouriteId}`),
    actor: new URL(account.uri),
    object: new URL(statusUri),
  });
}

/** The local `accountId` favourited or unfavourited the remote status `statusId`: Like, or Undo of it. */
export async function deliverFavourite(
  ctx: Ctx,
  event: DomainEvent<"favourite.created"> | DomainEvent<"favourite.removed">,
): Promise<void> {
  const links = await statusLinks(ctx, event.statusId);
  if (!links || links.author.domain === null) return;
  const [account] = await findAccountsByIds(ctx, [event.accountId]);
  if (!account || account.domain !== null) return;
  const like = likeOf(account, event.favouriteId, links.status.uri);
  const activity =
    event.type === "favourite.created"
      ? like
      : new Undo({ id: new URL(`${like.id!.href}/undo`), actor: new URL(account.uri), object: like });
  await send(ctx, account, [links.author], activity, { orderingKey: `${account.uri} ${links.status.uri}` });
}

/** A local account pinned or unpinned a post: Add or Remove of it in its featured collection. */
export async function deliverPin(
  ctx: Ctx,
  event: DomainEvent<"status.pinned"> | DomainEvent<"status.unpinned">,
): Promise<void> {
  const links = await statusLinks(ctx, event.statusId);
  if (!links || links.author.domain !== null || links.author.id !== event.accountId || !links.author.featured_url)
    return;
  const values = {
    id: new URL(`${links.author.featured_url}#${event.type === "status.pinned" ? "add" : "remove"}/${Date.now()}`),
    actor: new URL(links.author.uri),
    object: new URL(links.status.uri),
    target: new URL(links.author.featured_url),
  };
  const activity = event.type === "status.pinned" ? new Add(values) : new Remove(values);
  const followers = await remoteFollowersOf(ctx, links.author.id);
  await send(ctx, links.author, followers, activity, { shared: true, orderingKey: links.author.uri });
}
