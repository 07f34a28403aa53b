/**
 * IP blocks in the admin area (Mastodon's Admin::IpBlocksController): the blocked networks, a
 * form that blocks one (an address or a CIDR range, what the block does, how long it lasts, a
 * note), its edit form, and lifting a block — through services/admin/ip_blocks.ts, as the admin
 * API does. The durations are Mastodon's choices; editing a block keeps its expiry unless another
 * is chosen.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { IpBlockRow, IpBlockSeverity } from "../../db/schema.ts";
import { ApiError, Unprocessable } from "../../errors.ts";
import { toId, toStringParam } from "../../api/params.ts";
import {
  createIpBlock,
  IP_BLOCK_SEVERITIES,
  ipBlockOf,
  listIpBlocks,
  removeIpBlock,
  updateIpBlock,
  type IpBlockParams,
} from "../../services/admin/ip_blocks.ts";
import { html, type SafeHtml } from "../html.ts";
import { shortTime } from "./display.ts";
import {
  actionButton,
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

const SECTION = "/admin/ip_blocks";

const NOTICES = {
  created: "The block is added.",
  updated: "The block is changed.",
  removed: "The block is lifted.",
};

const SEVERITY_LABELS: Record<IpBlockSeverity, string> = {
  sign_up_requires_approval: "Sign-ups need approval",
  sign_up_block: "Block sign-ups",
  no_access: "Block all access",
};

const SEVERITY_HINTS: Record<IpBlockSeverity, string> = {
  sign_up_requires_approval: "new accounts from these addresses wait for a moderator's approval",
  sign_up_block: "no new account can be made from these addresses",
  no_access: "every request from these addresses is refused, signed in or not",
};

const DAY = 86_400;
/** Mastodon's durations, in seconds (Rails' month and year are the Gregorian averages). */
const DURATIONS: Array<[string, string]> = [
  [String(DAY), "1 day"],
  [String(14 * DAY), "2 weeks"],
  ["2629746", "1 month"],
  ["15778476", "6 months"],
  ["31556952", "1 year"],
  ["94670856", "3 years"],
];
/** The edit form's choice that leaves the expiry as it is. */
const KEEP = "keep";

interface IpBlockForm {
  ip: string;
  severity: string;
  comment: string;
  /** "" never expires; a number of seconds; KEEP leaves it (a new block: never). */
  expiresIn: string;
}

function postedForm(req: FastifyRequest): IpBlockForm {
  return {
    ip: field(req, "ip") ?? "",
    severity: field(req, "severity") ?? "",
    comment: field(req, "comment") ?? "",
    // Not sent at all: as it is (an edit), or never (a new block); "" is a choice of never.
    expiresIn: toStringParam(req.input.expires_in)?.trim() ?? KEEP,
  };
}

function paramsOf(form: IpBlockForm): IpBlockParams {
  return {
    ip: form.ip,
    severity: form.severity,
    comment: form.comment,
    expiresIn: form.expiresIn === KEEP ? undefined : form.expiresIn,
  };
}

function expiryText(row: Pick<IpBlockRow, "expires_at">): string {
  if (!row.expires_at) return "Never";
  return Date.parse(row.expires_at) <= Date.now() ? `Expired ${shortTime(row.expires_at)}` : shortTime(row.expires_at);
}

function blockFields(form: IpBlockForm, current?: IpBlockRow): SafeHtml {
  const severities = IP_BLOCK_SEVERITIES.map(
    (s) =>
      html`<label><input type="radio" name="severity" value="${s}"${checked(form.severity === s)}> ${SEVERITY_LABELS[s]}: ${SEVERITY_HINTS[s]}</label>`,
  );
  const option = (value: string, label: string) =>
    html`<option value="${value}"${selected(form.expiresIn === value)}>${label}</option>`;
  const keep = current
    ? option(KEEP, current.expires_at ? `Keep the current expiry (${expiryText(current)} UTC)` : "Keep: never expires")
    : "";
  return html`<label for="ip">IP address or range</label><input type="text" id="ip" name="ip" value="${form.ip}" placeholder="192.0.2.0/24" required aria-describedby="ip_hint" autocomplete="off">
<p class="muted" id="ip_hint">One address (203.0.113.7) or a range in CIDR notation (192.0.2.0/24, 2001:db8::/32).</p>
<fieldset><legend>What the block does</legend>${severities}</fieldset>
<label for="expires_in">Expires</label><select id="expires_in" name="expires_in">${keep}${option("", "Never")}${DURATIONS.map(([value, label]) => option(value, `In ${label}`))}</select>
<label for="comment">Note</label><input type="text" id="comment" name="comment" value="${form.comment}" aria-describedby="comment_hint">
<p class="muted" id="comment_hint">Why the block is there; only staff see it.</p>`;
}

