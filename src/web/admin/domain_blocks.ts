/**
 * Domain blocks in the admin area (Mastodon's Admin::DomainBlocksController): the list of blocked
 * servers, the form that blocks one (severity, rejected media and reports, obfuscation, comments),
 * its edit form, and lifting a block. Everything goes through services/admin/domain_blocks.ts, as
 * the admin API does, so the block is applied, undone and audited the same way from both.
 *
 * Suspending a server (a new block, or an existing one raised to suspend) first shows what it
 * would cut — the accounts known there and their follows with people here — and asks to confirm,
 * as Mastodon does: a suspension removes their content, which lifting the block does not bring back.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { DomainBlockRow, DomainBlockSeverity } from "../../db/schema.ts";
import { ApiError, Unprocessable, ValidationFailed } from "../../errors.ts";
import { toId, toStringParam } from "../../api/params.ts";
import {
  checkNewDomainBlock,
  createDomainBlock,
  DomainAlreadyBlocked,
  domainBlockOf,
  listDomainBlocks,
  removeDomainBlock,
  SEVERITIES,
  suspensionImpact,
  updateDomainBlock,
  type DomainBlockParams,
} from "../../services/admin/domain_blocks.ts";
import { html, type SafeHtml } from "../html.ts";
import { plural, shortTime } from "./display.ts";
import {
  actionButton,
  checkbox,
  checked,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  selected,
  type Staff,
  staffRoutes,
} from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";

const SECTION = "/admin/domain_blocks";

const NOTICES = {
  created: "The domain is blocked.",
  updated: "The block is changed.",
  removed: "The block is lifted.",
};

const SEVERITY_LABELS: Record<DomainBlockSeverity, string> = {
  noop: "None",
  silence: "Limit",
  suspend: "Suspend",
};

const SEVERITY_HINTS: Record<DomainBlockSeverity, string> = {
  noop: "only the options below apply",
  silence: "its accounts are kept off public timelines, and only their followers here see them",
  suspend: "everything from the server is removed and nothing more is accepted or sent",
};

/** What the form holds: a block's settings as stored, or as just typed. */
interface BlockForm {
  domain: string;
  severity: string;
  rejectMedia: boolean;
  rejectReports: boolean;
  obfuscate: boolean;
  privateComment: string;
  publicComment: string;
}

const EMPTY_FORM: BlockForm = {
  domain: "",
  severity: "silence",
  rejectMedia: false,
  rejectReports: false,
  obfuscate: false,
  privateComment: "",
  publicComment: "",
};

function formOf(row: DomainBlockRow): BlockForm {
  return {
    domain: row.domain,
    severity: row.severity,
    rejectMedia: row.reject_media,
    rejectReports: row.reject_reports,
    obfuscate: row.obfuscate,
    privateComment: row.private_comment ?? "",
    publicComment: row.public_comment ?? "",
  };
}

function postedForm(req: FastifyRequest, domain?: string): BlockForm {
  return {
    domain: domain ?? field(req, "domain") ?? "",
    severity: field(req, "severity") ?? "",
    rejectMedia: checkbox(req, "reject_media"),
    rejectReports: checkbox(req, "reject_reports"),
    obfuscate: checkbox(req, "obfuscate"),
    privateComment: field(req, "private_comment") ?? "",
    publicComment: field(req, "public_comment") ?? "",
  };
}

/** The form as the service takes it; an empty comment clears it. */
function paramsOf(form: BlockForm): DomainBlockParams {
  return {
    domain: form.domain,
    // None chosen: a new block's default (silence), an edited block's own.
    severity: form.severity || undefined,
    rejectMedia: form.rejectMedia,
    rejectReports: form.rejectReports,
    obfuscate: form.obfuscate,
    privateComment: form.privateComment || null,
    publicComment: form.publicComment || null,
  };
}

/** The severity a form names, if any; the service would answer an unknown one on update with a 500. */
function checkSeverity(form: BlockForm): void {
  if (form.severity && !SEVERITIES.includes(form.severity as DomainBlockSeverity))
    throw new ValidationFailed("Severity is not included in the list");
}

