/**
 * The accounts section of the admin area (Mastodon's Admin::AccountsController and
 * AccountModerationNotesController): the list of accounts with Mastodon's filters, one account
 * with its strikes, reports and moderators' notes, the actions that lift a measure (enable,
 * unsilence, unsuspend, unsensitive), approving or rejecting a sign-up, and deleting a suspended
 * account's data. The form of a moderation action (warn, limit, suspend …) is account_action.ts.
 * Every change is the admin API's service, so it is checked (the moderator's role must outrank
 * the target's), audited and takes effect exactly as from the API.
 */
import { dataDeletionDue } from "../../services/admin/deletion_requests.ts";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, ReportRow, UserRoleRow, UserRow } from "../../db/schema.ts";
import { Unprocessable } from "../../errors.ts";
import { storedFields } from "../../entities/account.ts";
import { EVERYONE_ROLE_ID, hasPermission, listRoles } from "../../services/accounts/roles.ts";
import {
  createModerationNote,
  deleteModerationNote,
  MODERATION_NOTE_MAX,
  moderationNotesOf,
  type ModerationNote,
} from "../../services/admin/account_notes.ts";
import {
  accountOf,
  approveAccount,
  deleteAccountData,
  enableAccount,
  listAccounts,
  mayActOn,
  ORIGINS,
  rejectAccount,
  reportsOfAccount,
  STATUSES,
  strikesOf,
  unsensitiveAccount,
  unsilenceAccount,
  unsuspendAccount,
  withUsers,
  type AccountFilter,
  type AccountWithUser,
  type Moderator,
} from "../../services/admin/accounts.ts";
import { strikeTitle } from "../../services/moderation/strikes.ts";
import { sanitizeHtml } from "../../text/sanitize.ts";
import { toStringArray, toStringParam } from "../../api/params.ts";
import { html, paragraphs, SafeHtml } from "../html.ts";
import { accountLink, accountPath, atHandle, shortTime } from "./display.ts";
import {
  actionButton,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  selected,
  type Staff,
  staffRoutes,
} from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";
import { CATEGORY_LABELS } from "./report_parts.ts";

/** Accounts per page (Mastodon's admin lists show 40; `?limit=` up to 100). */
export const PAGE_SIZE = 40;
export const MAX_PAGE_SIZE = 100;

const SECTION = "/admin/accounts";

const NOTICES: Record<string, string> = {
  approved: "The sign-up was approved.",
  enabled: "The account can sign in again.",
  unsilenced: "The limit on the account was lifted.",
  unsuspended: "The suspension was lifted.",
  unsensitized: "The account's media are no longer marked as sensitive.",
  deleted: "The account's data is being deleted.",
  action_taken: "The action was taken.",
  note_created: "Your note was saved.",
  note_deleted: "The note was deleted.",
};

const STATUS_LABELS: Record<(typeof STATUSES)[number], string> = {
  active: "Active",
  pending: "Waiting for approval",
  disabled: "Frozen (cannot sign in)",
  silenced: "Limited",
  suspended: "Suspended",
  sensitized: "Media marked sensitive",
};

const ORIGIN_LABELS: Record<(typeof ORIGINS)[number], string> = { local: "This server", remote: "Other servers" };

/** The badges of an account's state, as the list and the account page show them. */
export function statusBadges({ account, user }: Pick<AccountWithUser, "account" | "user">): SafeHtml {
  const badges: string[] = [];
  if (account.deleted_at) badges.push("Deleted");
  else if (account.suspended_at) badges.push("Suspended");
  if (account.silenced_at) badges.push("Limited");
  if (account.sensitized_at) badges.push("Media marked sensitive");
  if (user?.disabled) badges.push("Frozen");
  if (user && !user.approved) badges.push("Waiting for approval");
  if (user && !user.confirmed_at) badges.push("E-mail not confirmed");
  return html`${badges.map((b) => html`<span class="badge">${b}</span> `)}`;
}

/** The role's name, or nothing for users without a role (and remote accounts). */
const roleName = (role: UserRoleRow | null) => (role && role.id !== EVERYONE_ROLE_ID ? role.name : "");

