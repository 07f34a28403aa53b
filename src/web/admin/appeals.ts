/**
 * Appeals in the admin area (Mastodon's Admin::Disputes::AppealsController): the appeals waiting
 * for a decision (or the approved, the rejected, all of them), each with the strike it is about —
 * the decision, the moderator's message, the posts concerned — and the user's text, and buttons
 * to approve or reject it. Approving undoes the strike's action (services/moderation/appeals.ts);
 * both decisions are audited and mailed to the user. Manage Appeals opens the page.
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { toId, toStringParam } from "../../api/params.ts";
import { appealState } from "../../entities/account_warning.ts";
import { handleOf } from "../../services/admin/accounts.ts";
import {
  APPEAL_STATES,
  approveAppeal,
  listAppeals,
  pendingAppealCount,
  rejectAppeal,
  type AppealEntry,
  type AppealStateFilter,
} from "../../services/moderation/appeals.ts";
import { strikePosts, strikeTitle, type StrikePost } from "../../services/moderation/strikes.ts";
import { html, type SafeHtml } from "../html.ts";
import { pageLinks, pageOf } from "./action_logs.ts";
import {
  actionButton,
  checkForm,
  redirectWithNotice,
  renderAdminPage,
  requireStaff,
  shortTime,
  type Staff,
} from "./frame.ts";

const SECTION = "/admin/disputes/appeals";
const PAGE_SIZE = 20;

const NOTICES = {
  approved: "The appeal is approved: the decision has been lifted and the user told.",
  rejected: "The appeal is rejected: the decision stands, and the user has been told.",
};

const STATE_WORDS: Record<string, string> = { pending: "Pending", approved: "Approved", rejected: "Rejected" };

/** The filter links: pending (with their number), approved, rejected, all. */
function filterNav(current: AppealStateFilter, pending: number): SafeHtml {
  const labels: Record<AppealStateFilter, string> = {
    pending: `Pending (${pending})`,
    approved: "Approved",
    rejected: "Rejected",
    all: "All",
  };
  const links = APPEAL_STATES.map(
    (state) =>
      html`<a href="${SECTION}?status=${state}"${state === current ? html` aria-current="page"` : ""}>${labels[state]}</a>`,
  );
  return html`<nav aria-label="Filter appeals">${links}</nav>`;
}

/** A text with its line breaks kept (escaped). */
function multiline(text: string): SafeHtml {
  return html`${text
    .trim()
    .split("\n")
    .map((line, i) => html`${i > 0 ? html`<br>` : ""}${line}`)}`;
}

function postItems(posts: readonly StrikePost[]): SafeHtml {
  if (posts.length === 0) return html``;
  const items = posts.map(({ id, post }) => {
    if (!post) return html`<li>Post ${id} <span class="muted">(gone)</span></li>`;
    const chars = [...post.text];
    const text = chars.length > 300 ? `${chars.slice(0, 299).join("")}…` : post.text;
    return html`<li>${post.spoilerText ? html`<strong>${post.spoilerText}</strong> ` : ""}${text} <span class="muted">${post.deleted ? "(removed)" : html`<a href="${post.url}">${shortTime(post.createdAt)}</a>`}${post.media.length ? ` · attached: ${post.media.join(", ")}` : ""}</span></li>`;
  });
  return html`<tr><th scope="row">Posts concerned</th><td><ul>${items}</ul></td></tr>`;
}

function appealCard(staff: Staff, entry: AppealEntry, posts: readonly StrikePost[]): SafeHtml {
  const { appeal, warning, account, reason } = entry;
  const state = appealState(appeal);
  const handle = `@${handleOf(account)}`;
  const decision = warning.overruled_at
    ? html`<del>${strikeTitle(warning.action)}</del> (lifted)`
    : strikeTitle(warning.action);
  const decided = entry.decidedBy
    ? html` by <a href="/admin/accounts/${entry.decidedBy.id}">@${handleOf(entry.decidedBy)}</a>, ${shortTime(appeal.approved_at ?? appeal.rejected_at)}`
    : "";
  const buttons =
    state === "pending"
      ? html`<div class="row">${actionButton(staff, `${SECTION}/${appeal.id}/approve`, `Approve the appeal and lift the decision on ${handle}`)} ${actionButton(staff, `${SECTION}/${appeal.id}/reject`, `Reject the appeal of ${handle}`, { danger: true })}</div>`
      : "";
  return html`<section aria-labelledby="appeal-${appeal.id}"><h2 id="appeal-${appeal.id}"><a href="/admin/accounts/${account.id}">${handle}</a> appeals: ${strikeTitle(warning.action)}</h2>
<table><tbody>
<tr><th scope="row">Appeal</th><td><span class="badge">${STATE_WORDS[state]}</span>${decided}</td></tr>
<tr><th scope="row">Decision</th><td>${decision}, ${shortTime(warning.created_at)}${entry.issuedBy ? html` by <a href="/admin/accounts/${entry.issuedBy.id}">@${handleOf(entry.issuedBy)}</a>` : ""}</td></tr>
${warning.report_id ? html`<tr><th scope="row">Report</th><td><a href="/admin/reports/${warning.report_id}">Report #${warning.report_id}</a>${reason ? ` (${reason})` : ""}</td></tr>` : ""}
${warning.text.trim() ? html`<tr><th scope="row">Moderator's message</th><td>${multiline(warning.text)}</td></tr>` : ""}
${postItems(posts)}
<tr><th scope="row">The user's appeal</th><td>${multiline(appeal.text)}<br><span class="muted">Sent ${shortTime(appeal.created_at)}</span></td></tr>
</tbody></table>${buttons}</section>`;
}

export default async function adminAppealRoutes(app: FastifyInstance, ctx: Ctx) {
  const permission = "manage_appeals";

  app.get(SECTION, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    const given = toStringParam(req.input.status);
    const state: AppealStateFilter = (APPEAL_STATES as readonly string[]).includes(given ?? "")
      ? (given as AppealStateFilter)
      : "pending";
    const page = pageOf(req.input, PAGE_SIZE);
    const entries = await listAppeals(ctx, state, page);
    const posts = await strikePosts(
      ctx,
      entries.map((e) => e.warning),
    );
    const cards = entries.map((e) => appealCard(staff, e, posts.get(e.warning.id) ?? []));
    const empty = state === "pending" ? "No appeal is waiting for a decision." : "There are no appeals here.";
    return renderAdminPage(ctx, reply, staff, {
      title: "Appeals",
      section: SECTION,
      notices: NOTICES,
      body: html`<p>Users may appeal a moderation decision once, within 20 days. Approving an appeal lifts the decision (a freeze, a limit, a suspension, sensitive media; removed posts stay removed); rejecting it leaves the decision as it is. Either way the user is told by e-mail.</p>
${filterNav(state, await pendingAppealCount(ctx))}
${cards.length ? cards : html`<p>${empty}</p>`}
${pageLinks(
  SECTION,
  { status: state },
  page,
  entries.map((e) => e.appeal.id),
)}`,
    });
  });

  app.post(`${SECTION}/:id/approve`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    checkForm(req);
    await approveAppeal(ctx, staff.moderator, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "approved");
  });

  app.post(`${SECTION}/:id/reject`, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    checkForm(req);
    await rejectAppeal(ctx, staff.moderator, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "rejected");
  });
}
