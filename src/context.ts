import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.ts";
import type { Db } from "./db/connect.ts";
import type { JobQueue } from "./jobs/queue.ts";

/** Everything a service needs, passed explicitly: configuration, database, jobs, logger. */
export interface Ctx {
  config: Config;
  db: Db;
  jobs: JobQueue;
  log: FastifyBaseLogger;
}
