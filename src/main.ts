import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import { boot, StartupError } from "./boot.ts";
import { ConfigError, loadConfig } from "./config.ts";
import type { Ctx } from "./context.ts";

/** Starts the web server and/or the job workers, as ROOKERY_ROLE says; stops gracefully on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let ctx: Ctx;
  try {
    ctx = await boot(loadConfig());
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StartupError) {
      process.stderr.write(`rookery: ${error instanceof ConfigError ? "configuration error: " : ""}${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const { config, log } = ctx;
  let app: FastifyInstance | undefined;

  if (config.role !== "worker") {
    app = await buildApp(ctx);
    try {
      await app.listen({ port: config.port, host: config.bind });
    } catch (error) {
      process.stderr.write(`rookery: cannot listen on ${config.bind}:${config.port} (BIND/PORT): ${(error as Error).message}\n`);
      await ctx.db.close();
      process.exit(1);
    }
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    log.info({ port }, `Rookery is serving ${config.baseUrl} (listening on ${config.bind}:${port}, database ${ctx.db.engine})`);
  }
  if (config.role !== "web") {
    await ctx.jobs.start();
    log.info("job workers started");
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    const deadline = setTimeout(() => {
      log.error(`shutdown took longer than ${config.shutdownTimeout}s (SHUTDOWN_TIMEOUT); exiting`);
      process.exit(1);
    }, config.shutdownTimeout * 1000);
    deadline.unref();
    await Promise.allSettled([app?.close(), ctx.jobs.stop()]);
    await ctx.db.close();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

await main();
