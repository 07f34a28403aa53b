/**
 * The accounts section of the admin area (Mastodon's Admin::AccountsController,
 * AccountActionsController and AccountModerationNotesController): the list of accounts with
 * Mastodon's filters, one account with its strikes, reports and moderators' notes, the actions
 * that lift a measure (enable, unsilence, unsuspend, unsensitive), approving or rejecting a
 * sign-up, deleting a suspended account's data, and the form of a moderation action (warn, mark
 * sensitive, freeze, limit, suspend) that a report's page opens with `?report_id=`. Every change
 * is the admin API's service, so it is checked (the moderator's role must outrank the target's),
 * audited and takes effect exactly as from the API.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, ReportRow, UserRoleRow, UserRow } from "../../db/schema.ts";
import type { PageParams } from "../../db/paging.ts";
import { Unprocessable } from "../../errors.ts";
import { storedFields } from "../../entities/account.ts";
import { EVERYONE_ROLE_ID, hasPermission, listRoles } from "../../services/accounts/roles.ts";
import { ACTION_TYPES, takeAccountAction, type AccountActionType } from "../../services/admin/account_actions.ts";
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
  handleOf,
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
  warningPresets,
  withUsers,
  type AccountFilter,
  type AccountWithUser,
  type Moderator,
} from "../../services/admin/accounts.ts";
import { reportOf } from "../../services/admin/reports.ts";
import { sanitizeHtml } from "../../text/sanitize.ts";
import { pageParams } from "../../api/pagination.ts";
import { toStringArray, toStringParam } from "../../api/params.ts";
import { html, SafeHtml } from "../html.ts";
import {
  actionButton,
  checkbox,
  checkForm,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  requireStaff,
  shortTime,
  type Staff,
} from "./frame.ts";

/** Accounts per page (Mastodon's admin lists show 40; `?limit=` up to 100). */
export const PAGE_SIZE = 40;
const MAX_PAGE_SIZE = 100;

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

/** What each action does, in the words of the action form. */
const ACTION_LABELS: Record<AccountActionType, { label: string; hint: string }> = {
  none: { label: "Warn", hint: "Send a warning only; nothing else changes." },
  sensitive: { label: "Mark media as sensitive", hint: "Their pictures and videos are shown behind a warning." },
  disable: { label: "Freeze", hint: "They can no longer sign in; the account and its posts stay visible." },
  silence: {
    label: "Limit",
    hint: "Their posts leave the public timelines; their followers still see them.",
  },
  suspend: {
    label: "Suspend",
    hint: "The account and its posts disappear everywhere and they are signed out. Its data can be deleted afterwards.",
  },
};

/** The words the strikes table uses for what was done (strikes use a few more names than the form). */
const STRIKE_LABELS: Record<string, string> = {
  none: "Warning",
  sensitive: "Media marked sensitive",
  disable: "Frozen",
  silence: "Limited",
  suspend: "Suspended",
  mark_statuses_as_sensitive: "Posts marked sensitive",
  delete_statuses: "Posts deleted",
};

const accountPath = (id: string) => `/admin/accounts/${id}`;

/** `@alice` for a local account, `@rita@remote.example` for a remote one. */
export const atHandle = (account: AccountRow) => `@${handleOf(account)}`;

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

/**
 * "Newer" and "Older" links of a list (newest first) over `path` with `params` kept: older pages
 * by `max_id`, newer ones by `min_id`, as the API's paging does.
 */
export function pagerLinks(
  path: string,
  params: Record<string, string | undefined>,
  rows: ReadonlyArray<{ id: string }>,
  page: PageParams,
): SafeHtml {
  const link = (cursor: Record<string, string>, label: string) => {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries({ ...params, ...cursor })) if (value) query.set(key, value);
    return html`<a href="${path}?${query.toString()}">${label}</a>`;
  };
  const full = rows.length > 0 && rows.length >= page.limit;
  const newer = rows.length > 0 && (page.maxId !== undefined || (page.minId !== undefined && full));
  const older = full || (page.minId !== undefined && rows.length > 0);
  if (!newer && !older) return html``;
  return html`<nav aria-label="Pages">${newer ? link({ min_id: rows[0].id }, "Newer") : ""}${older ? link({ max_id: rows[rows.length - 1].id }, "Older") : ""}</nav>`;
}

