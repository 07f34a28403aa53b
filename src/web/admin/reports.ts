/**
 * The report queue in the admin area (Mastodon's Admin::ReportsController#index), for Manage
 * Reports: the unresolved reports by default, or the resolved ones; by the reported account's
 * origin or handle, by who filed them or whom they are about; a page at a time. A report's own
 * page and its actions are report.ts.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAdminReports, type AdminReportJson } from "../../entities/admin_report.ts";
import { toId, toStringParam, type ParamValue } from "../../api/params.ts";
import { lookupAccount } from "../../services/accounts/lookup.ts";
import { listReports, serverRules, type ReportFilter } from "../../services/admin/reports.ts";
import { html, type SafeHtml } from "../html.ts";
import { clipped, plural, timeOf } from "./display.ts";
import { field, renderAdminPage, selected, staffRoutes } from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";
import { accountCell, CATEGORY_LABELS, handleLink } from "./report_parts.ts";

const SECTION = "/admin/reports";
/** Reports on a page of the queue. */
const PAGE_SIZE = 20;

const NOTICES = {
  // After resolving from a report's page (as Mastodon, the moderator is back at the queue).
  resolved: "The report is resolved.",
};

/** An account filter: absent, an ID, or null when given but no ID (it then matches nothing). */
function accountFilter(value: ParamValue | undefined): string | null | undefined {
  const text = toStringParam(value)?.trim();
  if (!text) return undefined;
  return toId(text) ?? null;
}

interface QueueQuery {
  resolved: boolean;
  targetOrigin?: "local" | "remote";
  /** The reported account's handle, as typed. */
  target?: string;
  accountId?: string | null;
  targetAccountId?: string | null;
}

function queueQuery(req: FastifyRequest): QueueQuery {
  const input = req.input;
  const origin = toStringParam(input.target_origin);
  return {
    resolved: toStringParam(input.resolved) === "1",
    targetOrigin: origin === "local" || origin === "remote" ? origin : undefined,
    target: toStringParam(input.target)?.trim() || undefined,
    accountId: accountFilter(input.account_id),
    targetAccountId: accountFilter(input.target_account_id),
  };
}

/** The query string that keeps a queue's filters (for paging links). */
function queueParams(q: QueueQuery, req: FastifyRequest): Record<string, string | undefined> {
  return {
    resolved: q.resolved ? "1" : undefined,
    target_origin: q.targetOrigin,
    target: q.target,
    account_id: toStringParam(req.input.account_id),
    target_account_id: toStringParam(req.input.target_account_id),
    limit: field(req, "limit"),
  };
}

function queueFilterForm(q: QueueQuery, req: FastifyRequest): SafeHtml {
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${selected(value === current)}>${label}</option>`;
  const kept = {
    account_id: toStringParam(req.input.account_id),
    target_account_id: q.target ? undefined : toStringParam(req.input.target_account_id),
  };
  const hidden = Object.entries(kept)
    .filter(([, v]) => v)
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="get" action="${SECTION}" class="row filters">${hidden}
<div><label for="resolved">Show</label><select id="resolved" name="resolved">${option("", "Unresolved reports", q.resolved ? "1" : "")}${option("1", "Resolved reports", q.resolved ? "1" : "")}</select></div>
<div><label for="target_origin">Reported account from</label><select id="target_origin" name="target_origin">${option("", "Any server", q.targetOrigin ?? "")}${option("local", "This server", q.targetOrigin ?? "")}${option("remote", "Other servers", q.targetOrigin ?? "")}</select></div>
<div><label for="target">Reported account</label><input type="text" id="target" name="target" value="${q.target ?? ""}" placeholder="alice or rita@remote.example"></div>
<div><button type="submit">Filter</button></div></form>`;
}

function queueTable(reports: AdminReportJson[], resolved: boolean): SafeHtml {
  const rows = reports.map(
    (
      r,
    ) => html`<tr><td class="nowrap"><a href="${SECTION}/${r.id}">#${r.id}</a></td><td>${accountCell(r.target_account)}</td>
<td>${handleLink(r.account)}</td><td>${CATEGORY_LABELS[r.category]}</td><td>${plural(r.statuses.length, "post")}</td>
<td>${r.comment ? clipped(r.comment, 60) : html`<span class="muted">No comment</span>`}</td>
<td>${r.assigned_account ? handleLink(r.assigned_account) : html`<span class="muted">No one</span>`}</td>
${resolved ? html`<td>${handleLink(r.action_taken_by_account)}${r.action_taken_at ? html`<br>${timeOf(r.action_taken_at)}` : ""}</td>` : ""}<td>${timeOf(r.created_at)}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Report</th><th scope="col">Reported account</th><th scope="col">Reported by</th><th scope="col">Category</th><th scope="col">Posts</th><th scope="col">Comment</th><th scope="col">Assigned to</th>${resolved ? html`<th scope="col">Resolved by</th>` : ""}<th scope="col">Filed</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export default async function adminReportRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_reports");

  routes.get(SECTION, async (req, reply, staff) => {
    const q = queueQuery(req);
    const page = listPage(req, PAGE_SIZE);
    let alert: string | undefined;
    let targetAccountId = q.targetAccountId;
    if (q.target) {
      const found = await lookupAccount(ctx, q.target);
      targetAccountId = found?.id ?? null;
      if (!found) alert = `No account ${q.target} is known here.`;
    }
    const filter: ReportFilter = {
      resolved: q.resolved,
      accountId: q.accountId,
      targetAccountId,
      targetOrigin: q.targetOrigin,
    };
    const rows = await listReports(ctx, filter, page);
    const reports = await serializeAdminReports(ctx, rows, staff.moderator.account, await serverRules(ctx));
    const filtered = q.targetOrigin || q.target || q.accountId !== undefined || q.targetAccountId !== undefined;
    const empty = filtered
      ? "No report matches this filter."
      : q.resolved
        ? "No report has been resolved yet."
        : "No report is waiting. Well done!";
    const scope = [
      q.accountId !== undefined && "filed by one account",
      q.targetAccountId !== undefined && !q.target && "about one account",
    ].filter(Boolean);
    return renderAdminPage(ctx, reply, staff, {
      title: q.resolved ? "Resolved reports" : "Reports",
      section: SECTION,
      notices: NOTICES,
      alert,
      body: html`${queueFilterForm(q, req)}${scope.length ? html`<p>Showing only the reports ${scope.join(" and ")}. <a href="${SECTION}${q.resolved ? "?resolved=1" : ""}">Show all reports</a></p>` : ""}
${reports.length ? queueTable(reports, q.resolved) : html`<p>${empty}</p>`}${pageLinks(
        SECTION,
        queueParams(q, req),
        page,
        rows.map((r) => r.id),
      )}`,
    });
  });
}
