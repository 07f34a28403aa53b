/**
 * Load benchmark of Rookery's client API. For each engine: makes sure a seeded data set exists
 * (bench/seed.ts), starts the real server (`node src/main.ts`) as a child process on an ephemeral
 * port, runs autocannon scenarios against it, stops it, and writes the engine's section of
 * bench/RESULTS.md.
 *
 * Run `node bench/run.ts --help` for the options.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { openDatabase } from "../src/db/connect.ts";
import { digest } from "../src/services/auth/tokens.ts";
import {
  benchEnvironment,
  DEFAULT_DATA_DIR,
  DEFAULT_POSTGRES_URL,
  DEFAULT_STATUSES,
  DEFAULT_USERS,
  defaultDatabaseUrl,
  engineDir,
  gitCommit,
  MANIFEST_FORMAT,
  manifestPath,
  Random,
  REPO_ROOT,
  sentence,
  TAGS,
  workingDatabaseUrl,
  type Engine,
  type Manifest,
  recreatePostgresDatabase,
} from "./common.ts";
import {
  fire,
  postgresCpu,
  processCpu,
  replaceMarkedSection,
  startServer,
  type LoggedProblem,
  type Request,
  type Server,
} from "./server.ts";

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario {
  name: string;
  title: string;
  /** Not run unless named in --scenarios. */
  optional?: boolean;
  /** What the data set must hold for the scenario (tiny data sets may lack threads). */
  needs?: "statuses" | "threads";
  /** A factory of per-request generators, so each run starts from the same random sequence. */
  requests(manifest: Manifest): () => Request;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** What a browser sends when it opens a page. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** Cycles through the data set's tokens, one per request. */
function tokenCycle(manifest: Manifest): () => string {
  let i = 0;
  return () => manifest.tokens[i++ % manifest.tokens.length].token;
}