/** The form's fields as hidden inputs: what the confirmation step posts again. */
function carried(form: BlockForm): Record<string, string | undefined> {
  return {
    domain: form.domain,
    severity: form.severity,
    reject_media: form.rejectMedia ? "1" : undefined,
    reject_reports: form.rejectReports ? "1" : undefined,
    obfuscate: form.obfuscate ? "1" : undefined,
    private_comment: form.privateComment || undefined,
    public_comment: form.publicComment || undefined,
    confirm: "1",
  };
}

function blockFields(form: BlockForm, existing: boolean): SafeHtml {
  const domain = existing
    ? html`<p>Domain: <strong>${form.domain}</strong></p>`
    : html`<label for="domain">Domain</label><input type="text" id="domain" name="domain" value="${form.domain}" required aria-describedby="domain_hint" autocomplete="off">
<p class="muted" id="domain_hint">The block covers the domain and every domain under it (blocking example.com covers social.example.com).</p>`;
  const severities = SEVERITIES.map(
    (s) =>
      html`<option value="${s}"${selected(form.severity === s)}>${SEVERITY_LABELS[s]}: ${SEVERITY_HINTS[s]}</option>`,
  );
  return html`${domain}
<label for="severity">Severity</label><select id="severity" name="severity">${severities}</select>
<label><input type="checkbox" name="reject_media" value="1" aria-describedby="reject_media_hint"${checked(form.rejectMedia)}> Reject media files</label>
<p class="muted" id="reject_media_hint">Images and videos from this server are not stored or shown here. A suspension does this anyway.</p>
<label><input type="checkbox" name="reject_reports" value="1" aria-describedby="reject_reports_hint"${checked(form.rejectReports)}> Reject reports</label>
<p class="muted" id="reject_reports_hint">Reports sent by this server are ignored. A suspension does this anyway.</p>
<label><input type="checkbox" name="obfuscate" value="1" aria-describedby="obfuscate_hint"${checked(form.obfuscate)}> Hide part of the domain in the public list</label>
<p class="muted" id="obfuscate_hint">Where the list of limited servers is shown to the public, part of this domain's name is starred out.</p>
<label for="private_comment">Note for moderators</label><input type="text" id="private_comment" name="private_comment" value="${form.privateComment}" aria-describedby="private_comment_hint">
<p class="muted" id="private_comment_hint">Only staff see it.</p>
<label for="public_comment">Public reason</label><input type="text" id="public_comment" name="public_comment" value="${form.publicComment}" aria-describedby="public_comment_hint">
<p class="muted" id="public_comment_hint">Shown with the domain where the list of limited servers is public.</p>`;
}

const yesNo = (on: boolean) => (on ? "Yes" : "No");

