import type { Ctx } from "../context.ts";
import { PURGE_JOB, purgeSuspendedDomain } from "../services/admin/domain_blocks.ts";
import { purgeUnallowedDomain, UNALLOWED_PURGE_JOB } from "../services/admin/domain_allows.ts";
import { ACCOUNT_DELETION_JOB, purgeDeletedLocalAccount } from "../services/accounts/deletion.ts";
import { ACCOUNT_PURGE_JOB, purgeDeletedAccount } from "../services/accounts/purge.ts";
import { DELETION_REQUESTS_JOB, processDataDeletions } from "../services/admin/deletion_requests.ts";
import { MOVE_FOLLOWERS_JOB, moveFollowers } from "../services/accounts/move.ts";
import {
  cacheRemoteMedia,
  cacheRemoteTimedMedia,
  FETCH_REMOTE_MEDIA_JOB,
  FETCH_REMOTE_TIMED_MEDIA_JOB,
  purgeDomainMedia,
  PURGE_DOMAIN_MEDIA_JOB,
} from "../services/media/remote.ts";
import {
  cacheRemoteProfileImage,
  FETCH_REMOTE_PROFILE_IMAGE_JOB,
  type ProfileImage,
} from "../services/media/remote_profiles.ts";
import { deliverPollUpdate, POLL_UPDATE_JOB } from "../federation/outbox/polls.ts";
import { DECODED_CREATE_JOB, storeDecodedCreate, type DecodedCreate } from "../federation/inbox/decoded.ts";
import { FEATURED_SYNC_JOB, syncFeatured } from "../federation/featured.ts";
import { buildArchive } from "../federation/archive.ts";
import { ARCHIVE_JOB, ARCHIVE_PRUNE_JOB, pruneArchives } from "../services/archives/archives.ts";
import { FETCH_REPLIES_JOB, fetchReplies } from "../federation/replies.ts";
import {
  afterBulkWrite,
  pruneExpiredRecords,
  refreshPlannerStatistics,
  STATISTICS_JOB,
} from "../services/maintenance.ts";
import { deliverMail, type MailMessage } from "../services/mail/mailer.ts";
import { closePoll } from "../services/polls/vote.ts";
import { removeUnattachedMedia } from "../services/media/upload.ts";
import { PROCESS_JOB, processTimedMedia } from "../services/media/timed.ts";
import { removeStaleFolders, TEMPORARY } from "../media/temporary.ts";
import { publishScheduledStatus } from "../services/statuses/schedule.ts";
import { fetchCardForStatus } from "../services/cards/fetch.ts";
import { removeExpiredMutes } from "../services/accounts/hiding.ts";
import { recoverOverdueWork, removeUnusedCards } from "../services/housekeeping.ts";
import { pruneTranslations } from "../services/translation/translate.ts";
import { refreshTrends } from "../services/trends/trends.ts";
import { deliverPush, type PushJob } from "../services/push/deliver.ts";
import { publishAnnouncement } from "../services/announcements/announcements.ts";
import { runNotificationJob, type NotificationJob } from "../services/notifications/triggers.ts";
import { IMPORT_JOB, IMPORT_PRUNE_JOB, pruneImports, runImport } from "../services/portability/run.ts";
import { mergeIntoHome, mergeIntoList, rebuildAllFeeds, rebuildHome, trimFeeds } from "../services/timelines/feeds.ts";

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Registers every job handler on `ctx.jobs`. Each capability adds its own here (scheduled
 * statuses, poll endings, media clean-up, deliveries) as it is built.
 */
