/**
 * A hashtag's public page (`/tags/cats`) and feed (`/tags/cats.rss`): its public posts from here
 * and elsewhere, as `GET /api/v1/timelines/tag/:hashtag` gives them to a reader without a token.
 * With the timeline preview turned off, visitors who are not signed in see no posts (the API
 * asks them for a token), as in Mastodon.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { TagRow } from "../../db/schema.ts";
import { serializeStatuses } from "../../entities/status.ts";
import { NotFound } from "../../errors.ts";
import { loadSettings } from "../../services/instance/settings.ts";
import { findTag, tagNameOf } from "../../services/tags/tags.ts";
import { tagTimeline } from "../../services/timelines/tag.ts";
import { toId } from "../../api/params.ts";
import { html } from "../html.ts";
import { currentWebUser } from "../session.ts";
import { admitVisitor, type Visitor } from "./access.ts";
import { statusArticle } from "./entities.ts";
import { notFound, PAGE_SIZE, pager, sendPublicPage } from "./layout.ts";
import { sendFeed } from "./rss.ts";

async function findPageTag(ctx: Ctx, raw: string): Promise<TagRow | undefined> {
  try {
    return await findTag(ctx, tagNameOf(raw));
  } catch (e) {
    if (e instanceof NotFound) return undefined;
    throw e;
  }
}

function tagPosts(ctx: Ctx, tag: TagRow, maxId: string | undefined) {
  const options = { anyOf: [tag], allOf: [], noneOf: [], local: false, remote: false, onlyMedia: false };
  return tagTimeline(ctx, undefined, options, { maxId, limit: PAGE_SIZE });
}

async function tagPage(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  tag: TagRow,
  visitor: Visitor,
): Promise<FastifyReply> {
  const { values } = await loadSettings(ctx.db.kysely);
  const signedIn = visitor.user ?? (values.timeline_preview ? undefined : await currentWebUser(ctx, req));
  const preview = values.timeline_preview || signedIn !== undefined;
  const maxId = toId(req.input.max_id);
  const statuses = preview ? await serializeStatuses(ctx, await tagPosts(ctx, tag, maxId)) : [];
  const url = `${ctx.config.baseUrl}/tags/${encodeURIComponent(tag.name)}`;
  const list = !preview
    ? html`<p class="empty">Sign in to see the posts with this hashtag. <a href="/auth/sign_in?return_to=${encodeURIComponent(`/tags/${tag.name}`)}">Sign in</a></p>`
    : statuses.length === 0
      ? html`<p class="empty">${maxId ? "No older posts." : "No public posts with this hashtag yet."}</p>`
      : html`${statuses.map((s) => statusArticle(s, { localDomain: ctx.config.localDomain }))}`;
  return sendPublicPage(reply, {
    title: `#${tag.name}`,
    siteTitle: values.site_title,
    url,
    description: `Public posts with the hashtag #${tag.name}`,
    og: { type: "website", title: `#${tag.name}` },
    alternates: preview ? [{ type: "application/rss+xml", href: `${url}.rss`, title: "RSS" }] : [],
    // The page differs between visitors once the preview is off.
    shared: visitor.shared && values.timeline_preview,
    body: html`<div class="card"><h1>#${tag.name}</h1><p class="muted">Public posts with this hashtag, newest first.</p></div>
<section aria-label="Posts">${list}</section>${preview ? pager(`/tags/${encodeURIComponent(tag.name)}`, statuses, maxId !== undefined) : ""}`,
  });
}

async function tagFeed(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, tag: TagRow, visitor: Visitor) {
  const { values } = await loadSettings(ctx.db.kysely);
  if (!values.timeline_preview && !(visitor.user ?? (await currentWebUser(ctx, req))))
    return reply.code(401).send({ error: "This server shows its timelines only to signed-in users" });
  const url = `${ctx.config.baseUrl}/tags/${encodeURIComponent(tag.name)}`;
  return sendFeed(
    reply,
    {
      title: `#${tag.name}`,
      description: `Public posts with the hashtag #${tag.name}`,
      link: url,
      self: `${url}.rss`,
      items: await serializeStatuses(ctx, await tagPosts(ctx, tag, undefined)),
    },
    visitor.shared && values.timeline_preview,
  );
}

export default async function tagPageRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/tags/:name", async (req, reply) => {
    const raw = (req.params as { name: string }).name;
    const feed = raw.endsWith(".rss");
    const tag = await findPageTag(ctx, feed ? raw.slice(0, -4) : raw);
    if (!tag) return notFound(reply);
    const visitor = await admitVisitor(ctx, req, reply, feed ? "feed" : "page");
    if (!visitor) return reply;
    return feed ? tagFeed(ctx, req, reply, tag, visitor) : tagPage(ctx, req, reply, tag, visitor);
  });
}
