/**
 * Reports in the admin area (Mastodon's Admin::ReportsController, ReportNotesController and its
 * report page), for Manage Reports: the queue (unresolved by default, or the resolved ones; by the
 * reported account's origin or handle; a page at a time) and a report's page — both accounts, the
 * category and broken rules, the reporter's comment, the reported posts as they were written, who
 * handles it, and what moderators noted and did — with its actions: take it or let it go, resolve
 * it with no action or reopen it, correct its category and rules, write and delete notes. Acting
 * on the reported account (warn, limit, suspend …) is the account action form's business; this
 * page links to it with the report, and that action resolves the report.
 *
 * Everything goes through the services the admin API uses (services/admin/reports.ts, report
 * notes), so the same checks and audit log entries apply.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, AdminActionLogRow, ReportCategory, ReportRow } from "../../db/schema.ts";
import type { AdminAccountJson } from "../../entities/admin_account.ts";
import { serializeAdminReports, type AdminReportJson } from "../../entities/admin_report.ts";
import type { Status } from "../../entities/status.ts";
import { ValidationFailed } from "../../errors.ts";
import { toId, toObject, toStringParam, type ParamValue } from "../../api/params.ts";
import { findAccountsByIds, lookupAccount } from "../../services/accounts/lookup.ts";
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
  listReports,
  reopenReport,
  reportOf,
  resolveReport,
  serverRules,
  unassignReport,
  updateReport,
  type ReportFilter,
} from "../../services/admin/reports.ts";
import { REPORT_CATEGORIES } from "../../services/reports/reports.ts";
import { escapeHtml } from "../../text/escape.ts";
import { html, type SafeHtml } from "../html.ts";
import { displayName, withEmojis } from "../public/entities.ts";
import { auditSentence, pageLinks, pageOf, timeOf } from "./action_logs.ts";
import {
  actionButton,
  checkForm,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  requireStaff,
  type Staff,
} from "./frame.ts";

const SECTION = "/admin/reports";
const PAGE_SIZE = 20;

const CATEGORY_LABELS: Record<ReportCategory, string> = {
  spam: "Spam",
  legal: "Illegal content",
  violation: "Breaks server rules",
  other: "Other",
};

const VISIBILITY_LABELS: Record<string, string> = {
  public: "Public",
  unlisted: "Quiet public",
  private: "Followers only",
  direct: "Mentioned people only",
};

const NOTICES = {
  assigned: "You took this report.",
  unassigned: "Nobody handles this report now.",
  resolved: "The report is resolved.",
  reopened: "The report is open again.",
  updated: "The report's category is changed.",
  note_added: "Your note is added.",
  note_added_reopened: "Your note is added and the report is open again.",
  note_deleted: "The note is deleted.",
  // After the account action form, which comes back here when it answered a report.
  action_taken: "The action was taken, and the report is resolved.",
};

/** The account actions the report page links to (the account action form's `type`), in Mastodon's order. */
const ACTIONS: Array<{ type: string; label: string; hint: string; localOnly?: boolean; danger?: boolean }> = [
  { type: "none", label: "Warn", hint: "Sends the account a warning; nothing else changes." },
  { type: "sensitive", label: "Mark media as sensitive", hint: "Its media are shown behind a warning from now on." },
  { type: "disable", label: "Freeze", hint: "The user can no longer sign in; nothing is removed.", localOnly: true },
  {
    type: "silence",
    label: "Limit",
    hint: "Its posts reach only its followers; others see it only if they look for it.",
    danger: true,
  },
  {
    type: "suspend",
    label: "Suspend",
    hint: "The account stops working and disappears; its data will be removed.",
    danger: true,
  },
];

// ---------------------------------------------------------------------------------------------
// Small pieces

/** An account's handle as moderators read it. */
const handle = (account: AdminAccountJson) => `@${account.account.acct}`;

/** An account linked to its admin page: its name, then its handle. */
function accountCell(account: AdminAccountJson): SafeHtml {
  const flags = [
    account.suspended && "suspended",
    account.silenced && "limited",
    account.disabled && "frozen",
    account.sensitized && "media sensitive",
  ].filter((f): f is string => !!f);
  return html`<a href="/admin/accounts/${account.id}">${displayName(account.account)}</a> <span class="muted">${handle(account)}</span>${flags.map((f) => html` <span class="badge">${f}</span>`)}`;
}

