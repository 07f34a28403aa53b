import { sql, type Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * Jobs that must run one after another in the order they were enqueued (the activities about one
 * object, delivered to one server) share an ordering key: a job is claimed only when no earlier job
 * with its key is still waiting or running. The partial index finds the earlier one.
 */
export const jobOrdering: RookeryMigration = {
  name: "0028_job_ordering",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("jobs").addColumn("ordering_key", "text").execute();
    await sql`CREATE INDEX index_jobs_on_ordering_key ON jobs (ordering_key, id) WHERE ordering_key IS NOT NULL`.execute(
      db,
    );
  },
};
