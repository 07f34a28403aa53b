/**
 * The remote-follow page, Mastodon's `/authorize_interaction?uri=…`, where WebFinger's subscribe
 * template sends people who want to follow someone from their home server. `uri` (or Mastodon's
 * older `acct`) is a handle or the link of an account or a post, here or elsewhere; the
 * signed-in user sees the account (for a post: the post and its author) and follows it with a
 * form, through the same follow service as the API (a locked or remote account: a request first).
 * Signed out, the page sends the browser to sign in and back. Mastodon 4 redirects into its web
 * app, which Rookery does not have: this page shows what it found instead, as Mastodon 3 did.
 * Whatever names nothing usable is a 404 page that says why and offers to look again.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { serializeAccount } from "../entities/account.ts";
import { ApiError, NotFound } from "../errors.ts";
import { followAccount, targetAccount } from "../services/accounts/follow.ts";
import {
  findInteractionTarget,
  followRelation,
  NOTHING_FOUND,
  type FollowRelation,
  type InteractionTarget,
} from "../services/search/remote_interaction.ts";
import { htmlToPlainText } from "../text/sanitize.ts";
import { applyThrottles, ENDPOINT_THROTTLES } from "../api/rate_limit.ts";
import { toId, toStringParam } from "../api/params.ts";
import { hiddenFields, html, type SafeHtml } from "./html.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, currentWebUser, restrictionOf, type WebUser } from "./session.ts";

const PATH = "/authorize_interaction";
const LOOK_UP_TITLE = "Look up an account or a post";
const EXPIRED_FORM = "This form has expired. Please try again.";

/** `@user@domain`, local accounts with this server's domain. */
function handleOf(ctx: Ctx, account: AccountRow): string {
  return `@${account.username}@${account.domain ?? ctx.config.localDomain}`;
}

/** The page again for `uri` (where a stale form or a sign-in leads back to). */
function pageFor(uri: string | undefined): string {
  return uri ? `${PATH}?uri=${encodeURIComponent(uri)}` : PATH;
}

/** Plain text as paragraphs (blank lines) and line breaks. */
function paragraphs(text: string): SafeHtml {
  const blocks = text.split(/\n{2,}/).filter((block) => block.trim() !== "");
  return html`${blocks.map((block) => html`<p>${block.split("\n").map((line, i) => html`${i > 0 ? html`<br>` : ""}${line}`)}</p>`)}`;
}

/** A link to another server's page; this server's own profile and post pages are not HTML yet. */
function externalLink(ctx: Ctx, url: string | null, label: string): SafeHtml | string {
  if (!url || !/^https?:\/\//i.test(url) || url.startsWith(`${ctx.config.baseUrl}/`)) return "";
  return html`<a href="${url}">${label}</a>`;
}

async function accountCard(ctx: Ctx, account: AccountRow): Promise<SafeHtml> {
  const shown = await serializeAccount(ctx, account);
  // Pictures are served from this server (copies of remote ones): a path keeps them within `img-src 'self'`.
  const avatar = shown.avatar_static.startsWith(`${ctx.config.baseUrl}/`)
    ? shown.avatar_static.slice(ctx.config.baseUrl.length)
    : undefined;
  const bio = htmlToPlainText(shown.note);
  return html`<div class="row">${avatar ? html`<img src="${avatar}" alt="" width="48" height="48">` : ""}
<p><strong>${shown.display_name || account.username}</strong><br><span class="muted">${handleOf(ctx, account)}</span></p></div>
<p class="muted">${shown.statuses_count} posts · ${shown.following_count} following · ${shown.followers_count} followers</p>
${bio ? html`<div class="muted">${paragraphs(bio)}</div>` : ""}`;
}

function postBody(ctx: Ctx, status: StatusRow, author: AccountRow): SafeHtml {
  const text = htmlToPlainText(status.content);
  const content = text ? paragraphs(text) : html`<p class="muted">This post has no text.</p>`;
  const posted = status.created_at.slice(0, 16).replace("T", " ");
  const link = externalLink(ctx, status.url ?? status.uri, "Open the post on its server");
  return html`<article aria-label="Post by ${handleOf(ctx, author)}">
<p class="muted">Posted <time datetime="${status.created_at}">${posted} UTC</time></p>
${status.spoiler_text ? html`<details><summary>${status.spoiler_text}</summary>${content}</details>` : content}
${link ? html`<p>${link}</p>` : ""}</article>`;
}

/** What the page says instead of a Follow button, or undefined when the viewer may follow. */
function relationMessage(
  ctx: Ctx,
  account: AccountRow,
  relation: FollowRelation,
  movedTo?: AccountRow,
): SafeHtml | undefined {
  const handle = handleOf(ctx, account);
  switch (relation) {
    case "none":
      return undefined;
    case "self":
      return html`<p>This is your own account.</p>`;
    case "following":
      return html`<div class="flash notice" role="status">You are following ${handle}.</div>`;
    case "requested":
      return account.locked
        ? html`<div class="flash notice" role="status">You asked to follow ${handle}; the request is waiting for their approval.</div>`
        : html`<div class="flash notice" role="status">Your follow of ${handle} is waiting for their server to confirm it.</div>`;
    case "blocking":
      return html`<p>You are blocking ${handle}. Unblock the account in your app to follow it.</p>`;
    case "blocked_by":
      return html`<p>You cannot follow ${handle}.</p>`;
    case "moved":
      return movedTo
        ? html`<p>${handle} has moved to <a href="${pageFor(movedTo.uri)}">${handleOf(ctx, movedTo)}</a>.</p>`
        : html`<p>${handle} has moved to another account.</p>`;
  }
}

/** The Follow form; on a post's page its button names the author, whom it follows. */
function followForm(ctx: Ctx, token: string, account: AccountRow, uri: string, ofPost: boolean): SafeHtml {
  return html`<form method="post" action="${PATH}">${hiddenFields({ authenticity_token: token, account_id: account.id, uri })}
${account.locked ? html`<p class="muted">${handleOf(ctx, account)} approves each follower: your follow is a request until they accept it.</p>` : ""}
<button type="submit">${ofPost ? `Follow ${handleOf(ctx, account)}` : "Follow"}</button></form>`;
}

function navigation(ctx: Ctx, account: AccountRow): SafeHtml {
  return html`<nav>${externalLink(ctx, account.url ?? account.uri, "Open the profile on its server")}<a href="/settings">Your account</a></nav>`;
}

async function targetPage(ctx: Ctx, reply: FastifyReply, token: string, target: InteractionTarget, uri: string) {
  const { account, status, relation, movedTo } = target;
  const card = await accountCard(ctx, account);
  const action = relationMessage(ctx, account, relation, movedTo) ?? followForm(ctx, token, account, uri, !!status);
  return renderPage(ctx, reply, {
    title: status ? `Post by ${handleOf(ctx, account)}` : `Follow ${handleOf(ctx, account)}`,
    body: html`${status ? html`${card}${postBody(ctx, status, account)}` : card}${action}${navigation(ctx, account)}`,
  });
}

function lookUpForm(uri: string | undefined): SafeHtml {
  return html`<form method="get" action="${PATH}"><label for="uri">Handle or link</label>
<input id="uri" type="text" name="uri" value="${uri ?? ""}" placeholder="user@example.com" required>
<button type="submit">Look up</button></form><nav><a href="/settings">Your account</a></nav>`;
}

/** The signed-in user, or the answer to send instead: to sign in and back, or why they may not follow yet. */
async function signedIn(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  returnTo: string,
): Promise<{ session: WebUser } | { answer: FastifyReply }> {
  const session = await currentWebUser(ctx, req);
  if (!session) return { answer: await reply.redirect(`/auth/sign_in?return_to=${encodeURIComponent(returnTo)}`, 303) };
  const restriction = restrictionOf(session);
  if (!restriction) return { session };
  return {
    answer: await renderPage(ctx, reply, {
      title: "Follow",
      status: 403,
      alert: restriction,
      body: html`<nav><a href="/settings">Your account</a></nav>`,
    }),
  };
}

/** Mastodon's model-level follow limit, in the bucket the API's follows count in. */
async function followThrottled(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, session: WebUser) {
  const throttle = { ...ENDPOINT_THROTTLES.follows, key: () => `user:${session.user.id}` };
  try {
    await applyThrottles(ctx.rateLimits, [throttle], req, reply, undefined);
    return false;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 429) throw error;
    await renderPage(ctx, reply, {
      title: "Too many follows",
      status: 429,
      alert: "You have followed too many accounts today. Please try again later.",
      body: html`<nav><a href="/settings">Your account</a></nav>`,
    });
    return true;
  }
}

