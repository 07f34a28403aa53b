/**
 * A user's strikes and their appeals (Mastodon's /disputes/strikes): the moderators' decisions on
 * one's account, newest first, each with its posts, and a form to appeal it (once, within 20 days).
 *
 * Who may open these pages: any signed-in user, functional or not (Mastodon skips
 * `require_functional!` here). A suspended or frozen user cannot sign in (web/auth.ts refuses),
 * so when such a user gives the right password the sign-in page opens a *disputes pass* instead
 * (`openDisputesPass`): a browser session stored like any other, whose cookie is sent only to
 * /disputes and read only here, so it opens these pages and nothing else.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { randomBytes } from "node:crypto";
import type { Ctx } from "../context.ts";
import type { UserRow } from "../db/schema.ts";
import { ApiError, ValidationFailed } from "../errors.ts";
import { toStringParam } from "../api/params.ts";
import { appealStrike } from "../services/moderation/appeals.ts";
import {
  APPEAL_MAX_LENGTH,
  APPEAL_WINDOW_DAYS,
  appealDeadline,
  mayAppeal,
  STRIKE_ACTIONS,
  strikeOf,
  strikePosts,
  strikesOf,
  strikeTitle,
  type Strike,
} from "../services/moderation/strikes.ts";
import {
  createWebSession,
  deleteWebSession,
  findWebSession,
  SESSION_LIFETIME_S,
} from "../services/auth/web_sessions.ts";
import { appealState } from "../entities/account_warning.ts";
import { hiddenFields, html, paragraphs, type SafeHtml } from "./html.ts";
import { renderPage } from "./render.ts";
import { appendCookie, cookie, csrfToken, csrfValid, currentWebUser, parseCookies, type WebUser } from "./session.ts";
import { decisionTitle, strikePostItems } from "./strikes.ts";

const PASS_COOKIE = "_rookery_disputes";
const PASS_PATH = "/disputes";
/** Strikes are few; the list shows this many, newest first. */
const LIST_LIMIT = 200;
const EXPIRED_FORM = "This form has expired. Please go back, reload the page and try again.";
const NOTICES: Record<string, string> = { appealed: "Your appeal has been sent to the moderators." };

/** The reader of a dispute page, and whether they came in with a disputes pass. */
interface Disputant {
  session: WebUser;
  pass: boolean;
}

/** The pass's cookie, sent back only to the dispute pages. */
const passCookie = (ctx: Ctx, value: string, maxAge: number) => cookie(ctx, PASS_COOKIE, value, maxAge, PASS_PATH);

/**
 * Opens a disputes pass for `user`, whose password was right but who may not sign in (suspended
 * or frozen); returns the link the sign-in page shows them.
 */
export async function openDisputesPass(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
): Promise<SafeHtml> {
  const value = randomBytes(32).toString("base64url");
  await createWebSession(ctx, user, value, { ip: req.ip ?? "", userAgent: String(req.headers["user-agent"] ?? "") });
  appendCookie(reply, passCookie(ctx, value, SESSION_LIFETIME_S));
  return html`<p>You can still read the moderators' decisions about your account and appeal them: <a href="/disputes/strikes">Your strikes</a>.</p>`;
}

/** The session of the disputes pass the browser holds, if any. */
async function passSessionOf(ctx: Ctx, req: FastifyRequest): Promise<WebUser | undefined> {
  const value = parseCookies(req.headers.cookie)[PASS_COOKIE];
  return value && value.length <= 200 ? await findWebSession(ctx, value) : undefined;
}

/** The signed-in user (or the holder of a disputes pass); undefined after sending the browser to sign in. */
async function requireDisputant(ctx: Ctx, req: FastifyRequest, reply: FastifyReply): Promise<Disputant | undefined> {
  const session = await currentWebUser(ctx, req);
  if (session) return { session, pass: false };
  const passSession = await passSessionOf(ctx, req);
  if (passSession) return { session: passSession, pass: true };
  await reply.redirect(`/auth/sign_in?return_to=${encodeURIComponent(req.url.split("?")[0])}`, 303);
  return undefined;
}

