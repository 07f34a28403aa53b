/**
 * A report's page in the admin area (Mastodon's Admin::ReportsController#show and
 * ReportNotesController), for Manage Reports: both accounts, the category and broken rules, the
 * reporter's comment, the reported posts as they were written, who handles it, and what
 * moderators noted and did — with its actions: take it or let it go, resolve it with no action or
 * reopen it, correct its category and rules, write and delete notes. Acting on the reported
 * account (warn, limit, suspend …) is the account action form's business (account_action.ts):
 * this page links to it with the report, and that action resolves the report and comes back here.
 *
 * Everything goes through the services the admin API uses (services/admin/reports.ts, report
 * notes), so the same checks and audit log entries apply.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, AdminActionLogRow, ReportRow } from "../../db/schema.ts";
import { serializeAdminReports, type AdminReportJson } from "../../entities/admin_report.ts";
import type { Status } from "../../entities/status.ts";
import { ValidationFailed } from "../../errors.ts";
import { toObject, toStringParam } from "../../api/params.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { reportHistory } from "../../services/admin/audit.ts";
import {
  addReportNote,
  deleteReportNote,
  REPORT_NOTE_LIMIT,
  reportNotes,
  type NoteFollowUp,
  type ReportNoteView,
} from "../../services/admin/report_notes.ts";
import {
  assignReportToSelf,
  reopenReport,
  reportOf,
  resolveReport,
  serverRules,
  unassignReport,
  updateReport,
} from "../../services/admin/reports.ts";
import { REPORT_CATEGORIES } from "../../services/reports/reports.ts";
import { escapeHtml } from "../../text/escape.ts";
import { html, paragraphs, type SafeHtml } from "../html.ts";
import { withEmojis } from "../public/entities.ts";
import { actionsFor } from "./account_action.ts";
import { auditSentence } from "./action_logs.ts";
import { accountPath, atHandle, plural, shortTime, timeOf } from "./display.ts";
import {
  actionButton,
  checked,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  selected,
  type Staff,
  staffRoutes,
} from "./frame.ts";
import { accountCell, CATEGORY_LABELS, handleLink } from "./report_parts.ts";

const SECTION = "/admin/reports";

const VISIBILITY_LABELS: Record<string, string> = {
  public: "Public",
  unlisted: "Quiet public",
  private: "Followers only",
  direct: "Mentioned people only",
};

const NOTICES = {
  assigned: "You took this report.",
  unassigned: "Nobody handles this report now.",
  reopened: "The report is open again.",
  updated: "The report's category is changed.",
  note_added: "Your note is added.",
  note_added_reopened: "Your note is added and the report is open again.",
  note_deleted: "The note is deleted.",
  // After the account action form (account_action.ts), which comes back here when it answered a report.
  action_taken: "The action was taken, and the report is resolved.",
};

/** One reported post as the moderator needs it: who, when, to whom, behind what warning, with what. */
function reportedPost(status: Status): SafeHtml {
  const media = status.media_attachments;
  const mediaLine = media.length
    ? html`<p>${plural(media.length, "attachment")}${status.sensitive ? " (marked sensitive)" : ""}:</p><ul>${media.map(
        (m) => {
          const url = m.url ?? m.remote_url;
          const label = `${m.type}${m.description ? `: ${m.description}` : " (no description)"}`;
          return html`<li>${url ? html`<a href="${url}">${label}</a>` : label}</li>`;
        },
      )}</ul>`
    : "";
  const warning = status.spoiler_text
    ? html`<p><strong>Content warning:</strong> ${withEmojis(escapeHtml(status.spoiler_text), status.emojis)}</p>`
    : "";
  const link = status.url ?? status.uri;
  return html`<article class="card" id="post-${status.id}">
<p class="muted"><strong>@${status.account.acct}</strong> · <a href="${link}">${timeOf(status.created_at)}</a> · ${VISIBILITY_LABELS[status.visibility] ?? status.visibility}${status.in_reply_to_id ? " · a reply" : ""}${status.edited_at ? " · edited" : ""}</p>
${warning}<div class="content"${status.language ? html` lang="${status.language}"` : ""}>${withEmojis(status.content ?? "", status.emojis)}</div>${mediaLine}${status.poll ? html`<p class="muted">With a poll: ${status.poll.options.map((o) => o.title).join(" / ")}</p>` : ""}</article>`;
}

