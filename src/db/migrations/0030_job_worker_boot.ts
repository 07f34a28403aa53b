import type { Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

/**
 * The boot of the machine a job worker runs on (Linux's boot ID): host name and PID namespace alone
 * do not tell two machines apart (cloned hosts share names, and every machine's default PID
 * namespace has the same inode), and a PID means a process only on the machine and boot it came from.
 */
export const jobWorkerBoot: RookeryMigration = {
  name: "0030_job_worker_boot",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("job_workers").addColumn("boot_id", "text").execute();
  },
};
