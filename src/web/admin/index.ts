/**
 * The admin area (/admin): server-rendered pages for moderators, signed in with the same browser
 * session as /settings. Each section is its own module; this one mounts them in one scope whose
 * errors are pages (a refusal, an unknown record or a rejected form is shown, not sent as JSON).
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { ApiError, Forbidden } from "../../errors.ts";
import { html } from "../html.ts";
import { renderPage } from "../render.ts";
import { requireSession } from "../session.ts";
import { effectiveRole, hasPermission } from "../../services/accounts/roles.ts";
import { ADMIN_SECTIONS } from "./frame.ts";
import adminReportRoutes from "./reports.ts";
import adminReportPageRoutes from "./report.ts";
import adminAccountRoutes from "./accounts.ts";
import adminAccountActionRoutes from "./account_action.ts";
import pendingAccountRoutes from "./pending_accounts.ts";
import adminAppealRoutes from "./appeals.ts";
import adminDomainBlockRoutes from "./domain_blocks.ts";
import adminDomainAllowRoutes from "./domain_allows.ts";
import adminEmailDomainBlockRoutes from "./email_domain_blocks.ts";
import adminIpBlockRoutes from "./ip_blocks.ts";
import adminRuleRoutes from "./rules.ts";
import adminSettingsRoutes from "./settings.ts";
import adminAnnouncementRoutes from "./announcements.ts";
import adminActionLogRoutes from "./action_logs.ts";
import adminWarningPresetRoutes from "./warning_presets.ts";

type AdminModule = (app: FastifyInstance, ctx: Ctx) => Promise<void>;

/** The sections' route modules. */
const SECTIONS: AdminModule[] = [
  adminReportRoutes,
  adminReportPageRoutes,
  adminAccountRoutes,
  adminAccountActionRoutes,
  pendingAccountRoutes,
  adminAppealRoutes,
  adminDomainBlockRoutes,
  adminDomainAllowRoutes,
  adminEmailDomainBlockRoutes,
  adminIpBlockRoutes,
  adminRuleRoutes,
  adminSettingsRoutes,
  adminAnnouncementRoutes,
  adminActionLogRoutes,
  adminWarningPresetRoutes,
];

export default async function adminRoutes(app: FastifyInstance, ctx: Ctx) {
  await app.register(async (scope) => {
    scope.setErrorHandler(async (error, req, reply) => {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      const title = error.status === 403 ? "Not allowed" : error.status === 404 ? "Not found" : "Not done";
      return renderPage(ctx, reply, {
        title,
        status: error.status,
        wide: true,
        alert: error.message,
        body: html`<nav><a href="/admin">Administration</a><a href="/settings">Your account</a></nav>`,
      });
    });

    // /admin opens the first section the role may open.
    scope.get("/admin", async (req, reply) => {
      const session = await requireSession(ctx, req, reply);
      if (!session) return reply;
      const role = await effectiveRole(ctx.db.kysely, session.user.role_id);
      const first = ADMIN_SECTIONS.find((s) => hasPermission(role, s.permission));
      if (!first) throw new Forbidden("You are not allowed to open this page.");
      return reply.redirect(first.path, 303);
    });

    for (const section of SECTIONS) await section(scope, ctx);
  });
}