/** A moderator (or anyone else) by handle, linked to their admin page. */
function handleLink(account: AdminAccountJson | null): SafeHtml | string {
  return account ? html`<a href="/admin/accounts/${account.id}">${handle(account)}</a>` : "";
}

/** The start of a comment, cut at a word, for the queue. */
function excerpt(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  if (chars.length <= max) return flat;
  const cut = chars.slice(0, max).join("");
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// ---------------------------------------------------------------------------------------------
// The queue

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
  };
}

function queueFilterForm(q: QueueQuery, req: FastifyRequest): SafeHtml {
  const option = (value: string, label: string, current: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ""}>${label}</option>`;
  const kept = {
    account_id: toStringParam(req.input.account_id),
    target_account_id: q.target ? undefined : toStringParam(req.input.target_account_id),
  };
  const hidden = Object.entries(kept)
    .filter(([, v]) => v)
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="get" action="${SECTION}" class="row" style="align-items:flex-end">${hidden}
<div><label for="resolved">Show</label><select id="resolved" name="resolved">${option("", "Unresolved reports", q.resolved ? "1" : "")}${option("1", "Resolved reports", q.resolved ? "1" : "")}</select></div>
<div><label for="target_origin">Reported account from</label><select id="target_origin" name="target_origin">${option("", "Any server", q.targetOrigin ?? "")}${option("local", "This server", q.targetOrigin ?? "")}${option("remote", "Other servers", q.targetOrigin ?? "")}</select></div>
<div><label for="target">Reported account</label><input type="text" id="target" name="target" value="${q.target ?? ""}" placeholder="alice or rita@remote.example"></div>
<div><button type="submit">Filter</button></div></form>`;
}

function queueTable(reports: AdminReportJson[], resolved: boolean): SafeHtml {
  const rows = reports.map(
    (r) => html`<tr><td><a href="${SECTION}/${r.id}">#${r.id}</a></td><td>${accountCell(r.target_account)}</td>
<td>${handleLink(r.account)}</td><td>${CATEGORY_LABELS[r.category]}</td><td>${plural(r.statuses.length, "post")}</td>
<td>${r.comment ? excerpt(r.comment) : html`<span class="muted">No comment</span>`}</td>
<td>${r.assigned_account ? handleLink(r.assigned_account) : html`<span class="muted">No one</span>`}</td>
${resolved ? html`<td>${handleLink(r.action_taken_by_account)}${r.action_taken_at ? html`<br>${timeOf(r.action_taken_at)}` : ""}</td>` : ""}<td>${timeOf(r.created_at)}</td></tr>`,
  );
  // Headers and report numbers break between words only (the card breaks anywhere by default).
  return html`<table style="overflow-wrap:normal"><thead><tr><th scope="col">Report</th><th scope="col">Reported account</th><th scope="col">Reported by</th><th scope="col">Category</th><th scope="col">Posts</th><th scope="col">Comment</th><th scope="col">Assigned to</th>${resolved ? html`<th scope="col">Resolved by</th>` : ""}<th scope="col">Filed</th></tr></thead><tbody>${rows}</tbody></table>`;
}

// ---------------------------------------------------------------------------------------------
// A report's page

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
  return html`<article class="card" id="post-${status.id}" style="margin:.8rem 0">
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
  return html`<table><colgroup><col style="width:14rem"><col></colgroup><tbody>
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
  const links = ACTIONS.filter((a) => !a.localOnly || target.domain === null).map(
    (a) =>
      html`<li><a class="button" href="/admin/accounts/${target.id}/action?report_id=${report.id}&amp;type=${a.type}"${a.danger ? html` style="background:var(--danger)"` : ""}>${a.label}</a> <span class="muted">${a.hint}</span></li>`,
  );
  return html`<h2>Actions</h2>
<p>Take an action on ${handle(target)}: you will choose the details, and the user is told by e-mail. Taking an action resolves this report; any action but a warning also resolves the other open reports on ${handle(target)}.</p>
<ul class="actions">${links}</ul>
<p>${actionButton(staff, `${SECTION}/${report.id}/resolve`, "Resolve with no action")} <span class="muted">Nothing happens to ${handle(target)}; the report leaves the queue.</span></p>`;
}

