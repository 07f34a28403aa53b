import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeNotifications } from "../../entities/notification.ts";
import { serializePolicyV1 } from "../../entities/notification_policy.ts";
import { serializeNotificationRequests } from "../../entities/notification_request.ts";
import { NotFound } from "../../errors.ts";
import { policyOf, updatePolicy, type PolicySettings } from "../../services/notifications/policy.ts";
import {
  clearNotifications,
  dismissNotification,
  notificationOf,
  notificationPage,
  presentable,
  unreadCount,
  type NotificationFilter,
} from "../../services/notifications/read.ts";
import {
  acceptRequests,
  dismissRequests,
  filteredCounts,
  requestOf,
  requestPage,
} from "../../services/notifications/requests.ts";
import { isNotificationType, type NotificationType } from "../../services/notifications/types.ts";
import { findVisibleStatuses } from "../../services/visibility/find.ts";
import type { AccountRow, NotificationRequestRow } from "../../db/schema.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toBoolean, toId, toLimit, toStringArray, type ParamObject, type ParamValue } from "../params.ts";
import { updateRoute } from "../update_route.ts";

/** `types[]` / `exclude_types[]`: unknown names are ignored (only unknown `types[]` match nothing). */
function typesParam(value: ParamValue | undefined): NotificationType[] | undefined {
  if (value === undefined) return undefined;
  const given = toStringArray(value);
  if (given.length === 0) return undefined;
  return given.filter(isNotificationType);
}

/** The type, sender and filtered-ness parameters of the notification lists. */
export function notificationFilter(input: ParamObject, options: { sender: boolean }): NotificationFilter {
  return {
    types: typesParam(input.types),
    excludeTypes: typesParam(input.exclude_types) ?? [],
    // An account_id that is no ID matches no sender (rather than every one).
    fromAccountId: options.sender && input.account_id !== undefined ? (toId(input.account_id) ?? "0") : undefined,
    includeFiltered: toBoolean(input.include_filtered) ?? false,
  };
}

/** The parameters a notification page's Link header carries on. */
export const NOTIFICATION_LINK_PARAMS = ["types", "exclude_types", "account_id", "include_filtered"] as const;

const UNREAD_DEFAULT = 100;
const UNREAD_MAX = 1000;

/** v1 `filter_*` booleans: true filters, false accepts; absent ones stay as they are. */
function v1PolicyChanges(input: ParamObject): Partial<PolicySettings> {
  const changes: Partial<PolicySettings> = {};
  for (const criterion of ["not_following", "not_followers", "new_accounts", "private_mentions"] as const) {
    const raw = input[`filter_${criterion}`];
    if (raw === undefined) continue;
    // Cast as Rails casts booleans: any value but a false one filters; an empty one accepts.
    changes[`for_${criterion}`] = toBoolean(raw) ? "filter" : "accept";
  }
  return changes;
}

/** Renders requests: their senders' filtered counts and their last statuses the receiver may see. */
async function renderRequests(ctx: Ctx, viewer: AccountRow, rows: readonly NotificationRequestRow[]) {
  const counts = await filteredCounts(ctx, viewer.id, rows);
  const statuses = await findVisibleStatuses(
    ctx,
    rows.flatMap((r) => (r.last_status_id ? [r.last_status_id] : [])),
    viewer.id,
  );
  return serializeNotificationRequests(ctx, rows, counts, statuses, viewer);
}

/** `id[]` of the batch request actions (a single `id` is taken too). */
const idsParam = (input: ParamObject) => toStringArray(input.id).flatMap((id) => toId(id) ?? []);

/** The v1 notifications API: the list, one, dismiss, clear, unread count, policy and requests. */
export default async function notificationRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:notifications"], user: true });
  const write = app.auth({ scopes: ["write:notifications"], user: true });

  app.get("/api/v1/notifications", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const page = pageParams(req.input, 40, 80);
    const rows = await notificationPage(ctx, viewer.id, notificationFilter(req.input, { sender: true }), page);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (n) => n.id,
      keep: NOTIFICATION_LINK_PARAMS,
      nextWhen: "non-empty",
      limit: page.limit,
    });
    const shown = await presentable(ctx, viewer.id, rows);
    return serializeNotifications(ctx, shown.rows, shown.statuses, viewer);
  });

  app.get("/api/v1/notifications/unread_count", { preHandler: read }, async (req) => {
    const { user, account } = userOf(req);
    const filter = notificationFilter(req.input, { sender: true });
    const cap = toLimit(req.input.limit, UNREAD_DEFAULT, UNREAD_MAX);
    return { count: await unreadCount(ctx, account.id, user.id, filter, cap) };
  });

  app.post("/api/v1/notifications/clear", { preHandler: write }, async (req) => {
    await clearNotifications(ctx, userOf(req).account.id);
    return {};
  });

  app.get("/api/v1/notifications/policy", { preHandler: read }, async (req) =>
    serializePolicyV1(await policyOf(ctx, userOf(req).account.id)),
  );

  updateRoute(app, "/api/v1/notifications/policy", { preHandler: write }, async (req) =>
    serializePolicyV1(await updatePolicy(ctx, userOf(req).account.id, v1PolicyChanges(req.input))),
  );

  app.get("/api/v1/notifications/requests", { preHandler: read }, async (req, reply) => {
    const viewer = userOf(req).account;
    const page = pageParams(req.input, 40, 80);
    const rows = await requestPage(ctx, viewer.id, toBoolean(req.input.dismissed) ?? false, page);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      keep: ["dismissed"],
      limit: page.limit,
    });
    return renderRequests(ctx, viewer, rows);
  });

  // Accepting merges within the request, so no merge is ever still running when this is asked.
  app.get("/api/v1/notifications/requests/merged", { preHandler: read }, async () => ({ merged: true }));

  app.get<{ Params: { id: string } }>("/api/v1/notifications/requests/:id", { preHandler: read }, async (req) => {
    const viewer = userOf(req).account;
    const request = await requestOf(ctx, viewer.id, toId(req.params.id));
    return (await renderRequests(ctx, viewer, [request]))[0];
  });

  for (const [action, apply] of [
    ["accept", acceptRequests],
    ["dismiss", dismissRequests],
  ] as const) {
    app.post<{ Params: { id: string } }>(
      `/api/v1/notifications/requests/:id/${action}`,
      { preHandler: write },
      async (req) => {
        const viewer = userOf(req).account;
        const request = await requestOf(ctx, viewer.id, toId(req.params.id));
        await apply(ctx, viewer.id, [request.id]);
        return {};
      },
    );
    app.post(`/api/v1/notifications/requests/${action}`, { preHandler: write }, async (req) => {
      await apply(ctx, userOf(req).account.id, idsParam(req.input));
      return {};
    });
  }

  app.get<{ Params: { id: string } }>("/api/v1/notifications/:id", { preHandler: read }, async (req) => {
    const viewer = userOf(req).account;
    const row = await notificationOf(ctx, viewer.id, toId(req.params.id));
    const shown = await presentable(ctx, viewer.id, [row]);
    const [json] = await serializeNotifications(ctx, shown.rows, shown.statuses, viewer);
    if (!json) throw new NotFound();
    return json;
  });

  app.post<{ Params: { id: string } }>("/api/v1/notifications/:id/dismiss", { preHandler: write }, async (req) => {
    await dismissNotification(ctx, userOf(req).account.id, toId(req.params.id));
    return {};
  });
}
