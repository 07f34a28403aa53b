/**
 * Query plans of every list query, on a seeded database, on both engines: each must read its
 * index and stop after the page (no scan of a whole large table, no sort of everything that
 * matches). The SQL is the services' own, captured as they run, so a regression in a service's
 * query shape fails here. SQLite is checked before and after it has statistics; PostgreSQL, whose
 * plans need them, after the check Rookery runs after bulk writes and after a full ANALYZE.
 * PostgreSQL plans are taken with EXPLAIN ANALYZE (in a transaction rolled back), so a sort is
 * judged by the rows it really read.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CompiledQuery, sql, type LogEvent } from "kysely";
import type { Ctx } from "../../src/context.ts";
import { idForTime, newId } from "../../src/db/ids.ts";
import { JobQueue } from "../../src/jobs/queue.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { refreshStatistics } from "../../src/db/statistics.ts";
import { followCollection } from "../../src/services/accounts/collections.ts";
import { endorsedAccounts } from "../../src/services/accounts/endorsements.ts";
import { followRequestsFor } from "../../src/services/accounts/follow.ts";
import { blockedAccounts, blockedDomains, mutedAccounts } from "../../src/services/accounts/hiding.ts";
import { listMembers } from "../../src/services/lists/lists.ts";
import { followedTags } from "../../src/services/tags/tags.ts";
import { tagTimeline, type TagTimelineOptions } from "../../src/services/timelines/tag.ts";
import { favouritedBy, rebloggedBy } from "../../src/services/statuses/interacting_accounts.ts";
import { savedStatuses } from "../../src/services/statuses/saved.ts";
import { listScheduledStatuses } from "../../src/services/statuses/schedule.ts";
import { accountStatuses } from "../../src/services/timelines/account.ts";
import { publicTimeline } from "../../src/services/timelines/public.ts";
import { homeTimeline, listTimeline } from "../../src/services/timelines/home.ts";
import { conversationsOf } from "../../src/services/conversations/conversations.ts";
import { searchAccounts, searchHashtags, searchStatuses } from "../../src/services/search/search.ts";
import { refreshTrends, trendingLinks, trendingStatuses, trendingTags } from "../../src/services/trends/trends.ts";
import { suggestionsFor } from "../../src/services/accounts/suggestions.ts";
import { fanOutStatus, feedCutoffId, mergeIntoHome } from "../../src/services/timelines/feeds.ts";
import { bellRingers } from "../../src/db/queries/relationships.ts";
import { filtersOf } from "../../src/services/filters/filters.ts";
import { v1FiltersOf } from "../../src/services/filters/v1.ts";
import { groupedPage } from "../../src/services/notifications/groups.ts";
import { notificationPage, unreadCount } from "../../src/services/notifications/read.ts";
import { requestPage } from "../../src/services/notifications/requests.ts";
import { GROUPABLE_TYPES } from "../../src/services/notifications/types.ts";
import { failAbandonedMedia } from "../../src/services/media/timed.ts";
import { removeCachedRemoteMedia } from "../../src/services/media/remote.ts";
import { pruneRemoteProfileImages } from "../../src/services/media/remote_profiles.ts";
import { publicRepliesOf } from "../../src/services/statuses/remote.ts";
import {
  listAccounts,
  reportsOfAccount,
  roleOfAccount,
  strikesOf as adminStrikesOf,
  withUsers,
  type AccountFilter,
  type Moderator,
} from "../../src/services/admin/accounts.ts";
import { auditLog, auditLogActors, reportHistory } from "../../src/services/admin/audit.ts";
import { listCanonicalEmailBlocks } from "../../src/services/admin/canonical_email_blocks.ts";
import { processDataDeletions } from "../../src/services/admin/deletion_requests.ts";
import { listDomainAllows } from "../../src/services/admin/domain_allows.ts";
import { listDomainBlocks } from "../../src/services/admin/domain_blocks.ts";
import { listEmailDomainBlocks, withHistories } from "../../src/services/admin/email_domain_blocks.ts";
import { listIpBlocks } from "../../src/services/admin/ip_blocks.ts";
import { moderationNotesOf } from "../../src/services/admin/account_notes.ts";
import { reportNotes } from "../../src/services/admin/report_notes.ts";
import { listReports } from "../../src/services/admin/reports.ts";
import {
  listProviders,
  trendingLinksForReview,
  trendingStatusesForReview,
  trendingTagsForReview,
} from "../../src/services/admin/trends_review.ts";
import { listWarningPresets } from "../../src/services/admin/warning_presets.ts";
import { listAppeals } from "../../src/services/moderation/appeals.ts";
import { strikesOf } from "../../src/services/moderation/strikes.ts";
import { createTestServer, TEST_ENGINE, type TestServer } from "../kit.ts";
import { disableAutovacuum, reportTableCounters } from "./pg_statistics.ts";

const ACCOUNTS = 2500;
const STATUSES = 6000;
const PAGE = { limit: 20 };
/** PostgreSQL estimates its sorts' rows: sorting up to this many is not a scan of everything. */
const SMALL_SORT = 100;
/** Tables that grow with use: a plan may not read them whole. */
const LARGE = new Set([
  "statuses",
  "accounts",
  "follows",
  "favourites",
  "bookmarks",
  "mentions",
  "media_attachments",
  "blocks",
  "mutes",
  "follow_requests",
  "list_accounts",
  "scheduled_statuses",
  "statuses_tags",
  "tag_follows",
  "account_pins",
  "account_domain_blocks",
  "home_feed_entries",
  "list_feed_entries",
  "account_conversations",
  "notifications",
  "notification_requests",
  "custom_filters",
  "custom_filter_keywords",
  "users",
  "web_sessions",
  "reports",
  "report_notes",
  "account_moderation_notes",
  "account_warnings",
  "appeals",
  "admin_action_logs",
  "account_deletion_requests",
  "domain_blocks",
  "domain_allows",
  "email_domain_blocks",
  "email_domain_block_attempts",
  "ip_blocks",
  "canonical_email_blocks",
  "preview_card_providers",
]);

async function insertChunked(
  ctx: Ctx,
  table:
    | "tags"
    | "statuses_tags"
    | "tag_follows"
    | "accounts"
    | "statuses"
    | "mentions"
    | "media_attachments"
    | "favourites"
    | "bookmarks"
    | "follows"
    | "blocks"
    | "mutes"
    | "follow_requests"
    | "account_pins"
    | "account_domain_blocks"
    | "lists"
    | "list_accounts"
    | "home_feed_entries"
    | "list_feed_entries"
    | "account_conversations"
    | "scheduled_statuses"
    | "notifications"
    | "notification_requests"
    | "custom_filters"
    | "custom_filter_keywords"
    | Moderated,
  rows: Array<Record<string, unknown>>,
) {
  for (let i = 0; i < rows.length; i += 400) {
    // deno-lint-ignore no-explicit-any
    await ctx.db.kysely
      .insertInto(table)
      .values(rows.slice(i, i + 400) as any)
      .execute();
  }
}

