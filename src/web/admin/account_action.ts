/**
 * The form of a moderation action on an account (Mastodon's Admin::AccountActionsController):
 * warn, mark its media sensitive, freeze, limit or suspend, with a warning preset and text, the
 * e-mail to the user, and — when a report's page opened it with `?report_id=` — whether the
 * strike shows the reported posts. The action is the admin API's service (takeAccountAction), so
 * it is checked (the moderator's role must outrank the target's), audited and resolves reports
 * exactly as from the API; after one that answered a report, the browser goes back to the report.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, ReportRow } from "../../db/schema.ts";
import { Unprocessable } from "../../errors.ts";
import { toStringParam } from "../../api/params.ts";
import { takeAccountAction, type AccountActionType } from "../../services/admin/account_actions.ts";
import { hasPermission } from "../../services/accounts/roles.ts";
import { accountOf } from "../../services/admin/accounts.ts";
import { reportOf } from "../../services/admin/reports.ts";
import { listWarningPresets } from "../../services/admin/warning_presets.ts";
import { html } from "../html.ts";
import { accountPath, atHandle, clipped, plural } from "./display.ts";
import {
  checkbox,
  checked,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  selected,
  type Staff,
  staffRoutes,
} from "./frame.ts";
import { CATEGORY_LABELS } from "./report_parts.ts";

/** The actions in Mastodon's order, each in the form's words; `danger` marks those a report's page paints red. */
export const ACCOUNT_ACTIONS: ReadonlyArray<{
  type: AccountActionType;
  label: string;
  hint: string;
  danger?: boolean;
}> = [
  { type: "none", label: "Warn", hint: "Send a warning only; nothing else changes." },
  {
    type: "sensitive",
    label: "Mark media as sensitive",
    hint: "Their pictures and videos are shown behind a warning.",
  },
  { type: "disable", label: "Freeze", hint: "They can no longer sign in; the account and its posts stay visible." },
  {
    type: "silence",
    label: "Limit",
    hint: "Their posts leave the public timelines; their followers still see them.",
    danger: true,
  },
  {
    type: "suspend",
    label: "Suspend",
    hint: "The account and its posts disappear everywhere and they are signed out. Its data can be deleted afterwards.",
    danger: true,
  },
];

/** The actions open on `account`: the service refuses to freeze a remote one, which has no login. */
export const actionsFor = (account: { domain: string | null }) =>
  ACCOUNT_ACTIONS.filter((a) => account.domain === null || a.type !== "disable");

/** The form as shown, or as sent when it is shown again. */
interface ActionDraft {
  type?: string;
  reportId?: string;
  warningPresetId?: string;
  text?: string;
  sendEmail: boolean;
  /** Whether the strike shows the report's posts. */
  includeStatuses: boolean;
}

/** How many posts a report names (its `status_ids`, a JSON array). */
function reportedPostCount(report: ReportRow | undefined): number {
  try {
    const ids: unknown = JSON.parse(report?.status_ids ?? "[]");
    return Array.isArray(ids) ? ids.length : 0;
  } catch {
    return 0;
  }
}

