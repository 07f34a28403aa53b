import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.ts";
import type { Db } from "./db/connect.ts";
import type { JobQueue } from "./jobs/queue.ts";
import type { RateLimitStore } from "./api/rate_limit.ts";
import type { MailDomainChecker } from "./services/mail/domains.ts";
import type { MediaStorage } from "./media/storage.ts";
import type { EventDispatcher } from "./events/dispatcher.ts";
import type { EventBus } from "./realtime/bus.ts";

/** Everything a service needs, passed explicitly: configuration, database, jobs, logger, rate-limit counters, the e-mail domain check. */
export interface Ctx {
  config: Config;
  db: Db;
  jobs: JobQueue;
  log: FastifyBaseLogger;
  rateLimits: RateLimitStore;
  /** Whether an e-mail domain can receive mail (sign-up's ERR_UNREACHABLE); injectable in tests. */
  mailDomains: MailDomainChecker;
  /** Uploaded files (avatars, headers, attachments, emoji). */
  media: MediaStorage;
  /** Live events for streaming clients: in-process, or Redis pub/sub with REDIS_URL. */
  events: EventBus;
  /** Domain events: services emit what happened, the subscribers (src/subscribers.ts) react. */
  dispatcher: EventDispatcher;
}
