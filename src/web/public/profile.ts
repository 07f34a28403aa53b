/**
 * The public pages of local accounts, as Mastodon serves them to visitors: the profile
 * (`/@alice`, `/@alice/with_replies`), a post with its thread (`/@alice/123`) and the account's
 * RSS feed (`/@alice.rss`). Each shows what the API shows a reader without a token; the
 * ActivityPub documents at the same URLs are federation's routes (see ../negotiation.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { serializeAccount, type Account } from "../../entities/account.ts";
import { serializeStatuses, type Status } from "../../entities/status.ts";
import { NotFound } from "../../errors.ts";
import { lookupAccount } from "../../services/accounts/lookup.ts";
import { loadSettings } from "../../services/instance/settings.ts";
import { ANONYMOUS_CONTEXT, statusContext } from "../../services/statuses/context.ts";
import { accountStatuses } from "../../services/timelines/account.ts";
import { findVisibleStatus } from "../../services/visibility/find.ts";
import { toId } from "../../api/params.ts";
import { escapeHtml } from "../../text/escape.ts";
import { html, SafeHtml } from "../html.ts";
import { varyOnAccept } from "../negotiation.ts";
import { admitVisitor, type Visitor } from "./access.ts";
import {
  counted,
  displayName,
  formatDay,
  fullHandle,
  plainText,
  statusArticle,
  statusSummary,
  withEmojis,
} from "./entities.ts";
import { notFound, PAGE_SIZE, pager, sendPublicPage, type Alternate } from "./layout.ts";
import { sendFeed } from "./rss.ts";

type Found = { row: AccountRow; canonical?: undefined } | { row?: undefined; canonical: string };

/**
 * The local account a page's `@username` names. `@alice@this.domain` is the same account under
 * a longer name (a redirect to the short one); other servers' accounts have no page here.
 */
async function findPageAccount(ctx: Ctx, name: string): Promise<Found | undefined> {
  if (name.length > 200) return undefined;
  const row = await lookupAccount(ctx, name);
  if (!row || row.domain !== null) return undefined;
  return name.includes("@") ? { canonical: `/@${row.username}` } : { row };
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  varyOnAccept(reply);
  return reply.redirect(location, 301);
}

async function siteTitle(ctx: Ctx): Promise<string> {
  return (await loadSettings(ctx.db.kysely)).values.site_title;
}

/** A suspended (or deleted) account's page: 410, as Mastodon answers, with nothing of the account shown. */
async function suspendedPage(ctx: Ctx, reply: FastifyReply, row: AccountRow): Promise<FastifyReply> {
  const account = await serializeAccount(ctx, row);
  return sendPublicPage(reply, {
    title: fullHandle(account, ctx.config.localDomain),
    siteTitle: await siteTitle(ctx),
    url: account.url,
    og: { type: "profile", title: fullHandle(account, ctx.config.localDomain) },
    noindex: true,
    status: 410,
    shared: true,
    body: html`<div class="card"><h1>${fullHandle(account, ctx.config.localDomain)}</h1><p>${row.deleted_at ? "This account has been deleted." : "This account has been suspended."}</p></div>`,
  });
}

function accountAlternates(ctx: Ctx, account: Account): Alternate[] {
  return [
    { type: "application/activity+json", href: account.uri },
    { type: "application/rss+xml", href: `${ctx.config.baseUrl}/@${account.username}.rss`, title: "RSS" },
  ];
}

function profileHeader(ctx: Ctx, account: Account): SafeHtml {
  const handle = fullHandle(account, ctx.config.localDomain);
  const fields = account.fields.map(
    (field) =>
      html`<dt>${withEmojis(escapeHtml(field.name), account.emojis)}</dt><dd${field.verified_at ? html` class="verified" title="${`Ownership of this link was checked on ${formatDay(field.verified_at)}`}"` : ""}>${withEmojis(field.value, account.emojis)}</dd>`,
  );
  const moved = account.moved
    ? html`<p class="notice" role="status">${displayName(account)} has moved to <a href="${account.moved.url}">${fullHandle(account.moved, ctx.config.localDomain)}</a>.</p>`
    : "";
  return html`<div class="card"><img class="header" src="${account.header_static}" alt="${account.header_description}">
<div class="about"><img class="avatar" src="${account.avatar_static}" alt="${account.avatar_description}" width="96" height="96">
<div class="names"><h1>${displayName(account)}</h1><p class="acct">${handle}${account.locked ? " 🔒" : ""}${account.bot ? " · Automated" : ""}${account.memorial ? " · In memoriam" : ""}</p></div>
${moved}<div class="note">${withEmojis(account.note, account.emojis)}</div>
${fields.length ? html`<dl class="fields">${fields}</dl>` : ""}
<p class="counts"><span>${counted(account.statuses_count, "post")}</span><span>${counted(account.following_count, "following", "following")}</span><span>${counted(account.followers_count, "follower")}</span><span>Joined ${formatDay(account.created_at)}</span></p></div></div>`;
}

