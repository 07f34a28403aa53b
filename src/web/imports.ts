/**
 * Imports, in the settings (Mastodon's /settings/imports; Mastodon has no client API for them):
 * the upload form (type, merge or overwrite, a CSV file) with the recent imports and their
 * progress, a page per import listing its failed rows and their reasons, and those rows as a CSV
 * file. An upload is checked whole before anything is stored (services/portability/upload.ts); a
 * refused file — too large, not UTF-8, not CSV, the wrong columns, no rows, too many — is a 422
 * page that says why.
 */
import { Readable } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import { NotFound, PayloadTooLarge, ValidationFailed } from "../errors.ts";
import { isUploadedFile, toObject, toStringParam, fileData } from "../api/params.ts";
import { IMPORT_LIMITS, IMPORT_TYPE_LABELS, isImportType, type ImportType } from "../services/portability/formats.ts";
import {
  FAILURE_FILENAMES,
  failedRows,
  failuresCsv,
  ownImport,
  recentImports,
  type FailedRow,
  type ImportSummary,
} from "../services/portability/history.ts";
import { createImport, FILE_TOO_LARGE } from "../services/portability/upload.ts";
import { hiddenFields, html, type SafeHtml } from "./html.ts";
import { notFoundHandler } from "./not_found.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, requireSession, restrictionOf, type WebUser } from "./session.ts";

const EXPIRED = "This form has expired. Please try again.";
/** Failed rows shown on an import's page; all of them are in its failures file. */
const FAILURES_SHOWN = 100;

/** Mastodon's grouping of the types: what adds to the account, and what hides things from it. */
const TYPE_GROUPS: Array<[string, ImportType[]]> = [
  ["Add to your account", ["following", "bookmarks", "lists"]],
  ["Hide from your account", ["muting", "blocking", "domain_blocking"]],
];

const STATES: Record<ImportSummary["state"], string> = {
  scheduled: "Waiting",
  in_progress: "In progress",
  finished: "Finished",
};

const when = (time: string) => `${time.slice(0, 16).replace("T", " ")} UTC`;

function uploadForm(token: string, chosen: { type?: string; mode?: string }): SafeHtml {
  const groups = TYPE_GROUPS.map(
    ([label, types]) =>
      html`<optgroup label="${label}">${types.map((type) => html`<option value="${type}"${type === chosen.type ? html` selected` : ""}>${IMPORT_TYPE_LABELS[type]}</option>`)}</optgroup>`,
  );
  const overwrite = chosen.mode === "overwrite";
  return html`<form method="post" action="/settings/imports" enctype="multipart/form-data">${hiddenFields({ authenticity_token: token })}
<label for="form_import_type">Import type</label><select id="form_import_type" name="form_import[type]">${groups}</select>
<label for="form_import_data">CSV file (at most ${IMPORT_LIMITS.fileBytes / 1024 / 1024} MB and ${IMPORT_LIMITS.rows.toLocaleString("en")} rows), as another server exports it</label><input id="form_import_data" type="file" name="form_import[data]" accept=".csv,text/csv" required>
<label>Mode</label>
<div><input id="form_import_mode_merge" type="radio" name="form_import[mode]" value="merge"${overwrite ? "" : html` checked`}> <label for="form_import_mode_merge" style="display:inline">Merge</label> <span class="muted">keep what you have and add what the file lists</span></div>
<div><input id="form_import_mode_overwrite" type="radio" name="form_import[mode]" value="overwrite"${overwrite ? html` checked` : ""}> <label for="form_import_mode_overwrite" style="display:inline">Overwrite</label> <span class="muted">remove what the file does not list, then add what it lists</span></div>
<button type="submit">Upload</button></form>`;
}

function progressOf(summary: ImportSummary): string {
  return `${summary.imported.toLocaleString("en")} of ${summary.total.toLocaleString("en")} imported`;
}

function recentTable(imports: ImportSummary[]): SafeHtml | string {
  if (imports.length === 0) return "";
  const rows = imports.map(
    (i) =>
      html`<tr><td><a href="/settings/imports/${i.id}">${IMPORT_TYPE_LABELS[i.type]}</a>${i.overwrite ? " (overwrite)" : ""}<br><span class="muted">${i.filename} · ${when(i.createdAt)}</span></td>
<td>${STATES[i.state]}<br><span class="muted">${progressOf(i)}${i.failed > 0 ? html` · <a href="/settings/imports/${i.id}">${i.failed.toLocaleString("en")} failed</a>` : ""}</span></td></tr>`,
  );
  return html`<h2>Recent imports</h2><table>${rows}</table>`;
}

