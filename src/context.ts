import type { Federation } from "@fedify/fedify";
import type { FastifyBaseLogger } from "fastify";
import type { AccountRow, StatusRow } from "./db/schema.ts";
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
  /**
   * Fedify's federation (src/federation/): its routes, its queue and what sends activities. Only
   * the federation edge and the wiring (subscribers, job handlers) use it.
   */
  federation: Federation<void>;
  /** Finds what lives on other servers, for the services that meet a remote name or URL. */
  remote: RemoteResolver;
}

/** Looks up accounts of other servers over the network and stores them (src/federation/resolver.ts). */
export interface RemoteResolver {
  /**
   * The account a handle (`user@domain`, `@user@domain`, `acct:…`) or an actor or profile URL
   * names, found through WebFinger and its actor document and stored; undefined when it cannot
   * be found or is refused (a suspended domain, an unreachable server).
   */
  account(query: string): Promise<AccountRow | undefined>;
  /**
   * What the URL of another server's page or object is: its account or its post, fetched and
   * stored (Mastodon's ResolveURLService); undefined when it is neither or cannot be fetched.
   */
  url(url: string): Promise<{ account: AccountRow } | { status: StatusRow } | undefined>;
  /**
   * The aliases (`alsoKnownAs`) the actor `uri` of another server names now, read from its
   * server; undefined when it cannot be read.
   */
  currentAliases(uri: string): Promise<string[] | undefined>;
}
