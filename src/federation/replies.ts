/**
 * Replies across servers. Each local public post names a `replies` collection
 * (`…/statuses/:id/replies`: the ids of its public and unlisted replies known here, 20 a page), and
 * when someone opens the thread of a remote post here, its own `replies` collection is read in a
 * job (at most once an hour per post, a few pages) and the replies this server lacks are fetched —
 * Mastodon's FetchRepliesService — so threads fill downward as well as upward.
 */
import { Collection, Note, traverseCollection } from "@fedify/vocab";
import type { Federation } from "@fedify/fedify";
import type { Ctx } from "../context.ts";
import { publicRepliesOf, repliesFetchedLately, statusById, statusByUri } from "../services/statuses/remote.ts";
export { FETCH_REPLIES_JOB } from "../services/statuses/remote.ts";
import { fetchableStatus } from "../services/statuses/audience.ts";
import { fetchPost, isPost } from "./note_rows.ts";
import { Resolver } from "./resolver.ts";
import { hiddenFromRequester, mayFetch } from "./requester.ts";

export const REPLIES_PATH = "/users/{identifier}/statuses/{id}/replies";
const PAGE = 20;
/** Replies fetched at most per post and visit. */
const FETCH_MAX = 40;

export function registerReplies(ctx: Ctx, federation: Federation<void>): void {
  federation
    .setCollectionDispatcher("replies", Note, REPLIES_PATH, async (fedCtx, values, cursor) => {
      const links = await fetchableStatus(ctx, values.identifier, values.id, async () => undefined);
      if (!links || (await hiddenFromRequester(ctx, fedCtx, links.author.id))) return null;
      if (cursor === null) return { items: [] };
      const replies = await publicRepliesOf(ctx, links.status.id, {
        limit: PAGE,
        maxId: /^\d+$/.test(cursor) ? cursor : undefined,
      });
      return {
        items: replies.map((reply) => new Note({ id: new URL(reply.uri) })),
        nextCursor: replies.length === PAGE ? replies[replies.length - 1]!.id : null,
      };
    })
    .setFirstCursor(async (_fedCtx, values) =>
      (await fetchableStatus(ctx, values.identifier, values.id, async () => undefined)) ? "" : null,
    )
    .authorize(mayFetch(ctx));
}

/** Reads the replies collection of the remote post `statusId` and stores the replies not known here. */
export async function fetchReplies(ctx: Ctx, statusId: string): Promise<number> {
  const status = await statusById(ctx, statusId);
  if (!status || status.local || status.reblog_of_id) return 0;
  if (await repliesFetchedLately(ctx, status.uri)) return 0;
  const resolver = new Resolver(ctx);
  const read = { ctx, resolver, fedCtx: resolver.context() };
  let post: unknown;
  try {
    post = await resolver.fetchObject(new URL(status.uri));
  } catch (error) {
    ctx.log.info({ err: error, url: status.uri }, "could not read a post for its replies");
    return 0;
  }
  if (!isPost(post)) return 0;
  const loaders = { documentLoader: read.fedCtx.documentLoader, contextLoader: read.fedCtx.contextLoader };
  const replies = await post.getReplies(loaders).catch(() => null);
  if (!(replies instanceof Collection)) return 0;
  let fetched = 0;
  let seen = 0;
  try {
    for await (const item of traverseCollection(replies, loaders)) {
      if (seen++ >= FETCH_MAX) break;
      const id = item.id;
      if (!id || (await statusByUri(ctx, id.href))) continue;
      if (await fetchPost(read, id, 0)) fetched++;
    }
  } catch (error) {
    ctx.log.info({ err: error, url: status.uri }, "could not read all replies of a post");
  }
  return fetched;
}
