/**
 * Domain allows in the admin area (Mastodon's Admin::DomainAllowsController): the allow-list of
 * limited federation mode, a form that adds a domain, and taking one off. The list matters only
 * when LIMITED_FEDERATION_MODE is on; the page says which way the server runs. In that mode,
 * taking a domain off removes its accounts and what they had here (services/admin/domain_allows.ts),
 * so the button says so.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Ctx } from "../../context.ts";
import type { DomainAllowRow } from "../../db/schema.ts";
import { ApiError, Unprocessable } from "../../errors.ts";
import { toId } from "../../api/params.ts";
import { allowDomain, listDomainAllows, unallowDomain } from "../../services/admin/domain_allows.ts";
import { html, type SafeHtml } from "../html.ts";
import { shortTime } from "./display.ts";
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

const SECTION = "/admin/domain_allows";

const NOTICES = {
  created: "The domain is allowed.",
  removed: "The domain is no longer allowed.",
};

function modeLine(limited: boolean): SafeHtml {
  return limited
    ? html`<p>This server runs in limited federation mode (LIMITED_FEDERATION_MODE): it federates only with the domains listed here.</p>`
    : html`<p>Limited federation mode (LIMITED_FEDERATION_MODE) is off: this server federates with every server it has not blocked, and this list has no effect until the mode is turned on.</p>`;
}

function allowsTable(staff: Staff, rows: DomainAllowRow[], limited: boolean): SafeHtml {
  if (rows.length === 0) return html`<p>No domain is allowed.</p>`;
  const lines = rows.map(
    (row) =>
      html`<tr><td>${row.domain}</td><td>${shortTime(row.created_at)}</td><td>${actionButton(staff, `${SECTION}/${row.id}/remove`, limited ? "Stop federating" : "Remove", { danger: true, ariaLabel: limited ? `Stop federating with ${row.domain}` : `Remove ${row.domain}` })}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Domain</th><th scope="col">Allowed on (UTC)</th><th scope="col">Actions</th></tr></thead><tbody>${lines}</tbody></table>`;
}

export default async function adminDomainAllowRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_federation");
  const limited = ctx.config.limitedFederationMode;

  function newPage(reply: FastifyReply, staff: Staff, domain: string, error?: ApiError) {
    return renderAdminPage(ctx, reply, staff, {
      title: "Allow a domain",
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${modeLine(limited)}
${postForm(
  staff,
  SECTION,
  html`<label for="domain">Domain</label><input type="text" id="domain" name="domain" value="${domain}" required aria-describedby="domain_hint" autocomplete="off">
<p class="muted" id="domain_hint">Only this exact domain: allowing example.com does not allow social.example.com.</p>
<button type="submit">Allow the domain</button>`,
)}
<nav><a href="${SECTION}">Back to the allowed domains</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req);
    const rows = await listDomainAllows(ctx, page);
    return renderAdminPage(ctx, reply, staff, {
      title: "Domain allows",
      section: SECTION,
      notices: NOTICES,
      body: html`${modeLine(limited)}${limited ? html`<p>Taking a domain off the list removes its accounts and everything they had here.</p>` : ""}
<p><a href="${SECTION}/new">Allow a domain</a></p>
${allowsTable(staff, rows, limited)}${pageLinks(
        SECTION,
        { limit: field(req, "limit") },
        page,
        rows.map((r) => r.id),
      )}`,
    });
  });

  routes.get(`${SECTION}/new`, async (req, reply, staff) => {
    return newPage(reply, staff, "");
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const domain = field(req, "domain");
    try {
      await allowDomain(ctx, domain, staff.moderator.account.id);
    } catch (error) {
      if (error instanceof Unprocessable) return newPage(reply, staff, domain ?? "", error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.post(`${SECTION}/:id/remove`, async (req, reply, staff) => {
    await unallowDomain(ctx, toId(req.input.id), staff.moderator.account.id);
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