// ---- the list ---------------------------------------------------------------------------------

const TEXT_FILTERS = [
  ["username", "Username"],
  ["display_name", "Display name"],
  ["email", "E-mail"],
  ["ip", "IP address"],
] as const;

interface ListQuery {
  origin?: string;
  status?: string;
  role_ids?: string;
  username?: string;
  display_name?: string;
  email?: string;
  ip?: string;
}

function listQueryOf(req: FastifyRequest): ListQuery {
  const text = (name: string) => toStringParam(req.input[name])?.trim() || undefined;
  return {
    origin: text("origin"),
    status: text("status"),
    role_ids: toStringArray(req.input.role_ids)[0]?.trim() || undefined,
    username: text("username"),
    display_name: text("display_name"),
    email: text("email"),
    ip: text("ip"),
  };
}

function filterForm(query: ListQuery, roles: readonly UserRoleRow[]): SafeHtml {
  const select = (
    name: string,
    label: string,
    all: string,
    options: ReadonlyArray<readonly [string, string]>,
    chosen?: string,
  ) =>
    html`<div><label for="filter_${name}">${label}</label><select id="filter_${name}" name="${name}"><option value="">${all}</option>${options.map(([value, text]) => html`<option value="${value}"${selected(value === chosen)}>${text}</option>`)}</select></div>`;
  return html`<form method="get" action="${SECTION}" role="search" aria-label="Find accounts"><div class="row">
${select("origin", "Where", "Everywhere", Object.entries(ORIGIN_LABELS), query.origin)}
${select("status", "Status", "Any status", Object.entries(STATUS_LABELS), query.status)}
${select(
  "role_ids",
  "Role",
  "Any role",
  roles.filter((r) => r.id !== EVERYONE_ROLE_ID).map((r) => [r.id, r.name] as const),
  query.role_ids,
)}
</div><div class="row">${TEXT_FILTERS.map(([name, label]) => html`<div><label for="filter_${name}">${label}</label><input id="filter_${name}" type="text" name="${name}" value="${query[name] ?? ""}"></div>`)}</div>
<button type="submit">Search</button> <a class="button secondary" href="${SECTION}">Reset</a></form>`;
}