function summaryTable(staff: Staff, report: AdminReportJson): SafeHtml {
  const r = report;
  const mine = r.assigned_account?.id === staff.moderator.account.id;
  const assign = mine
    ? actionButton(staff, `${SECTION}/${r.id}/unassign`, "Unassign", { secondary: true })
    : actionButton(staff, `${SECTION}/${r.id}/assign_to_self`, "Assign to me", { secondary: true });
  const remote = r.target_account.domain;
  const rules =
    r.category === "violation"
      ? html`<tr><th scope="row">Rules broken</th><td>${r.rules.length ? html`<ol>${r.rules.map((rule) => html`<li value="${rule.id}">${rule.text}</li>`)}</ol>` : html`<span class="muted">None named</span>`}</td></tr>`
      : "";
  const state = r.action_taken
    ? html`Resolved${r.action_taken_by_account ? html` by ${handleLink(r.action_taken_by_account)}` : ""}${r.action_taken_at ? html`, ${timeOf(r.action_taken_at)}` : ""}`
    : "Unresolved";
  return html`<table><colgroup><col class="labels"><col></colgroup><tbody>
<tr><th scope="row">Reported account</th><td>${accountCell(r.target_account)}</td></tr>
<tr><th scope="row">Reported by</th><td>${accountCell(r.account)}</td></tr>
<tr><th scope="row">Filed</th><td>${timeOf(r.created_at)}</td></tr>
<tr><th scope="row">Category</th><td>${CATEGORY_LABELS[r.category]}</td></tr>${rules}
${remote ? html`<tr><th scope="row">Forwarded to ${remote}</th><td>${r.forwarded ? "Yes" : "No"}</td></tr>` : ""}
<tr><th scope="row">State</th><td>${state}</td></tr>
<tr><th scope="row">Assigned to</th><td>${r.assigned_account ? handleLink(r.assigned_account) : "No one"} ${assign}</td></tr>
</tbody></table>`;
}

function actionsSection(staff: Staff, report: AdminReportJson): SafeHtml {
  if (report.action_taken)
    return html`<h2>Actions</h2><p>This report is resolved. Reopen it to handle it again.</p>${actionButton(staff, `${SECTION}/${report.id}/reopen`, "Reopen the report")}`;
  const target = report.target_account;
  const links = actionsFor(target).map(
    (a) =>
      html`<li><a class="button${a.danger ? " danger" : ""}" href="${accountPath(target.id)}/action?report_id=${report.id}&amp;type=${a.type}">${a.label}</a> <span class="muted">${a.hint}</span></li>`,
  );
  return html`<h2>Actions</h2>
<p>Take an action on ${atHandle(target)}: you will choose the details, and the user is told by e-mail. Taking an action resolves this report; any action but a warning also resolves the other open reports on ${atHandle(target)}.</p>
<ul class="actions">${links}</ul>
<p>${actionButton(staff, `${SECTION}/${report.id}/resolve`, "Resolve with no action")} <span class="muted">Nothing happens to ${atHandle(target)}; the report leaves the queue.</span></p>`;
}

function categorySection(staff: Staff, report: AdminReportJson, rules: { id: string; text: string }[]): SafeHtml {
  if (report.action_taken) return html``;
  const chosen = new Set(report.rules.map((r) => r.id));
  const options = REPORT_CATEGORIES.map(
    (c) => html`<option value="${c}"${selected(c === report.category)}>${CATEGORY_LABELS[c]}</option>`,
  );
  const boxes = rules.length
    ? html`<fieldset><legend>Rules broken (for “${CATEGORY_LABELS.violation}” only)</legend>${rules.map(
        (rule) =>
          html`<div><input type="checkbox" id="rule_${rule.id}" name="rules[${rule.id}]" value="1"${checked(chosen.has(rule.id))}> <label for="rule_${rule.id}" class="inline plain">${rule.id}. ${rule.text}</label></div>`,
      )}</fieldset>`
    : html`<p class="muted">This server has no rules yet, so none can be named.</p>`;
  return html`<h2>Category</h2>${postForm(
    staff,
    `${SECTION}/${report.id}/category`,
    html`<label for="category">Category</label><select id="category" name="category">${options}</select>${boxes}<button type="submit">Save the category</button>`,
  )}`;
}