function categorySection(staff: Staff, report: AdminReportJson, rules: { id: string; text: string }[]): SafeHtml {
  if (report.action_taken) return html``;
  const chosen = new Set(report.rules.map((r) => r.id));
  const options = REPORT_CATEGORIES.map(
    (c) => html`<option value="${c}"${c === report.category ? html` selected` : ""}>${CATEGORY_LABELS[c]}</option>`,
  );
  const boxes = rules.length
    ? html`<fieldset><legend>Rules broken (for “${CATEGORY_LABELS.violation}” only)</legend>${rules.map(
        (rule) =>
          html`<div><input type="checkbox" id="rule_${rule.id}" name="rules[${rule.id}]" value="1"${chosen.has(rule.id) ? html` checked` : ""}> <label for="rule_${rule.id}" style="display:inline;font-weight:normal">${rule.id}. ${rule.text}</label></div>`,
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
    const remove = note.deletable
      ? actionButton(staff, `${SECTION}/${report.id}/notes/${note.id}/delete`, "Delete note", { danger: true })
      : "";
    return html`<li class="note" id="note-${note.id}"><p><strong>${author ? `@${author.username}` : "A moderator"}</strong> noted · ${timeOf(note.created_at)}</p><p style="white-space:pre-wrap">${note.content}</p>${remove}</li>`;
  });
  const list = items.length ? html`<ol class="notes">${items}</ol>` : html`<p class="muted">No notes yet.</p>`;
  const followUp = report.action_taken
    ? html`<button type="submit" name="follow_up" value="reopen" class="secondary">Add note and reopen</button>`
    : html`<button type="submit" name="follow_up" value="resolve" class="secondary">Add note and resolve</button>`;
  return html`<h2>Notes and history</h2>
<p class="muted">Notes are for moderators only. What moderators did about this report and to ${handle(report.target_account)} is listed with them.</p>
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

export default async function adminReportRoutes(app: FastifyInstance, ctx: Ctx) {
  const permission = "manage_reports";

  app.get(SECTION, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    const q = queueQuery(req);
    const page = pageOf(req.input, PAGE_SIZE);
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
<h2>Comment</h2>${report.comment ? html`<blockquote style="white-space:pre-wrap">${report.comment}</blockquote>` : html`<p class="muted">The reporter left no comment.</p>`}
<h2>Reported posts (${report.statuses.length})</h2>${posts}
${actionsSection(staff, report)}
${categorySection(staff, report, numbered)}
${notesSection(staff, report, notes, history, people, options.draft ?? "")}
<p><a href="/admin/action_logs?target_type=Report&amp;target_id=${report.id}">This report in the audit log</a> · <a href="${SECTION}?target_account_id=${report.target_account.id}">Other reports about ${handle(report.target_account)}</a></p>`,
    });
  }

  const reportId = (req: FastifyRequest) => toStringParam(req.input.id);

  app.get(`${SECTION}/:id`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
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
    app.post(`${SECTION}/:id/${path}`, async (req, reply) => {
      const staff = await requireStaff(ctx, req, reply, permission);
      if (!staff) return reply;
      checkForm(req);
      const report = await act(ctx, staff.moderator.account, reportId(req));
      return redirectWithNotice(reply, toQueue ? SECTION : `${SECTION}/${report.id}`, notice);
    });
  }

  app.post(`${SECTION}/:id/category`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    checkForm(req);
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

  app.post(`${SECTION}/:id/notes`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    checkForm(req);
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

  app.post(`${SECTION}/:id/notes/:note_id/delete`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    checkForm(req);
    const report = await deleteReportNote(ctx, staff.moderator, reportId(req), toStringParam(req.input.note_id));
    return redirectWithNotice(reply, `${SECTION}/${report.id}`, "note_deleted");
  });
}
