import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * The processes running job workers, each with a heartbeat, so that a live process releases at once
 * the jobs of one that is gone (killed, crashed) instead of waiting for their leases to run out. The
 * jobs a worker holds are found through their `locked_by`: a small partial index, since only jobs
 * being run (or left by a dead worker) carry one.
 */
export const jobWorkers: RookeryMigration = {
  name: "0026_job_workers",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    await db.schema
      .createTable("job_workers")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("host", "text", (c) => c.notNull())
      .addColumn("pid", "integer", (c) => c.notNull())
      .addColumn("pid_namespace", "text")
      .addColumn("started_at", t.timestamp, (c) => c.notNull())
      .addColumn("heartbeat_at", t.timestamp, (c) => c.notNull())
      .execute();
    await sql`CREATE INDEX index_jobs_on_locked_by ON jobs (locked_by) WHERE locked_by IS NOT NULL`.execute(db);
  },
};
