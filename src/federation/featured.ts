/**
 * A remote account's pinned posts, read from its featured collection when this server first
 * meets the account (and again when its server says the pins changed), in a job: the posts are
 * stored (fetched when unknown) and pinned here, the pins no longer listed removed — Mastodon's
 * featured-collection synchronization.
 */
import { traverseCollection, Collection, isActor } from "@fedify/vocab";
import type { Ctx } from "../context.ts";
import { findAccountsByIds } from "../services/accounts/lookup.ts";
import { setRemotePin } from "../services/statuses/interactions.ts";
import { remotePinsOf, statusByUri } from "../services/statuses/remote.ts";
import { fetchPost, isPost, storePost } from "./note_rows.ts";
import { Resolver } from "./resolver.ts";

/** The job that reads one remote account's featured collection. */
export const FEATURED_SYNC_JOB = "federation.featured_sync";
/** Pins read at most (Mastodon shows five). */
const PINS_MAX = 5;

export async function syncFeatured(ctx: Ctx, accountId: string): Promise<void> {
  const [account] = await findAccountsByIds(ctx, [accountId]);
  if (!account || account.domain === null || account.suspended_at || !account.featured_url) return;
  const resolver = new Resolver(ctx);
  const read = { ctx, resolver, fedCtx: resolver.context() };
  let collection: unknown;
  try {
    collection = await resolver.fetchObject(new URL(account.featured_url));
  } catch (error) {
    ctx.log.info({ err: error, url: account.featured_url }, "could not read a featured collection");
    return;
  }
  if (!(collection instanceof Collection) || isActor(collection)) return;
  const pinned = new Set<string>();
  const loaders = { documentLoader: read.fedCtx.documentLoader, contextLoader: read.fedCtx.contextLoader };
  for await (const item of traverseCollection(collection, loaders)) {
    if (pinned.size >= PINS_MAX) break;
    const id = item.id;
    if (!id) continue;
    let status = await statusByUri(ctx, id.href);
    if (!status)
      status =
        isPost(item) && item.attributionId?.href === account.uri
          ? await storePost(read, item, account).catch(() => undefined)
          : await fetchPost(read, id);
    if (!status || status.account_id !== account.id) continue;
    await setRemotePin(ctx, account, status, true);
    pinned.add(status.id);
  }
  for (const status of await remotePinsOf(ctx, account.id))
    if (!pinned.has(status.id)) await setRemotePin(ctx, account, status, false);
}
