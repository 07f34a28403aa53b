/**
 * What changes publish to the streaming channels (reference/streaming.md §6–7). Messages carry
 * IDs, not rendered JSON: each connection renders an event for its own viewer (their favourites,
 * filters, visibility), and only channels someone listens to get a message at all (`present`).
 *
 * - a new or edited status: the home feeds and lists that hold it, the public and hashtag
 *   channels when it is public, and the direct channels of a direct message's participants;
 * - a deleted status: the same places, the home feeds and lists found before the deletion;
 * - a notification: the receiver's notifications channel;
 * - per-user signals (`filters_changed`, `notifications_merged`, `relations_changed` when blocks or
 *   mutes change what public streams show, and `kill` to end a revoked token's or a suspended
 *   user's connections).
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Database, StatusRow } from "../../db/schema.ts";
import type { BusMessage } from "../../realtime/bus.ts";

/** The internal payload of a status event: the connection renders the status. */
export interface StatusRef {
  statusId: string;
}

export const homeChannel = (accountId: string) => `timeline:${accountId}`;
export const notificationsChannel = (accountId: string) => `timeline:${accountId}:notifications`;
export const listChannel = (listId: string) => `timeline:list:${listId}`;
export const directChannel = (accountId: string) => `timeline:direct:${accountId}`;
export const hashtagChannel = (name: string, local: boolean) =>
  `timeline:hashtag:${name.toLowerCase()}${local ? ":local" : ""}`;
export const systemChannel = (accountId: string) => `timeline:system:${accountId}`;
export const tokenChannel = (tokenId: string) => `timeline:access_token:${tokenId}`;
/** Announcements go to every `user` stream at once (Mastodon publishes to each user's channel). */
export const ANNOUNCEMENTS_CHANNEL = "timeline:announcements";

/** Where a status goes, besides home feeds and lists. */
interface Placement {
  public: string[];
  hashtags: string[];
}

async function placementOf(db: Kysely<Database>, status: StatusRow): Promise<Placement> {
  const placement: Placement = { public: [], hashtags: [] };
  if (status.visibility !== "public" || status.reblog_of_id) return placement;
  const author = await db
    .selectFrom("accounts")
    .select(["silenced_at", "domain"])
    .where("id", "=", status.account_id)
    .executeTakeFirst();
  if (!author) return placement;
  const local = author.domain === null;
  const tags = await db
    .selectFrom("statuses_tags")
    .innerJoin("tags", "tags.id", "statuses_tags.tag_id")
    .select("tags.name")
    .where("statuses_tags.status_id", "=", status.id)
    .execute();
  for (const { name } of tags) {
    placement.hashtags.push(hashtagChannel(name, false));
    if (local) placement.hashtags.push(hashtagChannel(name, true));
  }
  const replyToOthers = status.in_reply_to_account_id !== null && status.in_reply_to_account_id !== status.account_id;
  if (author.silenced_at || replyToOthers) return placement;
  const hasMedia = status.ordered_media_attachment_ids !== null && status.ordered_media_attachment_ids !== "[]";
  for (const scope of ["", local ? ":local" : ":remote"]) {
    placement.public.push(`timeline:public${scope}`);
    if (hasMedia) placement.public.push(`timeline:public${scope}:media`);
  }
  return placement;
}

/** Publishes `message` to each channel of `channels` someone listens to. */
async function publishPresent(ctx: Ctx, channels: readonly string[], message: BusMessage): Promise<void> {
  const unique = [...new Set(channels)];
  for (let i = 0; i < unique.length; i += 1000) {
    const present = await ctx.events.present(unique.slice(i, i + 1000));
    await Promise.all([...present].map((channel) => ctx.events.publish(channel, message)));
  }
}

/** The home feeds and lists that hold a status now. */
async function feedChannels(db: Kysely<Database>, statusId: string): Promise<string[]> {
  const [homes, lists] = await Promise.all([
    db.selectFrom("home_feed_entries").select("account_id").where("status_id", "=", statusId).execute(),
    db.selectFrom("list_feed_entries").select("list_id").where("status_id", "=", statusId).execute(),
  ]);
  return [...homes.map((h) => homeChannel(h.account_id)), ...lists.map((l) => listChannel(l.list_id))];
}

/**
 * Announces a status that was just published (`update`, after the fan-out wrote the feeds) or
 * edited (`status.update`).
 */
export async function publishStatus(ctx: Ctx, statusId: string, event: "update" | "status.update"): Promise<void> {
  const db = ctx.db.kysely;
  const status = await db.selectFrom("statuses").selectAll().where("id", "=", statusId).executeTakeFirst();
  if (!status || status.deleted_at) return;
  const payload: StatusRef = { statusId };
  const placement = await placementOf(db, status);
  await publishPresent(ctx, [...(await feedChannels(db, statusId)), ...placement.public, ...placement.hashtags], {
    event,
    payload,
  });
  if (status.visibility === "direct" && event === "update") {
    const participants = await db
      .selectFrom("account_conversations")
      .select(["account_id", "id"])
      .where("conversation_id", "=", status.conversation_id ?? "0")
      .where("last_status_id", "=", status.id)
      .execute();
    for (const p of participants)
      await publishPresent(ctx, [directChannel(p.account_id)], {
        event: "conversation",
        payload: { conversationId: p.id },
      });
  }
}

/** Where a status to be deleted was shown: read before the deletion takes its feed entries. */
export interface DeletedStatusPlaces {
  statusId: string;
  channels: string[];
}

export async function placesOfStatus(db: Kysely<Database>, status: StatusRow): Promise<DeletedStatusPlaces> {
  const placement = await placementOf(db, status);
  const mentioned = await db
    .selectFrom("mentions")
    .innerJoin("accounts", "accounts.id", "mentions.account_id")
    .select("mentions.account_id")
    .where("mentions.status_id", "=", status.id)
    .where("accounts.domain", "is", null)
    .execute();
  return {
    statusId: status.id,
    channels: [
      ...(await feedChannels(db, status.id)),
      ...placement.public,
      ...placement.hashtags,
      ...mentioned.map((m) => homeChannel(m.account_id)),
    ],
  };
}

/** Announces deletions (each status's ID as the payload) where the statuses were shown. */
export async function publishDeletes(ctx: Ctx, places: readonly DeletedStatusPlaces[]): Promise<void> {
  for (const place of places) await publishPresent(ctx, place.channels, { event: "delete", payload: place.statusId });
}

/** A new notification, on its receiver's notifications channel. */
export async function publishNotification(ctx: Ctx, receiverId: string, notificationId: string): Promise<void> {
  await publishPresent(ctx, [notificationsChannel(receiverId)], { event: "notification", payload: { notificationId } });
}

/** A signal to a user's connections: `filters_changed`, `notifications_merged` or `kill`. */
export async function publishToUser(
  ctx: Ctx,
  accountId: string,
  event: "filters_changed" | "relations_changed" | "notifications_merged" | "kill",
): Promise<void> {
  const channel = event === "notifications_merged" ? notificationsChannel(accountId) : systemChannel(accountId);
  await ctx.events.publish(channel, { event, payload: event === "notifications_merged" ? "1" : undefined });
}

/** Ends the connections opened with a token that was revoked. */
export async function publishTokenRevoked(ctx: Ctx, tokenIds: readonly string[]): Promise<void> {
  for (const id of tokenIds) await ctx.events.publish(tokenChannel(id), { event: "kill" });
}
