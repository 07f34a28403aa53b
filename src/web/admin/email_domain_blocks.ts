/**
 * E-mail domain blocks in the admin area (Mastodon's Admin::EmailDomainBlocksController): the
 * blocked domains with the sign-ups each refused in the last days, a form that blocks a domain,
 * and lifting a block. Blocking a domain blocks its mail servers too where the server looks them
 * up (services/admin/email_domain_blocks.ts); those blocks are listed under their domain's name
 * and go with it.
 *
 * Beside them, the blocked e-mail addresses (Mastodon's canonical e-mail blocks, kept only as a
 * hash of the address's canonical form): their list, blocking an address, checking whether an
 * address is blocked, and lifting a block.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Ctx } from "../../context.ts";
import type { CanonicalEmailBlockRow } from "../../db/schema.ts";
import type { EmailDomainBlockWithHistory } from "../../entities/email_domain_block.ts";
import { ApiError, Unprocessable } from "../../errors.ts";
import { toId } from "../../api/params.ts";
import {
  createEmailDomainBlock,
  emailDomainBlockDomains,
  HISTORY_DAYS,
  listEmailDomainBlocks,
  removeEmailDomainBlock,
  withHistories,
} from "../../services/admin/email_domain_blocks.ts";
import {
  canonicalEmailBlocksMatching,
  createCanonicalEmailBlock,
  listCanonicalEmailBlocks,
  removeCanonicalEmailBlock,
} from "../../services/admin/canonical_email_blocks.ts";
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

const SECTION = "/admin/email_domain_blocks";
const ADDRESSES = "/admin/canonical_email_blocks";

const NOTICES = {
  created: "The domain is blocked.",
  removed: "The block is lifted.",
};

const ADDRESS_NOTICES = {
  created: "The address is blocked.",
  removed: "The block of the address is lifted.",
};

const refusedIn = (block: EmailDomainBlockWithHistory) => block.history.reduce((sum, day) => sum + day.uses, 0);

function blocksTable(staff: Staff, blocks: EmailDomainBlockWithHistory[], parents: Map<string, string>): SafeHtml {
  if (blocks.length === 0) return html`<p>No e-mail domain is blocked.</p>`;
  const lines = blocks.map((block) => {
    const { row } = block;
    const parent = row.parent_id ? parents.get(row.parent_id) : undefined;
    return html`<tr><td>${row.domain}</td><td>${row.parent_id ? `Mail server of ${parent ?? "a removed domain"}` : "Domain"}</td>
<td>${refusedIn(block).toLocaleString("en")}</td><td>${shortTime(row.created_at)}</td>
<td>${actionButton(staff, `${SECTION}/${row.id}/remove`, "Lift the block", { danger: true, ariaLabel: `Lift the block of ${row.domain}` })}</td></tr>`;
  });
  return html`<table><thead><tr><th scope="col">Domain</th><th scope="col">Blocked as</th><th scope="col">Sign-ups refused (last ${HISTORY_DAYS} days)</th><th scope="col">Blocked on (UTC)</th><th scope="col">Actions</th></tr></thead>
<tbody>${lines}</tbody></table>`;
}

function addressesTable(staff: Staff, rows: CanonicalEmailBlockRow[]): SafeHtml {
  if (rows.length === 0) return html`<p>No e-mail address is blocked.</p>`;
  const lines = rows.map(
    (row) =>
      html`<tr><td><code>${row.canonical_email_hash}</code></td><td>${shortTime(row.created_at)}</td><td>${actionButton(staff, `${ADDRESSES}/${row.id}/remove`, "Lift the block", { danger: true, ariaLabel: `Lift the block of the address with the hash ${row.canonical_email_hash.slice(0, 12)}…` })}</td></tr>`,
  );
  return html`<table><thead><tr><th scope="col">Hash of the address</th><th scope="col">Blocked on (UTC)</th><th scope="col">Actions</th></tr></thead><tbody>${lines}</tbody></table>`;
}

export default async function adminEmailDomainBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_blocks");

  function newPage(reply: FastifyReply, staff: Staff, domain: string, error?: ApiError) {
    const mx = ctx.mailDomains.mailServers
      ? html`<p class="muted" id="domain_hint">Addresses at the domain and at every domain under it are refused at sign-up. The domain's mail servers (its MX records) are looked up and blocked too, so that other domains they serve are refused as well.</p>`
      : html`<p class="muted" id="domain_hint">Addresses at the domain and at every domain under it are refused at sign-up.</p>`;
    return renderAdminPage(ctx, reply, staff, {
      title: "Block an e-mail domain",
      section: SECTION,
      status: error?.status,
      alert: error?.message,
      body: html`${postForm(
        staff,
        SECTION,
        html`<label for="domain">Domain</label><input type="text" id="domain" name="domain" value="${domain}" required aria-describedby="domain_hint" autocomplete="off">
${mx}<button type="submit">Block the domain</button>`,
      )}
<nav><a href="${SECTION}">Back to the e-mail domain blocks</a></nav>`,
    });
  }

  /** The blocked addresses, with the forms that block and check one; `checked` is a check's answer. */
  async function addressesPage(
    reply: FastifyReply,
    staff: Staff,
    options: { status?: number; alert?: string; email?: string; checked?: SafeHtml } = {},
  ) {
    const page = listPage(staff.req);
    const rows = await listCanonicalEmailBlocks(ctx, page);
    return renderAdminPage(ctx, reply, staff, {
      title: "Blocked e-mail addresses",
      section: SECTION,
      status: options.status,
      alert: options.alert,
      notices: ADDRESS_NOTICES,
      body: html`<p>Sign-ups with these addresses are refused, however they are written: capitals, dots and what follows a + in the name do not count. Only a hash of each address is kept.</p>
${options.checked ?? ""}
<h2>Check an address</h2>
${postForm(staff, `${ADDRESSES}/test`, html`<label for="check_email">E-mail address</label><input type="email" id="check_email" name="email" value="${options.email ?? ""}" required autocomplete="off"><button type="submit" class="secondary">Check the address</button>`)}
<h2>Block an address</h2>
${postForm(staff, ADDRESSES, html`<label for="block_email">E-mail address</label><input type="email" id="block_email" name="email" required autocomplete="off"><button type="submit">Block the address</button>`)}
<h2>Blocked addresses</h2>
${addressesTable(staff, rows)}${pageLinks(
        ADDRESSES,
        { limit: field(staff.req, "limit") },
        page,
        rows.map((r) => r.id),
      )}
<nav><a href="${SECTION}">Back to the e-mail domain blocks</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req);
    const rows = await listEmailDomainBlocks(ctx, page);
    const [blocks, parents] = await Promise.all([
      withHistories(ctx, rows),
      emailDomainBlockDomains(
        ctx,
        rows.flatMap((r) => (r.parent_id ? [r.parent_id] : [])),
      ),
    ]);
    return renderAdminPage(ctx, reply, staff, {
      title: "E-mail domain blocks",
      section: SECTION,
      notices: NOTICES,
      body: html`<p>Sign-ups with addresses at these domains are refused. <a href="${SECTION}/new">Block an e-mail domain</a></p>
<p>Lifting the block of a domain also lifts the blocks of its mail servers made with it.</p>
${blocksTable(staff, blocks, parents)}${pageLinks(
        SECTION,
        { limit: field(req, "limit") },
        page,
        rows.map((r) => r.id),
      )}
<p><a href="${ADDRESSES}">Blocked e-mail addresses</a></p>`,
    });
  });

  routes.get(`${SECTION}/new`, async (req, reply, staff) => {
    return newPage(reply, staff, "");
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const domain = field(req, "domain");
    try {
      await createEmailDomainBlock(ctx, staff.moderator.account.id, domain);
    } catch (error) {
      if (error instanceof Unprocessable) return newPage(reply, staff, domain ?? "", error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.post(`${SECTION}/:id/remove`, async (req, reply, staff) => {
    await removeEmailDomainBlock(ctx, staff.moderator.account.id, toId(req.input.id));
    return redirectWithNotice(reply, SECTION, "removed");
  });

  routes.get(ADDRESSES, async (req, reply, staff) => {
    return addressesPage(reply, staff);
  });

  routes.post(ADDRESSES, async (req, reply, staff) => {
    try {
      const email = field(req, "email");
      if (!email) throw new Unprocessable("Enter the e-mail address to block.");
      await createCanonicalEmailBlock(ctx, staff.moderator.account.id, { email });
    } catch (error) {
      if (error instanceof Unprocessable) return addressesPage(reply, staff, { status: 422, alert: error.message });
      throw error;
    }
    return redirectWithNotice(reply, ADDRESSES, "created");
  });

  // A check changes nothing; it is a POST so that the address stays out of URLs and logs.
  routes.post(`${ADDRESSES}/test`, async (req, reply, staff) => {
    const email = field(req, "email");
    if (!email) return addressesPage(reply, staff, { status: 422, alert: "Enter the e-mail address to check." });
    const [match] = await canonicalEmailBlocksMatching(ctx.db.kysely, email);
    const checked = match
      ? html`<p role="status"><strong>${email} is blocked</strong> (hash <code>${match.canonical_email_hash}</code>). ${actionButton(staff, `${ADDRESSES}/${match.id}/remove`, "Lift this block", { danger: true, ariaLabel: `Lift the block of ${email}` })}</p>`
      : html`<p role="status"><strong>${email} is not blocked.</strong></p>`;
    return addressesPage(reply, staff, { email, checked });
  });

  routes.post(`${ADDRESSES}/:id/remove`, async (req, reply, staff) => {
    await removeCanonicalEmailBlock(ctx, staff.moderator.account.id, toId(req.input.id));
    return redirectWithNotice(reply, ADDRESSES, "removed");
  });
}
