/**
 * The server's about page (`/about`): what Mastodon's shows a visitor — the description, who
 * runs the server and how to reach them, the rules, the servers it moderates (when the admin
 * publishes that list to everyone) and a few figures. Always public: people deciding whether to
 * join read it before they have an account.
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { paragraphsHtml, serializeRules } from "../../entities/instance.ts";
import { publicDomainBlocks } from "../../services/admin/domain_blocks.ts";
import { loadInstanceFacts, loadInstanceStats } from "../../services/instance/facts.ts";
import { serializePublicDomainBlock } from "../../entities/domain_block.ts";
import { ROOKERY_VERSION } from "../../version.ts";
import { html, SafeHtml } from "../html.ts";
import { counted, displayName, fullHandle } from "./entities.ts";
import { sendPublicPage } from "./layout.ts";

export default async function aboutPageRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/about", async (_req, reply) => {
    const [facts, stats] = await Promise.all([loadInstanceFacts(ctx), loadInstanceStats(ctx)]);
    const { settings, contactAccount } = facts;
    const blocks =
      settings.show_domain_blocks === "all"
        ? (await publicDomainBlocks(ctx)).map((row) =>
            serializePublicDomainBlock(row, settings.show_domain_blocks_rationale === "all"),
          )
        : [];
    const rules = serializeRules(settings.rules);
    const contact = contactAccount
      ? html`<p>Administered by <a href="${contactAccount.url}">${displayName(contactAccount)} (${fullHandle(contactAccount, ctx.config.localDomain)})</a></p>`
      : "";
    const email = settings.site_contact_email
      ? html`<p>Contact: <a href="${`mailto:${settings.site_contact_email}`}">${settings.site_contact_email}</a></p>`
      : "";
    const registrations =
      settings.registrations_mode === "none"
        ? html`<p>New accounts cannot be created on this server at the moment.</p>${settings.closed_registrations_message ? new SafeHtml(paragraphsHtml(settings.closed_registrations_message)) : ""}`
        : html`<p><a href="/auth/sign_up">Create an account</a>${settings.registrations_mode === "approved" ? " (a moderator reviews each sign-up)" : ""}</p>`;
    return sendPublicPage(reply, {
      title: "About",
      siteTitle: settings.site_title,
      url: `${ctx.config.baseUrl}/about`,
      description:
        settings.site_short_description || `${settings.site_title}, a Rookery server on ${ctx.config.localDomain}`,
      og: { type: "website", title: settings.site_title, image: `${ctx.config.baseUrl}/preview.png` },
      shared: true,
      body: html`<div class="card"><h1>${settings.site_title}</h1>
${settings.site_short_description ? new SafeHtml(paragraphsHtml(settings.site_short_description)) : ""}
<p class="counts"><span>${counted(stats.user_count, "user")}</span><span>${counted(stats.status_count, "post")}</span><span>${counted(stats.domain_count, "connected server")}</span></p>
${contact}${email}${registrations}</div>
${settings.site_extended_description ? html`<section class="card" aria-labelledby="about-more"><h2 id="about-more">About this server</h2>${new SafeHtml(paragraphsHtml(settings.site_extended_description))}</section>` : ""}
<section class="card" aria-labelledby="rules"><h2 id="rules">Rules</h2>${rules.length ? html`<ol class="rules">${rules.map((r) => html`<li><strong>${r.text}</strong>${r.hint ? html`<br><span class="muted">${r.hint}</span>` : ""}</li>`)}</ol>` : html`<p class="muted">This server has not published any rules.</p>`}</section>
${blocks.length ? html`<section class="card" aria-labelledby="moderated"><h2 id="moderated">Moderated servers</h2><table>${blocks.map((b) => html`<tr><td>${b.domain}</td><td>${b.severity === "suspend" ? "Suspended" : "Limited"}${b.comment ? html`<br><span class="muted">${b.comment}</span>` : ""}</td></tr>`)}</table></section>` : ""}
<p class="muted">Powered by Rookery ${ROOKERY_VERSION}.</p>`,
    });
  });
}