/** The way out of these pages: back to the settings, or (with a pass) signing out. */
function footer(who: Disputant, token: string, extra: SafeHtml | string = ""): SafeHtml {
  if (!who.pass) return html`<nav>${extra}<a href="/settings">Your account</a></nav>`;
  return html`<nav>${extra}</nav><form method="post" action="/disputes/sign_out">${hiddenFields({ authenticity_token: token })}<button type="submit" class="secondary">Sign out</button></form>`;
}

/** A day as these pages write it: `2026-11-27`. */
const dayOf = (time: string | Date) => (typeof time === "string" ? time : time.toISOString()).slice(0, 10);

/** A date as these pages show it. */
function dateOf(iso: string): SafeHtml {
  return html`<time datetime="${iso}">${dayOf(iso)}</time>`;
}

/** Where a strike's appeal stands, in words. */
function appealSummary(strike: Strike): string {
  if (strike.warning.overruled_at) return "Appeal approved: the decision was lifted";
  if (strike.appeal) {
    const state = appealState(strike.appeal);
    return state === "approved" ? "Appeal approved" : state === "rejected" ? "Appeal rejected" : "Appeal pending";
  }
  if (mayAppeal(strike)) return `You can appeal until ${dayOf(appealDeadline(strike.warning))}`;
  return "Not appealed";
}

function appealForm(strike: Strike, token: string, text = ""): SafeHtml {
  const deadline = dayOf(appealDeadline(strike.warning));
  return html`<h2>Appeal this decision</h2>
<p>If you think the moderators made a mistake, tell them why. You can appeal once, until ${deadline}.</p>
<form method="post" action="/disputes/strikes/${strike.warning.id}/appeal">${hiddenFields({ authenticity_token: token })}
<label for="appeal_text">Why should the moderators reconsider their decision?</label>
<textarea id="appeal_text" name="text" rows="6" maxlength="${APPEAL_MAX_LENGTH}" required>${text}</textarea>
<button type="submit">Submit appeal</button></form>`;
}

function appealPart(strike: Strike, token: string, text?: string): SafeHtml {
  if (strike.appeal) {
    const state = appealState(strike.appeal);
    const words =
      state === "approved"
        ? "The moderators approved your appeal."
        : state === "rejected"
          ? "The moderators rejected your appeal: the decision stands."
          : "The moderators have not decided on it yet.";
    return html`<h2>Your appeal</h2><p class="muted">Sent ${dateOf(strike.appeal.created_at)}. ${words}</p>${paragraphs(strike.appeal.text)}`;
  }
  if (mayAppeal(strike)) return appealForm(strike, token, text);
  return html`<p class="muted">This decision can no longer be appealed: appeals are possible for ${APPEAL_WINDOW_DAYS} days.</p>`;
}