type Entry = { at: string; note: ReportNoteView } | { at: string; log: AdminActionLogRow };

function notesSection(
  staff: Staff,
  report: AdminReportJson,
  notes: ReportNoteView[],
  history: AdminActionLogRow[],
  people: Map<string, AccountRow>,
  draft: string,
): SafeHtml {
  const entries: Entry[] = [
    ...notes.map((note) => ({ at: note.created_at, note })),
    ...history.map((log) => ({ at: log.created_at, log })),
  ].sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
  const items = entries.map((entry) => {
    if ("log" in entry) return html`<li>${auditSentence(entry.log, people)} · ${timeOf(entry.log.created_at)}</li>`;
    const note = entry.note;
    const author = people.get(note.account_id);
    const who = author ? atHandle(author) : "a moderator";
    // Each note has its own button: its name says whose note of when it deletes.
    const remove = note.deletable
      ? actionButton(staff, `${SECTION}/${report.id}/notes/${note.id}/delete`, "Delete note", {
          danger: true,
          ariaLabel: `Delete the note by ${who} of ${shortTime(note.created_at)}`,
        })
      : "";
    return html`<li class="note" id="note-${note.id}"><p><strong>${author ? who : "A moderator"}</strong> noted · ${timeOf(note.created_at)}</p>${paragraphs(note.content)}${remove}</li>`;
  });
  const list = items.length ? html`<ol class="notes">${items}</ol>` : html`<p class="muted">No notes yet.</p>`;
  const followUp = report.action_taken
    ? html`<button type="submit" name="follow_up" value="reopen" class="secondary">Add note and reopen</button>`
    : html`<button type="submit" name="follow_up" value="resolve" class="secondary">Add note and resolve</button>`;
  return html`<h2>Notes and history</h2>
<p class="muted">Notes are for moderators only. What moderators did about this report and to ${atHandle(report.target_account)} is listed with them.</p>
${list}${postForm(
    staff,
    `${SECTION}/${report.id}/notes`,
    html`<label for="content">New note</label><textarea id="content" name="content" rows="4" maxlength="${REPORT_NOTE_LIMIT}" required aria-describedby="content_hint">${draft}</textarea>
<p class="muted" id="content_hint">At most ${REPORT_NOTE_LIMIT} characters.</p>
<button type="submit">Add note</button> ${followUp}`,
  )}`;
}

/** Friendlier words for the reasons the reports service gives. */
function reasonText(error: ValidationFailed): string {
  const words: Record<string, string> = {
    "Category is not included in the list": "Choose one of the categories.",
    "Rule ids contains invalid rule IDs": "Choose rules from this server's rules.",
    "Rule ids must be blank": `Only a report in “${CATEGORY_LABELS.violation}” names broken rules.`,
  };
  return error.reasons.map((r) => words[r] ?? r).join(" ");
}