/** The list's page parameters: `?max_id=`/`?min_id=` and `?limit=` (40 by default). */
export function pageOf(req: FastifyRequest): PageParams {
  return pageParams(req.input, PAGE_SIZE, MAX_PAGE_SIZE);
}

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
    html`<div><label for="filter_${name}">${label}</label><select id="filter_${name}" name="${name}"><option value="">${all}</option>${options.map(([value, text]) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${text}</option>`)}</select></div>`;
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
      html`<tr><td><a href="${accountPath(item.account.id)}">${atHandle(item.account)}</a></td><td>${item.account.display_name}</td><td>${statusBadges(item)}</td><td>${roleName(item.role)}</td><td>${item.user?.email ?? ""}</td><td>${shortTime(item.user?.current_sign_in_at ?? item.account.last_status_at)}</td><td>${shortTime(item.account.created_at)}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Account</th><th scope="col">Display name</th><th scope="col">Status</th><th scope="col">Role</th><th scope="col">E-mail</th><th scope="col">Last active</th><th scope="col">Joined</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function renderAccountList(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, staff: Staff) {
  const query = listQueryOf(req);
  const page = pageOf(req);
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
  const limit = toStringParam(req.input.limit);
  return renderAdminPage(ctx, reply, staff, {
    title: "Accounts",
    section: SECTION,
    notices: NOTICES,
    body: html`${filterForm(query, roles)}<h2>Results</h2>${accountRows(items)}${pagerLinks(SECTION, { ...query, limit }, rows, page)}`,
  });
}

// ---- one account ------------------------------------------------------------------------------

function profileSection(ctx: Ctx, item: AccountWithUser): SafeHtml {
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
${account.suspended_at ? html`<tr><th scope="row">Suspended</th><td>${shortTime(account.suspended_at)}${account.deleted_at ? html` (data deleted ${shortTime(account.deleted_at)})` : ""}</td></tr>` : ""}
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
      html`<tr><td>${shortTime(s.created_at)}</td><td>${STRIKE_LABELS[s.action] ?? s.action}${s.overruled_at ? " (overruled on appeal)" : ""}</td><td>${s.moderator ? `@${s.moderator}` : ""}</td><td style="white-space:pre-wrap">${s.text}</td><td>${s.report_id ? html`<a href="/admin/reports/${s.report_id}">Report #${s.report_id}</a>` : ""}</td></tr>`,
  );
  return html`<h2>Strikes</h2><table><thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Text</th><th scope="col">Report</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function reportTable(reports: readonly ReportRow[], count: number, heading: string, filter: string): SafeHtml {
  if (reports.length === 0) return html`<h3>${heading}</h3><p>None.</p>`;
  const rows = reports.map(
    (r) =>
      html`<tr><td><a href="/admin/reports/${r.id}">Report #${r.id}</a></td><td>${r.category}</td><td>${r.comment}</td><td>${r.action_taken_at ? "Resolved" : "Open"}</td><td>${shortTime(r.created_at)}</td></tr>`,
  );
  const more = count > reports.length ? html`<p><a href="/admin/reports?${filter}">All ${count} reports</a></p>` : "";
  return html`<h3>${heading}</h3><table><thead><tr><th scope="col">Report</th><th scope="col">Category</th><th scope="col">Comment</th><th scope="col">State</th><th scope="col">Filed</th></tr></thead><tbody>${rows}</tbody></table>${more}`;
}