/**
 * A social graph with one busy account (accounts[0]) whose lists are long — thousands of statuses,
 * bookmarks, favourites, followers, follows, blocks, mutes, requests, endorsements, domain blocks,
 * scheduled posts, list members — beside many small accounts, so that reading a page from the
 * whole of a user's rows (and sorting them) is visibly worse than one ordered index range.
 */
async function seed(
  ctx: Ctx,
): Promise<{ accounts: AccountRow[]; statusIds: string[]; listId: string; tagIds: string[] }> {
  const now = Date.now();
  const at = (i: number) => new Date(now - (STATUSES - i) * 60_000).toISOString();
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
    id: newId(now - 10_000_000 + i),
    username: `user${i}`,
    domain: i % 3 === 0 ? null : `remote${i % 7}.example`,
    uri: `https://x.example/users/${i}`,
    created_at: at(0),
    updated_at: at(0),
  }));
  await insertChunked(ctx, "accounts", accounts);
  const busy = accounts[0].id;
  const others = accounts.slice(1);
  const visibilities = ["public", "public", "public", "unlisted", "private", "direct"];
  const statusIds: string[] = [];
  const statuses = Array.from({ length: STATUSES }, (_, i) => {
    const id = newId(now - STATUSES * 1000 + i * 100);
    statusIds.push(id);
    const reply = i % 5 === 1 && i > 10;
    // Boosts of the first status, by many accounts (reblogged_by reads them).
    const boost = i % 11 === 3 && i > 10;
    const author = i % 3 === 0 ? busy : others[i % others.length].id;
    return {
      id,
      uri: `https://x.example/statuses/${i}`,
      account_id: boost ? others[(i * 7) % others.length].id : author,
      // A tenth of the posts share a word (the search plans look for it).
      text: i % 10 === 0 ? `status ${i} tenth` : `status ${i}`,
      content: `<p>status ${i}</p>`,
      visibility: boost ? "public" : visibilities[i % visibilities.length],
      in_reply_to_id: reply ? statusIds[i - 3] : null,
      in_reply_to_account_id: reply ? busy : null,
      reblog_of_id: boost ? statusIds[0] : null,
      local: author === busy,
      created_at: at(i),
      updated_at: at(i),
    };
  });
  // One boost per account and status: later duplicates are dropped, and only inserted IDs are used below.
  const boosters = new Set<string>();
  const inserted = statuses.filter(
    (r) => !r.reblog_of_id || (!boosters.has(r.account_id) && boosters.add(r.account_id)),
  );
  await insertChunked(ctx, "statuses", inserted);
  statusIds.splice(0, statusIds.length, ...inserted.map((r) => r.id));
  const stamp = at(STATUSES);
  const n = 2000;
  const range = <T>(count: number, make: (i: number) => T) => Array.from({ length: count }, (_, i) => make(i));
  /** The busy account and `count` distinct others, plus rows among small accounts. */
  const withBusy = (count: number, extra: Record<string, unknown> = {}) => [
    ...range(count, (i) => ({
      id: newId(),
      account_id: busy,
      target_account_id: others[i].id,
      created_at: stamp,
      ...extra,
    })),
    ...range(count, (i) => ({
      id: newId(),
      account_id: others[i].id,
      target_account_id: others[(i + 1) % others.length].id,
      created_at: stamp,
      ...extra,
    })),
  ];
  await insertChunked(ctx, "favourites", [
    ...range(n, (i) => ({ id: newId(), account_id: busy, status_id: statusIds[i], created_at: stamp })),
    ...range(n, (i) => ({ id: newId(), account_id: others[i].id, status_id: statusIds[7], created_at: stamp })),
  ]);
  await insertChunked(
    ctx,
    "bookmarks",
    range(n, (i) => ({
      id: newId(),
      account_id: i % 2 ? busy : others[i].id,
      status_id: statusIds[i],
      created_at: stamp,
    })),
  );
  await insertChunked(ctx, "follows", [
    ...withBusy(n, { updated_at: stamp }),
    ...range(n, (i) => ({
      id: newId(),
      account_id: others[i].id,
      target_account_id: busy,
      created_at: stamp,
      updated_at: stamp,
    })),
  ]);
  await insertChunked(ctx, "blocks", withBusy(n));
  await insertChunked(ctx, "mutes", withBusy(n, { updated_at: stamp }));
  await insertChunked(
    ctx,
    "follow_requests",
    range(n, (i) => ({
      id: newId(),
      account_id: others[i].id,
      target_account_id: busy,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(ctx, "account_pins", withBusy(n));
  await insertChunked(
    ctx,
    "account_domain_blocks",
    range(n, (i) => ({
      id: newId(),
      account_id: i % 2 ? busy : others[i].id,
      domain: `blocked${i}.example`,
      created_at: stamp,
    })),
  );
  // Mentions (of small accounts, in the busy account's posts) and media (on a tenth of the posts).
  await insertChunked(
    ctx,
    "mentions",
    range(n, (i) => ({
      id: newId(),
      status_id: statusIds[(i * 3) % statusIds.length],
      account_id: others[i % 500].id,
      created_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "media_attachments",
    range(n, (i) => ({
      id: newId(),
      account_id: others[i].id,
      status_id: i % 3 ? statusIds[(i * 3) % statusIds.length] : null,
      type: "image",
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  const tagIds = range(n, () => newId());
  await insertChunked(
    ctx,
    "tags",
    range(n, (i) => ({ id: tagIds[i], name: `tag${i}`, created_at: stamp, updated_at: stamp })),
  );
  await insertChunked(
    ctx,
    "tag_follows",
    range(n, (i) => ({ id: newId(), account_id: i % 2 ? busy : others[i].id, tag_id: tagIds[i], created_at: stamp })),
  );
  // Hashtags: tag0 on half of the statuses, tag1 on a few.
  await insertChunked(ctx, "statuses_tags", [
    ...statusIds.filter((_, i) => i % 2 === 0).map((id) => ({ status_id: id, tag_id: tagIds[0] })),
    ...statusIds.filter((_, i) => i % 500 === 1).map((id) => ({ status_id: id, tag_id: tagIds[1] })),
  ]);
  const listId = newId();
  await insertChunked(ctx, "lists", [
    { id: listId, account_id: busy, title: "big", created_at: stamp, updated_at: stamp },
  ]);
  await insertChunked(
    ctx,
    "list_accounts",
    range(n, (i) => ({ id: newId(), list_id: listId, account_id: others[i].id, created_at: stamp })),
  );
  // Stored feeds: the busy account's home holds half of all statuses, its list a third; small
  // accounts hold a few each.
  await insertChunked(ctx, "home_feed_entries", [
    ...statusIds.filter((_, i) => i % 2 === 0).map((id) => ({ account_id: busy, status_id: id, group_id: id })),
    ...range(n, (i) => ({ account_id: others[i].id, status_id: statusIds[i], group_id: statusIds[i] })),
  ]);
  await insertChunked(
    ctx,
    "list_feed_entries",
    statusIds.filter((_, i) => i % 3 === 0).map((id) => ({ list_id: listId, status_id: id, group_id: id })),
  );
  // Conversations: the busy account is in a thousand, others in one each.
  await insertChunked(
    ctx,
    "account_conversations",
    range(n, (i) => ({
      id: newId(),
      account_id: i % 2 ? busy : others[i].id,
      conversation_id: newId(),
      participant_account_ids: JSON.stringify([others[(i + 1) % others.length].id]),
      status_ids: JSON.stringify([statusIds[i]]),
      last_status_id: statusIds[i],
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  const params = JSON.stringify({ text: "later", media_ids: null });
  await insertChunked(
    ctx,
    "scheduled_statuses",
    range(n, (i) => ({
      id: newId(),
      account_id: i % 2 ? busy : others[i].id,
      scheduled_at: stamp,
      params,
      created_at: stamp,
    })),
  );
  // Notifications: the busy account has thousands — favourites folded into groups of twenty,
  // follows in hour groups, mentions alone, a tenth filtered — beside a few for each small account.
  const kinds = ["favourite", "follow", "mention", "reblog", "status"] as const;
  await insertChunked(ctx, "notifications", [
    ...range(3 * n, (i) => {
      const type = kinds[i % kinds.length]!;
      const filtered = i % 10 === 9;
      const group =
        filtered || type === "mention" || type === "status"
          ? null
          : type === "follow"
            ? `follow-${Math.floor(i / 40)}`
            : `${type}-${statusIds[Math.floor(i / 100)]}-1`;
      return {
        id: newId(now - 3 * n * 1000 + i * 100),
        account_id: busy,
        from_account_id: others[i % others.length].id,
        type,
        status_id: type === "follow" ? null : statusIds[Math.floor(i / 100)],
        activity_type: "Status",
        activity_id: newId(),
        group_key: group,
        filtered,
        created_at: stamp,
        updated_at: stamp,
      };
    }),
    ...range(n, (i) => ({
      id: newId(),
      account_id: others[i].id,
      from_account_id: busy,
      type: "mention",
      status_id: statusIds[i],
      activity_type: "Mention",
      activity_id: newId(),
      created_at: stamp,
      updated_at: stamp,
    })),
  ]);
  await insertChunked(
    ctx,
    "notification_requests",
    range(n, (i) => ({
      id: newId(),
      account_id: i % 2 ? busy : others[i].id,
      from_account_id: others[(i + 7) % others.length].id,
      last_status_id: statusIds[i],
      dismissed: i % 4 === 1,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  // Filters: a hundred for the busy account, one for each of many small ones, two keywords each.
  const filterIds = range(n, () => newId());
  await insertChunked(
    ctx,
    "custom_filters",
    range(n, (i) => ({
      id: filterIds[i],
      account_id: i % 20 === 0 ? busy : others[i].id,
      title: `filter ${i}`,
      context: JSON.stringify(["home"]),
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "custom_filter_keywords",
    range(2 * n, (i) => ({
      id: newId(),
      custom_filter_id: filterIds[i % n],
      keyword: `word${i}`,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  const rows = await ctx.db.kysely.selectFrom("accounts").selectAll().orderBy("id").execute();
  return { accounts: rows, statusIds, listId, tagIds };
}

/** The moderation tables `seedModeration` fills. */
type Moderated =
  | "user_roles"
  | "users"
  | "web_sessions"
  | "reports"
  | "report_notes"
  | "account_moderation_notes"
  | "account_warnings"
  | "account_warning_presets"
  | "appeals"
  | "admin_action_logs"
  | "account_deletion_requests"
  | "domain_blocks"
  | "domain_allows"
  | "email_domain_blocks"
  | "email_domain_block_attempts"
  | "ip_blocks"
  | "canonical_email_blocks"
  | "preview_card_providers";

/** What the moderation cases read by. */
interface ModerationData {
  /** The local account of the moderator who wrote most of the log (an Admin). */
  moderator: AccountRow;
  /** A remote account reported and warned a thousand times, with fifty notes. */
  spammer: AccountRow;
  /** A moderator with two hundred entries in the log. */
  quietModerator: AccountRow;
  /** An entry in the middle of the log. */
  middleLogId: string;
  /** A local account that filed a thousand reports. */
  reporter: AccountRow;
  /** A report with a hundred notes and thirty entries in the log. */
  reportId: string;
  /** A custom role held by three hundred users. */
  helperRoleId: string;
}

/**
 * What the admin pages list, in numbers a busy server's moderators see: users for the local
 * accounts (pending, disabled, staff and a custom role among them, each with a browser session)
 * and 6,000 more local accounts with plain users; suspended, silenced and sensitized accounts;
 * 3,000 reports (one in ten waiting, a thousand against one account and a thousand by one), 3,000
 * entries of the audit log, 3,000 strikes, 1,500 appeals (one in ten waiting), 2,000 notes of each
 * kind, and a thousand or more of each block list and of deletion requests.
 */
async function seedModeration(ctx: Ctx, accounts: AccountRow[]): Promise<ModerationData> {
  const now = Date.now();
  const stamp = new Date(now).toISOString();
  /** Decisions and requests a minute apart, over the last few days. */
  const at = (i: number) => new Date(now - (5000 - i) * 60_000).toISOString();
  const range = <T>(count: number, make: (i: number) => T) => Array.from({ length: count }, (_, i) => make(i));
  const local = accounts.filter((a) => a.domain === null);
  // The busy account and the viewer keep plain users: the other cases read as them.
  const plain = new Set([accounts[0].id, accounts[ACCOUNTS - 1].id]);
  // Members who only make the users table the size of a server's: older than every other account,
  // approved, no role, each with a session.
  const members = range(6000, (i) => ({
    id: idForTime(new Date(now - 20_000_000 + i)),
    username: `member${i}`,
    domain: null,
    uri: `https://rookery.test/users/member${i}`,
    created_at: stamp,
    updated_at: stamp,
  }));
  await insertChunked(ctx, "accounts", members);
  const helperRoleId = newId();
  await insertChunked(ctx, "user_roles", [
    { id: helperRoleId, name: "Helper", permissions: 0, position: 5, created_at: stamp, updated_at: stamp },
  ]);
  const userIds = local.map(() => newId());
  const ipOf = (i: number) => `10.0.${i >> 8}.${i & 255}`;
  await insertChunked(
    ctx,
    "users",
    local.map((account, i) => {
      const special = !plain.has(account.id);
      return {
        id: userIds[i],
        account_id: account.id,
        email: `${account.username}@mail${i % 5}.example`,
        // Staff: an owner, three admins, ten moderators; three hundred helpers.
        role_id: i === 1 ? "3" : i < 5 ? "2" : i < 15 ? "1" : i >= 400 && i < 700 ? helperRoleId : null,
        confirmed_at: stamp,
        approved: !(special && i % 6 === 5),
        disabled: special && i % 6 === 4,
        sign_up_ip: ipOf(i),
        created_at: stamp,
        updated_at: stamp,
      };
    }),
  );
  await insertChunked(
    ctx,
    "web_sessions",
    local.map((_, i) => ({
      id: newId(),
      session_digest: `digest-${i}`,
      user_id: userIds[i],
      // Each user signs in from the next user's sign-up address.
      ip: ipOf(i + 1),
      created_at: stamp,
      last_seen_at: stamp,
    })),
  );
  const memberUserIds = members.map(() => newId());
  await insertChunked(
    ctx,
    "users",
    members.map((member, i) => ({
      id: memberUserIds[i],
      account_id: member.id,
      email: `${member.username}@mail.example`,
      confirmed_at: stamp,
      sign_up_ip: `10.1.${i >> 8}.${i & 255}`,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "web_sessions",
    members.map((_, i) => ({
      id: newId(),
      session_digest: `member-${i}`,
      user_id: memberUserIds[i],
      ip: `10.1.${i >> 8}.${i & 255}`,
      created_at: stamp,
      last_seen_at: stamp,
    })),
  );
  // Marked accounts, away from the ones the other cases list.
  const mark = async (column: "suspended_at" | "silenced_at" | "sensitized_at", from: number, count: number) => {
    await ctx.db.kysely
      .updateTable("accounts")
      .set({ [column]: stamp })
      .where(
        "id",
        "in",
        accounts.slice(from, from + count).map((a) => a.id),
      )
      .execute();
  };
  // 135 suspended accounts, 90 of them remote.
  await mark("suspended_at", 2100, 135);
  await mark("silenced_at", 2250, 80);
  await mark("sensitized_at", 2330, 30);
  await insertChunked(
    ctx,
    "account_deletion_requests",
    // Requests of the last few days (none due yet), more of them than there are suspended accounts here.
    accounts.slice(300, 2300).map((a, i) => ({ account_id: a.id, created_at: at(i) })),
  );

  const moderator = local[2];
  const moderators = local.slice(1, 15);
  const spammer = accounts[7];
  const reporter = local[3];
  const someone = (i: number) => accounts[1 + ((i * 13) % (ACCOUNTS - 2))];
  const reportIds = range(3000, () => newId());
  await insertChunked(
    ctx,
    "reports",
    range(3000, (i) => ({
      id: reportIds[i],
      account_id: i % 3 === 1 ? reporter.id : someone(i).id,
      target_account_id: i % 3 === 0 ? spammer.id : someone(i + 1).id,
      comment: `report ${i}`,
      category: i % 4 === 0 ? "spam" : "other",
      action_taken_at: i % 10 === 9 ? null : at(i),
      action_taken_by_account_id: i % 10 === 9 ? null : moderator.id,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  const reportId = reportIds[2999];
  await insertChunked(
    ctx,
    "report_notes",
    range(2000, (i) => ({
      id: newId(),
      report_id: i < 100 ? reportId : reportIds[i],
      account_id: moderators[i % moderators.length].id,
      content: `note ${i}`,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "account_moderation_notes",
    range(2000, (i) => ({
      id: newId(),
      account_id: moderators[i % moderators.length].id,
      target_account_id: i < 50 ? spammer.id : someone(i).id,
      content: `note ${i}`,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  const warningIds = range(3000, () => newId());
  await insertChunked(
    ctx,
    "account_warnings",
    range(3000, (i) => ({
      id: warningIds[i],
      account_id: moderators[i % moderators.length].id,
      target_account_id: i % 3 === 0 ? spammer.id : someone(i).id,
      action: i % 2 ? "none" : "silence",
      text: `warning ${i}`,
      report_id: reportIds[i],
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "account_warning_presets",
    range(50, (i) => ({
      id: newId(),
      title: `preset ${i % 7}`,
      text: `text ${i}`,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  // An appeal of every other strike: one in ten waiting, the rest decided either way.
  await insertChunked(
    ctx,
    "appeals",
    range(1500, (i) => ({
      id: newId(),
      account_id: i % 3 === 0 ? spammer.id : someone(2 * i).id,
      account_warning_id: warningIds[2 * i],
      text: `appeal ${i}`,
      approved_at: i % 10 < 5 ? at(i) : null,
      approved_by_account_id: i % 10 < 5 ? moderator.id : null,
      rejected_at: i % 10 >= 5 && i % 10 < 9 ? at(i) : null,
      rejected_by_account_id: i % 10 >= 5 && i % 10 < 9 ? moderator.id : null,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  // The log: half of it by one moderator; the spammer and the last report among its targets.
  const targets = [
    () => ({ target_type: "Account", target_id: spammer.id, human_identifier: handle(spammer) }),
    (i: number) => ({ target_type: "Report", target_id: reportIds[i], human_identifier: reportIds[i] }),
    (i: number) => ({ target_type: "Account", target_id: someone(i).id, human_identifier: handle(someone(i)) }),
    (i: number) => ({ target_type: "DomainBlock", target_id: newId(), human_identifier: `blocked${i}.example` }),
    (i: number) => ({ target_type: "User", target_id: userIds[i % userIds.length], human_identifier: `user${i}` }),
  ];
  const logIds = range(3000, () => newId());
  await insertChunked(
    ctx,
    "admin_action_logs",
    range(3000, (i) => ({
      id: logIds[i],
      account_id: i % 2 ? moderator.id : moderators[i % moderators.length].id,
      action: i % 2 ? "resolve" : "suspend",
      ...(i % 100 === 0
        ? { target_type: "Report", target_id: reportId, human_identifier: reportId }
        : targets[i % targets.length](i)),
      created_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "domain_blocks",
    range(2000, (i) => ({
      id: newId(),
      domain: `blocked${i}.example`,
      severity: ["silence", "suspend", "noop"][i % 3],
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "domain_allows",
    range(1000, (i) => ({ id: newId(), domain: `allowed${i}.example`, created_at: stamp, updated_at: stamp })),
  );
  const emailBlockIds = range(1000, () => newId());
  await insertChunked(
    ctx,
    "email_domain_blocks",
    range(1000, (i) => ({ id: emailBlockIds[i], domain: `spam${i}.example`, created_at: stamp })),
  );
  await insertChunked(
    ctx,
    "email_domain_block_attempts",
    range(2000, (i) => ({ id: newId(), email_domain_block_id: emailBlockIds[i % 50], ip: ipOf(i), created_at: stamp })),
  );
  await insertChunked(
    ctx,
    "ip_blocks",
    range(1000, (i) => ({
      id: newId(),
      ip: `${ipOf(i)}/32`,
      severity: "sign_up_block",
      comment: "",
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "canonical_email_blocks",
    range(1000, (i) => ({
      id: newId(),
      canonical_email_hash: `hash${i}`,
      reference_account_id: null,
      created_at: stamp,
      updated_at: stamp,
    })),
  );
  await insertChunked(
    ctx,
    "preview_card_providers",
    range(1000, (i) => ({ id: newId(), domain: `news${i}.example`, created_at: stamp, updated_at: stamp })),
  );
  return {
    moderator,
    quietModerator: moderators[4],
    middleLogId: logIds[1500],
    spammer,
    reporter,
    reportId,
    helperRoleId,
  };
}

/** `account`'s handle as the log names it. */
const handle = (account: AccountRow) =>
  account.domain === null ? account.username : `${account.username}@${account.domain}`;

function tagOptions(ids: string[]): TagTimelineOptions {
  const tag = (id: string) => ({
    id,
    name: id,
    display_name: null,
    last_status_at: null,
    created_at: "",
    updated_at: "",
  });
  return { anyOf: ids.map(tag), allOf: [], noneOf: [], local: false, remote: false, onlyMedia: false };
}

interface PlanProblem {
  query: string;
  problem: string;
}

/** What a case allows beyond the rule, or checks beyond its paged queries. */
interface PlanOptions {
  /**
   * The table a listing of all of it (newest first, unfiltered or kept by most rows) walks in
   * primary-key order, stopping after the page. SQLite names that walk as it names a full scan
   * (`SCAN t`); it is accepted for this table, as the outermost loop, with no sort after it.
   * PostgreSQL's plan is checked as any other (its walk is an Index Scan Backward).
   */
  walks?: string;
  /** Check every SELECT the work ran (lookups of a page's rows by key), not only ordered ones. */
  every?: boolean;
  /**
   * What it sorts is few by nature (the staff, the users seen at one address, the presets admins
   * wrote): it finds those rows through an index and may sort them. SQLite does not say how many
   * rows it sorts, so its sorts are let pass here; PostgreSQL's are held to SMALL_SORT, as anywhere.
   */
  sortsFew?: boolean;
  /**
   * The index the work must read: an index search of another can still read a large part of a
   * table (the local accounts, a popular account's followers) where this one reads a few rows.
   */
  uses?: string;
}

/** What is wrong with a SQLite plan: a whole large table scanned, or a sort of all matches. */
function sqliteProblems(details: string[], options: PlanOptions = {}): string[] {
  const problems: string[] = [];
  if (options.uses && !details.some((detail) => detail.includes(` INDEX ${options.uses} `)))
    problems.push(`does not read ${options.uses}: ${details.join("; ")}`);
  for (const [i, detail] of details.entries()) {
    const scan = /^SCAN (\w+)(?: AS \w+)?$/.exec(detail);
    const walk = i === 0 && scan?.[1] === options.walks;
    if (scan && LARGE.has(scan[1]) && !walk) problems.push(`full scan: ${detail}`);
    if (/USE TEMP B-TREE FOR (ORDER BY|RIGHT PART OF ORDER BY)/.test(detail) && !options.sortsFew)
      problems.push(`sort: ${detail}`);
  }
  return problems;
}

/**
 * What is wrong with a PostgreSQL plan (EXPLAIN (ANALYZE, FORMAT JSON)): a sequential scan of a
 * large table, or a sort of many rows — estimated, or really read (estimates without statistics
 * can call a sort of a whole feed one of a single row).
 */
function postgresProblems(plan: unknown, options: PlanOptions = {}): string[] {
  const problems: string[] = [];
  const indexes = new Set<string>();
  const walk = (node: Record<string, unknown>) => {
    const type = String(node["Node Type"]);
    if (node["Index Name"]) indexes.add(String(node["Index Name"]));
    const relation = node["Relation Name"] ? String(node["Relation Name"]) : "";
    if (type === "Seq Scan" && LARGE.has(relation)) problems.push(`sequential scan of ${relation}`);
    // A sort of a handful of rows (a rare hashtag's few posts) is the right plan; a sort of many is not.
    if (type === "Sort" || type === "Incremental Sort") {
      const input = (node.Plans as Array<Record<string, unknown>> | undefined)?.[0];
      const read = input ? Number(input["Actual Rows"] ?? 0) * Number(input["Actual Loops"] ?? 1) : 0;
      const rows = Math.max(Number(node["Plan Rows"] ?? 0), read);
      if (rows > SMALL_SORT) problems.push(`sort of ~${rows} rows by ${JSON.stringify(node["Sort Key"])}`);
    }
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((plan as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
  if (options.uses && !indexes.has(options.uses))
    problems.push(`does not read ${options.uses} (reads ${[...indexes].join(", ") || "no index"})`);
  return problems;
}

describe(`query plans of the list queries (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let data: Awaited<ReturnType<typeof seed>>;
  let moderation: ModerationData;
  let staff: Moderator;
  let captured: CompiledQuery[] | undefined;

  before(async () => {
    server = await createTestServer({
      onQuery: (event: LogEvent) => {
        if (captured && event.level === "query") captured.push(event.query);
      },
    });
    // No statistics but the migrations' (of empty tables) until a test asks for them.
    if (server.ctx.db.engine === "postgres") await disableAutovacuum(server.ctx.db);
    data = await seed(server.ctx);
    moderation = await seedModeration(server.ctx, data.accounts);
    staff = {
      account: moderation.moderator,
      role: (await roleOfAccount(server.ctx.db.kysely, moderation.moderator))!,
    };
    await refreshTrends(server.ctx);
  });
  after(() => server.close());

  /** The plan of `query` as it ran, in a transaction rolled back afterwards (the fan-out's plans insert). */
  async function analyzedPlan(query: CompiledQuery): Promise<unknown> {
    const rollback = new Error("rollback");
    let json: unknown;
    await server.ctx.db.kysely
      .transaction()
      .execute(async (tx) => {
        const plan = await tx.executeQuery<{ "QUERY PLAN": unknown }>(
          CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.sql}`, [...query.parameters]),
        );
        json = plan.rows[0]["QUERY PLAN"];
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    return json;
  }

  /** Runs `work` and returns the problems of the plans of the ordered (paged) queries it ran. */
  async function problemsOf(work: () => Promise<unknown>, options: PlanOptions = {}): Promise<PlanProblem[]> {
    captured = [];
    await work();
    // Paged reads (WITH … SELECT among them), ordered claims (UPDATE … WHERE id = (SELECT … ORDER BY …)),
    // and the fan-out's INSERT … SELECT statements.
    const queries = captured.filter(
      (q) =>
        (/\border by\b/i.test(q.sql) && /^\s*(with|select|update)\b/i.test(q.sql)) ||
        /^\s*insert into \w+ \([^)]*\)\s+select/i.test(q.sql) ||
        (options.every && /^\s*(with|select)\b/i.test(q.sql)),
    );
    captured = undefined;
    assert.ok(queries.length > 0, "the service ran no paged query");
    const problems: PlanProblem[] = [];
    for (const query of queries) {
      if (server.ctx.db.engine === "sqlite") {
        const plan = await server.ctx.db.kysely.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]),
        );
        for (const problem of sqliteProblems(
          plan.rows.map((r) => r.detail),
          options,
        ))
          problems.push({ query: query.sql, problem });
      } else {
        const json = await analyzedPlan(query);
        for (const problem of postgresProblems(typeof json === "string" ? JSON.parse(json) : json, options))
          problems.push({ query: query.sql, problem });
      }
    }
    return problems;
  }

  /** 3,000 waiting deliveries (each with its own ordering key, as Fedify's) and 500 failed jobs, made once; claims one. */
  let jobsSeeded = false;
  async function claimAmongMany(): Promise<unknown> {
    const name = "plans.delivery";
    if (!jobsSeeded) {
      jobsSeeded = true;
      const now = Date.now();
      const rows = Array.from({ length: 3500 }, (_, n) => ({
        id: newId(),
        name,
        payload: JSON.stringify({ n }),
        run_at: new Date(now - 60_000 + n).toISOString(),
        max_attempts: 3,
        ordering_key: `post-${n % 50}\ninbox-${n}`,
        failed_at: n < 500 ? new Date(now).toISOString() : null,
        created_at: new Date(now).toISOString(),
      }));
      for (let i = 0; i < rows.length; i += 500)
        await server.ctx.db.kysely
          .insertInto("jobs")
          .values(rows.slice(i, i + 500))
          .execute();
    }
    const queue = new JobQueue(server.ctx.db, server.ctx.log);
    queue.register(name, async () => {});
    const job = await queue.claim();
    assert.ok(job, "a job was claimed");
    return job;
  }

  /**
   * Kept copies of other servers' media (1,200 remote attachments) and pictures (1,200 remote
   * accounts' avatars and headers), fetched a day ago: `media remove` reads them in pages of 500.
   * Applied again before each use, since the media case without --dry-run drops them.
   */
  async function keepRemoteCopies(): Promise<void> {
    const day = new Date(Date.now() - 24 * 3600_000).toISOString();
    const accounts = data.accounts.filter((a) => a.domain !== null).slice(0, 1200);
    const media = await server.ctx.db.kysely.selectFrom("media_attachments").select("id").limit(1200).execute();
    for (let i = 0; i < 1200; i += 400) {
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ avatar_file: "accounts/avatars/1/original/a.png", header_file: "accounts/headers/1/original/h.png" })
        .set({ fetched_at: day, updated_at: day })
        .where(
          "id",
          "in",
          accounts.slice(i, i + 400).map((a) => a.id),
        )
        .execute();
      await server.ctx.db.kysely
        .updateTable("media_attachments")
        .set({
          remote_url: "https://x.example/m.png",
          file: "media_attachments/files/1/original/m.png",
          created_at: day,
        })
        .where(
          "id",
          "in",
          media.slice(i, i + 400).map((m) => m.id),
        )
        .execute();
    }
  }

  // A small account the busy one neither blocks nor mutes.
  const viewer = () => data.accounts[ACCOUNTS - 1];
  const busy = () => data.accounts[0];
  const cases: Array<[string, () => Promise<unknown>, PlanOptions?]> = [
    ["kept copies of remote media to drop", () => removeCachedRemoteMedia(server.ctx, new Date())],
    [
      "kept copies of remote media to drop, page after page",
      async () => {
        await keepRemoteCopies();
        await removeCachedRemoteMedia(server.ctx, new Date(), { dryRun: true });
      },
    ],
    [
      "remote profiles' kept pictures to drop (not followed ones)",
      async () => {
        await keepRemoteCopies();
        await pruneRemoteProfileImages(server.ctx, new Date(), { dryRun: true });
      },
    ],
    [
      "remote profiles' kept headers to drop, followed ones too",
      async () => {
        await keepRemoteCopies();
        await pruneRemoteProfileImages(server.ctx, new Date(), {
          headersOnly: true,
          includeFollows: true,
          dryRun: true,
        });
      },
    ],
    ["a post's replies collection", () => publicRepliesOf(server.ctx, data.statusIds[0]!, { limit: 20 })],
    [
      "public timeline",
      () => publicTimeline(server.ctx, undefined, { local: false, remote: false, onlyMedia: false }, PAGE),
    ],
    [
      "public timeline, signed in",
      () => publicTimeline(server.ctx, viewer().id, { local: false, remote: false, onlyMedia: false }, PAGE),
    ],
    [
      "public timeline, local",
      () => publicTimeline(server.ctx, viewer().id, { local: true, remote: false, onlyMedia: false }, PAGE),
    ],
    [
      "public timeline, remote, only media",
      () => publicTimeline(server.ctx, undefined, { local: false, remote: true, onlyMedia: true }, PAGE),
    ],
    [
      "public timeline, older page",
      () =>
        publicTimeline(
          server.ctx,
          viewer().id,
          { local: false, remote: false, onlyMedia: false },
          { ...PAGE, maxId: data.statusIds[3000] },
        ),
    ],
    [
      "public timeline, newer page (min_id)",
      () =>
        publicTimeline(
          server.ctx,
          undefined,
          { local: false, remote: false, onlyMedia: false },
          { ...PAGE, minId: data.statusIds[3000] },
        ),
    ],
    [
      "account statuses, anonymous",
      () =>
        accountStatuses(
          server.ctx,
          busy(),
          undefined,
          { onlyMedia: false, excludeReplies: false, excludeReblogs: false, pinned: false },
          PAGE,
        ),
    ],
    [
      "account statuses, as a viewer, no replies",
      () =>
        accountStatuses(
          server.ctx,
          busy(),
          viewer().id,
          { onlyMedia: false, excludeReplies: true, excludeReblogs: true, pinned: false },
          PAGE,
        ),
    ],
    ["bookmarks", () => savedStatuses(server.ctx, busy(), "bookmarks", PAGE)],
    ["favourites", () => savedStatuses(server.ctx, busy(), "favourites", PAGE)],
    ["scheduled statuses", () => listScheduledStatuses(server.ctx, busy(), PAGE)],
    ["favourited_by", () => favouritedBy(server.ctx, data.statusIds[7], PAGE, viewer().id)],
    ["reblogged_by", () => rebloggedBy(server.ctx, data.statusIds[0], PAGE, undefined)],
    ["followers", () => followCollection(server.ctx, busy(), "followers", viewer().id, PAGE)],
    ["following", () => followCollection(server.ctx, busy(), "following", viewer().id, PAGE)],
    ["follow requests", () => followRequestsFor(server.ctx, busy(), PAGE)],
    ["blocks", () => blockedAccounts(server.ctx, busy(), PAGE)],
    ["mutes", () => mutedAccounts(server.ctx, busy(), PAGE)],
    ["domain blocks", () => blockedDomains(server.ctx, busy(), PAGE)],
    ["endorsements", () => endorsedAccounts(server.ctx, busy(), PAGE)],
    ["followed tags", () => followedTags(server.ctx, busy(), PAGE)],
    ["tag timeline, popular tag", () => tagTimeline(server.ctx, viewer().id, tagOptions([data.tagIds[0]]), PAGE)],
    [
      "tag timeline, rare tag and any[]",
      () => tagTimeline(server.ctx, undefined, tagOptions([data.tagIds[1], data.tagIds[0]]), PAGE),
    ],
    ["home timeline", () => homeTimeline(server.ctx, busy().id, PAGE)],
    ["home timeline, a small account", () => homeTimeline(server.ctx, viewer().id, PAGE)],
    [
      "home timeline, past the stored feed",
      () => homeTimeline(server.ctx, busy().id, { ...PAGE, maxId: feedCutoffId() }),
    ],
    [
      "home timeline, newer page across the retention (min_id)",
      () => homeTimeline(server.ctx, busy().id, { ...PAGE, minId: data.statusIds[0] }),
    ],
    ["list timeline", async () => listTimeline(server.ctx, await bigList(), PAGE)],
    ["conversations", () => conversationsOf(server.ctx, busy(), PAGE)],
    ["trending tags", () => trendingTags(server.ctx, { limit: 10, offset: 0 })],
    ["trending statuses", () => trendingStatuses(server.ctx, viewer(), { limit: 20, offset: 0 })],
    ["trending links", () => trendingLinks(server.ctx, { limit: 10, offset: 0 })],
    [
      "list timeline, past the stored feed",
      async () => listTimeline(server.ctx, await bigList(), { ...PAGE, maxId: feedCutoffId() }),
    ],
    ["fan-out of a post by an account with thousands of followers", () => fanOutStatus(server.ctx, busyPost())],
    [
      "bell ringers of an account with thousands of followers",
      () => bellRingers(server.ctx.db.kysely, busy().id),
      { every: true, uses: "index_follows_ringing" },
    ],
    [
      "whether anyone rings for an account with thousands of followers",
      () => bellRingers(server.ctx.db.kysely, busy().id, 1),
      { every: true, uses: "index_follows_ringing" },
    ],
    [
      "fan-out of a boost",
      async () => {
        const boost = await server.ctx.db.kysely
          .selectFrom("statuses")
          .select("id")
          .where("reblog_of_id", "is not", null)
          .executeTakeFirstOrThrow();
        await fanOutStatus(server.ctx, boost.id);
      },
    ],
    ["merge of a followed account's posts", () => mergeIntoHome(server.ctx, viewer().id, busy().id)],
    [
      "list members",
      async () =>
        listMembers(
          server.ctx,
          await server.ctx.db.kysely
            .selectFrom("lists")
            .selectAll()
            .where("id", "=", data.listId)
            .executeTakeFirstOrThrow(),
          PAGE,
        ),
    ],
  ];

  const allNotifications = { excludeTypes: [], includeFiltered: false };
  cases.push(
    ["notifications", () => notificationPage(server.ctx, busy().id, allNotifications, PAGE)],
    [
      "notifications, older page of mentions and follows",
      () =>
        notificationPage(
          server.ctx,
          busy().id,
          { types: ["mention", "follow"], excludeTypes: [], includeFiltered: false },
          { ...PAGE, maxId: data.statusIds[3000] },
        ),
    ],
    [
      "notifications of one sender",
      () =>
        notificationPage(
          server.ctx,
          busy().id,
          { excludeTypes: [], includeFiltered: false, fromAccountId: data.accounts[5].id },
          PAGE,
        ),
    ],
    ["notifications, unread count", () => unreadCount(server.ctx, busy().id, "0", allNotifications, 100)],
    [
      "grouped notifications",
      () => groupedPage(server.ctx, busy().id, { ...allNotifications, groupedTypes: GROUPABLE_TYPES }, PAGE),
    ],
    [
      "grouped notifications, newer page (min_id)",
      () =>
        groupedPage(
          server.ctx,
          busy().id,
          { ...allNotifications, groupedTypes: GROUPABLE_TYPES },
          { ...PAGE, minId: data.statusIds[0] },
        ),
    ],
    ["filters", () => filtersOf(server.ctx, busy().id)],
    ["filters, v1 (one per keyword)", () => v1FiltersOf(server.ctx, busy().id)],
    ["notification requests", () => requestPage(server.ctx, busy().id, false, PAGE)],
    ["notification requests, dismissed", () => requestPage(server.ctx, busy().id, true, PAGE)],
  );

  // Moderation: the admin pages' and API's lists.
  const accounts = (filter: AccountFilter, options?: PlanOptions): [string, () => Promise<unknown>, PlanOptions?] => [
    `admin accounts ${JSON.stringify(filter)}`,
    () => listAccounts(server.ctx, filter, PAGE),
    options,
  ];
  const report = () =>
    server.ctx.db.kysely
      .selectFrom("reports")
      .selectAll()
      .where("id", "=", moderation.reportId)
      .executeTakeFirstOrThrow();
  cases.push(
    // v2's default: every account, newest first.
    accounts({}, { walks: "accounts" }),
    // v1's default: local and active.
    accounts({ origin: "local", status: "active" }),
    accounts({ origin: "remote" }, { walks: "accounts" }),
    accounts({ origin: "remote", status: "active" }, { walks: "accounts" }),
    accounts({ origin: "local", status: "pending" }),
    accounts({ status: "pending" }),
    accounts({ origin: "local", status: "disabled" }),
    accounts({ status: "disabled" }),
    accounts({ status: "silenced" }),
    accounts({ origin: "remote", status: "suspended" }),
    accounts({ status: "suspended" }),
    accounts({ status: "sensitized" }),
    // Staff: the holders of a few roles, fourteen here.
    accounts({ origin: "local", status: "active", staff: true }, { sortsFew: true }),
    accounts({ staff: true }, { sortsFew: true }),
    accounts({ roleIds: ["1", "2"] }, { sortsFew: true }),
    accounts({ roleIds: ["1"] }),
    // The users who signed up from an address or signed in from it (two here).
    accounts({ ip: "10.0.1.44" }, { sortsFew: true }),
    accounts({ byDomain: "remote3.example" }),
    // Left out: the username and e-mail (prefix) and display name (substring) filters. They match
    // text against every account until a page is found, a scan by design (as Mastodon's), and this
    // file has no way to accept a scan.
    [
      "admin accounts, a page of them with their users and roles",
      async () => withUsers(server.ctx, await listAccounts(server.ctx, { origin: "local" }, { limit: 40 })),
      { every: true },
    ],
    [
      "admin accounts, the role filter of a role many hold",
      () => listAccounts(server.ctx, { roleIds: [moderation.helperRoleId] }, PAGE),
    ],
    ["an account's reports, against it and by it", () => reportsOfAccount(server.ctx, moderation.spammer.id)],
    ["an account's reports, by a reporter", () => reportsOfAccount(server.ctx, moderation.reporter.id)],
    ["an account's strikes (admin page)", () => adminStrikesOf(server.ctx, moderation.spammer.id)],
    ["reports, unresolved", () => listReports(server.ctx, {}, PAGE)],
    // Most reports are resolved: the newest of them are the newest reports.
    ["reports, resolved", () => listReports(server.ctx, { resolved: true }, PAGE), { walks: "reports" }],
    ["reports, unresolved, older page", () => listReports(server.ctx, {}, { ...PAGE, maxId: moderation.reportId })],
    ["reports, by one reporter", () => listReports(server.ctx, { accountId: moderation.reporter.id }, PAGE)],
    [
      "reports, resolved, against one account",
      () => listReports(server.ctx, { resolved: true, targetAccountId: moderation.spammer.id }, PAGE),
    ],
    ["reports, about local accounts", () => listReports(server.ctx, { targetOrigin: "local" }, PAGE)],
    [
      "reports, resolved, about remote accounts",
      () => listReports(server.ctx, { resolved: true, targetOrigin: "remote" }, PAGE),
      { walks: "reports" },
    ],
    ["a report's history", async () => reportHistory(server.ctx, await report())],
    ["a report's notes", async () => reportNotes(server.ctx, staff, await report())],
    ["audit log", () => auditLog(server.ctx, {}, PAGE), { walks: "admin_action_logs" }],
    [
      "audit log, older page",
      () => auditLog(server.ctx, {}, { ...PAGE, maxId: moderation.middleLogId }),
      { walks: "admin_action_logs" },
    ],
    ["audit log, by the busiest moderator", () => auditLog(server.ctx, { actorId: moderation.moderator.id }, PAGE)],
    [
      "audit log, by a moderator with two hundred entries",
      () => auditLog(server.ctx, { actorId: moderation.quietModerator.id }, PAGE),
    ],
    [
      "audit log, of one record",
      () => auditLog(server.ctx, { targetType: "Report", targetId: moderation.reportId }, PAGE),
    ],
    [
      "audit log, of one account",
      () => auditLog(server.ctx, { targetType: "Account", targetId: moderation.spammer.id }, PAGE),
    ],
    ["audit log, by the target's name", () => auditLog(server.ctx, { targetName: handle(moderation.spammer) }, PAGE)],
    ["audit log, by a rare target's name", () => auditLog(server.ctx, { targetName: "BLOCKED1003.example" }, PAGE)],
    ["audit log, the moderators in it", () => auditLogActors(server.ctx), { sortsFew: true, every: true }],
    ["an account's moderation notes", () => moderationNotesOf(server.ctx, moderation.spammer.id, staff)],
    ["warning presets", () => listWarningPresets(server.ctx), { sortsFew: true }],
    ["a user's strikes", () => strikesOf(server.ctx, moderation.spammer.id, PAGE), { every: true }],
    ["appeals, waiting", () => listAppeals(server.ctx, "pending", PAGE), { every: true }],
    // Most appeals are decided, either way.
    ["appeals, approved", () => listAppeals(server.ctx, "approved", PAGE), { walks: "appeals" }],
    ["appeals, rejected", () => listAppeals(server.ctx, "rejected", PAGE), { walks: "appeals" }],
    ["appeals, all", () => listAppeals(server.ctx, "all", PAGE), { walks: "appeals" }],
    ["domain blocks (admin)", () => listDomainBlocks(server.ctx, PAGE), { walks: "domain_blocks" }],
    ["domain allows", () => listDomainAllows(server.ctx, PAGE), { walks: "domain_allows" }],
    [
      "e-mail domain blocks, with their histories",
      async () => withHistories(server.ctx, await listEmailDomainBlocks(server.ctx, PAGE)),
      { walks: "email_domain_blocks", every: true },
    ],
    ["IP blocks", () => listIpBlocks(server.ctx, PAGE), { walks: "ip_blocks" }],
    ["canonical e-mail blocks", () => listCanonicalEmailBlocks(server.ctx, PAGE), { walks: "canonical_email_blocks" }],
    ["link publishers to review", () => listProviders(server.ctx, PAGE), { walks: "preview_card_providers" }],
    ["trending tags to review", () => trendingTagsForReview(server.ctx, { limit: 10, offset: 0 })],
    ["trending statuses to review", () => trendingStatusesForReview(server.ctx, viewer(), { limit: 20, offset: 0 })],
    ["trending links to review", () => trendingLinksForReview(server.ctx, { limit: 10, offset: 0 })],
    ["suspended accounts' data due for deletion", () => processDataDeletions(server.ctx)],
  );

  const bigList = () =>
    server.ctx.db.kysely.selectFrom("lists").selectAll().where("id", "=", data.listId).executeTakeFirstOrThrow();
  const busyPost = () => data.statusIds[3];

  /**
   * Searches rank what the full-text index found (relevance, followers, name length): they may sort
   * their matches, but must find them through the index, never by reading a whole table.
   */
  const searches: Array<[string, () => Promise<unknown>]> = [
    [
      "search accounts",
      () => searchAccounts(server.ctx, viewer(), "user1", { following: false, limit: 20, offset: 0 }),
    ],
    [
      "search accounts, following",
      () => searchAccounts(server.ctx, busy(), "user", { following: true, limit: 20, offset: 0 }),
    ],
    ["search hashtags", () => searchHashtags(server.ctx, "tag1", { limit: 20, offset: 0 })],
    [
      "search hashtags, exclude_unreviewed",
      () => searchHashtags(server.ctx, "tag1", { excludeUnreviewed: true, limit: 20, offset: 0 }),
    ],
    // Friends of friends count the follows of the user's 50 latest follows, most shared first.
    ["follow suggestions", () => suggestionsFor(server.ctx, busy(), { limit: 40, offset: 0 })],
    // A word in a tenth of all posts. PostgreSQL reads these 6,000 rows whole (cheaper at this size);
    // on 300,000 it reads the primary key backwards and stops after the page (checked by hand with
    // EXPLAIN), so only SQLite's plan, which does not depend on the size, is asserted here.
    ...(TEST_ENGINE === "sqlite"
      ? [
          ["search statuses", () => searchStatuses(server.ctx, busy(), "tenth", { limit: 20, offset: 0 })] as [
            string,
            () => Promise<unknown>,
          ],
        ]
      : []),
    ["media conversions whose job is gone", () => failAbandonedMedia(server.ctx)],
    ["a job claim, with thousands of jobs waiting (deliveries with ordering keys)", () => claimAmongMany()],
    ["search statuses, rare word", () => searchStatuses(server.ctx, viewer(), "4242", { limit: 20, offset: 0 })],
  ];

  const check = (label: string) => {
    for (const [name, work, options] of cases) {
      test(`${name}${label}`, async () => {
        assert.deepEqual(await problemsOf(work, options), []);
      });
    }
    for (const [name, work] of searches) {
      test(`${name}${label}`, async () => {
        const problems = (await problemsOf(work)).filter((p) => !p.problem.startsWith("sort"));
        assert.deepEqual(problems, []);
      });
    }
  };

  if (TEST_ENGINE === "sqlite") {
    describe("without statistics", () => check(" (no statistics)"));
  } else {
    // The tables were analyzed empty by the migrations, then seeded, the way a fresh server's feeds
    // fill before autovacuum (off here) runs. PostgreSQL then takes an owner's rows for a handful
    // and sorts them all, in nearly every list, whatever the query's shape; what must put that
    // right is the statistics check that follows bulk writes (refreshStatistics, run by
    // `maintenance.statistics`), without a full ANALYZE.
    describe("without statistics", () => {
      test("the checks catch a sort estimates hide: the busy home feed, read whole", async () => {
        const problems = await problemsOf(() => homeTimeline(server.ctx, busy().id, PAGE));
        assert.ok(
          problems.some((p) => p.problem.startsWith("sort of")),
          "PostgreSQL now reads the feed in order without statistics: see db/statistics.ts",
        );
      });
      describe("after the statistics check", () => {
        before(async () => {
          await reportTableCounters(server.ctx.db);
          const analyzed = await refreshStatistics(server.ctx.db);
          assert.ok(analyzed.includes("home_feed_entries"), analyzed.join(", "));
        });
        check(" (after the statistics check)");
      });
    });
  }
  describe("with statistics", () => {
    before(async () => {
      if (server.ctx.db.engine === "sqlite") await sql`ANALYZE`.execute(server.ctx.db.kysely);
      else await refreshStatistics(server.ctx.db, { afterMigration: true });
    });
    check("");
  });

  test("the checks catch a bad plan: a sort of all of an unindexed column", async () => {
    const problems = await problemsOf(() =>
      server.ctx.db.kysely.selectFrom("statuses").select("id").orderBy("text").limit(5).execute(),
    );
    assert.ok(problems.length > 0);
  });
});
