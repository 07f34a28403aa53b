/**
 * The collections of a local actor, as Mastodon serves them: the outbox (its public and unlisted
 * posts and boosts, newest first, as Create and Announce activities, 20 a page), followers and
 * following (actor ids, 40 a page; only the counts when the owner hides them), featured (pinned
 * public posts, whole) and featured tags (hashtags, whole). Pages are cut by ID (`?cursor=` is the
 * last ID of the page before), and each page costs a fixed number of queries.
 */
import type { Context, Federation } from "@fedify/fedify";
import { Hashtag, type Activity, type Note, type Question } from "@fedify/vocab";
import type { Ctx } from "../context.ts";
import type { AccountRow } from "../db/schema.ts";
import { serializeStatuses } from "../entities/status.ts";
import { followCollection } from "../services/accounts/collections.ts";
import { findLocalAccount } from "../services/accounts/lookup.ts";
import { statusLinksOf } from "../services/statuses/audience.ts";
import { featuredTags } from "../services/tags/tags.ts";
import { accountStatuses } from "../services/timelines/account.ts";
import { announceOf, createOf, noteOf } from "./notes.ts";
import { hiddenFromRequester, mayFetch } from "./requester.ts";

const OUTBOX_PAGE = 20;
const ALL = { onlyMedia: false, excludeReplies: false, excludeReblogs: false, pinned: false };
const FOLLOWS_PAGE = 40;

/** The local account an actor path names (exactly), unless suspended. */
async function ownerOf(ctx: Ctx, identifier: string): Promise<AccountRow | undefined> {
  const row = await findLocalAccount(ctx, identifier);
  return row && row.username === identifier && !row.suspended_at ? row : undefined;
}

const cursorOf = (cursor: string | null) => (cursor && /^\d{1,19}$/.test(cursor) ? cursor : undefined);

/** Notes (or boosts) of `rows`, in their order, as the activities that published them. */
async function activitiesOf(ctx: Ctx, statusIds: readonly string[]): Promise<Activity[]> {
  const links = await statusLinksOf(ctx, statusIds);
  const entities = await serializeStatuses(
    ctx,
    links.filter((l) => !l.reblogOf).map((l) => l.status),
  );
  const byId = new Map(entities.map((e) => [e.id, e]));
  const activities: Activity[] = [];
  for (const link of links) {
    if (link.reblogOf) {
      // A boost of a post the public may not see is left out, as the API leaves it out.
      const original = link.reblogOf.status.visibility;
      const announce = original === "public" || original === "unlisted" ? announceOf(link) : null;
      if (announce) activities.push(announce);
      continue;
    }
    const entity = byId.get(link.status.id);
    if (entity) activities.push(createOf(noteOf(link, entity), link));
  }
  return activities;
}

export function registerCollections(ctx: Ctx, federation: Federation<void>): void {
  const authorized = mayFetch(ctx);
  federation
    .setOutboxDispatcher("/users/{identifier}/outbox", async (fedCtx, identifier, cursor) => {
      const owner = await ownerOf(ctx, identifier);
      if (!owner) return null;
      if (cursor === null || (await hiddenFromRequester(ctx, fedCtx, owner.id))) return { items: [] };
      const rows = await accountStatuses(ctx, owner, undefined, ALL, { limit: OUTBOX_PAGE, maxId: cursorOf(cursor) });
      return {
        items: await activitiesOf(
          ctx,
          rows.map((r) => r.id),
        ),
        nextCursor: rows.length === OUTBOX_PAGE ? rows[rows.length - 1]!.id : null,
      };
    })
    .setCounter(async (_fedCtx, identifier) => (await ownerOf(ctx, identifier))?.statuses_count ?? null)
    // No first page for nobody: the dispatcher then answers, and answers 404.
    .setFirstCursor(async (_fedCtx, identifier) => ((await ownerOf(ctx, identifier)) ? "" : null))
    .authorize(authorized);

  for (const which of ["followers", "following"] as const) {
    const dispatcher = async (fedCtx: Context<void>, identifier: string, cursor: string | null) => {
      const owner = await ownerOf(ctx, identifier);
      if (!owner) return null;
      if (cursor === null || owner.hide_collections || (await hiddenFromRequester(ctx, fedCtx, owner.id)))
        return { items: [] };
      const page = await followCollection(ctx, owner, which, undefined, {
        limit: FOLLOWS_PAGE,
        maxId: cursorOf(cursor),
      });
      return {
        items: page.accounts.map((account) => new URL(account.uri)),
        nextCursor: page.rows.length === FOLLOWS_PAGE ? page.rows[page.rows.length - 1]!.id : null,
      };
    };
    const counter = async (_fedCtx: unknown, identifier: string) => {
      const owner = await ownerOf(ctx, identifier);
      if (!owner) return null;
      return which === "followers" ? owner.followers_count : owner.following_count;
    };
    // Hidden collections show their size only: no first page.
    const firstCursor = async (_fedCtx: unknown, identifier: string) => {
      const owner = await ownerOf(ctx, identifier);
      return owner && !owner.hide_collections ? "" : null;
    };
    if (which === "followers")
      federation
        .setFollowersDispatcher("/users/{identifier}/followers", async (fedCtx, identifier, cursor) => {
          const page = await dispatcher(fedCtx, identifier, cursor);
          return page && { ...page, items: page.items.map((id) => ({ id, inboxId: null })) };
        })
        .setCounter(counter)
        .setFirstCursor(firstCursor)
        .authorize(authorized);
    else
      federation
        .setFollowingDispatcher("/users/{identifier}/following", dispatcher)
        .setCounter(counter)
        .setFirstCursor(firstCursor)
        .authorize(authorized);
  }

  federation
    .setFeaturedDispatcher("/users/{identifier}/collections/featured", async (fedCtx, identifier) => {
      const owner = await ownerOf(ctx, identifier);
      if (!owner) return null;
      if (await hiddenFromRequester(ctx, fedCtx, owner.id)) return { items: [] };
      const rows = await accountStatuses(
        ctx,
        owner,
        undefined,
        { ...ALL, pinned: true, excludeReblogs: true },
        { limit: 20 },
      );
      const links = await statusLinksOf(
        ctx,
        rows.map((r) => r.id),
      );
      const entities = new Map((await serializeStatuses(ctx, rows)).map((e) => [e.id, e]));
      const notes: Array<Note | Question> = [];
      for (const link of links) {
        const entity = entities.get(link.status.id);
        if (entity) notes.push(noteOf(link, entity));
      }
      return { items: notes };
    })
    .authorize(authorized);

  federation
    .setFeaturedTagsDispatcher("/users/{identifier}/collections/tags", async (fedCtx, identifier) => {
      const owner = await ownerOf(ctx, identifier);
      if (!owner) return null;
      if (await hiddenFromRequester(ctx, fedCtx, owner.id)) return { items: [] };
      const tags = await featuredTags(ctx, owner);
      return {
        items: tags.map(
          ({ tag }) => new Hashtag({ href: new URL(`${ctx.config.baseUrl}/tags/${tag.name}`), name: `#${tag.name}` }),
        ),
      };
    })
    .authorize(authorized);
}
