import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import type { AccountRow, NotificationRow, StatusRow } from "../db/schema.ts";
import { serializeAccounts, type Account } from "./account.ts";
import { serializeAccountWarnings, type AccountWarningJson } from "./account_warning.ts";
import { hiddenBy } from "./filter.ts";
import { serializeReports, type ReportJson } from "./report.ts";
import { serializeStatuses, type Status } from "./status.ts";

/** The Notification entity (v1). */
export interface NotificationJson {
  id: string;
  type: string;
  created_at: string;
  /** The group the grouped API shows it in; `ungrouped-<id>` when it is in none. */
  group_key: string;
  account: Account;
  status?: Status;
  /** The report of an `admin.report`. */
  report?: ReportJson;
  /** The strike of a `moderation_warning`. */
  moderation_warning?: AccountWarningJson;
  /** Present (and true) only for notifications the policy filtered. */
  filtered?: true;
}

/** The reports of the `admin.report` notifications among `rows`, serialized, by ID. */
export async function reportsOf(
  ctx: Ctx,
  rows: readonly Pick<NotificationRow, "type" | "activity_id">[],
): Promise<Map<string, ReportJson>> {
  const ids = [...new Set(rows.filter((r) => r.type === "admin.report" && r.activity_id).map((r) => r.activity_id!))];
  if (ids.length === 0) return new Map();
  const reports = await ctx.db.kysely.selectFrom("reports").selectAll().where("id", "in", ids).execute();
  return new Map((await serializeReports(ctx, reports)).map((r) => [r.id, r]));
}

/** The warnings of the `moderation_warning` notifications among `rows`, serialized, by ID. */
export async function moderationWarningsOf(
  ctx: Ctx,
  rows: readonly Pick<NotificationRow, "type" | "activity_id">[],
): Promise<Map<string, AccountWarningJson>> {
  const ids = [
    ...new Set(rows.filter((r) => r.type === "moderation_warning" && r.activity_id).map((r) => r.activity_id!)),
  ];
  if (ids.length === 0) return new Map();
  const warnings = await ctx.db.kysely.selectFrom("account_warnings").selectAll().where("id", "in", ids).execute();
  return new Map((await serializeAccountWarnings(ctx, warnings)).map((w) => [w.id, w]));
}

/** `group_key` as Mastodon renders it. */
export const groupKeyOf = (row: Pick<NotificationRow, "id" | "group_key">) => row.group_key ?? `ungrouped-${row.id}`;

/**
 * Serializes notifications for their receiver with a fixed number of queries: one for the
 * senders, and the batched status serializer for the statuses (`statuses` as `presentable` found
 * them), with the receiver's filters for notifications. A notification whose sender is gone, or
 * whose status a `hide` filter matches, is left out.
 */
export async function serializeNotifications(
  ctx: Ctx,
  rows: readonly NotificationRow[],
  statuses: ReadonlyMap<string, StatusRow>,
  viewer: AccountRow,
): Promise<NotificationJson[]> {
  if (rows.length === 0) return [];
  const senders = await accountsByIds(ctx.db.kysely, [...new Set(rows.map((r) => r.from_account_id))]);
  const accountJson = new Map((await serializeAccounts(ctx, senders)).map((a) => [a.id, a]));
  const shown = rows.flatMap((r) => (r.status_id && statuses.has(r.status_id) ? [statuses.get(r.status_id)!] : []));
  const unique = [...new Map(shown.map((s) => [s.id, s])).values()];
  const statusJson = new Map(
    (await serializeStatuses(ctx, unique, viewer, { filterContext: "notifications" })).map((s) => [s.id, s]),
  );
  const reports = await reportsOf(ctx, rows);
  const warnings = await moderationWarningsOf(ctx, rows);
  const out: NotificationJson[] = [];
  for (const row of rows) {
    const account = accountJson.get(row.from_account_id);
    if (!account) continue;
    const json: NotificationJson = {
      id: row.id,
      type: row.type,
      created_at: row.created_at,
      group_key: groupKeyOf(row),
      account,
    };
    const status = row.status_id ? statusJson.get(row.status_id) : undefined;
    // A `hide` filter for notifications takes the notification of its status away.
    if (status && hiddenBy(status.filtered)) continue;
    if (status) json.status = status;
    if (row.type === "admin.report") {
      const report = reports.get(row.activity_id ?? "");
      if (!report) continue;
      json.report = report;
    }
    if (row.type === "moderation_warning") {
      const warning = warnings.get(row.activity_id ?? "");
      if (!warning) continue;
      json.moderation_warning = warning;
    }
    if (row.filtered) json.filtered = true;
    out.push(json);
  }
  return out;
}
