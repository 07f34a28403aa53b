/**
 * The subscriber table: who reacts to each domain event (src/events/types.ts). This is the one
 * place where a change meets its reactions, so producers never import consumers: federation adds
 * its `deliver` subscribers here. `job` subscribers run in the workers with retries (their jobs
 * are written with the change); `live` ones run in the emitting process right after the commit.
 */
import type { Ctx } from "./context.ts";
import type { SubscriberTable } from "./events/dispatcher.ts";
import { deliverAccountDeletion, deliverMove, deliverProfile } from "./federation/outbox/accounts.ts";
import { deliverVote } from "./federation/outbox/polls.ts";
import { deliverReport } from "./federation/outbox/reports.ts";
import { acceptFollow, sendBlock, sendFollow, sendFollowEnd } from "./federation/outbox/follows.ts";
import {
  deliverDeletion,
  deliverEdit,
  deliverFavourite,
  deliverPin,
  deliverStatus,
} from "./federation/outbox/statuses.ts";
import { verifyAccountLinks } from "./services/accounts/verify_links.ts";
import { afterBulkWrite } from "./services/maintenance.ts";
import {
  notifyOfEdit,
  notifyOfFavourite,
  notifyOfFollow,
  notifyOfFollowRequest,
  notifyOfModerationWarning,
  notifyOfNewStatus,
  notifyOfPollEnd,
  notifyStaffOfReport,
  notifyStaffOfSignUp,
} from "./services/notifications/triggers.ts";
import { enqueuePushes } from "./services/push/deliver.ts";
import {
  publishNewAnnouncement,
  publishAnnouncementDeleted,
  publishAnnouncementReaction,
  publishDeletes,
  publishNotification,
  publishStatus,
  publishTokenRevoked,
  publishToUser,
} from "./services/streaming/publish.ts";
import { fanOutStatus, mergeIntoHome, mergeIntoList } from "./services/timelines/feeds.ts";

