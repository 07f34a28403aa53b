import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../../context.ts";
import type { ReportRow } from "../../../db/schema.ts";
import { serializeAdminReports } from "../../../entities/admin_report.ts";
import {
  assignReportToSelf,
  listReports,
  reopenReport,
  reportOf,
  resolveReport,
  serverRules,
  unassignReport,
  updateReport,
} from "../../../services/admin/reports.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toBoolean, toId, toStringArray, toStringParam, type ParamValue } from "../../params.ts";
import { updateRoute } from "../../update_route.ts";

/** Filter parameters carried into the Link header, as Mastodon's PAGINATION_PARAMS. */
const FILTERS = ["resolved", "account_id", "target_account_id"] as const;

/** An account filter: absent, an ID, or `null` when given but no ID (it then matches nothing). */
function accountFilter(value: ParamValue | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  return toId(value) ?? null;
}

/**
 * The admin API for reports (Mastodon's Api::V1::Admin::ReportsController): the Manage Reports
 * permission and the reports scopes. Each answer is the report as Admin::Report.
 */
export default async function adminReportRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:reports"], permission: "manage_reports" });
  const write = app.auth({ scopes: ["admin:write:reports"], permission: "manage_reports" });

  const render = async (req: FastifyRequest, rows: ReportRow[]) =>
    serializeAdminReports(ctx, rows, userOf(req).account, await serverRules(ctx));
  const renderOne = async (req: FastifyRequest, row: ReportRow) => (await render(req, [row]))[0];

  app.get("/api/v1/admin/reports", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listReports(
      ctx,
      {
        resolved: toBoolean(req.input.resolved) === true,
        accountId: accountFilter(req.input.account_id),
        targetAccountId: accountFilter(req.input.target_account_id),
      },
      page,
    );
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit, keep: FILTERS });
    return render(req, rows);
  });
  app.get("/api/v1/admin/reports/:id", { preHandler: read }, async (req) =>
    renderOne(req, await reportOf(ctx, toId(req.input.id))),
  );
  // A Rails resource: PUT and PATCH alike.
  updateRoute(app, "/api/v1/admin/reports/:id", { preHandler: write }, async (req) => {
    const moderator = userOf(req).account;
    const report = await updateReport(ctx, moderator, toId(req.input.id), {
      category: toStringParam(req.input.category),
      ruleIds: req.input.rule_ids === undefined ? undefined : toStringArray(req.input.rule_ids),
    });
    return renderOne(req, report);
  });

  const actions = {
    assign_to_self: assignReportToSelf,
    unassign: unassignReport,
    resolve: resolveReport,
    reopen: reopenReport,
  } as const;
  for (const [name, act] of Object.entries(actions)) {
    app.post(`/api/v1/admin/reports/:id/${name}`, { preHandler: write }, async (req) =>
      renderOne(req, await act(ctx, userOf(req).account, toId(req.input.id))),
    );
  }
}
