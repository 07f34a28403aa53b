/**
 * The frame every page of the admin area (/admin) shares: who may open a page (a signed-in user
 * whose role grants the page's permission, as Mastodon's Admin::BaseController and its policies
 * check), the section navigation that shows only what the role may open, the CSRF check of every
 * form, and the redirect-after-post with a notice. Pages call the same services the admin API
 * calls, so every action is checked, audited and takes effect the same way from both.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { UserRoleRow, UserRow } from "../../db/schema.ts";
import { Forbidden, Unprocessable } from "../../errors.ts";
import { effectiveRole, hasPermission, type Permission } from "../../services/accounts/roles.ts";
import type { Moderator } from "../../services/admin/accounts.ts";
import { toStringParam } from "../../api/params.ts";
import { hiddenFields, html, type SafeHtml } from "../html.ts";
import { renderPage } from "../render.ts";
import { csrfToken, csrfValid, requireSession, restrictionOf, type WebUser } from "../session.ts";

/** The admin area's sections, in the navigation's order, with the permission each needs. */
export const ADMIN_SECTIONS = [
  { path: "/admin/reports", label: "Reports", permission: "manage_reports" },
  { path: "/admin/accounts", label: "Accounts", permission: "manage_users" },
  { path: "/admin/pending_accounts", label: "Pending sign-ups", permission: "manage_users" },
  { path: "/admin/disputes/appeals", label: "Appeals", permission: "manage_appeals" },
  { path: "/admin/domain_blocks", label: "Domain blocks", permission: "manage_federation" },
  { path: "/admin/domain_allows", label: "Domain allows", permission: "manage_federation" },
  { path: "/admin/email_domain_blocks", label: "E-mail domain blocks", permission: "manage_blocks" },
  { path: "/admin/ip_blocks", label: "IP blocks", permission: "manage_blocks" },
  { path: "/admin/rules", label: "Server rules", permission: "manage_rules" },
  { path: "/admin/warning_presets", label: "Warning presets", permission: "manage_settings" },
  { path: "/admin/settings", label: "Server settings", permission: "manage_settings" },
  { path: "/admin/announcements", label: "Announcements", permission: "manage_announcements" },
  { path: "/admin/action_logs", label: "Audit log", permission: "view_audit_log" },
] as const satisfies ReadonlyArray<{ path: string; label: string; permission: Permission }>;

export type AdminSection = (typeof ADMIN_SECTIONS)[number]["path"];

/** A signed-in moderator on an admin page. */
export interface Staff {
  req: FastifyRequest;
  session: WebUser;
  role: UserRoleRow;
  /** Who acts, as the admin services take it. */
  moderator: Moderator;
  /** The CSRF token for this page's forms. */
  csrf: string;
}

/** A form that came without its page's CSRF token (expired, or sent from another site). */
export class FormExpired extends Unprocessable {
  constructor() {
    super("This form has expired. Please go back, reload the page and try again.");
  }
}

/** Whether `user`'s role opens any section of the admin area (the settings then link to it). */
export async function mayAdminister(ctx: Ctx, user: Pick<UserRow, "role_id">): Promise<boolean> {
  if (!user.role_id) return false;
  const role = await effectiveRole(ctx.db.kysely, user.role_id);
  return ADMIN_SECTIONS.some((s) => hasPermission(role, s.permission));
}

/**
 * The staff member opening a page that needs `permission`: undefined after sending the browser to
 * sign in; a 403 error (rendered as a page) for users whose role does not grant it.
 */
export async function requireStaff(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  permission: Permission,
): Promise<Staff | undefined> {
  const session = await requireSession(ctx, req, reply);
  if (!session) return undefined;
  if (restrictionOf(session)) throw new Forbidden("You are not allowed to open this page.");
  const role = await effectiveRole(ctx.db.kysely, session.user.role_id);
  if (!hasPermission(role, permission)) throw new Forbidden("You are not allowed to open this page.");
  return { req, session, role, moderator: { account: session.account, role }, csrf: csrfToken(ctx, req, reply) };
}

/** What a section's route does once its visitor is known to be staff with the section's permission. */
export type StaffHandler = (req: FastifyRequest, reply: FastifyReply, staff: Staff) => Promise<unknown>;

/**
 * The routes of a section whose pages need `permission`: each handler runs only for staff whose
 * role grants it (requireStaff), and a POST's only once its form passed the CSRF check (checkForm),
 * so no handler can forget either.
 */