function blocksTable(staff: Staff, rows: DomainBlockRow[]): SafeHtml {
  if (rows.length === 0) return html`<p>No domain is blocked.</p>`;
  const lines = rows.map(
    (row) => html`<tr><td><a href="${SECTION}/${row.id}/edit">${row.domain}</a></td>
<td>${SEVERITY_LABELS[row.severity]}</td><td>${yesNo(row.reject_media)}</td><td>${yesNo(row.reject_reports)}</td><td>${yesNo(row.obfuscate)}</td>
<td>${row.public_comment ?? ""}</td><td>${row.private_comment ?? ""}</td><td>${shortTime(row.created_at)}</td>
<td><a href="${SECTION}/${row.id}/edit" aria-label="${`Edit the block of ${row.domain}`}">Edit</a> ${actionButton(staff, `${SECTION}/${row.id}/remove`, "Lift the block", { danger: true, ariaLabel: `Lift the block of ${row.domain}` })}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Domain</th><th scope="col">Severity</th><th scope="col">Media rejected</th><th scope="col">Reports rejected</th><th scope="col">Obfuscated</th><th scope="col">Public reason</th><th scope="col">Note for moderators</th><th scope="col">Blocked on (UTC)</th><th scope="col">Actions</th></tr></thead>
<tbody>${lines}</tbody></table>`;
}

export default async function adminDomainBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_federation");

  /** The new-block form again, with what was typed and why it was refused. */
  function newPage(reply: FastifyReply, staff: Staff, form: BlockForm, error?: ApiError) {
    const existing = error instanceof DomainAlreadyBlocked ? error.existing : undefined;
    return renderAdminPage(ctx, reply, staff, {
      title: "Block a domain",
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${existing ? html`<p><a href="${SECTION}/${existing.id}/edit">Change the block of ${existing.domain}</a></p>` : ""}
${postForm(staff, SECTION, html`${blockFields(form, false)}<button type="submit">Block the domain</button>`)}
<nav><a href="${SECTION}">Back to the domain blocks</a></nav>`,
    });
  }

  function editPage(reply: FastifyReply, staff: Staff, row: DomainBlockRow, form: BlockForm, error?: ApiError) {
    return renderAdminPage(ctx, reply, staff, {
      title: `Block of ${row.domain}`,
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${postForm(staff, `${SECTION}/${row.id}`, html`${blockFields(form, true)}<button type="submit">Save the block</button>`)}
<h2>Lift the block</h2><p>Accounts the block suspended or limited are restored; content a suspension removed does not come back.</p>
${actionButton(staff, `${SECTION}/${row.id}/remove`, `Lift the block of ${row.domain}`, { danger: true })}
<nav><a href="${SECTION}">Back to the domain blocks</a></nav>`,
    });
  }

  /** The step before a suspension: what it would cut, and a button that posts the form again, confirmed. */
  async function confirmPage(reply: FastifyReply, staff: Staff, action: string, domain: string, form: BlockForm) {
    const impact = await suspensionImpact(ctx, domain);
    return renderAdminPage(ctx, reply, staff, {
      title: `Suspend ${domain}?`,
      section: SECTION,
      body: html`<p>Suspending ${domain} stops all contact with it and with every domain under it:</p>
<ul><li>nothing is sent there, and nothing from there is accepted;</li>
<li>the accounts known from there are suspended and their posts, media and profiles are removed from this server;</li>
<li>follows between them and people here are broken.</li></ul>
<p><strong>This will remove the content of ${plural(impact.accounts, "account")}, and break ${plural(impact.followers, "follow")} of them by people here and ${plural(impact.follows, "follow")} of people here by them.</strong> Lifting the block later does not bring any of it back.</p>
${postForm(staff, action, html`<button type="submit" class="danger">Suspend ${domain}</button>`, { fields: carried(form) })}
<nav><a href="${SECTION}">Cancel</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req);
    const rows = await listDomainBlocks(ctx, page);
    return renderAdminPage(ctx, reply, staff, {
      title: "Domain blocks",
      section: SECTION,
      notices: NOTICES,
      body: html`<p>Servers this one limits or refuses. <a href="${SECTION}/new">Block a domain</a></p>
${blocksTable(staff, rows)}${pageLinks(
        SECTION,
        { limit: field(req, "limit") },
        page,
        rows.map((r) => r.id),
      )}`,
    });
  });

  routes.get(`${SECTION}/new`, async (req, reply, staff) => {
    // Other pages link here with the domain filled in, as Mastodon's `_domain`.
    return newPage(reply, staff, { ...EMPTY_FORM, domain: toStringParam(req.input._domain)?.trim() ?? "" });
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const form = postedForm(req);
    try {
      checkSeverity(form);
      if (form.severity === "suspend" && !checkbox(req, "confirm")) {
        const { domain } = await checkNewDomainBlock(ctx, paramsOf(form), () => undefined);
        return confirmPage(reply, staff, SECTION, domain, form);
      }
      await createDomainBlock(ctx, paramsOf(form), () => undefined, staff.moderator.account.id);
    } catch (error) {
      if (error instanceof Unprocessable) return newPage(reply, staff, form, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.get(`${SECTION}/:id/edit`, async (req, reply, staff) => {
    const row = await domainBlockOf(ctx, toId(req.input.id));
    return editPage(reply, staff, row, formOf(row));
  });

  routes.post(`${SECTION}/:id`, async (req, reply, staff) => {
    const row = await domainBlockOf(ctx, toId(req.input.id));
    const form = postedForm(req, row.domain);
    try {
      checkSeverity(form);
      if (form.severity === "suspend" && row.severity !== "suspend" && !checkbox(req, "confirm"))
        return confirmPage(reply, staff, `${SECTION}/${row.id}`, row.domain, form);
      const { domain: _fixed, ...changes } = paramsOf(form);
      await updateDomainBlock(ctx, row.id, changes, staff.moderator.account.id);
    } catch (error) {
      if (error instanceof Unprocessable) return editPage(reply, staff, row, form, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "updated");
  });

  routes.post(`${SECTION}/:id/remove`, async (req, reply, staff) => {
    await removeDomainBlock(ctx, toId(req.input.id), staff.moderator.account.id);
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
