/**
 * Running an import in the job workers (Mastodon's BulkImportWorker and Import::RowWorker): one
 * job per import at a time, which first removes what an overwrite does not keep, then applies
 * rows in small batches, recording each batch's outcome (applied rows are deleted, failed ones
 * keep their reason) and the import's progress in one transaction. After about half a minute of
 * work — accounts on slow servers take a while to find — the job queues its successor and ends,
 * so one large import never holds a worker for long; a user's imports never run at the same
 * time (their ordering key). A job that stopped half-way runs again from the rows still pending.
 */
import type { Selectable, Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { BulkImportsTable, Database } from "../../db/schema.ts";
import { isImportType, type ImportRowData } from "./formats.ts";
import { removeUnlisted } from "./overwrite.ts";
import { applyRow } from "./rows.ts";

export type BulkImportRow = Selectable<BulkImportsTable>;

export const IMPORT_JOB = "imports.run";
export const IMPORT_PRUNE_JOB = "imports.prune";

/** Rows applied between two records of progress. */
const BATCH = 20;
/** How long one job works before it hands over to the next. */
const WORK_MS = 30_000;
/** Finished imports (and their failed rows) are kept this long, as Mastodon does. */
export const IMPORT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Queues the next run of `bulkImport` (inside `db`, a transaction, when it is being created). */
export async function enqueueImportRun(
  ctx: Ctx,
  db: Kysely<Database>,
  bulkImport: Pick<BulkImportRow, "id" | "account_id">,
): Promise<void> {
  await ctx.jobs.enqueueWith(
    db,
    IMPORT_JOB,
    { importId: bulkImport.id },
    { orderingKey: `imports:${bulkImport.account_id}`, maxAttempts: 10 },
  );
}

const decode = (data: string) => JSON.parse(data) as ImportRowData;

async function finish(ctx: Ctx, importId: string, failure?: string): Promise<void> {
  const now = new Date().toISOString();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    if (failure) {
      const stopped = await tx
        .updateTable("bulk_import_rows")
        .set({ failure })
        .where("bulk_import_id", "=", importId)
        .where("failure", "is", null)
        .executeTakeFirst();
      const count = Number(stopped.numUpdatedRows);
      if (count > 0)
        await tx
          .updateTable("bulk_imports")
          .set((eb) => ({ processed_items: eb("processed_items", "+", count) }))
          .where("id", "=", importId)
          .execute();
    }
    await tx
      .updateTable("bulk_imports")
      .set({ state: "finished", finished_at: now, updated_at: now })
      .where("id", "=", importId)
      .execute();
  });
}

/** Runs (part of) import `importId`; see the module's comment. */
export async function runImport(ctx: Ctx, importId: string, shutdown?: AbortSignal): Promise<void> {
  const db = ctx.db.kysely;
  const bulkImport = await db.selectFrom("bulk_imports").selectAll().where("id", "=", importId).executeTakeFirst();
  if (!bulkImport || bulkImport.state === "finished") return;
  const type = bulkImport.type;
  const owner = await db.selectFrom("accounts").selectAll().where("id", "=", bulkImport.account_id).executeTakeFirst();
  if (!isImportType(type) || !owner) return finish(ctx, importId, "The import could not be run");
  if (owner.suspended_at) return finish(ctx, importId, "The import stopped: the account is suspended");
  const pending = () =>
    db.selectFrom("bulk_import_rows").where("bulk_import_id", "=", importId).where("failure", "is", null);

  if (bulkImport.state === "scheduled") {
    if (bulkImport.overwrite) {
      const rows = await pending().select("data").execute();
      await removeUnlisted(
        ctx,
        owner,
        type,
        rows.map((r) => decode(r.data)),
      );
    }
    await db
      .updateTable("bulk_imports")
      .set({ state: "in_progress", updated_at: new Date().toISOString() })
      .where("id", "=", importId)
      .execute();
  }

  const started = Date.now();
  for (;;) {
    const rows = await pending().select(["id", "data"]).orderBy("id").limit(BATCH).execute();
    if (rows.length === 0) return finish(ctx, importId);
    const outcomes: Array<{ id: string; failure: string | undefined }> = [];
    for (const row of rows) outcomes.push({ id: row.id, failure: await applyRow(ctx, owner, type, decode(row.data)) });
    await recordOutcomes(ctx, importId, outcomes);
    if (Date.now() - started > WORK_MS || shutdown?.aborted) {
      await enqueueImportRun(ctx, db, bulkImport);
      ctx.jobs.wake();
      return;
    }
  }
}

async function recordOutcomes(
  ctx: Ctx,
  importId: string,
  outcomes: ReadonlyArray<{ id: string; failure: string | undefined }>,
): Promise<void> {
  const imported = outcomes.filter((o) => o.failure === undefined).map((o) => o.id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    if (imported.length) await tx.deleteFrom("bulk_import_rows").where("id", "in", imported).execute();
    for (const { id, failure } of outcomes)
      if (failure !== undefined)
        await tx.updateTable("bulk_import_rows").set({ failure }).where("id", "=", id).execute();
    await tx
      .updateTable("bulk_imports")
      .set((eb) => ({
        processed_items: eb("processed_items", "+", outcomes.length),
        imported_items: eb("imported_items", "+", imported.length),
        updated_at: new Date().toISOString(),
      }))
      .where("id", "=", importId)
      .execute();
  });
}

/** Deletes finished imports older than the retention (the `imports.prune` job); returns how many. */
export async function pruneImports(ctx: Ctx, now = new Date()): Promise<number> {
  const result = await ctx.db.kysely
    .deleteFrom("bulk_imports")
    .where("state", "=", "finished")
    .where("created_at", "<", new Date(now.getTime() - IMPORT_RETENTION_MS).toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