export default async function importRoutes(app: FastifyInstance, ctx: Ctx) {
  const notFound = notFoundHandler(ctx);

  /** The signed-in user's import named by the path, or undefined once a 404 page was sent. */
  async function importOf(req: FastifyRequest, reply: FastifyReply, session: WebUser) {
    try {
      return await ownImport(ctx, session.account, (req.params as { id: string }).id);
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      await notFound(req, reply);
      return undefined;
    }
  }

  async function indexPage(
    req: FastifyRequest,
    reply: FastifyReply,
    session: WebUser,
    options: { status?: number; alert?: string; chosen?: { type?: string; mode?: string } } = {},
  ): Promise<FastifyReply> {
    const token = csrfToken(ctx, req, reply);
    return renderPage(ctx, reply, {
      title: "Import",
      status: options.status,
      alert: options.alert,
      body: html`<p>Bring your follows, lists, bookmarks, mutes, blocks and domain blocks from a CSV file, such as the files <a href="/settings/export">Export</a> gives here or on another Mastodon-compatible server. Accounts this server does not know yet are looked up on their servers in the background.</p>
${uploadForm(token, options.chosen ?? {})}${recentTable(await recentImports(ctx, session.account))}<nav><a href="/settings/export">Export</a><a href="/settings">Back</a></nav>`,
    });
  }

  app.get("/settings/imports", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    return indexPage(req, reply, session);
  });

  app.post(
    "/settings/imports",
    {
      config: { maxFileSize: IMPORT_LIMITS.fileBytes },
      // A file over the limit stops the body's parsing before the handler runs: the same page says so.
      errorHandler: async (error: FastifyError, req, reply) => {
        if (!(error instanceof PayloadTooLarge) && error.code !== "FST_REQ_FILE_TOO_LARGE") throw error;
        const session = await requireSession(ctx, req, reply);
        if (!session) return reply;
        return indexPage(req, reply, session, { status: 422, alert: FILE_TOO_LARGE });
      },
    },
    async (req, reply) => {
      const session = await requireSession(ctx, req, reply);
      if (!session) return reply;
      const form = toObject(req.input.form_import);
      const chosen = { type: toStringParam(form?.type), mode: toStringParam(form?.mode) };
      const fail = (alert: string, status = 422) => indexPage(req, reply, session, { status, alert, chosen });
      if (!csrfValid(req)) return fail(EXPIRED);
      const restriction = restrictionOf(session);
      if (restriction) return fail(restriction, 403);
      if (!isImportType(chosen.type)) return fail("Choose what to import.");
      if (chosen.mode !== undefined && chosen.mode !== "merge" && chosen.mode !== "overwrite")
        return fail("Choose to merge or to overwrite.");
      const file = form?.data;
      if (!isUploadedFile(file)) return fail("Choose a CSV file to import.");
      try {
        const created = await createImport(ctx, session.account, {
          type: chosen.type,
          overwrite: chosen.mode === "overwrite",
          filename: file.filename,
          bytes: fileData(file),
        });
        return reply.redirect(`/settings/imports/${created.id}`, 303);
      } catch (error) {
        if (error instanceof ValidationFailed) return fail(error.reasons.join(" "));
        throw error;
      }
    },
  );

  function failureTable(summary: ImportSummary, rows: FailedRow[]): SafeHtml | string {
    if (rows.length === 0) return "";
    const items = rows.map(
      (row) =>
        html`<tr><td>Line ${row.line}</td><td><code>${row.data.list_name ? `${row.data.list_name}, ` : ""}${row.data.acct ?? row.data.domain ?? row.data.uri ?? ""}</code><br><span class="muted">${row.reason}</span></td></tr>`,
    );
    const more =
      summary.failed > rows.length
        ? html`<p class="muted">The first ${rows.length} of ${summary.failed.toLocaleString("en")} failed rows.</p>`
        : "";
    return html`<h2>Rows that were not imported</h2><table>${items}</table>${more}
<p><a href="/settings/imports/${summary.id}/failures.csv">Download the failed rows</a> (CSV, to fix and import again)</p>`;
  }

  app.get("/settings/imports/:id", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const summary = await importOf(req, reply, session);
    if (!summary) return reply;
    const rows = await failedRows(ctx, summary, FAILURES_SHOWN);
    const progress = html`<p>${summary.overwrite ? "Overwrite" : "Merge"} from ${summary.filename || "a file"}, started ${when(summary.createdAt)}.</p>
<table><tr><td>State</td><td>${STATES[summary.state]}${summary.finishedAt ? ` (${when(summary.finishedAt)})` : ""}</td></tr>
<tr><td>Rows</td><td>${summary.total.toLocaleString("en")}</td></tr>
<tr><td>Processed</td><td>${summary.processed.toLocaleString("en")}</td></tr>
<tr><td>Imported</td><td>${summary.imported.toLocaleString("en")}</td></tr>
<tr><td>Failed</td><td>${summary.failed.toLocaleString("en")}</td></tr></table>`;
    return renderPage(ctx, reply, {
      title: `Import: ${IMPORT_TYPE_LABELS[summary.type]}`,
      notice: summary.state === "finished" ? undefined : "The import is running; reload this page to see its progress.",
      body: html`${progress}${failureTable(summary, rows)}<nav><a href="/settings/imports">All imports</a><a href="/settings">Back</a></nav>`,
    });
  });

  app.get("/settings/imports/:id/failures.csv", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const summary = await importOf(req, reply, session);
    if (!summary) return reply;
    return reply
      .header("Content-Type", "text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${FAILURE_FILENAMES[summary.type]}"`)
      .header("Cache-Control", "no-store")
      .header("X-Content-Type-Options", "nosniff")
      .send(Readable.from(failuresCsv(ctx, summary)));
  });
}
