/**
 * Sign-ups waiting for approval (Mastodon's Admin::PendingAccountsController): who asked, with
 * their e-mail, the reason they gave, the address they came from and when; approve or reject each,
 * or everyone on the page at once. Approving and rejecting are the admin API's services (audited,
 * the approval e-mailed once the address is confirmed; a rejected account is removed).
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import {
  approveAccount,
  listAccounts,
  rejectAccount,
  withUsers,
  type AccountWithUser,
  type Moderator,
} from "../../services/admin/accounts.ts";
import { toStringArray, toStringParam } from "../../api/params.ts";
import { html, type SafeHtml } from "../html.ts";
import {
  checkForm,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  requireStaff,
  shortTime,
  type Staff,
} from "./frame.ts";
import { atHandle, pageOf, pagerLinks } from "./accounts.ts";

const SECTION = "/admin/pending_accounts";

const NOTICES: Record<string, string> = {
  approved: "The sign-up was approved.",
  rejected: "The sign-up was rejected and the account removed.",
  approved_all: "The sign-ups on the page were approved.",
  rejected_all: "The sign-ups on the page were rejected and their accounts removed.",
  none_selected: "There was no sign-up to handle.",
};

/** One row's button; its accessible name says whose sign-up it decides. */
function decision(staff: Staff, id: string, verb: "approve" | "reject", name: string): SafeHtml {
  const button =
    verb === "approve"
      ? html`<button type="submit" aria-label="${name}">Approve</button>`
      : html`<button type="submit" class="danger" aria-label="${name}">Reject</button>`;
  return postForm(staff, `${SECTION}/${id}/${verb}`, button, { inline: true });
}

function pendingTable(staff: Staff, items: readonly AccountWithUser[]): SafeHtml {
  const rows = items.map(({ account, user }) => {
    const id = account.id;
    return html`<tr><td><a href="/admin/accounts/${id}">${atHandle(account)}</a></td><td>${user?.email ?? ""}${user && !user.confirmed_at ? html` <span class="badge">not confirmed</span>` : ""}</td><td>${user?.reason ?? ""}</td><td>${user?.sign_up_ip ?? ""}</td><td>${shortTime(account.created_at)}</td><td>${decision(staff, id, "approve", `Approve ${atHandle(account)}`)} ${decision(staff, id, "reject", `Reject ${atHandle(account)}`)}</td></tr>`;
  });
  return html`<table><thead><tr><th scope="col">Account</th><th scope="col">E-mail</th><th scope="col">Reason given</th><th scope="col">IP address</th><th scope="col">Signed up</th><th scope="col">Decision</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** "Approve all" / "Reject all": the page's account IDs travel with the form, so only what was shown is handled. */
function batchButtons(staff: Staff, items: readonly AccountWithUser[]): SafeHtml {
  // Indexed names (Rails' `account_ids[0]`): each is its own field, the list arrives whole.
  const ids = items.map((i, n) => html`<input type="hidden" name="account_ids[${n}]" value="${i.account.id}">`);
  const batch = (path: string, label: string, danger: boolean) =>
    postForm(
      staff,
      `${SECTION}/${path}`,
      html`${ids}<button type="submit"${danger ? html` class="danger"` : ""}>${label}</button>`,
      {
        inline: true,
      },
    );
  return html`<div class="row">${batch("approve", "Approve all on this page", false)} ${batch("reject", "Reject all on this page", true)}</div>`;
}

export default async function pendingAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get(SECTION, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    const page = pageOf(req);
    const rows = await listAccounts(ctx, { origin: "local", status: "pending" }, page);
    const items = await withUsers(ctx, rows);
    const body =
      items.length === 0
        ? html`<p>Nobody is waiting for approval.</p>`
        : html`${batchButtons(staff, items)}${pendingTable(staff, items)}${pagerLinks(SECTION, { limit: toStringParam(req.input.limit) }, rows, page)}`;
    return renderAdminPage(ctx, reply, staff, { title: "Pending sign-ups", section: SECTION, notices: NOTICES, body });
  });

  const one = (
    path: string,
    notice: string,
    act: (ctx: Ctx, m: Moderator, id: string | undefined) => Promise<unknown>,
  ) =>
    app.post(`${SECTION}/:id/${path}`, async (req, reply) => {
      const staff = await requireStaff(ctx, req, reply, "manage_users");
      if (!staff) return reply;
      checkForm(req);
      await act(ctx, staff.moderator, toStringParam(req.input.id));
      return redirectWithNotice(reply, SECTION, notice);
    });
  one("approve", "approved", approveAccount);
  one("reject", "rejected", rejectAccount);

  const all = (
    path: string,
    notice: string,
    act: (ctx: Ctx, m: Moderator, id: string | undefined) => Promise<unknown>,
  ) =>
    app.post(`${SECTION}/${path}`, async (req, reply) => {
      const staff = await requireStaff(ctx, req, reply, "manage_users");
      if (!staff) return reply;
      checkForm(req);
      const ids = toStringArray(req.input.account_ids);
      if (ids.length === 0) return redirectWithNotice(reply, SECTION, "none_selected");
      for (const id of ids) {
        try {
          await act(ctx, staff.moderator, id);
        } catch (error) {
          // Handled meanwhile by another moderator (no longer pending, or gone): nothing left to do for it.
          if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
        }
      }
      return redirectWithNotice(reply, SECTION, notice);
    });
  all("approve", "approved_all", approveAccount);
  all("reject", "rejected_all", rejectAccount);
}