export default async function adminAccountActionRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_users");

  async function actionForm(
    reply: FastifyReply,
    staff: Staff,
    account: AccountRow,
    draft: ActionDraft,
    options: { status?: number; alert?: string } = {},
  ) {
    const report = draft.reportId ? await reportOf(ctx, draft.reportId) : undefined;
    const reporter = report ? await accountOf(ctx.db.kysely, report.account_id) : undefined;
    const presets = await listWarningPresets(ctx);
    const local = account.domain === null;
    const handle = atHandle(account);
    const radios = actionsFor(account).map(
      (a) =>
        html`<div><input id="type_${a.type}" type="radio" name="type" value="${a.type}"${checked(draft.type === a.type)} required aria-describedby="type_${a.type}_hint"> <label for="type_${a.type}" class="inline">${a.label}</label> <span id="type_${a.type}_hint" class="muted">${a.hint}</span></div>`,
    );
    const statusCount = reportedPostCount(report);
    const about =
      report && reporter
        ? html`<p>This action answers <a href="/admin/reports/${report.id}">report #${report.id}</a> (${CATEGORY_LABELS[report.category]}) by ${atHandle(reporter)}${report.comment ? html`: “${report.comment}”` : ""}.</p>
<p class="muted">Warning only resolves this report; any other action resolves every open report about ${handle}.</p>`
        : "";
    const includeStatuses = statusCount
      ? html`<div><input id="include_statuses" type="checkbox" name="include_statuses" value="1"${checked(draft.includeStatuses)} aria-describedby="include_statuses_hint"> <label for="include_statuses" class="inline">Attach the ${statusCount === 1 ? "reported post" : plural(statusCount, "reported post")} to the strike</label> <span id="include_statuses_hint" class="muted">so that ${handle} can see what it is about.</span></div>`
      : "";
    const presetSelect = presets.length
      ? html`<label for="warning_preset_id">Warning preset</label><select id="warning_preset_id" name="warning_preset_id"><option value="">None</option>${presets.map((p) => html`<option value="${p.id}"${selected(p.id === draft.warningPresetId)}>${[p.title, clipped(p.text, 60)].filter(Boolean).join(" – ")}</option>`)}</select>`
      : hasPermission(staff.role, "manage_settings")
        ? html`<p class="muted">No warning presets yet: <a href="/admin/warning_presets">write presets</a> for the warnings you give often.</p>`
        : "";
    const textHint = [
      presets.length ? "added after the preset's text" : "",
      "kept with the strike",
      local ? "the user reads it in the e-mail" : "",
    ].filter(Boolean);
    const body = postForm(
      staff,
      `${accountPath(account.id)}/action`,
      html`<fieldset><legend>What to do</legend>${radios}</fieldset>
${presetSelect}
<label for="text">Warning text <span class="muted">(${textHint.join("; ")})</span></label><textarea id="text" name="text" rows="5">${draft.text ?? ""}</textarea>
${includeStatuses}
${local ? html`<div><input id="send_email_notification" type="checkbox" name="send_email_notification" value="1"${checked(draft.sendEmail)}> <label for="send_email_notification" class="inline">Send ${handle} an e-mail about it</label></div>` : ""}
<button type="submit">Take action</button>`,
      { fields: { report_id: report?.id } },
    );
    return renderAdminPage(ctx, reply, staff, {
      title: `Take action on ${handle}`,
      section: "/admin/accounts",
      status: options.status,
      alert: options.alert,
      body: html`<nav aria-label="Breadcrumb"><a href="${accountPath(account.id)}">Back to ${handle}</a></nav>${about}${body}`,
    });
  }

  routes.get("/admin/accounts/:id/action", async (req, reply, staff) => {
    const account = await accountOf(ctx.db.kysely, toStringParam(req.input.id));
    return actionForm(reply, staff, account, {
      type: field(req, "type"),
      reportId: field(req, "report_id"),
      sendEmail: true,
      includeStatuses: true,
    });
  });

  routes.post("/admin/accounts/:id/action", async (req, reply, staff) => {
    const id = toStringParam(req.input.id);
    const draft: ActionDraft = {
      type: field(req, "type"),
      reportId: field(req, "report_id"),
      warningPresetId: field(req, "warning_preset_id"),
      text: field(req, "text"),
      // An unticked box is not sent: absent means no (the API's defaults are yes).
      sendEmail: checkbox(req, "send_email_notification"),
      includeStatuses: checkbox(req, "include_statuses"),
    };
    let account: AccountRow;
    try {
      account = await takeAccountAction(ctx, staff.moderator, id, {
        type: draft.type,
        reportId: draft.reportId,
        warningPresetId: draft.warningPresetId,
        text: draft.text,
        sendEmailNotification: draft.sendEmail,
        includeStatuses: draft.includeStatuses,
      });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const target = await accountOf(ctx.db.kysely, id);
      const alert = draft.type ? error.message : "Choose what to do.";
      return actionForm(reply, staff, target, draft, { status: 422, alert });
    }
    if (draft.reportId) return redirectWithNotice(reply, `/admin/reports/${draft.reportId}`, "action_taken");
    return redirectWithNotice(reply, accountPath(account.id), "action_taken");
  });
}
