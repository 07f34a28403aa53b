import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import { boot, StartupError } from "./boot.ts";
import { ConfigError, loadConfig } from "./config.ts";
import type { Ctx } from "./context.ts";
import { checkTranscoder } from "./media/ffmpeg.ts";

/** Writes buffered log lines before the process ends (pino may buffer when stdout is a pipe). */
function exitAfterFlush(ctx: Ctx, code: number): void {
  const log = ctx.log as typeof ctx.log & { flush?: (cb?: (error?: Error) => void) => void };
  if (typeof log.flush !== "function") process.exit(code);
  log.flush(() => process.exit(code));
}

/**
 * Checks the ffmpeg found before serving: one named by FFMPEG_BINARY/FFPROBE_BINARY must run (else
 * the start fails); one found on the PATH or in a package that does not run is dropped with a
 * warning, and the server accepts images only.
 */
async function settleTranscoder(ctx: Ctx): Promise<void> {
  const { config, log } = ctx;
  const tools = config.transcoder;
  if (!tools) {
    log.warn(
      "no ffmpeg/ffprobe found (FFMPEG_BINARY, the PATH or the optional npm packages): only images are accepted",
    );
    return;
  }
  const problem = await checkTranscoder(tools);
  if (problem && tools.source === "environment") {
    process.stderr.write(`rookery: configuration error: FFMPEG_BINARY/FFPROBE_BINARY: ${problem}\n`);
    await ctx.events.close();
    await ctx.db.close();
    process.exit(1);
  }
  if (problem) {
    log.warn({ problem }, `the ffmpeg from the ${tools.source} does not run here: only images are accepted`);
    config.transcoder = undefined;
    return;
  }
  log.info(
    { ffmpeg: tools.ffmpeg, ffprobe: tools.ffprobe },
    `video, audio and animated GIFs are accepted (ffmpeg from the ${tools.source})`,
  );
}

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
  await settleTranscoder(ctx);
  let app: FastifyInstance | undefined;
  let stopping = false;

  // Signals are handled from the first moment, so an early SIGTERM still shuts down cleanly.
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    const deadline = setTimeout(() => {
      log.error(`shutdown took longer than ${config.shutdownTimeout}s (SHUTDOWN_TIMEOUT); exiting`);
      exitAfterFlush(ctx, 1);
    }, config.shutdownTimeout * 1000);
    deadline.unref();
    await Promise.allSettled([app?.close(), ctx.jobs.stop()]);
    await ctx.events.close();
    await ctx.db.close();
    log.info("stopped");
    exitAfterFlush(ctx, 0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  if (config.role !== "worker") {
    app = await buildApp(ctx);
    try {
      await app.listen({ port: config.port, host: config.bind });
    } catch (error) {
      if (stopping) return;
      process.stderr.write(
        `rookery: cannot listen on ${config.bind}:${config.port} (BIND/PORT): ${(error as Error).message}\n`,
      );
      await ctx.events.close();
      await ctx.db.close();
      process.exit(1);
    }
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    log.info(
      { port },
      `Rookery is serving ${config.baseUrl} (listening on ${config.bind}:${port}, database ${ctx.db.engine})`,
    );
  }
  if (config.role !== "web" && !stopping) {
    await ctx.jobs.start();
    if (!stopping) log.info("job workers started");
  }
  // Events caused in a worker (new posts, notifications) reach streaming clients of a web process only over Redis.
  if (config.role !== "all" && !config.redisUrl)
    log.warn(
      `ROOKERY_ROLE=${config.role} without REDIS_URL: streaming clients will miss events caused in other processes`,
    );
}

await main();
