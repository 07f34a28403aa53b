import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { AccountRow, NotificationRow, StatusRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";
import { hiddenBy } from "./filter.ts";
import { moderationWarningsOf, reportsOf } from "./notification.ts";
import type { AccountWarningJson } from "./account_warning.ts";
import type { ReportJson } from "./report.ts";
import { serializeStatuses, type Status } from "./status.ts";

/** One group of a page, as the grouped notifications service finds it. */
export interface NotificationGroup {
  groupKey: string;
  type: string;
  /** The notification that stands for the group on this page. */
  representative: NotificationRow;
  count: number;
  mostRecentId: string;
  latestAt: string;
  /** Newest first. */
  sampleAccountIds: string[];
  pageMinId: string;
  pageMaxId: string;
}

/** NotificationGroup of the grouped API. */
export interface NotificationGroupJson {
  group_key: string;
  notifications_count: number;
  type: string;
  /** A string: Rookery's IDs exceed what a JSON number holds exactly (Mastodon's are small). */
  most_recent_notification_id: string;
  page_min_id?: string;
  page_max_id?: string;
  latest_page_notification_at: string;
  sample_account_ids: string[];
  status_id?: string;
  /** The report of an `admin.report` group. */
  report?: ReportJson;
  /** The strike of a `moderation_warning` group. */
  moderation_warning?: AccountWarningJson;
}

/** An account as `expand_accounts=partial_avatars` names it: enough to draw its avatar. */
export interface PartialAccount {
  id: string;
  acct: string;
  locked: boolean;
  bot: boolean;
  url: string;
  avatar: string;
  avatar_static: string;
  avatar_description: string;
}

/** GroupedNotificationsResults: the groups with their accounts and statuses, each once. */
export interface GroupedNotificationsJson {
  accounts: Account[];
  partial_accounts?: PartialAccount[];
  statuses: Status[];
  notification_groups: NotificationGroupJson[];
}

export interface GroupedOptions {
  /** `partial_avatars`: full accounts only for each group's latest sender, the others partial. */
  partialAvatars: boolean;
  /** Page bounds (`page_min_id`, `page_max_id`) are shown on list pages only. */
  pageBounds: boolean;
}

/**
 * Serializes groups with a fixed number of queries: one for the sample accounts, the batched
 * status serializer for the statuses (`statuses` as `presentable` found them).
 */
export async function serializeGroups(
  ctx: Ctx,
  groups: readonly NotificationGroup[],
  statuses: ReadonlyMap<string, StatusRow>,
  viewer: AccountRow,
  options: GroupedOptions,
): Promise<GroupedNotificationsJson> {
  const accountIds = [...new Set(groups.flatMap((g) => g.sampleAccountIds))];
  const rows = await accountsByIds(ctx.db.kysely, accountIds);
  const serialized = await serializeAccounts(ctx, rows);
  const shownStatuses = [
    ...new Map(
      groups.flatMap((g) => {
        const status = g.representative.status_id ? statuses.get(g.representative.status_id) : undefined;
        return status ? [[status.id, status] as const] : [];
      }),
    ).values(),
  ];
  const statusJson = await serializeStatuses(ctx, shownStatuses, viewer, { filterContext: "notifications" });
  // A `hide` filter for notifications takes the groups of its status away.
  const hidden = new Set(statusJson.filter((s) => hiddenBy(s.filtered)).map((s) => s.id));
  const reports = await reportsOf(
    ctx,
    groups.map((g) => g.representative),
  );
  const warnings = await moderationWarningsOf(
    ctx,
    groups.map((g) => g.representative),
  );
  const notificationGroups = groups.flatMap((g) => {
    if (g.representative.status_id && hidden.has(g.representative.status_id)) return [];
    const json: NotificationGroupJson = {
      group_key: g.groupKey,
      notifications_count: g.count,
      type: g.type,
      most_recent_notification_id: g.mostRecentId,
      latest_page_notification_at: g.latestAt,
      sample_account_ids: g.sampleAccountIds,
    };
    if (options.pageBounds) {
      json.page_min_id = g.pageMinId;
      json.page_max_id = g.pageMaxId;
    }
    const statusId = g.representative.status_id;
    if (statusId && statuses.has(statusId)) json.status_id = statusId;
    if (g.type === "admin.report") {
      const report = reports.get(g.representative.activity_id ?? "");
      if (!report) return [];
      json.report = report;
    }
    if (g.type === "moderation_warning") {
      const warning = warnings.get(g.representative.activity_id ?? "");
      if (!warning) return [];
      json.moderation_warning = warning;
    }
    return [json];
  });
  const result: GroupedNotificationsJson = {
    accounts: serialized,
    statuses: statusJson.filter((s) => !hidden.has(s.id)),
    notification_groups: notificationGroups,
  };
  if (options.partialAvatars) {
    const full = new Set(groups.map((g) => g.sampleAccountIds[0]));
    result.accounts = serialized.filter((a) => full.has(a.id));
    result.partial_accounts = serialized
      .filter((a) => !full.has(a.id))
      .map((a) => ({
        id: a.id,
        acct: a.acct,
        locked: a.locked,
        bot: a.bot,
        url: a.url,
        avatar: a.avatar,
        avatar_static: a.avatar_static,
        avatar_description: a.avatar_description,
      }));
  }
  return result;
}
