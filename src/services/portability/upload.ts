/**
 * Accepting an import file (Mastodon's Form::Import): the whole file is checked before anything
 * is written — its size, its encoding (UTF-8, no NUL), that it is CSV, that its header fits the
 * chosen type, that it has rows and not more than the limit — and then the import and every row
 * are stored in one transaction with the job that will apply them. A file that fails a check
 * stores nothing. Rows that cannot be imported whatever the servers say (no account address, not
 * a URL) are stored as failed from the start, with their reason, and do not stop the others.
 *
 * Mastodon asks the user to confirm an uploaded file before it runs; Rookery runs it at once —
 * the form already says what will happen, and overwriting is its own explicit choice.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { IMPORT_LIMITS, ImportFileInvalid, readImportFile, type ImportType } from "./formats.ts";
import { enqueueImportRun, type BulkImportRow } from "./run.ts";

/** Imports a user may have waiting or running at once. */
export const MAX_UNFINISHED_IMPORTS = 5;

export interface ImportRequest {
  type: ImportType;
  /** Remove first what the file does not list. */
  overwrite: boolean;
  filename: string;
  bytes: Buffer;
}

/** Rows written by one INSERT (well below SQLite's and PostgreSQL's limits on parameters). */
const INSERT_BATCH = 500;

/** Why a file over the size limit is refused (also when the upload itself stops at the limit). */
export const FILE_TOO_LARGE = `The file is too large: at most ${IMPORT_LIMITS.fileBytes / 1024 / 1024} MB can be imported.`;

const utf8 = new TextDecoder("utf-8", { fatal: true });

function textOf(bytes: Buffer): string {
  if (bytes.length > IMPORT_LIMITS.fileBytes) throw new ValidationFailed(FILE_TOO_LARGE);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ValidationFailed("The file is not UTF-8 text. Save it as CSV with the UTF-8 encoding and try again.");
  }
  if (text.includes("\u0000")) throw new ValidationFailed("The file is not a text file: it contains NUL characters.");
  return text;
}

/** A file name to show again: no control characters, not overly long. */
function cleanFilename(name: string): string {
  return [...name.replace(/\p{Cc}/gu, "")].slice(0, 255).join("");
}

/**
 * Checks `request`'s file and stores it as an import of `owner`'s, queued to run; throws
 * ValidationFailed with the reason when the file cannot be imported (nothing is stored then).
 */
export async function createImport(ctx: Ctx, owner: AccountRow, request: ImportRequest): Promise<BulkImportRow> {
  const text = textOf(request.bytes);
  let rows;
  try {
    rows = readImportFile(request.type, text);
  } catch (error) {
    if (error instanceof ImportFileInvalid) throw new ValidationFailed(error.message);
    throw error;
  }
  const failed = rows.filter((r) => r.problem !== undefined);
  // Overwriting with a file of which nothing can be read would only remove: refused.
  if (failed.length === rows.length)
    throw new ValidationFailed(
      `None of the rows can be imported (line ${failed[0]!.line}: ${failed[0]!.problem}). Is it the right file?`,
    );
  const now = new Date().toISOString();
  const created = await ctx.db.kysely.transaction().execute(async (tx) => {
    const unfinished = await tx
      .selectFrom("bulk_imports")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("account_id", "=", owner.id)
      .where("state", "<>", "finished")
      .executeTakeFirstOrThrow();
    if (Number(unfinished.n) >= MAX_UNFINISHED_IMPORTS)
      throw new ValidationFailed(
        `You have ${MAX_UNFINISHED_IMPORTS} imports still running; wait until one of them is done.`,
      );
    const bulkImport = await tx
      .insertInto("bulk_imports")
      .values({
        id: newId(),
        account_id: owner.id,
        type: request.type,
        overwrite: request.overwrite,
        state: "scheduled",
        original_filename: cleanFilename(request.filename),
        total_items: rows.length,
        processed_items: failed.length,
        imported_items: 0,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (let i = 0; i < rows.length; i += INSERT_BATCH) {
      await tx
        .insertInto("bulk_import_rows")
        .values(
          rows.slice(i, i + INSERT_BATCH).map((row) => ({
            id: newId(),
            bulk_import_id: bulkImport.id,
            line: row.line,
            data: JSON.stringify(row.data),
            failure: row.problem ?? null,
          })),
        )
        .execute();
    }
    await enqueueImportRun(ctx, tx, bulkImport);
    return bulkImport;
  });
  ctx.jobs.wake();
  return created;
}