export function registerJobHandlers(ctx: Ctx): void {
  // Fedify's messages (deliveries, received activities) are jobs like the others: its queue
  // listens by registering their handler here, and runs wherever the workers run.
  void ctx.federation.startQueue(undefined);
  ctx.jobs.register("maintenance.prune", async () => {
    const pruned = await pruneExpiredRecords(ctx.db);
    ctx.log.info(pruned, "pruned expired records");
    await afterBulkWrite(
      ctx,
      pruned.grants + pruned.activityDays + pruned.failedJobs + pruned.federationKv + pruned.signals,
    );
  });
  ctx.jobs.recurring("maintenance.prune", 6 * HOUR);
  ctx.jobs.register(ARCHIVE_JOB, (payload) => buildArchive(ctx, (payload as { archiveId: string }).archiveId));
  // Account archives are kept a week (their files too).
  ctx.jobs.register(ARCHIVE_PRUNE_JOB, async () => {
    const removed = await pruneArchives(ctx);
    if (removed > 0) ctx.log.info({ removed }, "removed old account archives");
  });
  ctx.jobs.recurring(ARCHIVE_PRUNE_JOB, 6 * HOUR);
  ctx.jobs.register(FETCH_REPLIES_JOB, async (payload) => {
    await fetchReplies(ctx, (payload as { statusId: string }).statusId);
  });
  ctx.jobs.register(DECODED_CREATE_JOB, (payload) => storeDecodedCreate(ctx, payload as DecodedCreate));
  ctx.jobs.register(FEATURED_SYNC_JOB, (payload) => syncFeatured(ctx, (payload as { accountId: string }).accountId));
  ctx.jobs.register(POLL_UPDATE_JOB, async (payload) => {
    await deliverPollUpdate(ctx, (payload as { statusId: string }).statusId);
  });
  ctx.jobs.register(
    FETCH_REMOTE_MEDIA_JOB,
    (payload, job) => cacheRemoteMedia(ctx, (payload as { mediaId: string }).mediaId, job),
    {
      concurrency: 2,
    },
  );
  // Other servers' video and audio are converted as uploads are: one at a time, however long it takes.
  ctx.jobs.register(
    FETCH_REMOTE_TIMED_MEDIA_JOB,
    (payload, job, _now, shutdown) =>
      cacheRemoteTimedMedia(ctx, (payload as { mediaId: string }).mediaId, job, shutdown),
    { concurrency: 1, longRunning: true },
  );
  ctx.jobs.register(
    FETCH_REMOTE_PROFILE_IMAGE_JOB,
    (payload, job) => {
      const { accountId, kind } = payload as { accountId: string; kind: ProfileImage };
      return cacheRemoteProfileImage(ctx, accountId, kind, job);
    },
    { concurrency: 2 },
  );
  ctx.jobs.register(PURGE_DOMAIN_MEDIA_JOB, async (payload) => {
    const removed = await purgeDomainMedia(ctx, (payload as { domain: string }).domain);
    if (removed > 0) ctx.log.info({ removed }, "dropped the kept media of a domain that rejects media");
  });
  ctx.jobs.register(MOVE_FOLLOWERS_JOB, async (payload) => {
    const { fromId, toId } = payload as { fromId: string; toId: string };
    const moved = await moveFollowers(ctx, fromId, toId);
    if (moved > 0) ctx.log.info({ moved, from: fromId, to: toId }, "followers moved to an account's new home");
  });
  ctx.jobs.register(ACCOUNT_PURGE_JOB, async (payload) => {
    const { accountId } = payload as { accountId: string };
    if (await purgeDeletedAccount(ctx, accountId)) await ctx.jobs.enqueue(ACCOUNT_PURGE_JOB, { accountId });
  });
  ctx.jobs.register(PURGE_JOB, async (payload) => {
    const { domain } = payload as { domain: string };
    if (await purgeSuspendedDomain(ctx, domain)) await ctx.jobs.enqueue(PURGE_JOB, { domain });
  });
  ctx.jobs.register(ACCOUNT_DELETION_JOB, async (payload) => {
    const { accountId } = payload as { accountId: string };
    if (await purgeDeletedLocalAccount(ctx, accountId)) await ctx.jobs.enqueue(ACCOUNT_DELETION_JOB, { accountId });
  });
  ctx.jobs.register(UNALLOWED_PURGE_JOB, async (payload) => {
    const { domain } = payload as { domain: string };
    if (await purgeUnallowedDomain(ctx, domain)) await ctx.jobs.enqueue(UNALLOWED_PURGE_JOB, { domain });
  });
  ctx.jobs.register(STATISTICS_JOB, async () => {
    const analyzed = await refreshPlannerStatistics(ctx.db);
    if (analyzed.length > 0) ctx.log.info({ tables: analyzed }, "refreshed planner statistics");
  });
  // One catalog query when nothing changed, so it can run often; bulk jobs also ask for it (afterBulkWrite).
  ctx.jobs.recurring(STATISTICS_JOB, 10 * MINUTE);
  ctx.jobs.register("mail.deliver", (payload) => deliverMail(ctx, payload as MailMessage));
  ctx.jobs.register("media.cleanup", async () => {
    const removed = await removeUnattachedMedia(ctx);
    if (removed > 0) ctx.log.info({ removed }, "removed media never attached to a post");
    // A conversion runs two hours at most; a request's upload lives as long as the request.
    const folders =
      (await removeStaleFolders(TEMPORARY.conversions, 3 * HOUR)) + (await removeStaleFolders(TEMPORARY.uploads, DAY));
    if (folders > 0) ctx.log.info({ folders }, "removed temporary folders left by a process that stopped");
  });
  ctx.jobs.recurring("media.cleanup", HOUR);
  // One conversion at a time per process: the other loop stays free for mail, posts and polls.
  ctx.jobs.register(
    PROCESS_JOB,
    (payload, job, _now, shutdown) => processTimedMedia(ctx, (payload as { id: string }).id, job, shutdown),
    { concurrency: 1, longRunning: true },
  );
  ctx.jobs.register("scheduled_statuses.publish", async (payload, _job, now) => {
    const outcome = await publishScheduledStatus(ctx, (payload as { id: string }).id, now.getTime());
    if (outcome === "dropped")
      ctx.log.info({ id: (payload as { id: string }).id }, "scheduled status dropped: it no longer passes the rules");
  });
  ctx.jobs.register("cards.fetch", async (payload) => {
    await fetchCardForStatus(ctx, (payload as { statusId: string }).statusId);
  });
  ctx.jobs.register("maintenance.recover", async (_payload, _job, now) => {
    const recovered = await recoverOverdueWork(ctx, now.getTime());
    if (recovered.published + recovered.dropped + recovered.pollsClosed + recovered.mediaFailed > 0)
      ctx.log.warn(recovered, "recovered overdue scheduled statuses, polls and media conversions");
  });
  ctx.jobs.recurring("maintenance.recover", 10 * MINUTE);
  ctx.jobs.register("cards.cleanup", async (_payload, _job, now) => {
    const removed = await removeUnusedCards(ctx, now.getTime());
    const translations = await pruneTranslations(ctx, now.getTime());
    if (removed + translations > 0)
      ctx.log.info({ cards: removed, translations }, "removed unused preview cards and old translations");
  });
  ctx.jobs.recurring("cards.cleanup", 6 * HOUR);
  ctx.jobs.register("mutes.expire", async (_payload, _job, now) => {
    const removed = await removeExpiredMutes(ctx, now);
    if (removed > 0) ctx.log.info({ removed }, "removed expired mutes");
  });
  ctx.jobs.recurring("mutes.expire", HOUR);
  // The reactions to domain events (src/subscribers.ts), one job name per event and subscriber.
  ctx.dispatcher.registerJobs();
  registerEarlierJobNames(ctx);
  ctx.jobs.register("announcements.publish", (payload) => publishAnnouncement(ctx, (payload as { id: string }).id));
  ctx.jobs.register("push.deliver", (payload) => deliverPush(ctx, payload as PushJob));
  ctx.jobs.register("feeds.rebuild", async (payload) => {
    const { accountId } = payload as { accountId?: string; all?: boolean };
    if (accountId) return afterBulkWrite(ctx, await rebuildHome(ctx, accountId));
    const enqueued = await rebuildAllFeeds(ctx);
    ctx.log.info({ accounts: enqueued }, "rebuilding every local account's home and list feeds");
  });
  ctx.jobs.register("feeds.trim", async (_payload, _job, now) => {
    const removed = await trimFeeds(ctx, now.getTime());
    if (removed > 0) ctx.log.info({ removed }, "removed feed entries past the retention");
    await afterBulkWrite(ctx, removed);
  });
  ctx.jobs.recurring("feeds.trim", HOUR);
  ctx.jobs.register("trends.refresh", async (_payload, _job, now) => {
    const counts = await refreshTrends(ctx, now.getTime());
    ctx.log.debug(counts, "trends refreshed");
    // Each ranking is deleted and written again.
    await afterBulkWrite(ctx, 2 * (counts.tags + counts.statuses + counts.links + counts.accounts));
  });
  ctx.jobs.recurring("trends.refresh", 15 * MINUTE);
  ctx.jobs.register("polls.close", async (payload, _job, now) => {
    await closePoll(ctx, (payload as { pollId: string }).pollId, now.getTime());
  });
  // CSV imports: a few at a time per process, each handing over to its successor after a while.
  ctx.jobs.register(
    IMPORT_JOB,
    (payload, _job, _now, shutdown) => runImport(ctx, (payload as { importId: string }).importId, shutdown),
    { concurrency: 2, longRunning: true },
  );
  ctx.jobs.register(IMPORT_PRUNE_JOB, async (_payload, _job, now) => {
    const removed = await pruneImports(ctx, now);
    if (removed > 0) ctx.log.info({ removed }, "removed finished imports past their retention");
  });
  ctx.jobs.recurring(IMPORT_PRUNE_JOB, DAY);
  // Suspended 30 days ago: the account's data goes (Mastodon's SuspendedUserCleanupScheduler).
  ctx.jobs.register(DELETION_REQUESTS_JOB, async (_payload, _job, now) => {
    const handled = await processDataDeletions(ctx, now);
    if (handled > 0) ctx.log.info({ accounts: handled }, "deleted the data of accounts suspended 30 days ago");
  });
  ctx.jobs.recurring(DELETION_REQUESTS_JOB, DAY);
}

