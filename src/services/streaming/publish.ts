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
import type { Ctx } from "../../context.ts";
import { rowWhere } from "../../db/prepared.ts";
import type { ShownStatus } from "../../events/types.ts";
import type { BusMessage } from "../../realtime/bus.ts";
import { whereShown } from "../timelines/shown.ts";

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

/** The channels a status shown there reaches. */
function channelsOf(shown: ShownStatus): string[] {
  const channels = [...shown.homeAccountIds.map(homeChannel), ...shown.listIds.map(listChannel)];
  for (const name of shown.tags) {
    channels.push(hashtagChannel(name, false));
    if (shown.local) channels.push(hashtagChannel(name, true));
  }
  if (shown.onPublicTimelines)
    for (const scope of ["", shown.local ? ":local" : ":remote"]) {
      channels.push(`timeline:public${scope}`);
      if (shown.hasMedia) channels.push(`timeline:public${scope}:media`);
    }
  return channels;
}

/** Publishes `message` to each channel of `channels` someone listens to. */
async function publishPresent(ctx: Ctx, channels: readonly string[], message: BusMessage): Promise<void> {
  const unique = [...new Set(channels)];
  for (let i = 0; i < unique.length; i += 1000) {
    const present = await ctx.events.present(unique.slice(i, i + 1000));
    await Promise.all([...present].map((channel) => ctx.events.publish(channel, message)));
  }
}

/**
 * Announces a status that was just published (`update`, after the fan-out wrote the feeds) or
 * edited (`status.update`).
 */
export async function publishStatus(ctx: Ctx, statusId: string, event: "update" | "status.update"): Promise<void> {
  const db = ctx.db.kysely;
  const status = await rowWhere(db, "statuses", "id", statusId);
  if (!status || status.deleted_at) return;
  const payload: StatusRef = { statusId };
  const [shown] = await whereShown(db, [status]);
  await publishPresent(ctx, channelsOf(shown!), { event, payload });
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

/** Announces deletions (each status's ID as the payload) where the statuses were shown. */
export async function publishDeletes(ctx: Ctx, statuses: readonly ShownStatus[]): Promise<void> {
  for (const shown of statuses)
    await publishPresent(ctx, channelsOf(shown), { event: "delete", payload: shown.statusId });
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

/** A published announcement, on every `user` stream. */
export async function publishNewAnnouncement(ctx: Ctx, announcementId: string): Promise<void> {
  await ctx.events.publish(ANNOUNCEMENTS_CHANNEL, { event: "announcement", payload: { announcementId } });
}

export async function publishAnnouncementDeleted(ctx: Ctx, announcementId: string): Promise<void> {
  await ctx.events.publish(ANNOUNCEMENTS_CHANNEL, { event: "announcement.delete", payload: announcementId });
}

/** The current count of one reaction, as `announcement.reaction` reports it. */
export async function publishAnnouncementReaction(ctx: Ctx, announcementId: string, name: string): Promise<void> {
  const row = await ctx.db.kysely
    .selectFrom("announcement_reactions")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("announcement_id", "=", announcementId)
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
  await ctx.events.publish(ANNOUNCEMENTS_CHANNEL, {
    event: "announcement.reaction",
    payload: JSON.stringify({ name, count: Number(row.n), announcement_id: announcementId }),
  });
}
