/**
 * Exports, in the settings (Mastodon's /settings/export and /settings/exports/<kind>.csv; Mastodon
 * has no client API for them): a page of counts and download links, and each CSV file, streamed
 * as it is read. Signed-in browsers only; a user whose account is restricted may still take their
 * data, as Mastodon lets them.
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import {
  EXPORT_FILENAMES,
  EXPORT_KINDS,
  EXPORT_LABELS,
  exportCounts,
  exportCsv,
} from "../services/portability/export.ts";
import { html } from "./html.ts";
import { renderPage } from "./render.ts";
import { requireSession } from "./session.ts";

export default async function exportRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/settings/export", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const counts = await exportCounts(ctx, session.account);
    const rows = EXPORT_KINDS.map(
      (kind) =>
        html`<tr><td>${EXPORT_LABELS[kind]}</td><td>${counts[kind].toLocaleString("en")}</td><td><a href="/settings/exports/${kind}.csv" download="${EXPORT_FILENAMES[kind]}">Download CSV</a></td></tr>`,
    );
    return renderPage(ctx, reply, {
      title: "Export",
      body: html`<p>Your follows, lists, blocks, mutes, domain blocks and bookmarks as CSV files in Mastodon's formats: <a href="/settings/imports">import</a> them here or on another server.</p>
<table>${rows}</table><nav><a href="/settings/imports">Import</a><a href="/settings">Back</a></nav>`,
    });
  });

  for (const kind of EXPORT_KINDS) {
    app.get(`/settings/exports/${kind}.csv`, async (req, reply) => {
      const session = await requireSession(ctx, req, reply);
      if (!session) return reply;
      return reply
        .header("Content-Type", "text/csv; charset=utf-8")
        .header("Content-Disposition", `attachment; filename="${EXPORT_FILENAMES[kind]}"`)
        .header("Cache-Control", "no-store")
        .header("X-Content-Type-Options", "nosniff")
        .send(Readable.from(exportCsv(ctx, session.account, kind)));
    });
  }
}
