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
import { html, paragraphs, type SafeHtml } from "../html.ts";
import { decisionTitle, strikePostItems } from "../strikes.ts";
import { accountLink, atHandle, shortTime } from "./display.ts";
import { actionButton, field, redirectWithNotice, renderAdminPage, staffRoutes, type Staff } from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";

const SECTION = "/admin/disputes/appeals";
/** Appeals on a page (each is a card, longer than a table's row). */
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

function appealCard(staff: Staff, entry: AppealEntry, posts: readonly StrikePost[]): SafeHtml {
  const { appeal, warning, account, reason } = entry;
  const state = appealState(appeal);
  const handle = atHandle(account);
  const decided = entry.decidedBy
    ? html` by ${accountLink(entry.decidedBy)}, ${shortTime(appeal.approved_at ?? appeal.rejected_at)}`
    : "";
  const buttons =
    state === "pending"
      ? html`<div class="row">${actionButton(staff, `${SECTION}/${appeal.id}/approve`, `Approve the appeal and lift the decision on ${handle}`)} ${actionButton(staff, `${SECTION}/${appeal.id}/reject`, `Reject the appeal of ${handle}`, { danger: true })}</div>`
      : "";
  return html`<section aria-labelledby="appeal-${appeal.id}"><h2 id="appeal-${appeal.id}">${accountLink(account)} appeals: ${strikeTitle(warning.action)}</h2>
<table><tbody>
<tr><th scope="row">Appeal</th><td><span class="badge">${STATE_WORDS[state]}</span>${decided}</td></tr>
<tr><th scope="row">Decision</th><td>${decisionTitle(warning)}, ${shortTime(warning.created_at)}${entry.issuedBy ? html` by ${accountLink(entry.issuedBy)}` : ""}</td></tr>
${warning.report_id ? html`<tr><th scope="row">Report</th><td><a href="/admin/reports/${warning.report_id}">Report #${warning.report_id}</a>${reason ? ` (${reason})` : ""}</td></tr>` : ""}
${warning.text.trim() ? html`<tr><th scope="row">Moderator's message</th><td>${paragraphs(warning.text)}</td></tr>` : ""}
${posts.length ? html`<tr><th scope="row">Posts concerned</th><td><ul>${strikePostItems(posts, shortTime)}</ul></td></tr>` : ""}
<tr><th scope="row">The user's appeal</th><td>${paragraphs(appeal.text)}<p class="muted">Sent ${shortTime(appeal.created_at)}</p></td></tr>
</tbody></table>${buttons}</section>`;
}

export default async function adminAppealRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_appeals");

  routes.get(SECTION, async (req, reply, staff) => {
    const given = toStringParam(req.input.status);
    const state: AppealStateFilter = (APPEAL_STATES as readonly string[]).includes(given ?? "")
      ? (given as AppealStateFilter)
      : "pending";
    const page = listPage(req, PAGE_SIZE);
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
  { status: state, limit: field(req, "limit") },
  page,
  entries.map((e) => e.appeal.id),
)}`,
    });
  });

  routes.post(`${SECTION}/:id/approve`, async (req, reply, staff) => {
    await approveAppeal(ctx, staff.moderator, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "approved");
  });

  routes.post(`${SECTION}/:id/reject`, async (req, reply, staff) => {
    await rejectAppeal(ctx, staff.moderator, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "rejected");
  });
}
