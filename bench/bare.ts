/**
 * The ceiling a timeline page is measured against: a bare Fastify route that sends the very bytes
 * of a public timeline page (no database, no serialization), under the same load as bench/run.ts.
 * It takes one page from a seeded SQLite data set through Rookery itself (in-process), serves it
 * from a bare route on an ephemeral port and runs autocannon against it.
 *
 *   node bench/bare.ts [--data-dir DIR] [--path /api/v1/timelines/public] [--duration S] [--connections N]
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import Fastify from "fastify";
import { pino } from "pino";
import { buildApp } from "../src/app.ts";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { benchEnvironment, DEFAULT_DATA_DIR, engineDir } from "./common.ts";

const { values } = parseArgs({
  options: {
    "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
    path: { type: "string", default: "/api/v1/timelines/public" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write("Usage: node bench/bare.ts [--data-dir DIR] [--path PATH] [--duration S] [--connections N]\n");
  process.exit(0);
}

// A copy of the seeded SQLite database, so nothing here touches the data set.
const work = mkdtempSync(join(tmpdir(), "rookery-bare-"));
const seeded = join(engineDir(values["data-dir"], "sqlite"), "seed.sqlite");
const copy = join(work, "page.sqlite");
copyFileSync(seeded, copy);
const env = { ...benchEnvironment(`sqlite:${copy}`, work, "sqlite"), ROOKERY_DATA_DIR: work, LOG_LEVEL: "silent" };
const ctx = await boot(loadConfig(env), { migrate: true, log: pino({ level: "silent" }) });
const rookery = await buildApp(ctx);
const page = await rookery.inject({ method: "GET", url: values.path });
if (page.statusCode !== 200) throw new Error(`${values.path} answered ${page.statusCode}: ${page.body}`);
const bytes = page.rawPayload;
const contentType = String(page.headers["content-type"]);
await rookery.close();
await ctx.db.close();

const bare = Fastify({ logger: false });
bare.get("/page", (_req, reply) => reply.type(contentType).send(bytes));
await bare.listen({ port: 0, host: "127.0.0.1" });
const { port } = bare.server.address() as { port: number };
const result = await autocannon({
  url: `http://127.0.0.1:${port}/page`,
  duration: Number(values.duration),
  connections: Number(values.connections),
});
await bare.close();
rmSync(work, { recursive: true, force: true });
process.stdout.write(
  `bare Fastify route, ${bytes.length} bytes of ${values.path}: ${Math.round(result.requests.average)} req/s, ` +
    `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx} non-2xx\n`,
);