function accountRows(items: readonly AccountWithUser[]): SafeHtml {
  if (items.length === 0) return html`<p>No account matches.</p>`;
  const rows = items.map(
    (item) =>
      html`<tr><td>${accountLink(item.account)}</td><td>${item.account.display_name}</td><td>${statusBadges(item)}</td><td>${roleName(item.role)}</td><td>${item.user?.email ?? ""}</td><td>${shortTime(item.user?.current_sign_in_at ?? item.account.last_status_at)}</td><td>${shortTime(item.account.created_at)}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Account</th><th scope="col">Display name</th><th scope="col">Status</th><th scope="col">Role</th><th scope="col">E-mail</th><th scope="col">Last active</th><th scope="col">Joined</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function renderAccountList(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, staff: Staff) {
  const query = listQueryOf(req);
  const page = listPage(req, PAGE_SIZE, MAX_PAGE_SIZE);
  const roles = await listRoles(ctx.db.kysely);
  const problems = [
    query.origin && !(ORIGINS as readonly string[]).includes(query.origin) ? `Unknown origin: ${query.origin}` : "",
    query.status && !(STATUSES as readonly string[]).includes(query.status) ? `Unknown status: ${query.status}` : "",
  ].filter(Boolean);
  if (problems.length > 0)
    return renderAdminPage(ctx, reply, staff, {
      title: "Accounts",
      section: SECTION,
      status: 422,
      alert: problems.join(" "),
      body: filterForm({ ...query, origin: undefined, status: undefined }, roles),
    });
  const filter: AccountFilter = {
    origin: query.origin,
    status: query.status,
    roleIds: query.role_ids ? [query.role_ids] : undefined,
    username: query.username,
    displayName: query.display_name,
    email: query.email,
    ip: query.ip,
  };
  const rows = await listAccounts(ctx, filter, page);
  const items = await withUsers(ctx, rows);
  const keep = { ...query, limit: field(req, "limit") };
  return renderAdminPage(ctx, reply, staff, {
    title: "Accounts",
    section: SECTION,
    notices: NOTICES,
    body: html`${filterForm(query, roles)}<h2>Results</h2>${accountRows(items)}${pageLinks(
      SECTION,
      keep,
      page,
      rows.map((r) => r.id),
    )}`,
  });
}

// ---- one account ------------------------------------------------------------------------------

function profileSection(ctx: Ctx, item: AccountWithUser, deletionDue: Date | null): SafeHtml {
  const { account } = item;
  // Both kinds of bio are HTML already made safe (rendered here or sanitized on arrival); sanitized again to be sure.
  const bio = account.note ? new SafeHtml(sanitizeHtml(account.note)) : "";
  const fields = storedFields(account).map(
    (f) => html`<dt>${f.name}</dt><dd>${account.domain === null ? f.value : new SafeHtml(sanitizeHtml(f.value))}</dd>`,
  );
  const profileUrl =
    account.domain === null ? `${ctx.config.baseUrl}/@${account.username}` : (account.url ?? account.uri);
  return html`<p><strong>${account.display_name || account.username}</strong> ${atHandle(account)} ${statusBadges(item)}</p>
${bio ? html`<div class="bio">${bio}</div>` : ""}${fields.length ? html`<dl>${fields}</dl>` : ""}
<table><tbody>
<tr><th scope="row">Posts</th><td>${account.statuses_count}</td></tr>
<tr><th scope="row">Followers</th><td>${account.followers_count}</td></tr>
<tr><th scope="row">Following</th><td>${account.following_count}</td></tr>
<tr><th scope="row">Joined</th><td>${shortTime(account.created_at)}</td></tr>
${account.suspended_at ? html`<tr><th scope="row">Suspended</th><td>${shortTime(account.suspended_at)}${account.deleted_at ? html` (data deleted ${shortTime(account.deleted_at)})` : deletionDue ? html` (its data will be deleted on ${shortTime(deletionDue.toISOString())} unless the suspension is lifted)` : ""}</td></tr>` : ""}
${account.silenced_at ? html`<tr><th scope="row">Limited</th><td>${shortTime(account.silenced_at)}</td></tr>` : ""}
${account.sensitized_at ? html`<tr><th scope="row">Media marked sensitive</th><td>${shortTime(account.sensitized_at)}</td></tr>` : ""}
<tr><th scope="row">Profile</th><td>${/^https?:\/\//i.test(profileUrl) ? html`<a href="${profileUrl}">${profileUrl}</a>` : profileUrl}</td></tr>
</tbody></table>`;
}

function userSection(user: UserRow, role: UserRoleRow | null): SafeHtml {
  const ip = user.sign_up_ip;
  return html`<h2>Sign-in and e-mail</h2><table><tbody>
<tr><th scope="row">E-mail</th><td>${user.email}</td></tr>
${user.unconfirmed_email ? html`<tr><th scope="row">New e-mail, not confirmed</th><td>${user.unconfirmed_email}</td></tr>` : ""}
<tr><th scope="row">E-mail confirmed</th><td>${user.confirmed_at ? `Yes, ${shortTime(user.confirmed_at)}` : "No"}</td></tr>
<tr><th scope="row">Sign-up approved</th><td>${user.approved ? "Yes" : "No, waiting for approval"}</td></tr>
${user.reason ? html`<tr><th scope="row">Reason given at sign-up</th><td>${user.reason}</td></tr>` : ""}
<tr><th scope="row">Can sign in</th><td>${user.disabled ? "No, frozen" : "Yes"}</td></tr>
<tr><th scope="row">Role</th><td>${roleName(role) || "None"}</td></tr>
<tr><th scope="row">Sign-up IP address</th><td>${ip ? html`${ip} <a href="${SECTION}?ip=${encodeURIComponent(ip)}">Accounts from this address</a>` : "Unknown"}</td></tr>
<tr><th scope="row">Last sign-in</th><td>${shortTime(user.current_sign_in_at) || "Never"}</td></tr>
</tbody></table>`;
}

function actionsSection(staff: Staff, item: AccountWithUser, mayAct: boolean): SafeHtml {
  const { account, user } = item;
  const id = account.id;
  const button = (path: string, label: string, danger = false) =>
    actionButton(staff, `${accountPath(id)}/${path}`, label, { danger });
  const buttons: SafeHtml[] = [];
  if (user && !user.approved)
    buttons.push(button("approve", "Approve sign-up"), button("reject", "Reject sign-up", true));
  if (user?.disabled) buttons.push(button("enable", "Unfreeze (allow sign-in)"));
  if (account.silenced_at) buttons.push(button("unsilence", "Lift the limit"));
  if (account.sensitized_at) buttons.push(button("unsensitive", "Stop marking media sensitive"));
  if (account.suspended_at && !account.deleted_at) {
    buttons.push(button("unsuspend", "Lift the suspension"));
    if (hasPermission(staff.role, "delete_user_data"))
      buttons.push(button("delete_data", "Delete the account's data", true));
  }
  const take = account.deleted_at
    ? ""
    : mayAct
      ? html`<a class="button" href="${accountPath(id)}/action">Take action</a>`
      : html`<p class="muted">This account's role is as high as yours or higher: you cannot take action on it.</p>`;
  return html`<h2>Actions</h2><div class="row">${take} ${buttons}</div>`;
}

function strikesSection(strikes: Awaited<ReturnType<typeof strikesOf>>): SafeHtml {
  if (strikes.length === 0) return html`<h2>Strikes</h2><p>No strikes.</p>`;
  const rows = strikes.map(
    (s) =>
      html`<tr><td>${shortTime(s.created_at)}</td><td>${strikeTitle(s.action)}${s.overruled_at ? " (overruled on appeal)" : ""}</td><td>${s.moderator ? `@${s.moderator}` : ""}</td><td>${s.text.trim() ? paragraphs(s.text) : ""}</td><td>${s.report_id ? html`<a href="/admin/reports/${s.report_id}">Report #${s.report_id}</a>` : ""}</td></tr>`,
  );
  return html`<h2>Strikes</h2><table><thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Text</th><th scope="col">Report</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function reportTable(reports: readonly ReportRow[], count: number, heading: string, filter: string): SafeHtml {
  if (reports.length === 0) return html`<h3>${heading}</h3><p>None.</p>`;
  const rows = reports.map(
    (r) =>
      html`<tr><td><a href="/admin/reports/${r.id}">Report #${r.id}</a></td><td>${CATEGORY_LABELS[r.category]}</td><td>${r.comment}</td><td>${r.action_taken_at ? "Resolved" : "Open"}</td><td>${shortTime(r.created_at)}</td></tr>`,
  );
  const more = count > reports.length ? html`<p><a href="/admin/reports?${filter}">All ${count} reports</a></p>` : "";
  return html`<h3>${heading}</h3><table><thead><tr><th scope="col">Report</th><th scope="col">Category</th><th scope="col">Comment</th><th scope="col">State</th><th scope="col">Filed</th></tr></thead><tbody>${rows}</tbody></table>${more}`;
}

function notesSection(staff: Staff, account: AccountRow, notes: readonly ModerationNote[], draft?: string): SafeHtml {
  const list = notes.length
    ? html`<ul class="notes">${notes.map(
        (n) =>
          html`<li><p><strong>@${n.author}</strong> <span class="muted">${shortTime(n.created_at)}</span></p>${paragraphs(n.content)}${n.mayDelete ? actionButton(staff, `/admin/account_moderation_notes/${n.id}/delete`, "Delete note", { secondary: true, ariaLabel: `Delete the note by @${n.author} of ${shortTime(n.created_at)}` }) : ""}</li>`,
      )}</ul>`
    : html`<p>No notes yet.</p>`;
  const form = postForm(
    staff,
    `${accountPath(account.id)}/notes`,
    html`<label for="note_content">New note <span class="muted">(only staff can read it; up to ${MODERATION_NOTE_MAX} characters)</span></label><textarea id="note_content" name="content" rows="4" maxlength="${MODERATION_NOTE_MAX}" required>${draft ?? ""}</textarea><button type="submit">Add note</button>`,
  );
  return html`<h2>Moderation notes</h2>${list}${form}`;
}

async function showAccount(
  ctx: Ctx,
  reply: FastifyReply,
  staff: Staff,
  id: string | undefined,
  options: { status?: number; alert?: string; draft?: string } = {},
) {
  const account = await accountOf(ctx.db.kysely, id);
  const [item] = await withUsers(ctx, [account]);
  const [mayAct, strikes, reports, notes, deletionDue] = await Promise.all([
    mayActOn(ctx.db.kysely, staff.moderator, account),
    strikesOf(ctx, account.id),
    reportsOfAccount(ctx, account.id),
    moderationNotesOf(ctx, account.id, staff.moderator),
    dataDeletionDue(ctx.db.kysely, account.id),
  ]);
  const handle = atHandle(account);
  return renderAdminPage(ctx, reply, staff, {
    title: handle,
    section: SECTION,
    status: options.status,
    alert: options.alert,
    notices: NOTICES,
    body: html`<nav aria-label="Breadcrumb"><a href="${SECTION}">All accounts</a></nav>
${profileSection(ctx, item, deletionDue)}
${item.user ? userSection(item.user, item.role) : ""}
${actionsSection(staff, item, mayAct)}
${strikesSection(strikes)}
<h2>Reports</h2>
${reportTable(reports.against, reports.againstCount, `Reports against ${handle}`, `target_account_id=${account.id}`)}
${reportTable(reports.by, reports.byCount, `Reports by ${handle}`, `account_id=${account.id}`)}
${notesSection(staff, account, notes, options.draft)}`,
  });
}

// ---- routes -----------------------------------------------------------------------------------

const idOf = (req: FastifyRequest) => toStringParam(req.input.id);

export default async function adminAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_users");
  const erasing = staffRoutes(app, ctx, "delete_user_data");

  routes.get(SECTION, (req, reply, staff) => renderAccountList(ctx, req, reply, staff));

  routes.get("/admin/accounts/:id", (_req, reply, staff) => showAccount(ctx, reply, staff, idOf(staff.req)));

  /** A one-button change on the account: the service, then back to the account page. */
  const change = (
    path: string,
    notice: string,
    act: (ctx: Ctx, moderator: Moderator, id: string | undefined) => Promise<unknown>,
  ) =>
    routes.post(`/admin/accounts/:id/${path}`, async (req, reply, staff) => {
      await act(ctx, staff.moderator, idOf(req));
      return redirectWithNotice(reply, accountPath(idOf(req)!), notice);
    });
  change("approve", "approved", approveAccount);
  change("enable", "enabled", enableAccount);
  change("unsilence", "unsilenced", unsilenceAccount);
  change("unsuspend", "unsuspended", unsuspendAccount);
  change("unsensitive", "unsensitized", unsensitiveAccount);

  // A rejected sign-up is gone: back to those still waiting.
  routes.post("/admin/accounts/:id/reject", async (req, reply, staff) => {
    await rejectAccount(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, "/admin/pending_accounts", "rejected");
  });

  // As the API's DELETE: Delete User Data, for a suspended account only.
  erasing.post("/admin/accounts/:id/delete_data", async (req, reply, staff) => {
    await deleteAccountData(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, accountPath(idOf(req)!), "deleted");
  });

  routes.post("/admin/accounts/:id/notes", async (req, reply, staff) => {
    const content = toStringParam(req.input.content);
    try {
      await createModerationNote(ctx, staff.moderator, idOf(req), content);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return showAccount(ctx, reply, staff, idOf(req), { status: 422, alert: error.message, draft: content });
    }
    return redirectWithNotice(reply, accountPath(idOf(req)!), "note_created");
  });

  routes.post("/admin/account_moderation_notes/:id/delete", async (req, reply, staff) => {
    const note = await deleteModerationNote(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, accountPath(note.target_account_id), "note_deleted");
  });
}
