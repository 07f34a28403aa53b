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
import { PAGE_SIZE, MAX_PAGE_SIZE } from "./accounts.ts";
import { accountLink, atHandle, shortTime } from "./display.ts";
import {
  actionButton,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  staffRoutes,
  type Staff,
} from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";

const SECTION = "/admin/pending_accounts";

const NOTICES: Record<string, string> = {
  approved: "The sign-up was approved.",
  rejected: "The sign-up was rejected and the account removed.",
  approved_all: "The sign-ups on the page were approved.",
  rejected_all: "The sign-ups on the page were rejected and their accounts removed.",
  none_selected: "There was no sign-up to handle.",
};

function pendingTable(staff: Staff, items: readonly AccountWithUser[]): SafeHtml {
  const rows = items.map(({ account, user }) => {
    const id = account.id;
    const handle = atHandle(account);
    // Every row has the same buttons: their names say whose sign-up they decide.
    const approve = actionButton(staff, `${SECTION}/${id}/approve`, "Approve", { ariaLabel: `Approve ${handle}` });
    const reject = actionButton(staff, `${SECTION}/${id}/reject`, "Reject", {
      danger: true,
      ariaLabel: `Reject ${handle}`,
    });
    return html`<tr><td>${accountLink(account)}</td><td>${user?.email ?? ""}${user && !user.confirmed_at ? html` <span class="badge">not confirmed</span>` : ""}</td><td>${user?.reason ?? ""}</td><td>${user?.sign_up_ip ?? ""}</td><td>${shortTime(account.created_at)}</td><td>${approve} ${reject}</td></tr>`;
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
      { inline: true },
    );
  return html`<div class="row">${batch("approve", "Approve all on this page", false)} ${batch("reject", "Reject all on this page", true)}</div>`;
}

export default async function pendingAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_users");
  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req, PAGE_SIZE, MAX_PAGE_SIZE);
    const rows = await listAccounts(ctx, { origin: "local", status: "pending" }, page);
    const items = await withUsers(ctx, rows);
    const list =
      items.length === 0
        ? html`<p>Nobody is waiting for approval.</p>`
        : html`${batchButtons(staff, items)}${pendingTable(staff, items)}`;
    const body = html`${list}${pageLinks(
      SECTION,
      { limit: field(req, "limit") },
      page,
      rows.map((r) => r.id),
    )}`;
    return renderAdminPage(ctx, reply, staff, { title: "Pending sign-ups", section: SECTION, notices: NOTICES, body });
  });

  const one = (
    path: string,
    notice: string,
    act: (ctx: Ctx, m: Moderator, id: string | undefined) => Promise<unknown>,
  ) =>
    routes.post(`${SECTION}/:id/${path}`, async (req, reply, staff) => {
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
    routes.post(`${SECTION}/${path}`, async (req, reply, staff) => {
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