function notesSection(staff: Staff, account: AccountRow, notes: readonly ModerationNote[], draft?: string): SafeHtml {
  const list = notes.length
    ? html`<ul class="notes">${notes.map(
        (n) =>
          html`<li><p><strong>@${n.author}</strong> <span class="muted">${shortTime(n.created_at)}</span></p><p style="white-space:pre-wrap">${n.content}</p>${n.mayDelete ? postForm(staff, `/admin/account_moderation_notes/${n.id}/delete`, html`<button type="submit" class="secondary" aria-label="${`Delete the note by @${n.author} of ${shortTime(n.created_at)}`}">Delete note</button>`, { inline: true }) : ""}</li>`,
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
  const [mayAct, strikes, reports, notes] = await Promise.all([
    mayActOn(ctx.db.kysely, staff.moderator, account),
    strikesOf(ctx, account.id),
    reportsOfAccount(ctx, account.id),
    moderationNotesOf(ctx, account.id, staff.moderator),
  ]);
  const handle = atHandle(account);
  return renderAdminPage(ctx, reply, staff, {
    title: handle,
    section: SECTION,
    status: options.status,
    alert: options.alert,
    notices: NOTICES,
    body: html`<nav aria-label="Breadcrumb"><a href="${SECTION}">All accounts</a></nav>
${profileSection(ctx, item)}
${item.user ? userSection(item.user, item.role) : ""}
${actionsSection(staff, item, mayAct)}
${strikesSection(strikes)}
<h2>Reports</h2>
${reportTable(reports.against, reports.againstCount, `Reports against ${handle}`, `target_account_id=${account.id}`)}
${reportTable(reports.by, reports.byCount, `Reports by ${handle}`, `account_id=${account.id}`)}
${notesSection(staff, account, notes, options.draft)}`,
  });
}

// ---- the action form --------------------------------------------------------------------------

interface ActionDraft {
  type?: string;
  reportId?: string;
  warningPresetId?: string;
  text?: string;
  sendEmail: boolean;
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

async function actionForm(
  ctx: Ctx,
  reply: FastifyReply,
  staff: Staff,
  account: AccountRow,
  draft: ActionDraft,
  options: { status?: number; alert?: string } = {},
) {
  const report = draft.reportId ? await reportOf(ctx, draft.reportId) : undefined;
  const reporter = report ? await accountOf(ctx.db.kysely, report.account_id) : undefined;
  const presets = await warningPresets(ctx);
  const local = account.domain === null;
  // The service refuses `disable` for remote accounts: they have no login to freeze.
  const types = ACTION_TYPES.filter((t) => local || t !== "disable");
  const radios = types.map(
    (t) =>
      html`<div><input id="type_${t}" type="radio" name="type" value="${t}"${draft.type === t ? html` checked` : ""} required aria-describedby="type_${t}_hint"> <label for="type_${t}" style="display:inline">${ACTION_LABELS[t].label}</label> <span id="type_${t}_hint" class="muted">${ACTION_LABELS[t].hint}</span></div>`,
  );
  const statusCount = reportedPostCount(report);
  const about =
    report && reporter
      ? html`<p>This action answers <a href="/admin/reports/${report.id}">report #${report.id}</a> (${report.category}) by ${atHandle(reporter)}${report.comment ? html`: “${report.comment}”` : ""}.
${statusCount ? html` The ${statusCount === 1 ? "reported post is" : `${statusCount} reported posts are`} attached to the warning, so ${atHandle(account)} can see what it is about.` : ""}</p>
<p class="muted">Warning only resolves this report; any other action resolves every open report about ${atHandle(account)}.</p>`
      : "";
  const presetSelect = presets.length
    ? html`<label for="warning_preset_id">Warning preset</label><select id="warning_preset_id" name="warning_preset_id"><option value="">None</option>${presets.map((p) => html`<option value="${p.id}"${p.id === draft.warningPresetId ? html` selected` : ""}>${[p.title, p.text.length > 60 ? `${p.text.slice(0, 60)}…` : p.text].filter(Boolean).join(" – ")}</option>`)}</select>`
    : "";
  const body = postForm(
    staff,
    `${accountPath(account.id)}/action`,
    html`<fieldset><legend>What to do</legend>${radios}</fieldset>
${presetSelect}
<label for="text">Warning text <span class="muted">(${[presets.length ? "added after the preset's text" : "", "kept with the strike", local ? "the user reads it in the e-mail" : ""].filter(Boolean).join("; ")})</span></label><textarea id="text" name="text" rows="5">${draft.text ?? ""}</textarea>
${local ? html`<div><input id="send_email_notification" type="checkbox" name="send_email_notification" value="1"${draft.sendEmail ? html` checked` : ""}> <label for="send_email_notification" style="display:inline">Send ${atHandle(account)} an e-mail about it</label></div>` : ""}
<button type="submit">Take action</button>`,
    { fields: { report_id: report?.id } },
  );
  return renderAdminPage(ctx, reply, staff, {
    title: `Take action on ${atHandle(account)}`,
    section: SECTION,
    status: options.status,
    alert: options.alert,
    body: html`<nav aria-label="Breadcrumb"><a href="${accountPath(account.id)}">Back to ${atHandle(account)}</a></nav>${about}${body}`,
  });
}

// ---- routes -----------------------------------------------------------------------------------

const idOf = (req: FastifyRequest) => toStringParam(req.input.id);

export default async function adminAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get(SECTION, async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    return renderAccountList(ctx, req, reply, staff);
  });

  app.get("/admin/accounts/:id", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    return showAccount(ctx, reply, staff, idOf(req));
  });

  /** A one-button change on the account: the service, then back to the account page. */
  const change = (
    path: string,
    notice: string,
    act: (ctx: Ctx, moderator: Moderator, id: string | undefined) => Promise<unknown>,
  ) =>
    app.post(`/admin/accounts/:id/${path}`, async (req, reply) => {
      const staff = await requireStaff(ctx, req, reply, "manage_users");
      if (!staff) return reply;
      checkForm(req);
      await act(ctx, staff.moderator, idOf(req));
      return redirectWithNotice(reply, accountPath(idOf(req)!), notice);
    });
  change("approve", "approved", approveAccount);
  change("enable", "enabled", enableAccount);
  change("unsilence", "unsilenced", unsilenceAccount);
  change("unsuspend", "unsuspended", unsuspendAccount);
  change("unsensitive", "unsensitized", unsensitiveAccount);

  // A rejected sign-up is gone: back to those still waiting.
  app.post("/admin/accounts/:id/reject", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    checkForm(req);
    await rejectAccount(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, "/admin/pending_accounts", "rejected");
  });

  // As the API's DELETE: Delete User Data, for a suspended account only.
  app.post("/admin/accounts/:id/delete_data", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "delete_user_data");
    if (!staff) return reply;
    checkForm(req);
    await deleteAccountData(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, accountPath(idOf(req)!), "deleted");
  });

  app.get("/admin/accounts/:id/action", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    const account = await accountOf(ctx.db.kysely, idOf(req));
    return actionForm(ctx, reply, staff, account, {
      type: field(req, "type"),
      reportId: field(req, "report_id"),
      sendEmail: true,
    });
  });

  app.post("/admin/accounts/:id/action", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    checkForm(req);
    const draft: ActionDraft = {
      type: field(req, "type"),
      reportId: field(req, "report_id"),
      warningPresetId: field(req, "warning_preset_id"),
      text: field(req, "text"),
      // An unticked box is not sent: absent means no e-mail here (the API's default is to send).
      sendEmail: checkbox(req, "send_email_notification"),
    };
    let account: AccountRow;
    try {
      account = await takeAccountAction(ctx, staff.moderator, idOf(req), {
        type: draft.type,
        reportId: draft.reportId,
        warningPresetId: draft.warningPresetId,
        text: draft.text,
        sendEmailNotification: draft.sendEmail,
      });
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      const target = await accountOf(ctx.db.kysely, idOf(req));
      const alert = draft.type ? error.message : "Choose what to do.";
      return actionForm(ctx, reply, staff, target, draft, { status: 422, alert });
    }
    if (draft.reportId) return redirectWithNotice(reply, `/admin/reports/${draft.reportId}`, "action_taken");
    return redirectWithNotice(reply, accountPath(account.id), "action_taken");
  });

  app.post("/admin/accounts/:id/notes", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    checkForm(req);
    const content = toStringParam(req.input.content);
    try {
      await createModerationNote(ctx, staff.moderator, idOf(req), content);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return showAccount(ctx, reply, staff, idOf(req), { status: 422, alert: error.message, draft: content });
    }
    return redirectWithNotice(reply, accountPath(idOf(req)!), "note_created");
  });

  app.post("/admin/account_moderation_notes/:id/delete", async (req, reply) => {
    const staff = await requireStaff(ctx, req, reply, "manage_users");
    if (!staff) return reply;
    checkForm(req);
    const note = await deleteModerationNote(ctx, staff.moderator, idOf(req));
    return redirectWithNotice(reply, accountPath(note.target_account_id), "note_deleted");
  });
}