export function staffRoutes(app: FastifyInstance, ctx: Ctx, permission: Permission) {
  const guarded = (post: boolean, handle: StaffHandler) => async (req: FastifyRequest, reply: FastifyReply) => {
    const staff = await requireStaff(ctx, req, reply, permission);
    if (!staff) return reply;
    if (post) checkForm(req);
    return handle(req, reply, staff);
  };
  return {
    get(path: string, handle: StaffHandler): void {
      app.get(path, guarded(false, handle));
    },
    post(path: string, handle: StaffHandler): void {
      app.post(path, guarded(true, handle));
    },
  };
}

/** Throws FormExpired unless the posted form carries this browser's CSRF token. */
export function checkForm(req: FastifyRequest): void {
  if (!csrfValid(req)) throw new FormExpired();
}

/** A form's text field, trimmed; undefined when absent or empty. */
export function field(req: FastifyRequest, name: string): string | undefined {
  const value = toStringParam(req.input[name])?.trim();
  return value === "" ? undefined : value;
}

/** A checkbox: on when the browser sent it with any value but "0"/"false". */
export function checkbox(req: FastifyRequest, name: string): boolean {
  const value = toStringParam(req.input[name]);
  return value !== undefined && value !== "0" && value !== "false";
}

/** ` checked` on a checkbox or radio button that is on. */
export const checked = (on: boolean) => (on ? html` checked` : "");

/** ` selected` on the chosen option of a menu. */
export const selected = (on: boolean) => (on ? html` selected` : "");

/** A form that posts to `action` with the CSRF token and `fields`; `body` holds its inputs and button. */
export function postForm(
  staff: Staff,
  action: string,
  body: SafeHtml,
  options: { fields?: Record<string, string | undefined>; inline?: boolean } = {},
): SafeHtml {
  return html`<form method="post" action="${action}"${options.inline ? html` class="inline"` : ""}>${hiddenFields({ authenticity_token: staff.csrf, ...options.fields })}${body}</form>`;
}

/**
 * A one-button form (approve, resolve, remove …); `danger` paints it red. Where a page shows the
 * same button on several rows, `ariaLabel` names what this one acts on ("Remove rule 3") while
 * `label` stays the short visible text ("Remove").
 */
export function actionButton(
  staff: Staff,
  action: string,
  label: string,
  options: {
    danger?: boolean;
    secondary?: boolean;
    ariaLabel?: string;
    fields?: Record<string, string | undefined>;
  } = {},
): SafeHtml {
  const kind = options.danger ? "danger" : options.secondary ? "secondary" : "";
  const button = html`<button type="submit"${kind ? html` class="${kind}"` : ""}${options.ariaLabel ? html` aria-label="${options.ariaLabel}"` : ""}>${label}</button>`;
  return postForm(staff, action, button, { fields: options.fields, inline: true });
}

/**
 * After a form's action: back to `path` with the key of a notice the page shows (PRG: reloading
 * the page does not post again). The page maps keys to texts, so no text travels in the URL.
 */
export function redirectWithNotice(reply: FastifyReply, path: string, notice: string): FastifyReply {
  const separator = path.includes("?") ? "&" : "?";
  return reply.redirect(`${path}${separator}notice=${encodeURIComponent(notice)}`, 303);
}

export interface AdminPageOptions {
  title: string;
  /** The navigation entry to mark as the current page. */
  section: AdminSection;
  body: SafeHtml;
  status?: number;
  alert?: string;
  /** The texts of the notices this page may be redirected to with (see redirectWithNotice). */
  notices?: Record<string, string>;
}

/** The section navigation: only what `role` may open. */
function sectionNav(role: UserRoleRow, current: AdminSection): SafeHtml {
  const links = ADMIN_SECTIONS.filter((s) => hasPermission(role, s.permission)).map(
    (s) => html`<a href="${s.path}"${s.path === current ? html` aria-current="page"` : ""}>${s.label}</a>`,
  );
  return html`<nav class="sections" aria-label="Administration">${links}<a href="/settings">Your account</a></nav>`;
}

/** Sends an admin page: the section navigation, then the page's body, in the wide layout. */
export function renderAdminPage(ctx: Ctx, reply: FastifyReply, staff: Staff, options: AdminPageOptions) {
  const key = toStringParam(staff.req.input.notice);
  const notice = key ? options.notices?.[key] : undefined;
  return renderPage(ctx, reply, {
    title: options.title,
    status: options.status,
    alert: options.alert,
    notice,
    wide: true,
    body: html`${sectionNav(staff.role, options.section)}${options.body}`,
  });
}
