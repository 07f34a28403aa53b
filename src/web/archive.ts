/**
 * "Request your archive" in the settings (Mastodon's /settings/export backups): asking for one
 * starts a job (services/archives, federation/archive.ts); the page lists the archives with their
 * state, and a finished one downloads from here, by its owner only.
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { ArchiveTooSoon, archivesOf, downloadableArchive, requestArchive } from "../services/archives/archives.ts";
import { toId } from "../api/params.ts";
import { hiddenFields, html } from "./html.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, requireSession, type WebUser } from "./session.ts";

const TITLE = "Your archive";

function size(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

export default async function archiveRoutes(app: FastifyInstance, ctx: Ctx) {
  async function page(session: WebUser, token: string) {
    const archives = await archivesOf(ctx, session.user.id);
    const rows = archives.map((a) => {
      const when = a.created_at.slice(0, 16).replace("T", " ");
      const state =
        a.state === "done"
          ? html`<a href="/settings/archive/${a.id}/download">Download</a> (${size(Number(a.file_size ?? 0))})`
          : a.state === "pending"
            ? "Being prepared…"
            : html`Failed: ${a.error ?? "unknown error"}`;
      return html`<tr><td>${when} UTC</td><td>${state}</td></tr>`;
    });
    return html`<p>An archive holds your posts (as an ActivityPub outbox, the format other servers read), your profile, your favourites and bookmarks, and the media you posted, in a ZIP file. You can ask for one every 6 days; each is kept for 7 days.</p>
${rows.length ? html`<table>${rows}</table>` : ""}
<form method="post" action="/settings/archive">${hiddenFields({ authenticity_token: token })}<button type="submit">Request your archive</button></form>
<nav><a href="/settings">Back</a></nav>`;
  }

  app.get("/settings/archive", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    return renderPage(ctx, reply, { title: TITLE, body: await page(session, csrfToken(ctx, req, reply)) });
  });

  app.post("/settings/archive", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: TITLE,
        status: 422,
        alert: "This form has expired. Please try again.",
        body: await page(session, token),
      });
    try {
      await requestArchive(ctx, session.user, session.account);
    } catch (error) {
      if (!(error instanceof ArchiveTooSoon)) throw error;
      return renderPage(ctx, reply, {
        title: TITLE,
        status: 429,
        alert: error.message,
        body: await page(session, token),
      });
    }
    return renderPage(ctx, reply, {
      title: TITLE,
      notice: "Your archive is being prepared. Come back to this page to download it.",
      body: await page(session, token),
    });
  });

  app.get("/settings/archive/:id/download", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const archive = await downloadableArchive(ctx, session.user.id, toId(req.input.id));
    const file = archive?.file_key ? await ctx.media.open(archive.file_key) : undefined;
    if (!archive || !file) return reply.callNotFound();
    const name = archive.file_key!.slice(archive.file_key!.lastIndexOf("/") + 1);
    return reply
      .header("Cache-Control", "private, no-store")
      .header("X-Content-Type-Options", "nosniff")
      .header("Content-Disposition", `attachment; filename="${name}"`)
      .header("Content-Length", file.size)
      .type("application/zip")
      .send(file.read());
  });
}
