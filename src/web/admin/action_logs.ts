/**
 * The audit log (Mastodon's /admin/action_logs, View Audit Log): every moderation action, newest
 * first, a page at a time, each as a sentence — who did what to which target, and when — filtered
 * by moderator and by target. The sentences are written here for every action the services record
 * (`recordAction` in services/admin and elsewhere), keyed by action and target type; an action
 * without one still reads as a sentence, so a new action never shows as a blank line.
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow, AdminActionLogRow } from "../../db/schema.ts";
import { toId, toStringParam } from "../../api/params.ts";
import { auditLog, auditLogActors, type AuditFilter, type AuditTarget } from "../../services/admin/audit.ts";
import { html, type SafeHtml } from "../html.ts";
import { accountLink, atHandle, clipped, timeOf } from "./display.ts";
import { field, renderAdminPage, selected, staffRoutes } from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";

/** Entries on a page of the log. */
const PAGE_SIZE = 40;

/**
 * The sentence of each action, keyed `action:TargetType`; `{who}` is the moderator, `{target}`
 * the target's readable name. Mastodon's action names, in Rookery's words.
 */
const SENTENCES: Record<string, string> = {
  // Accounts and their users.
  "suspend:Account": "{who} suspended {target}",
  "unsuspend:Account": "{who} lifted the suspension of {target}",
  "silence:Account": "{who} limited {target}",
  "unsilence:Account": "{who} lifted the limit on {target}",
  "sensitive:Account": "{who} marked the media of {target} as sensitive",
  "unsensitive:Account": "{who} stopped marking the media of {target} as sensitive",
  "destroy:Account": "{who} deleted the data of {target}",
  "memorialize:Account": "{who} turned {target} into a memorial",
  "unblock_email:Account": "{who} unblocked the e-mail address of {target}",
  "approve:User": "{who} approved the sign-up of {target}",
  "reject:User": "{who} rejected the sign-up of {target}",
  "disable:User": "{who} froze the login of {target}",
  "enable:User": "{who} unfroze the login of {target}",
  "confirm:User": "{who} confirmed the e-mail address of {target}",
  "change_email:User": "{who} changed the e-mail address of {target}",
  "change_role:User": "{who} changed the role of {target}",
  "promote:User": "{who} promoted {target}",
  "demote:User": "{who} demoted {target}",
  "reset_password:User": "{who} reset the password of {target}",
  "resend:User": "{who} sent the confirmation e-mail to {target} again",
  "disable_2fa:User": "{who} turned off two-factor authentication for {target}",
  "enable_sign_in_token_auth:User": "{who} turned on sign-in codes by e-mail for {target}",
  "disable_sign_in_token_auth:User": "{who} turned off sign-in codes by e-mail for {target}",
  "remove_avatar:User": "{who} removed the profile picture of {target}",
  "remove_header:User": "{who} removed the header image of {target}",
  "create:AccountWarning": "{who} warned {target}",
  "create:AccountWarningPreset": "{who} added the warning preset {target}",
  "update:AccountWarningPreset": "{who} changed the warning preset {target}",
  "destroy:AccountWarningPreset": "{who} removed the warning preset {target}",
  "approve:Appeal": "{who} granted the appeal of {target}",
  "reject:Appeal": "{who} turned down the appeal of {target}",
  // Reports.
  "assigned_to_self:Report": "{who} took report {target}",
  "unassigned:Report": "{who} gave up report {target}",
  "resolve:Report": "{who} resolved report {target}",
  "reopen:Report": "{who} reopened report {target}",
  "update:Report": "{who} changed the category or rules of report {target}",
  // Other servers.
  "create:DomainBlock": "{who} blocked the domain {target}",
  "update:DomainBlock": "{who} changed the block of the domain {target}",
  "destroy:DomainBlock": "{who} lifted the block of the domain {target}",
  "create:DomainAllow": "{who} allowed federation with {target}",
  "destroy:DomainAllow": "{who} stopped allowing federation with {target}",
  "destroy:Instance": "{who} purged everything from the domain {target}",
  "create:UnavailableDomain": "{who} stopped deliveries to {target}",
  "destroy:UnavailableDomain": "{who} resumed deliveries to {target}",
  "create:Relay": "{who} added the relay {target}",
  "destroy:Relay": "{who} removed the relay {target}",
  "enable:Relay": "{who} turned on the relay {target}",
  "disable:Relay": "{who} turned off the relay {target}",
  // Sign-up and access blocks.
  "create:EmailDomainBlock": "{who} blocked sign-ups from the e-mail domain {target}",
  "destroy:EmailDomainBlock": "{who} unblocked the e-mail domain {target}",
  "create:IpBlock": "{who} added a rule for the IP {target}",
  "update:IpBlock": "{who} changed the rule for the IP {target}",
  "destroy:IpBlock": "{who} removed the rule for the IP {target}",
  "create:CanonicalEmailBlock": "{who} blocked the e-mail address with the hash {target}",
  "destroy:CanonicalEmailBlock": "{who} unblocked the e-mail address with the hash {target}",
  "create:UsernameBlock": "{who} added a rule for usernames containing {target}",
  "update:UsernameBlock": "{who} changed the rule for usernames containing {target}",
  "destroy:UsernameBlock": "{who} removed the rule for usernames containing {target}",
  // Posts and trends.
  "destroy:Status": "{who} removed a post by {target}",
  "update:Status": "{who} changed a post by {target}",
  "approve:Status": "{who} let a post by {target} trend",
  "reject:Status": "{who} kept a post by {target} from trending",
  "approve:Tag": "{who} let the hashtag {target} trend",
  "reject:Tag": "{who} kept the hashtag {target} from trending",
  "update:Tag": "{who} changed the settings of the hashtag {target}",
  "approve:PreviewCard": "{who} let the link {target} trend",
  "reject:PreviewCard": "{who} kept the link {target} from trending",
  "approve:PreviewCardProvider": "{who} let links from {target} trend",
  "reject:PreviewCardProvider": "{who} kept links from {target} from trending",
  // The server.
  "create:Announcement": "{who} wrote the announcement {target}",
  "update:Announcement": "{who} changed the announcement {target}",
  "destroy:Announcement": "{who} deleted the announcement {target}",
  "publish:Announcement": "{who} published the announcement {target}",
  "unpublish:Announcement": "{who} withdrew the announcement {target}",
  "create:CustomEmoji": "{who} added the emoji {target}",
  "update:CustomEmoji": "{who} changed the emoji {target}",
  "destroy:CustomEmoji": "{who} deleted the emoji {target}",
  "enable:CustomEmoji": "{who} turned on the emoji {target}",
  "disable:CustomEmoji": "{who} turned off the emoji {target}",
  "create:Rule": "{who} added the server rule {target}",
  "update:Rule": "{who} changed the server rule {target}",
  "destroy:Rule": "{who} removed the server rule {target}",
  "update:Setting": "{who} changed the server setting {target}",
  "create:UserRole": "{who} created the role {target}",
  "update:UserRole": "{who} changed the role {target}",
  "destroy:UserRole": "{who} deleted the role {target}",
  "publish:TermsOfService": "{who} published new terms of service",
};