export default async function adminReportPageRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_reports");

  /** A report's page; `status`, `alert` and `draft` when a form on it was refused. */
  async function reportPage(
    reply: FastifyReply,
    staff: Staff,
    row: ReportRow,
    options: { status?: number; alert?: string; draft?: string } = {},
  ): Promise<FastifyReply> {
    const rules = await serverRules(ctx);
    const [[report], notes, history] = await Promise.all([
      serializeAdminReports(ctx, [row], staff.moderator.account, rules),
      reportNotes(ctx, staff.moderator, row),
      reportHistory(ctx, row),
    ]);
    const people = new Map(
      (await findAccountsByIds(ctx, [...notes.map((n) => n.account_id), ...history.map((h) => h.account_id)])).map(
        (a) => [a.id, a],
      ),
    );
    const numbered = rules.map((rule, i) => ({ id: String(i + 1), text: rule.text }));
    const posts = report.statuses.length
      ? html`${report.statuses.map(reportedPost)}`
      : html`<p class="muted">No posts were attached to this report, or they have been deleted.</p>`;
    return renderAdminPage(ctx, reply, staff, {
      title: `Report #${report.id}`,
      section: SECTION,
      status: options.status,
      alert: options.alert,
      notices: NOTICES,
      body: html`<p><a href="${SECTION}">Back to the reports</a></p>
${summaryTable(staff, report)}
<h2>Comment</h2>${report.comment ? html`<blockquote>${paragraphs(report.comment)}</blockquote>` : html`<p class="muted">The reporter left no comment.</p>`}
<h2>Reported posts (${report.statuses.length})</h2>${posts}
${actionsSection(staff, report)}
${categorySection(staff, report, numbered)}
${notesSection(staff, report, notes, history, people, options.draft ?? "")}
<p><a href="/admin/action_logs?target_type=Report&amp;target_id=${report.id}">This report in the audit log</a> · <a href="${SECTION}?target_account_id=${report.target_account.id}">Other reports about ${atHandle(report.target_account)}</a></p>`,
    });
  }

  const reportId = (req: FastifyRequest) => toStringParam(req.input.id);

  routes.get(`${SECTION}/:id`, async (req, reply, staff) => {
    return reportPage(reply, staff, await reportOf(ctx, reportId(req)));
  });

  /** The report page's one-button actions; after resolving, back to the queue (as Mastodon). */
  const buttons = [
    { path: "assign_to_self", act: assignReportToSelf, notice: "assigned", toQueue: false },
    { path: "unassign", act: unassignReport, notice: "unassigned", toQueue: false },
    { path: "resolve", act: resolveReport, notice: "resolved", toQueue: true },
    { path: "reopen", act: reopenReport, notice: "reopened", toQueue: false },
  ];
  for (const { path, act, notice, toQueue } of buttons) {
    routes.post(`${SECTION}/:id/${path}`, async (req, reply, staff) => {
      const report = await act(ctx, staff.moderator.account, reportId(req));
      return redirectWithNotice(reply, toQueue ? SECTION : `${SECTION}/${report.id}`, notice);
    });
  }

  routes.post(`${SECTION}/:id/category`, async (req, reply, staff) => {
    const id = reportId(req);
    const category = field(req, "category");
    // Rules count only for a rule violation (Mastodon's selector clears them for other categories).
    const ruleIds = category === "violation" ? Object.keys(toObject(req.input.rules) ?? {}) : [];
    try {
      const report = await updateReport(ctx, staff.moderator.account, id, { category, ruleIds });
      return redirectWithNotice(reply, `${SECTION}/${report.id}`, "updated");
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      return reportPage(reply, staff, await reportOf(ctx, id), { status: 422, alert: reasonText(error) });
    }
  });

  routes.post(`${SECTION}/:id/notes`, async (req, reply, staff) => {
    const id = reportId(req);
    const content = toStringParam(req.input.content);
    const followUpParam = toStringParam(req.input.follow_up);
    const followUp: NoteFollowUp | undefined =
      followUpParam === "resolve" || followUpParam === "reopen" ? followUpParam : undefined;
    try {
      const report = await addReportNote(ctx, staff.moderator, id, content, followUp);
      // As Mastodon: a note that resolves the report goes back to the queue.
      if (followUp === "resolve") return redirectWithNotice(reply, SECTION, "resolved");
      return redirectWithNotice(
        reply,
        `${SECTION}/${report.id}`,
        followUp === "reopen" ? "note_added_reopened" : "note_added",
      );
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      return reportPage(reply, staff, await reportOf(ctx, id), {
        status: 422,
        alert: error.reasons.join(" "),
        draft: content ?? "",
      });
    }
  });

  routes.post(`${SECTION}/:id/notes/:note_id/delete`, async (req, reply, staff) => {
    const report = await deleteReportNote(ctx, staff.moderator, reportId(req), toStringParam(req.input.note_id));
    return redirectWithNotice(reply, `${SECTION}/${report.id}`, "note_deleted");
  });
}
