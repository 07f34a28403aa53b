import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * CSV imports of follows, blocks, mutes, domain blocks, lists and bookmarks (Mastodon's
 * BulkImport and BulkImportRow). An import and all its rows are written in one transaction once
 * the whole file passed its checks; jobs then work through the rows. A row that was applied is
 * deleted, a row that failed keeps its reason (`failure`), so the rows left are the pending and
 * the failed ones.
 */
export const bulkImports: RookeryMigration = {
  name: "0039_bulk_imports",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("bulk_imports")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("overwrite", t.boolean, (c) => c.notNull().defaultTo(sql.raw(t.false)))
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("original_filename", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("total_items", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("processed_items", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("imported_items", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", t.timestamp, (c) => c.notNull())
      .addColumn("updated_at", t.timestamp, (c) => c.notNull())
      .addColumn("finished_at", t.timestamp)
      .execute();
    await db.schema.createIndex("bulk_imports_by_account").on("bulk_imports").columns(["account_id", "id"]).execute();
    await db.schema
      .createTable("bulk_import_rows")
      .addColumn("id", t.id, (c) => c.primaryKey())
      .addColumn("bulk_import_id", t.id, (c) => c.notNull().references("bulk_imports.id").onDelete("cascade"))
      .addColumn("line", "integer", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("failure", "text")
      .execute();
    await db.schema
      .createIndex("bulk_import_rows_by_import")
      .on("bulk_import_rows")
      .columns(["bulk_import_id", "id"])
      .execute();
  },
};