/**
 * Jobs queued by versions before domain events (a server upgraded with work pending): each runs
 * what it stood for, mostly by emitting its event now. Remove once no release before 0.2 is upgraded.
 */
function registerEarlierJobNames(ctx: Ctx): void {
  ctx.jobs.register("feeds.fanout", (payload) =>
    ctx.dispatcher.emitCommitted({ type: "status.created", statusId: (payload as { statusId: string }).statusId }),
  );
  ctx.jobs.register("statuses.edited", (payload) => {
    const { statusId, addedMentionIds } = payload as { statusId: string; addedMentionIds: string[] };
    return ctx.dispatcher.emitCommitted({ type: "status.updated", statusId, addedMentionIds });
  });
  ctx.jobs.register("notifications.poll", (payload) =>
    ctx.dispatcher.emitCommitted({ type: "poll.ended", pollId: (payload as { pollId: string }).pollId }),
  );
  ctx.jobs.register("notifications.notify", (payload) => runNotificationJob(ctx, payload as NotificationJob));
  ctx.jobs.register("feeds.merge", async (payload) => {
    const { accountId, targetId } = payload as { accountId: string; targetId: string };
    await mergeIntoHome(ctx, accountId, targetId);
  });
  ctx.jobs.register("feeds.merge_list", async (payload) => {
    const { listId, accountId } = payload as { listId: string; accountId: string };
    await mergeIntoList(ctx, listId, accountId);
  });
}
