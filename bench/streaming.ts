/**
 * Streaming benchmark. Seeds one author and N readers who follow them (each with a token), starts
 * the real server (`node src/main.ts`), opens N WebSocket connections from this process and, for
 * each connection count asked for, measures:
 * - the server's memory per open connection (resident set before and after opening them);
 * - delivery latency (from the author's POST to each client's frame, p50/p99) while the author
 *   posts, on `public:local` (one rendering per process, checked per subscriber) and on `user`
 *   (the home stream: each event rendered for its reader);
 * - whether every event reached every client.
 * Writes one section per engine of bench/RESULTS.md (`--no-results` prints it instead).
 *
 * Run `node bench/streaming.ts --help` for the options.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { newId } from "../src/db/ids.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { insertApplication, OOB_REDIRECT_URI } from "../src/services/auth/applications.ts";
import { issueAccessToken } from "../src/services/auth/tokens.ts";
import {
  benchEnvironment,
  DEFAULT_DATA_DIR,
  gitCommit,
  Progress,
  recreatePostgresDatabase,
  REPO_ROOT,
  type Engine,
} from "./common.ts";
import { processCpu, replaceMarkedSection, startServer } from "./server.ts";

const HELP = `Usage: node bench/streaming.ts [options]

Measures streaming: memory per connection and delivery latency at several connection counts.

Options:
  --engine sqlite|postgres   Database engine (default sqlite)
  --postgres-url URL         PostgreSQL server for --engine postgres (a database rookery_bench_streaming is made)
  --connections LIST         Connection counts, comma-separated (default 1000,5000)
  --events N                 Posts per scenario (default 10)
  --interval MS              Time between posts (default 500)
  --data-dir DIR             Where the SQLite file and logs go (default ${DEFAULT_DATA_DIR})
  --no-results               Print the section instead of writing bench/RESULTS.md
  --help                     Show this help`;

interface Options {
  engine: Engine;
  postgresUrl: string;
  connections: number[];
  events: number;
  interval: number;
  dataDir: string;
  results: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      engine: { type: "string", default: "sqlite" },
      "postgres-url": { type: "string", default: "postgres://postgres@127.0.0.1:5432/rookery_bench_streaming" },
      connections: { type: "string", default: "1000,5000" },
      events: { type: "string", default: "10" },
      interval: { type: "string", default: "500" },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
      "no-results": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  const engine = values.engine as Engine;
  if (engine !== "sqlite" && engine !== "postgres") throw new Error("--engine must be sqlite or postgres");
  const connections = values.connections.split(",").map((n) => Number.parseInt(n, 10));
  if (connections.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--connections must list whole numbers");
  return {
    engine,
    postgresUrl: values["postgres-url"],
    connections,
    events: Number.parseInt(values.events, 10),
    interval: Number.parseInt(values.interval, 10),
    dataDir: resolve(values["data-dir"], "streaming"),
    results: !values["no-results"],
  };
}

interface Seeded {
  authorToken: string;
  readerTokens: string[];
}

/** The author (through the real service) and `readers` followers in bulk, each with a token. */
async function seed(env: Record<string, string>, readers: number): Promise<Seeded> {
  const ctx = await boot(loadConfig(env), { jobHandlers: false });
  try {
    const db = ctx.db.kysely;
    const author = await createLocalUser(ctx, {
      username: "author",
      email: "author@bench.example",
      password: "bench-password",
      confirmed: true,
      approved: true,
    });
    const app = await insertApplication(db, {
      name: "Rookery streaming bench",
      website: "https://bench.example/",
      redirectUris: [OOB_REDIRECT_URI],
      scopes: ["read", "write"],
    });
    const progress = new Progress("readers", readers);
    const now = new Date().toISOString();
    const tokens: string[] = [];
    for (let start = 0; start < readers; start += 250) {
      const count = Math.min(250, readers - start);
      const accounts = Array.from({ length: count }, (_, i) => ({
        id: newId(),
        username: `reader${start + i}`,
        uri: `https://${ctx.config.localDomain}/users/reader${start + i}`,
        created_at: now,
        updated_at: now,
      }));
      await db.insertInto("accounts").values(accounts).execute();
      const users = accounts.map((a) => ({
        id: newId(),
        account_id: a.id,
        email: `${a.username}@bench.example`,
        encrypted_password: null,
        role_id: null,
        confirmed_at: now,
        approved: true,
        created_at: now,
        updated_at: now,
      }));
      await db.insertInto("users").values(users).execute();
      await db
        .insertInto("follows")
        .values(
          accounts.map((a) => ({
            id: newId(),
            account_id: a.id,
            target_account_id: author.account.id,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
      for (const user of users)
        tokens.push(
          (await issueAccessToken(db, { applicationId: app.id, userId: user.id, scopes: "read write" })).accessToken,
        );
      progress.tick(count);
    }
    progress.finish();
    const authorToken = (
      await issueAccessToken(db, { applicationId: app.id, userId: author.user.id, scopes: "read write" })
    ).accessToken;
    return { authorToken, readerTokens: tokens };
  } finally {
    await ctx.events.close();
    await ctx.db.close();
  }
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : Number.NaN;

interface Client {
  ws: WebSocket;
  /** Arrival time of each status ID. */
  seen: Map<string, number>;
}

/** Opens `tokens.length` connections subscribed to `stream`, each confirmed by a round trip. */
async function openClients(port: number, tokens: readonly string[], stream: string): Promise<Client[]> {
  const progress = new Progress("connections", tokens.length);
  const clients: Client[] = [];
  const batch = 200;
  for (let start = 0; start < tokens.length; start += batch) {
    const opened = await Promise.all(
      tokens.slice(start, start + batch).map(
        (token) =>
          new Promise<Client>((resolveClient, reject) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/streaming?stream=${stream}`, token);
            const client: Client = { ws, seen: new Map() };
            ws.on("message", (data) => {
              const text = data.toString();
              if (text.includes('"error":"Unknown stream type"')) return resolveClient(client);
              const id = /\\"id\\":\\"(\d+)\\"/.exec(text)?.[1];
              if (id && !client.seen.has(id)) client.seen.set(id, performance.now());
            });
            ws.once("open", () => ws.send(JSON.stringify({ type: "unsubscribe", stream: "round-trip" })));
            ws.once("error", reject);
          }),
      ),
    );
    clients.push(...opened);
    progress.tick(opened.length);
  }
  progress.finish();
  return clients;
}

interface Measured {
  connections: number;
  stream: string;
  rssPerConnection: number;
  p50: number;
  p99: number;
  max: number;
  delivered: number;
  expected: number;
  serverCpuSeconds: number;
  seconds: number;
}

async function scenario(
  port: number,
  pid: number,
  seeded: Seeded,
  connections: number,
  stream: string,
  opts: Options,
): Promise<Measured> {
  global.gc?.();
  await new Promise((r) => setTimeout(r, 1000));
  const before = rssBytes(pid);
  const clients = await openClients(port, seeded.readerTokens.slice(0, connections), stream);
  await new Promise((r) => setTimeout(r, 2000));
  const after = rssBytes(pid);
  const cpuBefore = processCpu(pid)?.seconds ?? 0;
  const started = performance.now();
  const sent = new Map<string, number>();
  for (let i = 0; i < opts.events; i++) {
    const at = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/statuses`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${seeded.authorToken}`,
        "content-type": "application/json",
        connection: "close",
      },
      body: JSON.stringify({ status: `streaming bench ${connections} ${stream} ${i} ${Date.now()}` }),
    });
    if (res.status !== 200) throw new Error(`posting failed: ${res.status} ${await res.text()}`);
    sent.set(((await res.json()) as { id: string }).id, at);
    await new Promise((r) => setTimeout(r, opts.interval));
  }
  // Wait for the stragglers (at most five minutes after the last post).
  const deadline = performance.now() + 300_000;
  const expected = sent.size * clients.length;
  const delivered = () => clients.reduce((n, c) => n + [...sent.keys()].filter((id) => c.seen.has(id)).length, 0);
  while (delivered() < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`   delivered ${delivered()}/${expected} in ${seconds.toFixed(1)} s\n`);
  const cpu = (processCpu(pid)?.seconds ?? 0) - cpuBefore;
  const latencies: number[] = [];
  for (const client of clients)
    for (const [id, at] of sent) {
      const arrived = client.seen.get(id);
      if (arrived !== undefined) latencies.push(arrived - at);
    }
  latencies.sort((a, b) => a - b);
  for (const client of clients) client.ws.terminate();
  await new Promise((r) => setTimeout(r, 2000));
  return {
    connections,
    stream,
    rssPerConnection: (after - before) / connections,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    delivered: latencies.length,
    expected,
    serverCpuSeconds: cpu,
    seconds,
  };
}

async function main(): Promise<void> {
  const opts = options();
  rmSync(opts.dataDir, { recursive: true, force: true });
  mkdirSync(opts.dataDir, { recursive: true });
  const databaseUrl = opts.engine === "sqlite" ? `sqlite:${join(opts.dataDir, "streaming.sqlite")}` : opts.postgresUrl;
  if (opts.engine === "postgres") await recreatePostgresDatabase(databaseUrl);
  const env = { ...benchEnvironment(databaseUrl, opts.dataDir, opts.engine), ROOKERY_DATA_DIR: opts.dataDir };
  const max = Math.max(...opts.connections);
  const seeded = await seed(env, max);
  const server = await startServer(opts.dataDir, env, "info");
  const pid = server.child.pid!;
  const results: Measured[] = [];
  try {
    // A first round the results leave out: code paths compiled, caches and pools warm.
    process.stderr.write("== warming up\n");
    await scenario(server.port, pid, seeded, Math.min(100, max), "user", { ...opts, events: 2 });
    for (const connections of opts.connections)
      for (const stream of ["public:local", "user"]) {
        process.stderr.write(`== ${connections} connections on ${stream}\n`);
        results.push(await scenario(server.port, pid, seeded, connections, stream, opts));
      }
  } finally {
    await server.stop();
  }
  const ms = (n: number) => (Number.isNaN(n) ? "–" : `${Math.round(n)} ms`);
  const lines = [
    `## Streaming: ${opts.engine === "sqlite" ? "SQLite" : "PostgreSQL"}`,
    "",
    `Commit \`${gitCommit()}\`, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores; one server process,`,
    `clients in the bench process; ${opts.events} posts ${opts.interval} ms apart by an author every reader follows.`,
    "Latency: from the POST to the frame at each client (fan-out job, rendering, delivery).",
    "",
    "| connections | stream | memory per connection | p50 | p99 | max | delivered | server CPU |",
    "|---:|---|---:|---:|---:|---:|---:|---:|",
    ...results.map(
      (r) =>
        `| ${r.connections} | \`${r.stream}\` | ${(r.rssPerConnection / 1024).toFixed(1)} KiB | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.delivered}/${r.expected} | ${r.serverCpuSeconds.toFixed(1)} s in ${r.seconds.toFixed(1)} s |`,
    ),
  ];
  const section = lines.join("\n");
  if (!opts.results) {
    process.stdout.write(`${section}\n`);
    return;
  }
  const resultsFile = join(REPO_ROOT, "bench", "RESULTS.md");
  const text = readFileSync(resultsFile, "utf8");
  writeFileSync(resultsFile, replaceMarkedSection(text, `streaming-${opts.engine}`, section));
  process.stderr.write(`wrote the streaming-${opts.engine} section of bench/RESULTS.md\n`);
}

await main();
