/**
 * What a user sees of their imports (Mastodon's /settings/imports): the recent ones with their
 * progress, and the rows that failed with their reasons — on the page, and as a CSV file in the
 * import's own format, to fix and import again.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import type { AccountRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { csvLine } from "./csv.ts";
import { HEADERS, hasHeaderLine, isImportType, rowValues, type ImportRowData, type ImportType } from "./formats.ts";
import type { BulkImportRow } from "./run.ts";

/** Imports listed on the page, newest first (Mastodon's RECENT_IMPORTS_LIMIT). */
export const RECENT_IMPORTS = 10;

/** An import as the pages show it. */
export interface ImportSummary {
  id: string;
  type: ImportType;
  overwrite: boolean;
  state: "scheduled" | "in_progress" | "finished";
  filename: string;
  total: number;
  processed: number;
  imported: number;
  failed: number;
  createdAt: string;
  finishedAt: string | null;
}

export interface FailedRow {
  line: number;
  data: ImportRowData;
  reason: string;
}

function summaryOf(row: BulkImportRow): ImportSummary {
  return {
    id: row.id,
    type: isImportType(row.type) ? row.type : "following",
    overwrite: row.overwrite,
    state: row.state === "finished" || row.state === "in_progress" ? row.state : "scheduled",
    filename: row.original_filename,
    total: row.total_items,
    processed: row.processed_items,
    imported: row.imported_items,
    failed: row.processed_items - row.imported_items,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

export async function recentImports(ctx: Ctx, owner: AccountRow): Promise<ImportSummary[]> {
  const rows = await ctx.db.kysely
    .selectFrom("bulk_imports")
    .selectAll()
    .where("account_id", "=", owner.id)
    .orderBy("id", "desc")
    .limit(RECENT_IMPORTS)
    .execute();
  return rows.map(summaryOf);
}

/** One of `owner`'s imports, or 404 (others' imports look missing). */
export async function ownImport(ctx: Ctx, owner: AccountRow, id: string | undefined): Promise<ImportSummary> {
  const row =
    id && isIdLike(id)
      ? await ctx.db.kysely
          .selectFrom("bulk_imports")
          .selectAll()
          .where("id", "=", id)
          .where("account_id", "=", owner.id)
          .executeTakeFirst()
      : undefined;
  if (!row) throw new NotFound();
  return summaryOf(row);
}

/** The first `limit` rows of an import that failed, in the file's order. */
export async function failedRows(ctx: Ctx, bulkImport: ImportSummary, limit: number): Promise<FailedRow[]> {
  const rows = await ctx.db.kysely
    .selectFrom("bulk_import_rows")
    .select(["line", "data", "failure"])
    .where("bulk_import_id", "=", bulkImport.id)
    .where("failure", "is not", null)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ line: r.line, data: JSON.parse(r.data) as ImportRowData, reason: r.failure ?? "" }));
}

/** The failures file's name (Mastodon's, by type). */
export const FAILURE_FILENAMES: Record<ImportType, string> = {
  following: "following_accounts_failures.csv",
  blocking: "blocked_accounts_failures.csv",
  muting: "muted_accounts_failures.csv",
  domain_blocking: "blocked_domains_failures.csv",
  bookmarks: "bookmarks_failures.csv",
  lists: "lists_failures.csv",
};

/** Rows of the failures file read at a time. */
const BATCH = 1000;

/** The failed rows as a CSV file of the import's type (Mastodon's failures.csv), in batches. */
export async function* failuresCsv(ctx: Ctx, bulkImport: ImportSummary): AsyncGenerator<string> {
  if (hasHeaderLine(bulkImport.type)) yield csvLine(HEADERS[bulkImport.type]);
  let after: string | undefined;
  for (;;) {
    let query = ctx.db.kysely
      .selectFrom("bulk_import_rows")
      .select(["id", "data"])
      .where("bulk_import_id", "=", bulkImport.id)
      .where("failure", "is not", null);
    if (after) query = query.where("id", ">", after);
    const rows = await query.orderBy("id").limit(BATCH).execute();
    if (rows.length === 0) return;
    yield rows.map((r) => csvLine(rowValues(bulkImport.type, JSON.parse(r.data) as ImportRowData))).join("");
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}