export function subscriberTable(ctx: Ctx): SubscriberTable {
  /** Signals each of `accountIds`' open streams. */
  const signal = async (accountIds: readonly string[], event: "relations_changed" | "kill") => {
    for (const id of accountIds) await publishToUser(ctx, id, event);
  };
  return {
    "status.created": [
      {
        name: "feeds",
        mode: "job",
        // The feeds first, then the streams of the feeds that got it.
        run: async ({ statusId }) => {
          const entries = await fanOutStatus(ctx, statusId);
          await publishStatus(ctx, statusId, "update");
          await afterBulkWrite(ctx, entries ?? 0);
        },
        // Another server's post usually reaches a few feeds here: written with the post.
        inline: async (tx, { statusId, local }) => {
          if (local !== false) return false;
          const entries = await fanOutStatus(ctx, statusId, { db: tx, oneBatch: true });
          if (entries === undefined) return false;
          return async () => {
            await publishStatus(ctx, statusId, "update");
            await afterBulkWrite(ctx, entries);
          };
        },
      },
      // Most posts from other servers concern nobody here: no job for them.
      {
        name: "notifications",
        mode: "job",
        when: (event) => event.notifies !== false,
        run: ({ statusId }) => notifyOfNewStatus(ctx, statusId),
      },
      // Other servers hear only of what was published here.
      {
        name: "deliver",
        mode: "job",
        when: (event) => event.local !== false,
        run: (event) => deliverStatus(ctx, event),
      },
    ],
    "status.updated": [
      {
        name: "notifications",
        mode: "job",
        run: ({ statusId, addedMentionIds }) => notifyOfEdit(ctx, statusId, addedMentionIds),
      },
      { name: "streaming", mode: "live", run: ({ statusId }) => publishStatus(ctx, statusId, "status.update") },
      { name: "deliver", mode: "job", run: (event) => deliverEdit(ctx, event) },
    ],
    "status.deleted": [
      { name: "streaming", mode: "live", run: ({ statuses }) => publishDeletes(ctx, statuses) },
      { name: "deliver", mode: "job", run: (event) => deliverDeletion(ctx, event) },
    ],
    "favourite.created": [
      { name: "notifications", mode: "job", run: (event) => notifyOfFavourite(ctx, event) },
      { name: "deliver", mode: "job", run: (event) => deliverFavourite(ctx, event) },
    ],
    "status.pinned": [{ name: "deliver", mode: "job", run: (event) => deliverPin(ctx, event) }],
    "status.unpinned": [{ name: "deliver", mode: "job", run: (event) => deliverPin(ctx, event) }],
    "favourite.removed": [{ name: "deliver", mode: "job", run: (event) => deliverFavourite(ctx, event) }],
    "follow.created": [
      {
        name: "feeds",
        mode: "job",
        run: async ({ accountId, targetAccountId }) =>
          afterBulkWrite(ctx, await mergeIntoHome(ctx, accountId, targetAccountId)),
      },
      { name: "notifications", mode: "job", run: (event) => notifyOfFollow(ctx, event) },
      { name: "deliver", mode: "job", run: (event) => acceptFollow(ctx, event) },
    ],
    "follow_request.created": [
      { name: "notifications", mode: "job", run: (event) => notifyOfFollowRequest(ctx, event) },
      { name: "deliver", mode: "job", run: (event) => sendFollow(ctx, event) },
    ],
    "block.created": [{ name: "deliver", mode: "job", run: (event) => sendBlock(ctx, event) }],
    "block.removed": [{ name: "deliver", mode: "job", run: (event) => sendBlock(ctx, event) }],
    "follow.removed": [{ name: "deliver", mode: "job", run: (event) => sendFollowEnd(ctx, event) }],
    "follow_request.ended": [{ name: "deliver", mode: "job", run: (event) => sendFollowEnd(ctx, event) }],
    "poll.voted": [{ name: "deliver", mode: "job", run: (event) => deliverVote(ctx, event) }],
    "poll.ended": [{ name: "notifications", mode: "job", run: ({ pollId }) => notifyOfPollEnd(ctx, pollId) }],
    "account.updated": [
      { name: "deliver", mode: "job", run: (event) => deliverProfile(ctx, event) },
      // Mastodon's VerifyAccountLinksWorker, not retried either: saving the profile again checks again.
      {
        name: "verify_links",
        mode: "job",
        maxAttempts: 1,
        run: ({ accountId }) => verifyAccountLinks(ctx, accountId),
      },
    ],
    // Remote followers hear of a local account's move (local followers are moved by its own job).
    "account.deleted": [{ name: "deliver", mode: "job", run: (event) => deliverAccountDeletion(ctx, event) }],
    "account.moved": [
      { name: "deliver", mode: "job", when: (event) => event.local, run: (event) => deliverMove(ctx, event) },
    ],
    "account.registered": [{ name: "notifications", mode: "job", run: (event) => notifyStaffOfSignUp(ctx, event) }],
    "report.created": [
      { name: "notifications", mode: "job", run: (event) => notifyStaffOfReport(ctx, event) },
      { name: "deliver", mode: "job", run: (event) => deliverReport(ctx, event) },
    ],
    "account_warning.created": [
      { name: "notifications", mode: "job", run: (event) => notifyOfModerationWarning(ctx, event) },
    ],
    "list.members_added": [
      {
        name: "feeds",
        mode: "job",
        run: async ({ listId, accountIds }) => {
          let entries = 0;
          for (const accountId of accountIds) entries += await mergeIntoList(ctx, listId, accountId);
          await afterBulkWrite(ctx, entries);
        },
      },
    ],
    "notification.created": [
      {
        name: "streaming",
        mode: "live",
        run: ({ receiverId, notificationId }) => publishNotification(ctx, receiverId, notificationId),
      },
      // Live: most receivers have no push subscription, and a job per notification to find that out
      // would cost more than the one lookup; the pushes themselves are jobs (unique per subscription).
      {
        name: "push",
        mode: "live",
        run: ({ notificationId, receiverId }) => enqueuePushes(ctx, notificationId, receiverId),
      },
    ],
    "notifications.merged": [
      {
        name: "streaming",
        mode: "live",
        run: ({ accountId }) => publishToUser(ctx, accountId, "notifications_merged"),
      },
    ],
    "filters.changed": [
      { name: "streaming", mode: "live", run: ({ accountId }) => publishToUser(ctx, accountId, "filters_changed") },
    ],
    "relations.changed": [
      { name: "streaming", mode: "live", run: ({ accountIds }) => signal(accountIds, "relations_changed") },
    ],
    "access.changed": [{ name: "streaming", mode: "live", run: ({ accountIds }) => signal(accountIds, "kill") }],
    "tokens.revoked": [{ name: "streaming", mode: "live", run: ({ tokenIds }) => publishTokenRevoked(ctx, tokenIds) }],
    "announcement.published": [
      { name: "streaming", mode: "live", run: ({ announcementId }) => publishNewAnnouncement(ctx, announcementId) },
    ],
    "announcement.deleted": [
      { name: "streaming", mode: "live", run: ({ announcementId }) => publishAnnouncementDeleted(ctx, announcementId) },
    ],
    "announcement.reacted": [
      {
        name: "streaming",
        mode: "live",
        run: ({ announcementId, name }) => publishAnnouncementReaction(ctx, announcementId, name),
      },
    ],
  };
}