function blocksTable(staff: Staff, rows: IpBlockRow[]): SafeHtml {
  if (rows.length === 0) return html`<p>No IP address is blocked.</p>`;
  const lines = rows.map(
    (
      row,
    ) => html`<tr><td><a href="${SECTION}/${row.id}/edit"><code>${row.ip}</code></a></td><td>${SEVERITY_LABELS[row.severity]}</td>
<td>${row.comment}</td><td>${expiryText(row)}</td><td>${shortTime(row.created_at)}</td>
<td><a href="${SECTION}/${row.id}/edit" aria-label="${`Edit the block of ${row.ip}`}">Edit</a> ${actionButton(staff, `${SECTION}/${row.id}/remove`, "Lift the block", { danger: true, ariaLabel: `Lift the block of ${row.ip}` })}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Addresses</th><th scope="col">Block</th><th scope="col">Note</th><th scope="col">Expires (UTC)</th><th scope="col">Blocked on (UTC)</th><th scope="col">Actions</th></tr></thead>
<tbody>${lines}</tbody></table>`;
}

export default async function adminIpBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_blocks");

  function newPage(reply: FastifyReply, staff: Staff, form: IpBlockForm, error?: ApiError) {
    return renderAdminPage(ctx, reply, staff, {
      title: "Block IP addresses",
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${postForm(staff, SECTION, html`${blockFields(form)}<button type="submit">Add the block</button>`)}
<nav><a href="${SECTION}">Back to the IP blocks</a></nav>`,
    });
  }

  function editPage(reply: FastifyReply, staff: Staff, row: IpBlockRow, form: IpBlockForm, error?: ApiError) {
    return renderAdminPage(ctx, reply, staff, {
      title: `Block of ${row.ip}`,
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${postForm(staff, `${SECTION}/${row.id}`, html`${blockFields(form, row)}<button type="submit">Save the block</button>`)}
<h2>Lift the block</h2>
${actionButton(staff, `${SECTION}/${row.id}/remove`, `Lift the block of ${row.ip}`, { danger: true })}
<nav><a href="${SECTION}">Back to the IP blocks</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req);
    const rows = await listIpBlocks(ctx, page);
    return renderAdminPage(ctx, reply, staff, {
      title: "IP blocks",
      section: SECTION,
      notices: NOTICES,
      body: html`<p>Addresses whose sign-ups need approval or are refused, or that may not reach this server at all. <a href="${SECTION}/new">Block IP addresses</a></p>
${blocksTable(staff, rows)}${pageLinks(
        SECTION,
        { limit: field(req, "limit") },
        page,
        rows.map((r) => r.id),
      )}`,
    });
  });

  routes.get(`${SECTION}/new`, async (req, reply, staff) => {
    return newPage(reply, staff, { ip: "", severity: "sign_up_requires_approval", comment: "", expiresIn: "" });
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const form = postedForm(req);
    try {
      await createIpBlock(ctx, staff.moderator.account.id, paramsOf(form));
    } catch (error) {
      if (error instanceof Unprocessable) return newPage(reply, staff, form, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.get(`${SECTION}/:id/edit`, async (req, reply, staff) => {
    const row = await ipBlockOf(ctx, toId(req.input.id));
    return editPage(reply, staff, row, { ip: row.ip, severity: row.severity, comment: row.comment, expiresIn: KEEP });
  });

  routes.post(`${SECTION}/:id`, async (req, reply, staff) => {
    const row = await ipBlockOf(ctx, toId(req.input.id));
    const form = postedForm(req);
    try {
      await updateIpBlock(ctx, staff.moderator.account.id, row.id, paramsOf(form));
    } catch (error) {
      if (error instanceof Unprocessable) return editPage(reply, staff, row, form, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "updated");
  });

  routes.post(`${SECTION}/:id/remove`, async (req, reply, staff) => {
    await removeIpBlock(ctx, staff.moderator.account.id, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