/** How a target type reads in the fallback sentence (`EmailDomainBlock` → "e-mail domain block"). */
function targetNoun(type: string): string {
  const nouns: Record<string, string> = {
    User: "account",
    Account: "account",
    IpBlock: "IP rule",
    EmailDomainBlock: "e-mail domain block",
    CanonicalEmailBlock: "e-mail address block",
    PreviewCard: "link",
    PreviewCardProvider: "link publisher",
    Status: "post",
  };
  return (
    nouns[type] ??
    type
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .trim()
  );
}

/** Where a target of the log is shown in the admin area, if it has a page of its own there. */
function targetPath(entry: AdminActionLogRow): string | undefined {
  if (!entry.target_id) return undefined;
  if (entry.target_type === "Account") return `/admin/accounts/${entry.target_id}`;
  if (entry.target_type === "Report") return `/admin/reports/${entry.target_id}`;
  return undefined;
}

/** The target of an entry as the log names it: `@alice`, `#12`, a domain, a hashtag… */
function targetName(entry: AdminActionLogRow): string {
  const name = entry.human_identifier;
  if (!name) return entry.target_id ? `${targetNoun(entry.target_type)} ${entry.target_id}` : "";
  switch (entry.target_type) {
    case "Account":
    case "User":
    case "AccountWarning":
    case "Appeal":
    case "Status":
      return `@${name}`;
    case "Report":
      return `#${name}`;
    case "Tag":
      return `#${name}`;
    case "Announcement":
    case "Rule":
    case "AccountWarningPreset":
      // Long readable names (an announcement's or a rule's text) cut to a line.
      return `“${clipped(name, 80)}”`;
    default:
      return name;
  }
}

/** Readable values of an entry's detail, where the raw one is a code (a domain block's severity). */
function detailText(entry: AdminActionLogRow): string | undefined {
  if (!entry.detail) return undefined;
  if (entry.target_type === "DomainBlock") {
    const severities: Record<string, string> = { silence: "limit", suspend: "suspend", noop: "no limit" };
    return severities[entry.detail] ?? entry.detail;
  }
  return clipped(entry.detail, 120);
}

/** `{who}` and `{target}` of a sentence filled with markup; the rest of it escaped. */
function fill(sentence: string, who: SafeHtml, target: SafeHtml): SafeHtml {
  const parts = sentence
    .split(/(\{who\}|\{target\})/)
    .map((part) => (part === "{who}" ? who : part === "{target}" ? target : html`${part}`));
  return html`${parts}`;
}