const SCENARIOS: Scenario[] = [
  {
    name: "instance",
    title: "GET /api/v2/instance (anonymous)",
    requests: () => () => ({ path: "/api/v2/instance" }),
  },
  {
    name: "verify_credentials",
    title: "GET /api/v1/accounts/verify_credentials (token)",
    requests: (m) => {
      const token = tokenCycle(m);
      return () => ({ path: "/api/v1/accounts/verify_credentials", headers: bearer(token()) });
    },
  },
  {
    name: "status",
    needs: "statuses",
    title: "GET /api/v1/statuses/:id (anonymous, random id)",
    requests: (m) => {
      const rng = new Random(1);
      return () => ({ path: `/api/v1/statuses/${rng.pick(m.publicStatusIds)}` });
    },
  },
  {
    name: "status_token",
    needs: "statuses",
    title: "GET /api/v1/statuses/:id (token, random id)",
    requests: (m) => {
      const rng = new Random(2);
      const token = tokenCycle(m);
      return () => ({ path: `/api/v1/statuses/${rng.pick(m.publicStatusIds)}`, headers: bearer(token()) });
    },
  },
  {
    name: "context",
    needs: "threads",
    title: "GET /api/v1/statuses/:id/context (anonymous, mid-thread)",
    requests: (m) => {
      let i = 0;
      return () => ({ path: `/api/v1/statuses/${m.threads[i++ % m.threads.length].focusId}/context` });
    },
  },
  {
    name: "context_token",
    needs: "threads",
    title: "GET /api/v1/statuses/:id/context (token, mid-thread)",
    requests: (m) => {
      let i = 0;
      const token = tokenCycle(m);
      return () => ({
        path: `/api/v1/statuses/${m.threads[i++ % m.threads.length].focusId}/context`,
        headers: bearer(token()),
      });
    },
  },
  {
    name: "statuses_batch",
    needs: "statuses",
    title: "GET /api/v1/statuses?id[]=… (token, 20 random ids)",
    requests: (m) => {
      const rng = new Random(3);
      const token = tokenCycle(m);
      return () => ({
        path: `/api/v1/statuses?${rng
          .sample(m.publicStatusIds, 20)
          .map((id) => `id%5B%5D=${id}`)
          .join("&")}`,
        headers: bearer(token()),
      });
    },
  },
  {
    name: "bookmarks",
    title: "GET /api/v1/bookmarks?limit=40 (token)",
    requests: (m) => {
      const token = tokenCycle(m);
      return () => ({ path: "/api/v1/bookmarks?limit=40", headers: bearer(token()) });
    },
  },
  {
    name: "public_timeline",
    needs: "statuses",
    title: "GET /api/v1/timelines/public (anonymous, 20)",
    requests: () => () => ({ path: "/api/v1/timelines/public" }),
  },
  {
    name: "public_timeline_token",
    needs: "statuses",
    title: "GET /api/v1/timelines/public?limit=40 (token)",
    requests: (m) => {
      const token = tokenCycle(m);
      return () => ({ path: "/api/v1/timelines/public?limit=40", headers: bearer(token()) });
    },
  },
  {
    name: "post",
    title: "POST /api/v1/statuses (token; mention, hashtag)",
    requests: (m) => {
      const rng = new Random(4);
      const token = tokenCycle(m);
      const names = m.tokens.map((t) => t.username);
      return () => {
        const parts = [sentence(rng)];
        if (rng.chance(0.3)) parts.push(`@${rng.pick(names)}`);
        if (rng.chance(0.4)) parts.push(`#${rng.pick(TAGS)}`);
        const visibility = rng.pick(["public", "public", "public", "unlisted", "private"]);
        return {
          method: "POST",
          path: "/api/v1/statuses",
          headers: { ...bearer(token()), "content-type": "application/json" },
          body: JSON.stringify({ status: parts.join(" "), visibility, language: "en" }),
        };
      };
    },
  },
  // Optional: the public pages a browser opens (server-rendered from the API's serializers).
  {
    name: "profile_page",
    title: "GET /@username (browser, 20 posts and the pins)",
    optional: true,
    requests: (m) => {
      const rng = new Random(5);
      const names = m.tokens.map((t) => t.username);
      return () => ({ path: `/@${rng.pick(names)}`, headers: { accept: BROWSER_ACCEPT } });
    },
  },
  {
    name: "tag_page",
    needs: "statuses",
    title: "GET /tags/:name (browser, 20 posts)",
    optional: true,
    requests: () => {
      const rng = new Random(6);
      return () => ({ path: `/tags/${rng.pick(TAGS)}`, headers: { accept: BROWSER_ACCEPT } });
    },
  },
  // Optional: instance-wide statistics that anonymous clients and crawlers fetch.
  {
    name: "instance_v1",
    title: "GET /api/v1/instance (anonymous)",
    optional: true,
    requests: () => () => ({ path: "/api/v1/instance" }),
  },
  {
    name: "nodeinfo",
    title: "GET /nodeinfo/2.0 (anonymous)",
    optional: true,
    requests: () => () => ({ path: "/nodeinfo/2.0" }),
  },
  {
    name: "instance_activity",
    title: "GET /api/v1/instance/activity (anonymous)",
    optional: true,
    requests: () => () => ({ path: "/api/v1/instance/activity" }),
  },
];

// ---------------------------------------------------------------------------------------------
// Options

const HELP = `Usage: node bench/run.ts [options]      (or: npm run bench -- [options])

Benchmarks Rookery's client API with autocannon. For each engine it seeds a data set when none
matching exists (bench/seed.ts), starts the server (node src/main.ts, PORT=0, BIND=127.0.0.1 so
that rate limits do not apply), runs the scenarios one after the other, stops the server and
rewrites that engine's section of the results file. The server works on a copy of the seeded
database made for each run, so what POST adds is gone the next time.

Options:
  --engine sqlite|postgres|both  Engines to benchmark (default: both)
  --duration S              Seconds measured per scenario (default: 10)
  --warmup S                Unmeasured seconds before each scenario (default: 2; 0 for none)
  --connections N           Concurrent connections (default: 10)
  --scenarios LIST          Comma-separated scenario names (default: all but the optional ones):
                            ${SCENARIOS.filter((s) => !s.optional)
                              .map((s) => s.name)
                              .join(", ")}
                            optional: ${SCENARIOS.filter((s) => s.optional)
                              .map((s) => s.name)
                              .join(", ")}
  --users N                 Users of the data set (default: ${DEFAULT_USERS})
  --statuses N              Statuses of the data set (default: ${DEFAULT_STATUSES})
  --reseed                  Seed a fresh data set even when a matching one exists
  --data-dir DIR            Where data sets, manifests and server logs live (default: ${DEFAULT_DATA_DIR})
  --postgres-url URL        PostgreSQL benchmark database, dropped and recreated when seeding
                            (default: $BENCH_POSTGRES_URL or ${DEFAULT_POSTGRES_URL})
  --log-level LEVEL         Server LOG_LEVEL: info (default; one line per request, as in production),
                            debug or trace (the port is read from the server's info-level start-up line)
  --results FILE            Results file (default: bench/RESULTS.md)
  --no-results              Print the tables only; leave the results file alone
  -h, --help                Show this help

Examples:
  npm run bench                                   # both engines, all scenarios
  node bench/run.ts --engine sqlite --scenarios status,bookmarks --duration 5
`;