async function strikePage(
  ctx: Ctx,
  reply: FastifyReply,
  who: Disputant,
  strike: Strike,
  token: string,
  options: { status?: number; alert?: string; notice?: string; text?: string } = {},
) {
  const { warning } = strike;
  const posts = (await strikePosts(ctx, [warning])).get(warning.id) ?? [];
  const explanation =
    warning.action === "none"
      ? ""
      : html`<p>${(STRIKE_ACTIONS[warning.action] ?? STRIKE_ACTIONS.none).explanation}</p>`;
  const outcome = warning.overruled_at
    ? html`<p><strong>Your appeal was approved and this decision has been lifted.</strong></p>`
    : strike.appeal?.rejected_at
      ? html`<p><strong>Your appeal was rejected.</strong></p>`
      : "";
  return renderPage(ctx, reply, {
    title: `${strikeTitle(warning.action)} on ${dayOf(warning.created_at)}`,
    status: options.status,
    alert: options.alert,
    notice: options.notice,
    body: html`${outcome}<table>
<tr><th scope="row">Date</th><td>${dateOf(warning.created_at)}</td></tr>
<tr><th scope="row">Decision</th><td>${decisionTitle(warning)}</td></tr>
${strike.reason ? html`<tr><th scope="row">Reason</th><td>${strike.reason}</td></tr>` : ""}
</table>
${explanation}${warning.text.trim() ? html`<h2>The moderators' message</h2>${paragraphs(warning.text)}` : ""}
${posts.length ? html`<h2>The posts concerned</h2><ul>${strikePostItems(posts, dateOf)}</ul>` : ""}
${appealPart(strike, token, options.text)}
${footer(who, token, html`<a href="/disputes/strikes">All your strikes</a>`)}`,
  });
}

export default async function disputeRoutes(app: FastifyInstance, ctx: Ctx) {
  await app.register(async (scope) => {
    // An unknown strike, or a refused form, is a page, not JSON.
    scope.setErrorHandler(async (error, _req, reply) => {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return renderPage(ctx, reply, {
        title: error.status === 404 ? "Not found" : "Not done",
        status: error.status,
        alert: error.status === 404 ? "There is no such strike on your account." : error.message,
        body: html`<nav><a href="/disputes/strikes">Your strikes</a></nav>`,
      });
    });

    scope.get("/disputes/strikes", async (req, reply) => {
      const who = await requireDisputant(ctx, req, reply);
      if (!who) return reply;
      const token = csrfToken(ctx, req, reply);
      const strikes = await strikesOf(ctx, who.session.account.id, { limit: LIST_LIMIT });
      const rows = strikes.map(
        (s) =>
          html`<tr><td><a href="/disputes/strikes/${s.warning.id}">${dateOf(s.warning.created_at)}</a></td><td>${decisionTitle(s.warning)}</td><td>${appealSummary(s)}</td></tr>`,
      );
      return renderPage(ctx, reply, {
        title: "Your strikes",
        body: html`<p>When the moderators of ${ctx.config.localDomain} act on your account, their decision is listed here. If you think one was a mistake, you can appeal it within ${APPEAL_WINDOW_DAYS} days.</p>
${rows.length ? html`<table><tr><th scope="col">Date</th><th scope="col">Decision</th><th scope="col">Appeal</th></tr>${rows}</table>` : html`<p>Your account is in good standing: there are no strikes against it.</p>`}
${footer(who, token)}`,
      });
    });

    scope.get("/disputes/strikes/:id", async (req, reply) => {
      const who = await requireDisputant(ctx, req, reply);
      if (!who) return reply;
      const token = csrfToken(ctx, req, reply);
      const strike = await strikeOf(ctx, who.session.account.id, (req.params as { id: string }).id);
      const notice = NOTICES[toStringParam(req.input.notice) ?? ""];
      return strikePage(ctx, reply, who, strike, token, { notice });
    });

    scope.post("/disputes/strikes/:id/appeal", async (req, reply) => {
      const who = await requireDisputant(ctx, req, reply);
      if (!who) return reply;
      const token = csrfToken(ctx, req, reply);
      const id = (req.params as { id: string }).id;
      const strike = await strikeOf(ctx, who.session.account.id, id);
      const text = toStringParam(req.input.text) ?? "";
      if (!csrfValid(req))
        return strikePage(ctx, reply, who, strike, token, { status: 422, alert: EXPIRED_FORM, text });
      try {
        await appealStrike(ctx, who.session.account, strike.warning.id, text);
      } catch (error) {
        if (!(error instanceof ValidationFailed)) throw error;
        const now = await strikeOf(ctx, who.session.account.id, id);
        return strikePage(ctx, reply, who, now, token, { status: 422, alert: error.reasons.join(" "), text });
      }
      return reply.redirect(`/disputes/strikes/${strike.warning.id}?notice=appealed`, 303);
    });

    // Ends a disputes pass (a signed-in user signs out from the settings as usual).
    scope.post("/disputes/sign_out", async (req, reply) => {
      if (!csrfValid(req)) {
        return renderPage(ctx, reply, {
          title: "Sign out",
          status: 422,
          alert: EXPIRED_FORM,
          body: html`<nav><a href="/disputes/strikes">Your strikes</a></nav>`,
        });
      }
      const passSession = await passSessionOf(ctx, req);
      if (passSession) await deleteWebSession(ctx, passSession.sessionId);
      appendCookie(reply, passCookie(ctx, "", 0));
      return reply.redirect("/auth/sign_in", 303);
    });
  });
}