function statusList(ctx: Ctx, statuses: readonly Status[], empty: string): SafeHtml {
  if (statuses.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`${statuses.map((s) => statusArticle(s, { localDomain: ctx.config.localDomain }))}`;
}

async function profilePage(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  row: AccountRow,
  visitor: Visitor,
  withReplies: boolean,
): Promise<FastifyReply> {
  if (row.suspended_at) return suspendedPage(ctx, reply, row);
  const account = await serializeAccount(ctx, row);
  const maxId = toId(req.input.max_id);
  const options = { onlyMedia: false, excludeReblogs: false, excludeReplies: !withReplies };
  const [pinnedRows, rows] = await Promise.all([
    maxId
      ? []
      : accountStatuses(ctx, row, undefined, { ...options, excludeReplies: false, pinned: true }, { limit: PAGE_SIZE }),
    accountStatuses(ctx, row, undefined, { ...options, pinned: false }, { maxId, limit: PAGE_SIZE }),
  ]);
  // One serialization for both lists: a fixed number of queries for the page.
  const statuses = await serializeStatuses(ctx, [...pinnedRows, ...rows]);
  const pinned = statuses.slice(0, pinnedRows.length);
  const recent = statuses.slice(pinnedRows.length);
  const path = `/@${row.username}${withReplies ? "/with_replies" : ""}`;
  const tab = (href: string, label: string, current: boolean) =>
    html`<a href="${href}"${current ? html` aria-current="page"` : ""}>${label}</a>`;
  const handle = fullHandle(account, ctx.config.localDomain);
  return sendPublicPage(reply, {
    title: `${account.display_name || account.username} (${handle})`,
    siteTitle: await siteTitle(ctx),
    url: `${account.url}${withReplies ? "/with_replies" : ""}`,
    description: plainNote(account) || `Public posts of ${handle}`,
    og: {
      type: "profile",
      title: `${account.display_name || account.username} (${handle})`,
      image: account.avatar_static,
    },
    alternates: accountAlternates(ctx, account),
    noindex: account.noindex === true,
    shared: visitor.shared,
    mainClass: "profile",
    body: html`${profileHeader(ctx, account)}
<nav class="tabs" aria-label="Posts">${tab(`/@${row.username}`, "Posts", !withReplies)}${tab(`/@${row.username}/with_replies`, "Posts and replies", withReplies)}</nav>
${pinned.length ? html`<section aria-label="Pinned posts"><h2 class="muted">Pinned</h2>${statusList(ctx, pinned, "")}</section>` : ""}
<section aria-label="Posts">${statusList(ctx, recent, maxId ? "No older posts." : "No posts yet.")}</section>
${pager(path, recent, maxId !== undefined)}`,
  });
}

function plainNote(account: Account): string {
  return plainText(account.note).replace(/\s+/g, " ");
}

async function accountFeed(ctx: Ctx, reply: FastifyReply, row: AccountRow, visitor: Visitor): Promise<FastifyReply> {
  const account = await serializeAccount(ctx, row);
  if (account.suspended) return reply.code(410).send({ error: "This account has been suspended" });
  // Mastodon's account feed: the account's own public posts, without replies and boosts.
  const rows = await accountStatuses(
    ctx,
    row,
    undefined,
    { onlyMedia: false, excludeReplies: true, excludeReblogs: true, pinned: false },
    { limit: PAGE_SIZE },
  );
  const handle = fullHandle(account, ctx.config.localDomain);
  return sendFeed(
    reply,
    {
      title: `${account.display_name || account.username} (${handle})`,
      description: `Public posts from ${handle}`,
      link: account.url,
      self: `${ctx.config.baseUrl}/@${row.username}.rss`,
      image: account.avatar_static,
      items: await serializeStatuses(ctx, rows),
    },
    visitor.shared,
  );
}

async function statusPage(
  ctx: Ctx,
  reply: FastifyReply,
  row: AccountRow,
  statusId: string | undefined,
  visitor: Visitor,
): Promise<FastifyReply> {
  // A suspended account's posts are hidden like it: its page says so (410) rather than 404.
  if (row.suspended_at) return suspendedPage(ctx, reply, row);
  let status;
  try {
    status = await findVisibleStatus(ctx, statusId, undefined);
  } catch (e) {
    if (e instanceof NotFound) return notFound(reply);
    throw e;
  }
  if (status.account_id !== row.id) return notFound(reply);
  const account = await serializeAccount(ctx, row);
  const { ancestors, descendants } = await statusContext(ctx, status, undefined, ANONYMOUS_CONTEXT);
  const [focus, ...thread] = await serializeStatuses(ctx, [status, ...ancestors, ...descendants]);
  // A boost's page is the boosted post's.
  if (focus.reblog) return redirect(reply, focus.reblog.url ?? focus.reblog.uri);
  const before = thread.slice(0, ancestors.length);
  const after = thread.slice(ancestors.length);
  const handle = fullHandle(account, ctx.config.localDomain);
  const picture = focus.media_attachments.find((m) => m.type === "image" && !focus.sensitive);
  const article = (s: Status, isFocus = false) =>
    statusArticle(s, { localDomain: ctx.config.localDomain, focus: isFocus });
  return sendPublicPage(reply, {
    title: `${account.display_name || account.username}: "${truncate(statusSummary(focus), 60)}"`,
    siteTitle: await siteTitle(ctx),
    url: focus.url ?? focus.uri,
    description: statusSummary(focus),
    og: {
      type: "article",
      title: `${account.display_name || account.username} (${handle})`,
      image: picture?.preview_url ?? account.avatar_static,
      imageAlt: picture?.description ?? undefined,
    },
    largeImage: picture !== undefined,
    alternates: [{ type: "application/activity+json", href: focus.uri }],
    noindex: account.noindex === true,
    shared: visitor.shared,
    body: html`${before.length ? html`<section aria-label="Earlier in the thread">${before.map((s) => article(s))}</section>` : ""}
${article(focus, true)}
${after.length ? html`<section aria-label="Replies">${after.map((s) => article(s))}</section>` : ""}
<nav class="pager"><a href="${account.url}">More from ${handle}</a></nav>`,
  });
}

function truncate(text: string, length: number): string {
  const chars = [...text.replace(/\s+/g, " ")];
  return chars.length <= length ? chars.join("") : `${chars.slice(0, length - 1).join("")}…`;
}

export default async function profilePageRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/@:username", async (req, reply) => {
    const name = (req.params as { username: string }).username;
    const feed = name.endsWith(".rss");
    const found = await findPageAccount(ctx, feed ? name.slice(0, -4) : name);
    if (!found) return notFound(reply);
    if (!found.row) return redirect(reply, `${found.canonical}${feed ? ".rss" : ""}`);
    const visitor = await admitVisitor(ctx, req, reply, feed ? "feed" : "page");
    if (!visitor) return reply;
    return feed ? accountFeed(ctx, reply, found.row, visitor) : profilePage(ctx, req, reply, found.row, visitor, false);
  });

  app.get("/@:username/with_replies", async (req, reply) => {
    const found = await findPageAccount(ctx, (req.params as { username: string }).username);
    if (!found) return notFound(reply);
    if (!found.row) return redirect(reply, `${found.canonical}/with_replies`);
    const visitor = await admitVisitor(ctx, req, reply, "page");
    if (!visitor) return reply;
    return profilePage(ctx, req, reply, found.row, visitor, true);
  });

  app.get("/@:username/:id", async (req, reply) => {
    const { username, id } = req.params as { username: string; id: string };
    const found = await findPageAccount(ctx, username);
    if (!found) return notFound(reply);
    if (!found.row) return redirect(reply, `${found.canonical}/${encodeURIComponent(id)}`);
    const visitor = await admitVisitor(ctx, req, reply, "page");
    if (!visitor) return reply;
    return statusPage(ctx, reply, found.row, toId(id), visitor);
  });

  // The ActivityPub IDs, opened in a browser, lead to the pages (Mastodon redirects the same way).
  app.get("/users/:username", async (req, reply) => {
    const found = await findPageAccount(ctx, (req.params as { username: string }).username);
    if (!found?.row) return notFound(reply);
    return redirect(reply, `/@${found.row.username}`);
  });
  app.get("/users/:username/statuses/:id", async (req, reply) => {
    const { username, id } = req.params as { username: string; id: string };
    const found = await findPageAccount(ctx, username);
    if (!found?.row || !toId(id)) return notFound(reply);
    return redirect(reply, `/@${found.row.username}/${id}`);
  });
}
