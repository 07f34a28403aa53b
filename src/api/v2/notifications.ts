import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeGroups, type NotificationGroup } from "../../entities/notification_group.ts";
import { serializePolicyV2 } from "../../entities/notification_policy.ts";
import { BadRequest, ValidationFailed } from "../../errors.ts";
import { findVisibleAccounts } from "../../services/accounts/lookup.ts";
import {
  dismissGroup,
  groupedPage,
  groupOf,
  groupSenderIds,
  unreadGroupCount,
  type GroupedFilter,
} from "../../services/notifications/groups.ts";
import {
  POLICY_ACTIONS,
  POLICY_CRITERIA,
  policyOf,
  updatePolicy,
  type PolicySettings,
} from "../../services/notifications/policy.ts";
import { clearNotifications, notificationsReadUpTo, presentable } from "../../services/notifications/read.ts";
import { GROUPABLE_TYPES } from "../../services/notifications/types.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toLimit, toStringArray, toStringParam, type ParamObject } from "../params.ts";
import { notificationFilter } from "../v1/notifications.ts";
import { updateRoute } from "../update_route.ts";

/** The filter of the grouped list: v1's, without `account_id` (ignored, as Mastodon does), plus `grouped_types[]`. */
function groupedFilter(input: ParamObject): GroupedFilter {
  const grouped = input.grouped_types === undefined ? undefined : toStringArray(input.grouped_types);
  return {
    ...notificationFilter(input, { sender: false }),
    groupedTypes: grouped ? GROUPABLE_TYPES.filter((t) => grouped.includes(t)) : GROUPABLE_TYPES,
  };
}

/** `expand_accounts`: `full` (default) or `partial_avatars`; anything else is refused. */
function partialAvatars(input: ParamObject): boolean {
  const value = toStringParam(input.expand_accounts);
  if (value === undefined || value === "full") return false;
  if (value === "partial_avatars") return true;
  throw new BadRequest("Invalid value for expand_accounts");
}

/** v2 policy values: `accept`, `filter` or `drop` per criterion; absent ones stay as they are. */
function v2PolicyChanges(input: ParamObject): Partial<PolicySettings> {
  const changes: Partial<PolicySettings> = {};
  const invalid: string[] = [];
  for (const criterion of POLICY_CRITERIA) {
    const raw = input[`for_${criterion}`];
    if (raw === undefined) continue;
    const value = POLICY_ACTIONS.find((a) => a === toStringParam(raw));
    if (value) changes[`for_${criterion}`] = value;
    else invalid.push(`For ${criterion.replace("_", " ")} is not included in the list`);
  }
  if (invalid.length > 0) throw new ValidationFailed(invalid);
  return changes;
}

const UNREAD_DEFAULT = 100;
const UNREAD_MAX = 1000;

/** The grouped notifications API (Mastodon 4.3, `api_versions.mastodon` 2). */
export default async function groupedNotificationRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:notifications"], user: true });
  const write = app.auth({ scopes: ["write:notifications"], user: true });

  /** Groups whose status the viewer may still see, serialized with their accounts and statuses. */
  async function render(viewer: AccountRow, groups: NotificationGroup[], partial: boolean, pageBounds: boolean) {
    const shown = await presentable(
      ctx,
      viewer.id,
      groups.map((g) => g.representative),
    );
    const kept = new Set(shown.rows.map((r) => r.id));
    return serializeGroups(
      ctx,
      groups.filter((g) => kept.has(g.representative.id)),
      shown.statuses,
      viewer,
      { partialAvatars: partial, pageBounds },
    );
  }

  app.get("/api/v2/notifications", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const partial = partialAvatars(req.input);
    const page = pageParams(req.input, 40, 80);
    const groups = await groupedPage(ctx, viewer.id, groupedFilter(req.input), page);
    setLinkHeader(ctx.config, req, reply, {
      items: groups,
      cursor: (g) => g.representative.id,
      keep: ["types", "exclude_types", "grouped_types", "include_filtered", "expand_accounts"],
      nextWhen: "non-empty",
      limit: page.limit,
    });
    return render(viewer, groups, partial, true);
  });

  app.get("/api/v2/notifications/unread_count", { preHandler: read }, async (req) => {
    const { user, account } = userOf(req);
    const cap = toLimit(req.input.limit, UNREAD_DEFAULT, UNREAD_MAX);
    const readUpTo = await notificationsReadUpTo(ctx, user.id);
    return { count: await unreadGroupCount(ctx, account.id, readUpTo, groupedFilter(req.input), cap) };
  });

  app.post("/api/v2/notifications/clear", { preHandler: write }, async (req) => {
    await clearNotifications(ctx, userOf(req).account.id);
    return {};
  });

  app.get("/api/v2/notifications/policy", { preHandler: read }, async (req) =>
    serializePolicyV2(await policyOf(ctx, userOf(req).account.id)),
  );

  updateRoute(app, "/api/v2/notifications/policy", { preHandler: write }, async (req) =>
    serializePolicyV2(await updatePolicy(ctx, userOf(req).account.id, v2PolicyChanges(req.input))),
  );

  app.get<{ Params: { group_key: string } }>("/api/v2/notifications/:group_key", { preHandler: read }, async (req) => {
    const viewer = userOf(req).account;
    const group = await groupOf(ctx, viewer.id, req.params.group_key);
    return render(viewer, [group], false, false);
  });

  app.get<{ Params: { group_key: string } }>(
    "/api/v2/notifications/:group_key/accounts",
    { preHandler: read },
    async (req) => {
      const ids = await groupSenderIds(ctx, userOf(req).account.id, req.params.group_key);
      return serializeAccounts(ctx, await findVisibleAccounts(ctx, ids));
    },
  );

  app.post<{ Params: { group_key: string } }>(
    "/api/v2/notifications/:group_key/dismiss",
    { preHandler: write },
    async (req) => {
      await dismissGroup(ctx, userOf(req).account.id, req.params.group_key);
      return {};
    },
  );
}
