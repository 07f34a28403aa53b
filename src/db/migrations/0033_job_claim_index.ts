import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * Workers walk the waiting jobs in `run_at` order a page at a time (jobs/queue.ts): the index
 * holds exactly those (failed jobs are kept for inspection but never claimed), ordered with the id
 * to page by. It replaces the index on `run_at` alone, which only the claim used.
 */
export const jobClaimIndex: RookeryMigration = {
  name: "0033_job_claim_index",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX index_jobs_waiting ON jobs (run_at, id) WHERE failed_at IS NULL`.execute(db);
    await db.schema.dropIndex("index_jobs_on_run_at").execute();
  },
};