interface RunOptions {
  engines: Engine[];
  duration: number;
  warmup: number;
  connections: number;
  scenarios: Scenario[];
  users: number;
  statuses: number;
  reseed: boolean;
  dataDir: string;
  postgresUrl: string;
  logLevel: string;
  resultsFile: string | undefined;
}

function wholeNumber(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new Error(`--${name} must be a whole number of at least ${min}, got "${raw}"`);
  return Number(raw);
}

function parseRunArgs(argv: string[]): RunOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      engine: { type: "string", default: "both" },
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      scenarios: { type: "string" },
      users: { type: "string" },
      statuses: { type: "string" },
      reseed: { type: "boolean", default: false },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
      "postgres-url": { type: "string", default: process.env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL },
      "log-level": { type: "string", default: "info" },
      results: { type: "string", default: join(REPO_ROOT, "bench", "RESULTS.md") },
      "no-results": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return "help";
  const engines: Engine[] =
    values.engine === "both"
      ? ["sqlite", "postgres"]
      : values.engine === "sqlite" || values.engine === "postgres"
        ? [values.engine]
        : [];
  if (engines.length === 0) throw new Error(`--engine must be sqlite, postgres or both, got "${values.engine}"`);
  // The port is read from the start-up line, which is logged at level info.
  if (!["info", "debug", "trace"].includes(values["log-level"]))
    throw new Error(
      `--log-level must be info, debug or trace (the port is read from an info line), got "${values["log-level"]}"`,
    );
  let scenarios = SCENARIOS.filter((s) => !s.optional);
  if (values.scenarios) {
    const names = values.scenarios
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length)
      throw new Error(`unknown scenario ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
    scenarios = SCENARIOS.filter((s) => names.includes(s.name));
  }
  return {
    engines,
    duration: wholeNumber("duration", values.duration, 10, 1),
    warmup: wholeNumber("warmup", values.warmup, 2, 0),
    connections: wholeNumber("connections", values.connections, 10, 1),
    scenarios,
    users: wholeNumber("users", values.users, DEFAULT_USERS, 2),
    statuses: wholeNumber("statuses", values.statuses, DEFAULT_STATUSES, 1),
    reseed: values.reseed,
    dataDir: resolve(values["data-dir"]),
    postgresUrl: values["postgres-url"],
    logLevel: values["log-level"],
    resultsFile: values["no-results"] ? undefined : resolve(values.results),
  };
}

// ---------------------------------------------------------------------------------------------
// Data set

function say(message: string): void {
  process.stderr.write(`${message}\n`);
}

interface DataSetState {
  manifest: Manifest;
  statusesNow: number;
  databaseVersion: string;
}

/** What the database holds now, or why the manifest does not describe it. */
async function inspectDataSet(manifest: Manifest): Promise<DataSetState | string> {
  if (manifest.databaseUrl.startsWith("sqlite:") && !existsSync(manifest.databaseUrl.slice("sqlite:".length)))
    return "the SQLite file is missing";
  let db;
  try {
    db = await openDatabase(manifest.databaseUrl);
  } catch (error) {
    return `the database cannot be opened (${(error as Error).message})`;
  }
  try {
    const token = await db.kysely
      .selectFrom("oauth_access_tokens")
      .select("id")
      .where("token_digest", "=", digest(manifest.tokens[0].token))
      .executeTakeFirst();
    if (!token) return "the manifest's tokens are not in the database";
    const statuses = await db.kysely
      .selectFrom("statuses")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    const version =
      db.engine === "sqlite"
        ? `SQLite ${(await sql<{ v: string }>`select sqlite_version() as v`.execute(db.kysely)).rows[0].v} (node:sqlite, WAL)`
        : `PostgreSQL ${(await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db.kysely)).rows[0].v.split(" ")[0]}`;
    if (Number(statuses.n) !== manifest.counts.statuses)
      return `the database holds ${statuses.n} statuses, the manifest ${manifest.counts.statuses}`;
    return { manifest, statusesNow: Number(statuses.n), databaseVersion: version };
  } catch (error) {
    return `the database does not hold the data set (${(error as Error).message})`;
  } finally {
    await db.close();
  }
}

function readManifest(file: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Manifest;
  } catch {
    return undefined;
  }
}

async function runSeed(options: RunOptions, engine: Engine): Promise<void> {
  const args = [
    join(REPO_ROOT, "bench", "seed.ts"),
    "--engine",
    engine,
    "--data-dir",
    options.dataDir,
    "--postgres-url",
    options.postgresUrl,
    "--users",
    String(options.users),
    "--statuses",
    String(options.statuses),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"], cwd: REPO_ROOT });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`seeding ${engine} failed (exit code ${code})`);
}

async function ensureDataSet(options: RunOptions, engine: Engine): Promise<DataSetState> {
  const url = defaultDatabaseUrl(options.dataDir, engine, options.postgresUrl);
  const file = manifestPath(options.dataDir, engine);
  const manifest = readManifest(file);
  let reason: string | undefined = options.reseed ? "--reseed was given" : undefined;
  if (!reason) {
    if (!manifest) reason = `no manifest at ${file}`;
    else if (manifest.format !== MANIFEST_FORMAT) reason = "the manifest is of an older format";
    else if (manifest.databaseUrl !== url) reason = `the manifest describes ${manifest.databaseUrl}`;
    else if (manifest.users !== options.users || manifest.statuses !== options.statuses)
      reason = `the data set has ${manifest.users} users and ${manifest.statuses} statuses`;
  }
  if (!reason && manifest) {
    const state = await inspectDataSet(manifest);
    if (typeof state !== "string") return state;
    reason = state;
  }
  say(`[${engine}] seeding: ${reason}`);
  await runSeed(options, engine);
  const fresh = readManifest(file);
  if (!fresh) throw new Error(`the seed wrote no manifest at ${file}`);
  const state = await inspectDataSet(fresh);
  if (typeof state === "string") throw new Error(`the fresh data set is unusable: ${state}`);
  return state;
}

/**
 * A fresh copy of the seeded database for this run (a file copy, or CREATE DATABASE … TEMPLATE),
 * so that statuses posted by the benchmark never change the data set of later runs.
 */
async function prepareWorkingCopy(seedUrl: string): Promise<string> {
  const target = workingDatabaseUrl(seedUrl);
  if (seedUrl.startsWith("sqlite:")) {
    const from = seedUrl.slice("sqlite:".length);
    const to = target.slice("sqlite:".length);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(to + suffix, { force: true });
    copyFileSync(from, to);
    if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
    return target;
  }
  await recreatePostgresDatabase(target, seedUrl);
  return target;
}

// ---------------------------------------------------------------------------------------------
// Running a scenario

interface ScenarioResult {
  name: string;
  title: string;
  rps: number;
  requests: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Up to three response bodies per non-2xx status code. */
  samples: Record<string, string[]>;
  errorMessages: string[];
  serverCpu: number;
  dbCpu: number | undefined;
  clientCpu: number;
  problems: LoggedProblem[];
}

async function runScenario(
  options: RunOptions,
  server: Server,
  manifest: Manifest,
  scenario: Scenario,
  engine: Engine,
): Promise<ScenarioResult> {
  const tty = process.stderr.isTTY === true;
  const label = `[${engine}] ${scenario.name.padEnd(18)}`;
  if (options.warmup > 0) {
    if (tty) process.stderr.write(`\r\x1b[2K${label} warming up (${options.warmup} s)`);
    await fire(server.port, options.connections, options.warmup, scenario.requests(manifest));
  }
  const samples: Record<string, string[]> = {};
  const errorMessages: string[] = [];
  const problemsBefore = server.problems.length;
  const serverBefore = processCpu(server.child.pid!)?.seconds ?? Number.NaN;
  const dbBefore = engine === "postgres" ? postgresCpu() : undefined;
  const clientBefore = process.cpuUsage();
  const wallBefore = performance.now();
  let second = 0;
  const result = await fire(
    server.port,
    options.connections,
    options.duration,
    scenario.requests(manifest),
    samples,
    errorMessages,
    (requests) => {
      second++;
      if (tty) process.stderr.write(`\r\x1b[2K${label} ${second}/${options.duration} s  ${requests} requests`);
    },
  );
  const wall = (performance.now() - wallBefore) / 1000;
  const client = process.cpuUsage(clientBefore);
  const serverAfter = processCpu(server.child.pid!)?.seconds ?? Number.NaN;
  const dbAfter = engine === "postgres" ? postgresCpu() : undefined;
  // Log lines of this scenario arrive through a pipe; give them a moment.
  await new Promise((resolve) => setTimeout(resolve, 200));

  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = Number(count);
  const outcome: ScenarioResult = {
    name: scenario.name,
    title: scenario.title,
    rps: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    samples,
    errorMessages,
    serverCpu: ((serverAfter - serverBefore) / wall) * 100,
    dbCpu: dbBefore === undefined || dbAfter === undefined ? undefined : ((dbAfter - dbBefore) / wall) * 100,
    clientCpu: ((client.user + client.system) / 1e6 / wall) * 100,
    problems: server.problems.slice(problemsBefore),
  };
  const line =
    `${label} ${outcome.rps.toFixed(0).padStart(6)} req/s  p50 ${outcome.p50} ms  p90 ${outcome.p90} ms  p99 ${outcome.p99} ms  ` +
    `errors ${outcome.errors}  non-2xx ${outcome.non2xx}  server CPU ${outcome.serverCpu.toFixed(0)}%`;
  process.stderr.write(tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
  return outcome;
}

// ---------------------------------------------------------------------------------------------
// Results file

const ENGINE_TITLES: Record<Engine, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };

function skeleton(): string {
  return `# Rookery load benchmarks

Measured by \`bench/run.ts\` with [autocannon](https://github.com/mcollina/autocannon) against the real
server (\`node src/main.ts\`) on a data set seeded through Rookery's own services by \`bench/seed.ts\`.
Each engine's section below is rewritten by the run that measured it; the rest of this file is kept.

## How to reproduce

\`\`\`sh
npm install
# PostgreSQL: a server the benchmark may create the database rookery_bench on (trust auth here)
npm run bench                                    # both engines, all scenarios (~5 min with seeding)
npm run bench -- --engine sqlite --duration 15   # one engine, longer runs
node bench/run.ts --help                         # every option (scenarios, connections, data set size)
node bench/seed.ts --help                        # seeding alone
\`\`\`

The server runs with \`PORT=0 BIND=127.0.0.1 LOG_LEVEL=info\` (one JSON log line per request, as in
production) and its job workers on; requests from 127.0.0.1 are exempt from the API rate limits.
The load generator runs on the same machine, so the two share its CPUs. "Server CPU" is the
server process's CPU time over the run (100 % = one core), "DB CPU" that of all PostgreSQL
processes on the machine, "Client CPU" that of autocannon. Latencies are in whole milliseconds
(autocannon's resolution); Req/s is the mean of autocannon's one-second samples.

The data set: local users with profiles and follows; statuses with mentions, hashtags, links,
content warnings, all four visibilities, replies and long threads (20–60 posts each), boosts,
favourites (counted on the statuses) and bookmarks. Random IDs are drawn from the public and
unlisted statuses, so every read should answer 200; the context scenarios ask for a status in the
middle of a thread. Each run works on a fresh copy of the seeded database (a file copy for SQLite,
\`CREATE DATABASE … TEMPLATE\` for PostgreSQL), so the statuses POST adds never reach later runs.
`;
}

function formatNumber(value: number, digits = 0): string {
  return Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "–";
}

function engineSection(
  engine: Engine,
  options: RunOptions,
  state: DataSetState,
  results: ScenarioResult[],
  startedAt: Date,
  load: number[],
  server: { logFile: string },
): string {
  const m = state.manifest;
  const c = m.counts;
  const cpu = cpus();
  const lines: string[] = [];
  lines.push(`## ${ENGINE_TITLES[engine]}`, "");
  lines.push(`- Date: ${startedAt.toISOString().replace(/\.\d+Z$/, "Z")}`);
  lines.push(
    `- Commit: \`${gitCommit()}\` · Node ${process.version} · ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? "unknown"}) · load average at start ${load.map((l) => l.toFixed(2)).join(" / ")}`,
  );
  lines.push(`- Database: ${state.databaseVersion}`);
  lines.push(
    `- Data set: ${formatNumber(m.users)} users, ${formatNumber(c.statuses)} statuses (${formatNumber(c.replies)} replies, ${formatNumber(c.boosts)} boosts, ${m.threads.length} threads${m.threads.length ? ` of ${Math.min(...m.threads.map((t) => t.size))}–${Math.max(...m.threads.map((t) => t.size))} posts` : ""}; ` +
      `${formatNumber(c.statuses_public ?? 0)} public, ${formatNumber(c.statuses_unlisted ?? 0)} unlisted, ` +
      `${formatNumber(c.statuses_private ?? 0)} private, ${formatNumber(c.statuses_direct ?? 0)} direct), ${formatNumber(c.mentions)} mentions, ${formatNumber(c.statuses_tags)} hashtag uses, ` +
      `${formatNumber(c.favourites)} favourites, ${formatNumber(c.bookmarks)} bookmarks, ${formatNumber(c.follows)} follows; seeded in ${m.seedSeconds} s (seed ${m.randomSeed}, commit \`${m.commit}\`)`,
  );
  lines.push(
    `- Load: ${options.connections} connections, ${options.duration} s per scenario after ${options.warmup} s of warm-up, autocannon 8 on the same machine; server LOG_LEVEL=${options.logLevel}`,
  );
  const flags = [
    `--engine ${engine}`,
    `--duration ${options.duration}`,
    `--warmup ${options.warmup}`,
    `--connections ${options.connections}`,
  ];
  if (m.users !== DEFAULT_USERS || m.statuses !== DEFAULT_STATUSES)
    flags.push(`--users ${m.users} --statuses ${m.statuses}`);
  const defaults = SCENARIOS.filter((s) => !s.optional)
    .map((s) => s.name)
    .join();
  if (options.scenarios.map((s) => s.name).join() !== defaults)
    flags.push(`--scenarios ${options.scenarios.map((s) => s.name).join(",")}`);
  lines.push(`- Reproduce: \`node bench/run.ts ${flags.join(" ")}\``);
  lines.push("");
  const db = engine === "postgres";
  lines.push(
    `| Scenario | Req/s | Requests | p50 | p90 | p99 | Max | Errors | Non-2xx | Server CPU |${db ? " DB CPU |" : ""} Client CPU |`,
  );
  lines.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|${db ? "---:|" : ""}---:|`);
  for (const r of results) {
    lines.push(
      `| ${r.title} | ${formatNumber(r.rps)} | ${formatNumber(r.requests)} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.errors} | ${r.non2xx} | ${formatNumber(r.serverCpu)} % |` +
        `${db ? ` ${formatNumber(r.dbCpu ?? Number.NaN)} % |` : ""} ${formatNumber(r.clientCpu)} % |`,
    );
  }
  lines.push("");
  const troubled = results.filter((r) => r.errors > 0 || r.non2xx > 0 || r.problems.length > 0);
  if (troubled.length === 0) {
    lines.push("Every response was 2xx; no connection errors; the server logged no warnings or errors.");
  } else {
    lines.push("Problems seen:", "");
    for (const r of troubled) {
      const codes = Object.entries(r.statusCodes)
        .map(([code, n]) => `${code} × ${formatNumber(n)}`)
        .join(", ");
      lines.push(
        `- **${r.name}**: status codes ${codes}; ${r.errors} connection errors (${r.timeouts} timeouts)${r.errorMessages.length ? ` — ${[...new Set(r.errorMessages)].join("; ")}` : ""}`,
      );
      for (const [code, bodies] of Object.entries(r.samples))
        lines.push(`  - ${code} body: \`${bodies[0].replace(/`/g, "'").replace(/\s+/g, " ")}\``);
      if (r.problems.length) {
        const byMessage = new Map<string, number>();
        for (const p of r.problems)
          byMessage.set(`level ${p.level}: ${p.msg}`, (byMessage.get(`level ${p.level}: ${p.msg}`) ?? 0) + 1);
        for (const [msg, n] of byMessage) lines.push(`  - server log: ${n} × "${msg}"`);
      }
    }
    lines.push(
      "",
      `Server log of this run: \`${relative(REPO_ROOT, server.logFile).startsWith("..") ? server.logFile : relative(REPO_ROOT, server.logFile)}\` (not kept in the repository).`,
    );
  }
  return lines.join("\n");
}