/** The moderator as the log shows them: their handle, linked to their account's page. */
function moderatorLink(account: AccountRow | undefined, id: string): SafeHtml {
  return account ? accountLink(account) : html`a moderator (${id})`;
}

/**
 * One entry as a sentence: "@mod suspended @alice", with the target linked where it has a page,
 * and the entry's detail after it. `actors` holds the moderators' accounts by ID.
 */
export function auditSentence(entry: AdminActionLogRow, actors: ReadonlyMap<string, AccountRow>): SafeHtml {
  const who = moderatorLink(actors.get(entry.account_id), entry.account_id);
  const name = targetName(entry);
  const path = targetPath(entry);
  const target = path ? html`<a href="${path}">${name}</a>` : html`<strong>${name}</strong>`;
  const known = SENTENCES[`${entry.action}:${entry.target_type}`];
  const sentence = known
    ? fill(known, who, target)
    : fill(
        `{who} did “${entry.action.replace(/_/g, " ")}” to the ${targetNoun(entry.target_type)} {target}`,
        who,
        target,
      );
  const detail = detailText(entry);
  return html`${sentence}${detail ? html` <span class="muted">(${detail})</span>` : ""}`;
}

export default async function actionLogRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "view_audit_log");
  routes.get("/admin/action_logs", async (req, reply, staff) => {
    const input = req.input;
    const rawActor = toStringParam(input.account_id)?.trim() || undefined;
    const rawTarget = toStringParam(input.target)?.trim() || undefined;
    const targetType = toStringParam(input.target_type)?.trim() || undefined;
    const targetId = toStringParam(input.target_id)?.trim() || undefined;
    const actorId = rawActor ? toId(rawActor) : undefined;
    // What was typed names the target as the log does: no `@`, no `#`, no domain for this server's accounts.
    const name = rawTarget
      ?.replace(/^[@#]/, "")
      .replace(
        new RegExp(`@(${escapeRegExp(ctx.config.localDomain)}|${escapeRegExp(ctx.config.webDomain)})$`, "i"),
        "",
      );
    const filter: AuditFilter = {
      actorId,
      targetName: name || undefined,
      // A link from a record's page (a report's "whole history"): its type and ID. A type the log
      // does not know matches nothing.
      targetType: targetType as AuditTarget | undefined,
      targetId: targetId ? toId(targetId) : undefined,
    };
    // A filter that was given but names no ID matches nothing, as Mastodon's `where(account_id: "x")`.
    const impossible = (rawActor !== undefined && !actorId) || (targetId !== undefined && !filter.targetId);
    const page = listPage(req, PAGE_SIZE);
    const [entries, moderators] = await Promise.all([
      impossible ? Promise.resolve([]) : auditLog(ctx, filter, page),
      auditLogActors(ctx),
    ]);
    // Everyone in the log is among the moderators the filter lists.
    const actors = new Map(moderators.map((a) => [a.id, a]));

    const options = moderators.map(
      (m) => html`<option value="${m.id}"${selected(m.id === rawActor)}>${atHandle(m)}</option>`,
    );
    const scoped =
      targetType && targetId
        ? html`<p>Showing only what was done to the ${targetNoun(targetType)} ${targetType === "Report" ? `#${targetId}` : targetId}. <a href="/admin/action_logs">Show everything</a></p>`
        : "";
    const form = html`<form method="get" action="/admin/action_logs" class="row filters">
${targetType && targetId ? html`<input type="hidden" name="target_type" value="${targetType}"><input type="hidden" name="target_id" value="${targetId}">` : ""}
<div><label for="account_id">Moderator</label><select id="account_id" name="account_id"><option value="">Everyone</option>${options}</select></div>
<div><label for="target">Target</label><input type="text" id="target" name="target" value="${rawTarget ?? ""}" placeholder="alice, spam.example, #12"></div>
<div><button type="submit">Filter</button></div></form>
<p class="muted">A target is named as the log names it: an account's handle, a domain, a report's number.</p>`;
    const rows = entries.map(
      (e) => html`<tr><td>${auditSentence(e, actors)}</td><td>${timeOf(e.created_at)}</td></tr>`,
    );
    const filtered = rawActor || rawTarget || (targetType && targetId);
    const table = entries.length
      ? html`<table><thead><tr><th scope="col">What happened</th><th scope="col">When</th></tr></thead><tbody>${rows}</tbody></table>`
      : html`<p>${filtered ? "Nothing in the log matches this filter." : "Nothing has been logged yet."}</p>`;
    const keep = {
      account_id: rawActor,
      target: rawTarget,
      target_type: targetType,
      target_id: targetId,
      limit: field(req, "limit"),
    };
    return renderAdminPage(ctx, reply, staff, {
      title: "Audit log",
      section: "/admin/action_logs",
      body: html`<p>Every action moderators took here or through the admin API, newest first.</p>${scoped}${form}${table}${pageLinks(
        "/admin/action_logs",
        keep,
        page,
        entries.map((e) => e.id),
      )}`,
    });
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
