import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminAccount, serializeAdminAccounts } from "../../../entities/admin_account.ts";
import { takeAccountAction } from "../../../services/admin/account_actions.ts";
import {
  accountOf,
  approveAccount,
  deleteAccountData,
  enableAccount,
  listAccounts,
  rejectAccount,
  unsensitiveAccount,
  unsilenceAccount,
  unsuspendAccount,
  type AccountFilter,
  type Moderator,
} from "../../../services/admin/accounts.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toBoolean, toStringArray, toStringParam, type ParamObject } from "../../params.ts";

/** Mastodon's page size of admin accounts (and twice it at most). */
const LIMIT = 100;

const V1_FILTERS = [
  "local",
  "remote",
  "by_domain",
  "active",
  "pending",
  "disabled",
  "sensitized",
  "silenced",
  "suspended",
  "username",
  "display_name",
  "email",
  "ip",
  "staff",
];
const V2_FILTERS = [
  "origin",
  "status",
  "permissions",
  "username",
  "by_domain",
  "display_name",
  "email",
  "ip",
  "invited_by",
  "role_ids",
];

/** The filters every version shares. */
function searchFilters(input: ParamObject): AccountFilter {
  return {
    username: toStringParam(input.username),
    byDomain: toStringParam(input.by_domain),
    displayName: toStringParam(input.display_name),
    email: toStringParam(input.email),
    ip: toStringParam(input.ip),
  };
}

/** v1: local and active unless told otherwise; each status flag narrows to that status (the last one given wins). */
function v1Filter(input: ParamObject): AccountFilter {
  let status = "active";
  for (const flag of ["active", "pending", "disabled", "silenced", "suspended", "sensitized"])
    if (toBoolean(input[flag])) status = flag;
  return {
    ...searchFilters(input),
    origin: toBoolean(input.remote) ? "remote" : "local",
    status,
    staff: toBoolean(input.staff) === true,
  };
}

function v2Filter(input: ParamObject): AccountFilter {
  return {
    ...searchFilters(input),
    origin: toStringParam(input.origin) || undefined,
    status: toStringParam(input.status) || undefined,
    roleIds: toStringArray(input.role_ids),
    staff: toStringParam(input.permissions) === "staff",
    invitedBy: toStringParam(input.invited_by),
  };
}

const moderatorOf = (req: FastifyRequest): Moderator => userOf(req);

/**
 * The admin API for accounts (Mastodon's Api::V1::Admin::AccountsController, AccountActionsController
 * and Api::V2::Admin::AccountsController): Manage Users and the `admin:read:accounts` /
 * `admin:write:accounts` scopes; DELETE needs Delete User Data instead.
 */
export default async function adminAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:accounts"], permission: "manage_users" });
  const write = app.auth({ scopes: ["admin:write:accounts"], permission: "manage_users" });
  const erase = app.auth({ scopes: ["admin:write:accounts"], permission: "delete_user_data" });

  const list =
    (filterOf: (input: ParamObject) => AccountFilter, keep: string[]) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      const page = pageParams(req.input, LIMIT, LIMIT * 2);
      const rows = await listAccounts(ctx, filterOf(req.input), page);
      setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit, keep });
      return serializeAdminAccounts(ctx, rows);
    };
  app.get("/api/v1/admin/accounts", { preHandler: read }, list(v1Filter, V1_FILTERS));
  app.get("/api/v2/admin/accounts", { preHandler: read }, list(v2Filter, V2_FILTERS));

  app.get("/api/v1/admin/accounts/:id", { preHandler: read }, async (req) =>
    serializeAdminAccount(ctx, await accountOf(ctx.db.kysely, toStringParam(req.input.id))),
  );

  app.post("/api/v1/admin/accounts/:id/action", { preHandler: write }, async (req) => {
    // Mastodon's API permits no `include_statuses` (only its web form sends it): a report's posts are always attached.
    await takeAccountAction(ctx, moderatorOf(req), toStringParam(req.input.id), {
      type: toStringParam(req.input.type),
      reportId: toStringParam(req.input.report_id),
      warningPresetId: toStringParam(req.input.warning_preset_id),
      text: toStringParam(req.input.text),
      sendEmailNotification: toBoolean(req.input.send_email_notification),
    });
    return {};
  });

  const change = (
    path: string,
    act: (
      ctx: Ctx,
      moderator: Moderator,
      id: string | undefined,
    ) => Promise<Parameters<typeof serializeAdminAccount>[1]>,
  ) =>
    app.post(`/api/v1/admin/accounts/:id/${path}`, { preHandler: write }, async (req) =>
      serializeAdminAccount(ctx, await act(ctx, moderatorOf(req), toStringParam(req.input.id))),
    );
  change("approve", approveAccount);
  change("enable", enableAccount);
  change("unsilence", unsilenceAccount);
  change("unsuspend", unsuspendAccount);
  change("unsensitive", unsensitiveAccount);

  app.post("/api/v1/admin/accounts/:id/reject", { preHandler: write }, async (req) => {
    await rejectAccount(ctx, moderatorOf(req), toStringParam(req.input.id));
    return {};
  });
  app.delete("/api/v1/admin/accounts/:id", { preHandler: erase }, async (req) => {
    await deleteAccountData(ctx, moderatorOf(req), toStringParam(req.input.id));
    return {};
  });
}