function writeSection(file: string, engine: Engine, section: string): void {
  const text = existsSync(file) ? readFileSync(file, "utf8") : skeleton();
  // Engines keep a fixed order: SQLite before PostgreSQL.
  const before = engine === "sqlite" ? "<!-- bench:postgres:begin -->" : undefined;
  writeFileSync(file, replaceMarkedSection(text, engine, section, before));
}

// ---------------------------------------------------------------------------------------------
// Main

async function benchmarkEngine(options: RunOptions, engine: Engine): Promise<void> {
  const state = await ensureDataSet(options, engine);
  const startedAt = new Date();
  const load = loadavg();
  say(
    `[${engine}] ${state.databaseVersion}; ${state.statusesNow} statuses; load average ${load.map((l) => l.toFixed(2)).join(" ")}`,
  );
  const workingUrl = await prepareWorkingCopy(state.manifest.databaseUrl);
  const server = await startServer(
    engineDir(options.dataDir, engine),
    benchEnvironment(workingUrl, options.dataDir, engine),
    options.logLevel,
  );
  say(`[${engine}] server pid ${server.child.pid} on 127.0.0.1:${server.port}; log ${server.logFile}`);
  const results: ScenarioResult[] = [];
  const runnable = options.scenarios.filter((scenario) => {
    const missing =
      (scenario.needs === "threads" && state.manifest.threads.length === 0) ||
      (scenario.needs === "statuses" && state.manifest.publicStatusIds.length === 0);
    if (missing)
      say(
        `[${engine}] skipping ${scenario.name}: the data set has no ${scenario.needs === "threads" ? "threads (seed at least 200 statuses)" : "public statuses"}`,
      );
    return !missing;
  });
  try {
    // A first look: every scenario's first request should answer 2xx.
    for (const scenario of runnable) {
      if (scenario.name === "post") continue;
      const r = scenario.requests(state.manifest)();
      const response = await fetch(`http://127.0.0.1:${server.port}${r.path}`, {
        method: r.method ?? "GET",
        headers: r.headers,
        body: r.body,
      });
      if (!response.ok)
        say(
          `[${engine}] warning: ${scenario.name} answered ${response.status} to its first request: ${(await response.text()).slice(0, 200)}`,
        );
      else await response.arrayBuffer();
    }
    for (const scenario of runnable) results.push(await runScenario(options, server, state.manifest, scenario, engine));
  } finally {
    await server.stop();
  }
  const section = engineSection(engine, options, state, results, startedAt, load, server);
  if (options.resultsFile) {
    writeSection(options.resultsFile, engine, section);
    say(`[${engine}] results written to ${options.resultsFile}`);
  } else {
    process.stdout.write(`${section}\n\n`);
  }
}

async function main(): Promise<void> {
  let options: RunOptions | "help";
  try {
    options = parseRunArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\nRun with --help for the options.\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(HELP);
    return;
  }
  for (const engine of options.engines) await benchmarkEngine(options, engine);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`\nbench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