/** The notice after a follow: done, or waiting for the account (locked) or its server (remote). */
function followedNotice(ctx: Ctx, account: AccountRow, relation: FollowRelation): string | undefined {
  const handle = handleOf(ctx, account);
  if (relation === "following") return `You are now following ${handle}.`;
  if (relation !== "requested") return undefined;
  return account.locked
    ? `Your follow request has been sent: you will follow ${handle} once they approve it.`
    : `Your follow has been sent: you will follow ${handle} as soon as their server confirms it.`;
}

export default async function authorizeInteractionRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get(PATH, async (req, reply) => {
    const uri = toStringParam(req.input.uri) ?? toStringParam(req.input.acct);
    const start = await signedIn(ctx, req, reply, req.url);
    if ("answer" in start) return start.answer;
    let target: InteractionTarget;
    try {
      target = await findInteractionTarget(ctx, start.session.account, uri ?? "");
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      return renderPage(ctx, reply, { title: LOOK_UP_TITLE, status: 404, alert: error.message, body: lookUpForm(uri) });
    }
    return targetPage(ctx, reply, csrfToken(ctx, req, reply), target, uri ?? "");
  });

  app.post(PATH, async (req, reply) => {
    const uri = toStringParam(req.input.uri);
    const start = await signedIn(ctx, req, reply, pageFor(uri));
    if ("answer" in start) return start.answer;
    const { session } = start;
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: "Follow",
        status: 422,
        alert: EXPIRED_FORM,
        body: html`<nav><a href="${pageFor(uri)}">Back</a></nav>`,
      });
    if (await followThrottled(ctx, req, reply, session)) return reply;
    let account: AccountRow;
    try {
      account = await targetAccount(ctx, toId(req.input.account_id));
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      return renderPage(ctx, reply, { title: "Follow", status: 404, alert: NOTHING_FOUND, body: lookUpForm(uri) });
    }
    try {
      await followAccount(ctx, session.account, account, {});
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 403) throw error;
      // Why, when the relation tells (a block, a move, oneself).
      const reason = relationMessage(ctx, account, await followRelation(ctx, session.account, account));
      return renderPage(ctx, reply, {
        title: `Follow ${handleOf(ctx, account)}`,
        status: 403,
        alert: "You cannot follow this account.",
        body: html`${reason ?? ""}${navigation(ctx, account)}`,
      });
    }
    const relation = await followRelation(ctx, session.account, account);
    const notice = followedNotice(ctx, account, relation);
    return renderPage(ctx, reply, {
      title: `Follow ${handleOf(ctx, account)}`,
      notice,
      body: html`${await accountCard(ctx, account)}${notice ? "" : (relationMessage(ctx, account, relation) ?? "")}${navigation(ctx, account)}`,
    });
  });
}
