/**
 * The layout of the public pages (profiles, posts, hashtags, about): the site's style plus what
 * link previews and search engines read (OpenGraph, Twitter cards, robots), the alternate
 * documents (ActivityPub, RSS), and headers that let caches keep a page a little while.
 */
import type { FastifyReply } from "fastify";
import { html, SafeHtml, STYLE, documentTitle } from "../html.ts";
import { varyOnAccept } from "../negotiation.ts";

const PUBLIC_STYLE = `
main.wide{max-width:40rem}.profile .header{width:100%;aspect-ratio:3/1;object-fit:cover;border-radius:12px 12px 0 0;display:block;background:var(--border)}
.profile .card{padding:0}.profile .about{padding:0 1.5rem 1.5rem}.profile .about .avatar{width:96px;height:96px;border-radius:12px;border:3px solid var(--card);margin-top:-48px;background:var(--card)}
.names h1{margin:.3rem 0 0}.acct{color:var(--muted);overflow-wrap:anywhere}dl.fields{display:grid;grid-template-columns:minmax(6rem,auto) 1fr;gap:.2rem 1rem;margin:1rem 0}
dl.fields dt{font-weight:600;color:var(--muted)}dl.fields dd{margin:0;overflow-wrap:anywhere}dd.verified{color:#1b7a3d}dd.verified::before{content:"✓ ";font-weight:700}
.counts{display:flex;gap:1.2rem;flex-wrap:wrap;color:var(--muted)}.counts strong{color:var(--fg)}.notice{padding:.7rem 1rem;border-radius:8px;background:var(--bg);margin:1rem 0}
nav.tabs{display:flex;gap:1rem;margin:1rem 0}nav.tabs a{color:var(--accent)}nav.tabs a[aria-current=page]{font-weight:700;color:var(--fg);text-decoration:none}
.status{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1rem 1.2rem;margin:.8rem 0;overflow-wrap:anywhere}
.status.focus{border-color:var(--accent);border-width:2px}.status header{display:flex;gap:.7rem;align-items:center}.status header .who{flex:1;min-width:0}
.status .avatar{width:46px;height:46px;border-radius:8px}.status header a{color:inherit;text-decoration:none}.status header .who a:hover .name{text-decoration:underline}
.status .name{font-weight:600;display:block}.status time{color:var(--muted);font-size:.9rem}.status .content a{color:var(--accent)}
.status .boosted,.status .reply-to{color:var(--muted);font-size:.9rem;margin:0 0 .5rem}.status .emoji{height:1.2em;width:1.2em;vertical-align:middle;object-fit:contain}
.status details summary{cursor:pointer;font-weight:600}.media{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.4rem;margin:.6rem 0}
.media img,.media video{width:100%;max-height:24rem;object-fit:cover;border-radius:8px;display:block}.media audio{width:100%}
.poll{list-style:none;padding:0;margin:.6rem 0}.poll li{margin:.3rem 0}.poll .bar{height:.4rem;border-radius:4px;background:var(--accent);min-width:2px}
.status footer{display:flex;gap:1.2rem;color:var(--muted);font-size:.9rem;margin-top:.6rem}.pager{display:flex;justify-content:space-between;margin:1rem 0}
.pager a,.site a,main.wide .card a{color:var(--accent)}main.wide>.card,main.wide>section.card{margin-bottom:1rem}.status details{margin-top:.6rem}ol.rules li{margin:.5rem 0}.empty{color:var(--muted);text-align:center;padding:2rem 0}
`;

/** Posts a page shows at once (Mastodon's page size), and the items of a feed. */
export const PAGE_SIZE = 20;

/** "Older posts" after a full page, "Newest posts" on any page but the first. */
export function pager(path: string, statuses: readonly { id: string }[], paged: boolean): SafeHtml | "" {
  const last = statuses.at(-1);
  const older =
    statuses.length >= PAGE_SIZE && last
      ? html`<a href="${`${path}?max_id=${last.id}`}" rel="next">Older posts</a>`
      : "";
  const newest = paged ? html`<a href="${path}">Newest posts</a>` : "";
  return older || newest ? html`<nav class="pager">${newest || html`<span></span>`}${older}</nav>` : "";
}

export interface Alternate {
  type: string;
  href: string;
  title?: string;
}

export interface PublicPage {
  /** The page's own title (the document title adds the site's name). */
  title: string;
  siteTitle: string;
  /** The page's address: `<link rel="canonical">` and `og:url`. */
  url: string;
  /** Plain text for `description` and `og:description`. */
  description?: string;
  og: { type: "profile" | "article" | "website"; title: string; image?: string | null; imageAlt?: string };
  /** A large picture in link previews (a post with a picture). */
  largeImage?: boolean;
  alternates?: Alternate[];
  /** Asks search engines to stay away (`<meta name="robots">`). */
  noindex?: boolean;
  /** The page's content, without the site's heading. */
  body: SafeHtml;
  /** A class on `<main>` (e.g. `profile`). */
  mainClass?: string;
  status?: number;
  /**
   * Whether shared caches may keep the page for a minute (what anyone gets); pages that depend
   * on the visitor's session must not be kept.
   */
  shared: boolean;
}

function head(page: PublicPage): SafeHtml {
  const meta = (property: string, content: string | null | undefined) =>
    content ? html`<meta property="${property}" content="${content}">` : "";
  const description = page.description?.slice(0, 300);
  return html`<link rel="canonical" href="${page.url}">
${description ? html`<meta name="description" content="${description}">` : ""}
${page.noindex ? html`<meta name="robots" content="noindex, noarchive">` : ""}
${meta("og:site_name", page.siteTitle)}${meta("og:type", page.og.type)}${meta("og:title", page.og.title)}${meta("og:url", page.url)}${meta("og:description", description)}${meta("og:image", page.og.image)}${meta("og:image:alt", page.og.image ? page.og.imageAlt : undefined)}
<meta name="twitter:card" content="${page.largeImage ? "summary_large_image" : "summary"}">
${(page.alternates ?? []).map((a) => html`<link rel="alternate" type="${a.type}" href="${a.href}"${a.title ? html` title="${a.title}"` : ""}>`)}`;
}

export function publicDocument(page: PublicPage): string {
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${documentTitle(page.title, page.siteTitle)}</title>
<link rel="icon" href="/favicon.ico">${head(page)}<style>${new SafeHtml(STYLE + PUBLIC_STYLE)}</style></head>
<body><main class="${page.mainClass ? `wide ${page.mainClass}` : "wide"}"><p class="muted site"><a href="/">${page.siteTitle}</a> · <a href="/about">About</a></p>
${page.body}</main></body></html>`.value;
}

/** The site's 404 (an HTML page for browsers, JSON for programs). */
export function notFound(reply: FastifyReply): FastifyReply {
  reply.callNotFound();
  return reply;
}

/** Sends a public page; `Link` names its ActivityPub document as Mastodon's pages do. */
export function sendPublicPage(reply: FastifyReply, page: PublicPage): FastifyReply {
  varyOnAccept(reply);
  const links = (page.alternates ?? []).map((a) => `<${a.href}>; rel="alternate"; type="${a.type}"`);
  if (links.length) reply.header("Link", links.join(", "));
  return reply
    .code(page.status ?? 200)
    .header("Cache-Control", page.shared ? "public, max-age=60" : "private, no-store")
    .header("X-Frame-Options", "DENY")
    .header("X-Content-Type-Options", "nosniff")
    .header("Referrer-Policy", "same-origin")
    .header(
      "Content-Security-Policy",
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: https:; media-src 'self' https:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    )
    .type("text/html; charset=utf-8")
    .send(publicDocument(page));
}
