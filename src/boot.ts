import { pino, type Logger } from "pino";
import type { Config } from "./config.ts";
import type { Ctx } from "./context.ts";
import { openDatabase } from "./db/connect.ts";
import { migrateToLatest } from "./db/migrate.ts";
import { JobQueue } from "./jobs/queue.ts";
import { MemoryRateLimitStore } from "./api/rate_limit.ts";
import { FileSystemStorage } from "./media/storage.ts";
import { acceptAllMailDomains, dnsMailDomainChecker } from "./services/mail/domains.ts";
import { createBus } from "./realtime/bus.ts";
import { EventDispatcher } from "./events/dispatcher.ts";
import { subscriberTable } from "./subscribers.ts";
import { buildFederation } from "./federation/federation.ts";
import { Resolver } from "./federation/resolver.ts";
import { installOutboundAgent } from "./services/http/outbound.ts";

/** Raised when start-up cannot proceed; the message is one line for the operator. */
export class StartupError extends Error {
  override name = "StartupError";
}

function describeDatabase(url: string): string {
  return url.startsWith("sqlite:") ? url : url.replace(/\/\/[^@/]*@/, "//***@");
}

export interface BootOptions {
  /** Apply pending migrations (the server does; `rookery db migrate` does it explicitly). */
  migrate?: boolean;
  log?: Logger;
  /**
   * Register the job handlers (default). The CLI only enqueues jobs and skips them, which spares it
   * loading every service (sharp, the mailer, …) before a one-line command.
   */
  jobHandlers?: boolean;
  /**
   * Make the outbound agent (services/http/outbound.ts) this process's global dispatcher (default).
   * Tests that boot a context beside their own loopback fetches leave it out.
   */
  outboundAgent?: boolean;
}

/** The parts of a context that are made from the others: the event dispatcher with its subscribers, federation. */
export function assembleContext(parts: Omit<Ctx, "dispatcher" | "federation" | "remote">): Ctx {
  const ctx = { ...parts, dispatcher: new EventDispatcher(parts.db, parts.jobs, parts.log) } as Ctx;
  ctx.federation = buildFederation(ctx);
  ctx.remote = new Resolver(ctx);
  ctx.dispatcher.use(subscriberTable(ctx));
  return ctx;
}

/** Opens the database (and migrates it) and assembles the context shared by server, workers and CLI. */
export async function boot(config: Config, options: BootOptions = {}): Promise<Ctx> {
  const log = options.log ?? pino({ level: config.logLevel });
  let db;
  try {
    db = await openDatabase(config.databaseUrl, {
      onError: (event) =>
        log.debug({ err: event.level === "error" ? event.error : undefined, sql: event.query.sql }, "query failed"),
      onGroupLost: (error) =>
        log.error(
          { err: error },
          "the job workers' grouped commit failed: their last jobs were rolled back and run again",
        ),
    });
    if (options.migrate !== false) {
      const applied = await migrateToLatest(db);
      if (applied.length > 0) log.info({ migrations: applied }, "database migrated");
    }
  } catch (error) {
    await db?.close().catch(() => {});
    const reason = error instanceof Error ? error.message : String(error);
    throw new StartupError(
      `Cannot use the database at ${describeDatabase(config.databaseUrl)} (DATABASE_URL): ${reason}`,
    );
  }
  // Every fetch() of this process (Fedify's included) reaches only what ALLOWED_PRIVATE_ADDRESSES allows.
  if (options.outboundAgent !== false) installOutboundAgent(config);
  const jobs = new JobQueue(db, log);
  const ctx = assembleContext({
    config,
    db,
    jobs,
    log,
    rateLimits: new MemoryRateLimitStore(),
    mailDomains: config.emailDomainDnsCheck ? dnsMailDomainChecker() : acceptAllMailDomains,
    media: new FileSystemStorage(config.mediaDir),
    events: createBus(config.redisUrl, log, db),
  });
  if (options.jobHandlers !== false) {
    (await import("./jobs/handlers.ts")).registerJobHandlers(ctx);
    // The server's Web Push keys exist from the first start on (clients read them from the instance API).
    await (await import("./services/push/vapid.ts")).vapidKeys(ctx);
  }
  return ctx;
}
