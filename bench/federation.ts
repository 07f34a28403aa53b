/**
 * Federation benchmark. For each engine it starts the real server (`node src/main.ts`) behind a TLS
 * front as `https://rookery.test:PORT`, with a loopback fediverse in this process
 * (bench/fediverse.ts): remote servers whose actors post, and a sink of 100 servers whose inboxes
 * only record when a delivery arrives. Then it measures:
 * - inbound: pre-signed public Create(Note) activities (Mastodon's draft-cavage HTTP signature; one
 *   run with Linked Data signatures added) POSTed to the shared inbox over HTTPS with a fixed
 *   concurrency — accepted (202) per second, stored (the status row exists) per second end to
 *   end, the latency from POST to row, the server's CPU; the posters are followed by local users
 *   (follows made through the API, answered with Accepts), so storing includes the home fan-out;
 * - outbound: one post by a user with 1,000 remote followers on 100 servers (one shared inbox
 *   each) — the time until every inbox has the Create, and the number of requests;
 * - a delivery storm: many posts in a row to the same followers — the server's resident memory
 *   every 250 ms against the backlog of delivery jobs.
 * Writes one section per engine of bench/RESULTS.md (`--no-results` prints it instead).
 *
 * Run `node bench/federation.ts --help` for the options.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type tls from "node:tls";
import { sql } from "kysely";
import pg from "pg";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import { openDatabase, type Db } from "../src/db/connect.ts";
import { newId } from "../src/db/ids.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { DECODED_CREATE_JOB } from "../src/federation/inbox/decoded.ts";
import { FEDERATION_JOB } from "../src/federation/queue.ts";
import { insertApplication, OOB_REDIRECT_URI } from "../src/services/auth/applications.ts";
import { issueAccessToken } from "../src/services/auth/tokens.ts";
import {
  assertBenchDatabaseName,
  BenchError,
  DEFAULT_DATA_DIR,
  gitCommit,
  postgresDatabaseName,
  postgresMaintenanceUrl,
  Progress,
  Random,
  dropPostgresDatabase,
  recreatePostgresDatabase,
  REPO_ROOT,
  runPool,
  sentence,
  TAGS,
  type Engine,
} from "./common.ts";
import {
  createNote,
  ldSign,
  publicKeyPem,
  RookeryClient,
  rsaKeyPair,
  signCavage,
  startFediverse,
  type Fediverse,
  type RemoteActor,
  type SignedPost,
} from "./fediverse.ts";
import { makePki, removePki, tlsFront, type Pki } from "../test/federation/pki.ts";
import { stopChild } from "./server.ts";
import { postgresCpu, processCpu, replaceMarkedSection, startServer, type Server } from "./server.ts";

const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/rookery_bench_federation";
const ROOKERY_HOST = "rookery.test";
const SCENARIOS = ["inbound", "inbound-ld", "outbound", "storm"] as const;
type Scenario = (typeof SCENARIOS)[number];
type WorkersMode = "same" | "separate" | "after";

/** The issue's targets. */
const INBOUND_TARGET = 500;
const OUTBOUND_TARGET_S = 5;

const HELP = `Usage: node bench/federation.ts [options]

Benchmarks federation against the real server (node src/main.ts) behind a TLS front, with a
loopback fediverse in this process: remote actors that post to Rookery's shared inbox, and a
sink of remote servers whose followers receive Rookery's posts. A fresh database each engine.

Scenarios (--scenarios, comma-separated; default all):
  inbound      N public Create(Note) activities, pre-signed with Mastodon's draft-cavage HTTP
               signature, POSTed to /inbox with C at a time: accepted/s (202), stored/s (status
               rows, first POST to last row), POST-to-row latency, server CPU
  inbound-ld   the same with a Linked Data signature on each activity too (as Mastodon signs
               public activities; Rookery checks the HTTP signature and detaches the LD one)
  outbound     one public post by a user with F remote followers on S servers (one shared inbox
               each): time until every inbox has the Create (first post: new connections; second:
               warm), and the requests the sink received
  storm        P posts in a row to the same followers: the server's resident memory every 250 ms
               against the backlog of delivery jobs, until every delivery has arrived; R rounds

Options:
  --engine sqlite|postgres|both  (default: both)
  --scenarios LIST      (default: ${SCENARIOS.join(",")})
  --activities N        Activities of the inbound run (default: 2000)
  --ld-activities N     Activities of the inbound-ld run (default: 500)
  --concurrency C       Inbound POSTs in flight, one keep-alive connection each (default: 12)
  --actors K            Remote actors that post (default: 20)
  --actor-hosts H       Servers they are spread over (default: 4)
  --readers L           Local users following every remote actor (default: 5)
  --followers F         Remote followers of the local author (default: 1000)
  --sink-hosts S        Servers the followers are spread over, one shared inbox each (default: 100)
  --storm-posts P       Posts of a storm round (default: 50)
  --storm-rounds R      Storms one after the other, to see whether memory keeps growing (default: 3)
  --sink-delay MS       The sink answers each POST after MS milliseconds (default: 0)
  --workers MODE        Where the job workers run: same (default; one process, web and 2 job
                        loops, as node src/main.ts starts), separate (ROOKERY_ROLE=web and a
                        ROOKERY_ROLE=worker process, as a production deployment may run them) or
                        after (separate, and for the inbound runs the worker process starts only
                        once every POST is answered: accepting and storing measured apart)
  --worker-processes N  ROOKERY_ROLE=worker processes with separate or after (default: 1)
  --timeout S           Longest wait for a phase to finish, in seconds (default: 300)
  --data-dir DIR        Where the SQLite database, server logs and profiles go
                        (default: ${DEFAULT_DATA_DIR})
  --postgres-url URL    PostgreSQL database, created for the run and dropped after it; its name
                        must start with rookery_bench (default: ${DEFAULT_POSTGRES})
  --postgres-set NAME=VALUE
                        ALTER DATABASE … SET NAME = VALUE once the database is created
                        (repeatable; e.g. jit=off)
  --keep-database       Do not drop the PostgreSQL database at the end
  --cpu-prof            Run the server with --cpu-prof; the profile goes to
                        DATA_DIR/federation-ENGINE/profiles (open it in Chrome DevTools)
  --node-options=TEXT   More NODE_OPTIONS for the server's processes, e.g.
                        --node-options="--import /path/to/diagnostic-hook.mjs"
  --env NAME=VALUE      More environment for the server's processes (repeatable; e.g.
                        MALLOC_ARENA_MAX=2)
  --no-results          Print the sections instead of writing bench/RESULTS.md
  --quiet               No progress display
  -h, --help            Show this help

Examples:
  node bench/federation.ts                                   # both engines, all scenarios (~1.5 + 3 min)
  node bench/federation.ts --engine sqlite --scenarios inbound --activities 5000 --cpu-prof
  node bench/federation.ts --engine sqlite --scenarios inbound --workers after  # accepting vs storing
  node bench/federation.ts --engine postgres --postgres-set jit=off
`;

interface Options {
  engines: Engine[];
  scenarios: Set<Scenario>;
  activities: number;
  ldActivities: number;
  concurrency: number;
  actors: number;
  actorHosts: number;
  readers: number;
  followers: number;
  sinkHosts: number;
  stormPosts: number;
  stormRounds: number;
  sinkDelay: number;
  /** Worker processes beside the web process (--workers separate or after). */
  workerProcesses: number;
  workers: WorkersMode;
  timeout: number;
  dataDir: string;
  postgresUrl: string;
  keepDatabase: boolean;
  postgresSettings: Array<[string, string]>;
  cpuProf: boolean;
  nodeOptions: string;
  env: Record<string, string>;
  results: boolean;
  quiet: boolean;
}

function parseOptions(argv: string[]): Options | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      engine: { type: "string", default: "both" },
      scenarios: { type: "string", default: SCENARIOS.join(",") },
      activities: { type: "string", default: "2000" },
      "ld-activities": { type: "string", default: "500" },
      concurrency: { type: "string", default: "12" },
      actors: { type: "string", default: "20" },
      "actor-hosts": { type: "string", default: "4" },
      readers: { type: "string", default: "5" },
      followers: { type: "string", default: "1000" },
      "sink-hosts": { type: "string", default: "100" },
      "storm-posts": { type: "string", default: "50" },
      "storm-rounds": { type: "string", default: "3" },
      "sink-delay": { type: "string", default: "0" },
      "worker-processes": { type: "string", default: "1" },
      workers: { type: "string", default: "same" },
      timeout: { type: "string", default: "300" },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
      "postgres-url": { type: "string", default: process.env.BENCH_FEDERATION_POSTGRES_URL || DEFAULT_POSTGRES },
      "keep-database": { type: "boolean", default: false },
      "postgres-set": { type: "string", multiple: true, default: [] },
      "cpu-prof": { type: "boolean", default: false },
      "node-options": { type: "string", default: "" },
      env: { type: "string", multiple: true, default: [] },
      "no-results": { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return "help";
  const number = (name: string, raw: string, min: number) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min)
      throw new BenchError(`--${name} must be a whole number of at least ${min}, got "${raw}"`);
    return Number(raw);
  };
  const engine = values.engine;
  if (!["sqlite", "postgres", "both"].includes(engine))
    throw new BenchError(`--engine must be sqlite, postgres or both, got "${engine}"`);
  const names = values.scenarios
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length || names.length === 0)
    throw new BenchError(`unknown scenario ${unknown.join(", ") || "(none)"}; known: ${SCENARIOS.join(", ")}`);
  if (!["same", "separate", "after"].includes(values.workers))
    throw new BenchError(`--workers must be same, separate or after, got "${values.workers}"`);
  const options: Options = {
    engines: engine === "both" ? ["sqlite", "postgres"] : [engine as Engine],
    scenarios: new Set(names as Scenario[]),
    activities: number("activities", values.activities, 1),
    ldActivities: number("ld-activities", values["ld-activities"], 1),
    concurrency: number("concurrency", values.concurrency, 1),
    actors: number("actors", values.actors, 1),
    actorHosts: number("actor-hosts", values["actor-hosts"], 1),
    readers: number("readers", values.readers, 1),
    followers: number("followers", values.followers, 1),
    sinkHosts: number("sink-hosts", values["sink-hosts"], 1),
    stormPosts: number("storm-posts", values["storm-posts"], 1),
    stormRounds: number("storm-rounds", values["storm-rounds"], 1),
    sinkDelay: number("sink-delay", values["sink-delay"], 0),
    workerProcesses: number("worker-processes", values["worker-processes"], 1),
    workers: values.workers as WorkersMode,
    timeout: number("timeout", values.timeout, 10),
    dataDir: resolve(values["data-dir"]),
    postgresUrl: values["postgres-url"],
    keepDatabase: values["keep-database"],
    postgresSettings: values["postgres-set"].map((pair) => {
      const match = /^([a-z_][a-z0-9_.]*)=([A-Za-z0-9_.-]+)$/i.exec(pair);
      if (!match) throw new BenchError(`--postgres-set takes NAME=VALUE (letters, digits, _ . -), got "${pair}"`);
      return [match[1]!, match[2]!] as [string, string];
    }),
    cpuProf: values["cpu-prof"],
    nodeOptions: values["node-options"],
    env: Object.fromEntries(
      values.env.map((pair) => {
        const at = pair.indexOf("=");
        if (at < 1) throw new BenchError(`--env takes NAME=VALUE, got "${pair}"`);
        return [pair.slice(0, at), pair.slice(at + 1)];
      }),
    ),
    results: !values["no-results"],
    quiet: values.quiet,
  };
  if (options.actorHosts > options.actors) throw new BenchError("--actor-hosts must not exceed --actors");
  if (options.sinkHosts > options.followers) throw new BenchError("--sink-hosts must not exceed --followers");
  if (options.engines.includes("postgres")) assertBenchDatabaseName(postgresDatabaseName(options.postgresUrl));
  return options;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

let quiet = false;
const say = (message: string) => {
  if (!quiet) process.stderr.write(`${message}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "–";
const seconds = (ms: number) => `${fmt(ms / 1000, ms < 10_000 ? 2 : 1)} s`;
const mib = (kib: number) => `${fmt(kib / 1024)} MiB`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** VmRSS and VmHWM of a process, in KiB. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: field("VmRSS"), hwm: field("VmHWM") };
  } catch {
    return { rss: Number.NaN, hwm: Number.NaN };
  }
}

/** A job-worker process (ROOKERY_ROLE=worker), ready once it logs "job workers started". */
interface WorkerProcess {
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

async function startWorker(dir: string, env: Record<string, string>, logFile: string): Promise<WorkerProcess> {
  const log = createWriteStream(logFile, { flags: "w" });
  const child = spawn(process.execPath, [join(REPO_ROOT, "src", "main.ts")], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? dir,
      ...env,
      ROOKERY_ROLE: "worker",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let pending = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start within 60 s; see ${logFile}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      if (pending.includes("job workers started")) {
        clearTimeout(timer);
        pending = "";
        resolve();
      } else pending = pending.slice(-200);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited during start-up (code ${code}); see ${logFile}`));
    });
  });
  return {
    child,
    logFile,
    stop: () => stopChild(child, exited, log, killOnExit),
  };
}

/** Rookery's processes: the web one (with the job workers, unless --workers says otherwise) and workers. */
class Rookery {
  workers: WorkerProcess[] = [];
  readonly logFiles: string[];
  #starts = 0;

  readonly web: Server;
  readonly dir: string;
  readonly env: Record<string, string>;

  constructor(web: Server, dir: string, env: Record<string, string>) {
    this.web = web;
    this.dir = dir;
    this.env = env;
    this.logFiles = [web.logFile];
  }

  get port(): number {
    return this.web.port;
  }

  get pids(): number[] {
    return [this.web.child.pid!, ...this.workers.map((worker) => worker.child.pid!)];
  }

  /** The process that runs the jobs (deliveries, received activities). */
  get jobsPid(): number {
    return (this.workers[0] ?? this.web).child.pid!;
  }

  /** Starts `count` worker processes. */
  async startWorkers(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const logFile = join(this.dir, `worker-${++this.#starts}.log`);
      this.logFiles.push(logFile);
      this.workers.push(await startWorker(this.dir, this.env, logFile));
    }
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop()));
    this.workers = [];
  }

  async stop(): Promise<void> {
    await this.stopWorkers();
    await this.web.stop();
  }
}

/** CPU seconds of Rookery's processes, PostgreSQL (all of it on the machine) and this process. */
interface CpuMark {
  processes: Map<number, number>;
  db: number | undefined;
  bench: number;
  wall: number;
}

function cpuMark(rookery: Rookery, engine: Engine): CpuMark {
  const own = process.cpuUsage();
  return {
    processes: new Map(rookery.pids.map((pid) => [pid, processCpu(pid)?.seconds ?? 0])),
    db: engine === "postgres" ? postgresCpu() : undefined,
    bench: (own.user + own.system) / 1e6,
    wall: performance.now(),
  };
}

interface CpuUse {
  /** Seconds of CPU. */
  server: number;
  db: number | undefined;
  bench: number;
  /** Wall seconds. */
  wall: number;
}

function cpuSince(before: CpuMark, after: CpuMark): CpuUse {
  let server = 0;
  for (const [pid, seconds] of after.processes) server += seconds - (before.processes.get(pid) ?? 0);
  return {
    server,
    db: before.db === undefined || after.db === undefined ? undefined : after.db - before.db,
    bench: after.bench - before.bench,
    wall: (after.wall - before.wall) / 1000,
  };
}

const share = (cpu: number | undefined, wall: number) => (cpu === undefined ? "–" : `${fmt((cpu / wall) * 100)} %`);

async function count(query: Promise<{ n: unknown } | undefined>): Promise<number> {
  return Number((await query)?.n ?? 0);
}

/** The jobs of federation: Fedify's queue (deliveries, received activities) and received Creates decoded on arrival. */
const FEDERATION_JOBS = [FEDERATION_JOB, DECODED_CREATE_JOB];

/** Jobs not failed: federation's (deliveries, received activities) and the others that are due. */
async function backlog(db: Db): Promise<{ federation: number; other: number }> {
  const rows = await db.kysely
    .selectFrom("jobs")
    .select((eb) => [
      sql<string>`CASE WHEN name IN (${sql.join(FEDERATION_JOBS)}) THEN 'federation' ELSE 'other' END`.as("kind"),
      eb.fn.countAll().as("n"),
    ])
    .where("failed_at", "is", null)
    .where((eb) =>
      eb.or([eb("name", "in", FEDERATION_JOBS), eb("run_at", "<=", new Date(Date.now() + 1000).toISOString())]),
    )
    .groupBy("kind")
    .execute();
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.n ?? 0);
  return { federation: of("federation"), other: of("other") };
}

async function apiJson(server: Rookery, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Waits until `done()` is true (checked every `interval` ms), or throws after `timeoutS`. */
async function until(what: string, timeoutS: number, done: () => Promise<boolean> | boolean, interval = 100) {
  const deadline = performance.now() + timeoutS * 1000;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutS} s waiting for ${what}`);
    await sleep(interval);
  }
}

// ---------------------------------------------------------------------------------------------
// Database and seeding

function databaseUrl(options: Options, engine: Engine): string {
  return engine === "sqlite"
    ? `sqlite:${join(options.dataDir, "federation-sqlite", "federation.sqlite")}`
    : options.postgresUrl;
}

async function freshDatabase(options: Options, engine: Engine): Promise<void> {
  mkdirSync(join(options.dataDir, `federation-${engine}`), { recursive: true });
  if (engine === "sqlite") {
    const file = databaseUrl(options, engine).slice("sqlite:".length);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    return;
  }
  await recreatePostgresDatabase(options.postgresUrl);
  if (options.postgresSettings.length === 0) return;
  const name = postgresDatabaseName(options.postgresUrl);
  const client = new pg.Client({ connectionString: postgresMaintenanceUrl(options.postgresUrl) });
  await client.connect();
  try {
    for (const [setting, value] of options.postgresSettings)
      await client.query(`ALTER DATABASE "${name}" SET ${setting} = '${value}'`);
  } finally {
    await client.end();
  }
}

interface Seeded {
  heraldToken: string;
  heraldId: string;
  readerTokens: string[];
  seconds: number;
}

/**
 * Local users (the author "herald", the readers) through the real services; the author's remote
 * followers — accounts on the sink's servers and their follows — in bulk, as a server that has
 * federated for a while holds them.
 */
async function seed(ctx: Ctx, options: Options, fediverse: Fediverse, sinkHosts: string[]): Promise<Seeded> {
  const started = performance.now();
  const db = ctx.db.kysely;
  const user = (username: string) =>
    createLocalUser(ctx, {
      username,
      email: `${username}@bench.example`,
      password: `bench-password-${username}`,
      confirmed: true,
      approved: true,
    });
  const herald = await user("herald");
  const readers = [];
  for (let i = 0; i < options.readers; i++) readers.push(await user(`reader${i}`));
  const app = await insertApplication(db, {
    name: "Rookery federation bench",
    website: "https://bench.example/",
    redirectUris: [OOB_REDIRECT_URI],
    scopes: ["read", "write", "follow"],
  });
  const token = async (userId: string) =>
    (await issueAccessToken(db, { applicationId: app.id, userId, scopes: "read write follow" })).accessToken;

  // The followers' servers: no key of theirs is ever checked (nothing they send is measured).
  const pem = await publicKeyPem((await rsaKeyPair()).publicKey);
  const now = new Date().toISOString();
  const accounts = Array.from({ length: options.followers }, (_, i) => {
    const host = sinkHosts[i % sinkHosts.length]!;
    const origin = fediverse.origin(host);
    const username = `follower${i}`;
    const uri = `${origin}/users/${username}`;
    return {
      id: newId(),
      username,
      domain: `${host}:${fediverse.port}`,
      uri,
      url: `${origin}/@${username}`,
      inbox_url: `${uri}/inbox`,
      shared_inbox_url: `${origin}/inbox`,
      outbox_url: `${uri}/outbox`,
      followers_url: `${uri}/followers`,
      following_url: `${uri}/following`,
      public_key: pem,
      following_count: 1,
      fetched_at: now,
      created_at: now,
      updated_at: now,
    };
  });
  const progress = new Progress("followers", accounts.length * 2, options.quiet);
  for (let i = 0; i < accounts.length; i += 200) {
    const chunk = accounts.slice(i, i + 200);
    await db.insertInto("accounts").values(chunk).execute();
    progress.tick(chunk.length);
  }
  for (let i = 0; i < accounts.length; i += 200) {
    const chunk = accounts.slice(i, i + 200);
    await db
      .insertInto("follows")
      .values(
        chunk.map((account) => ({
          id: newId(),
          account_id: account.id,
          target_account_id: herald.account.id,
          uri: `${account.uri}#follows/${account.id}`,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    progress.tick(chunk.length);
  }
  progress.finish();
  await db
    .updateTable("accounts")
    .set({ followers_count: accounts.length })
    .where("id", "=", herald.account.id)
    .execute();
  const readerTokens = [];
  for (const reader of readers) readerTokens.push(await token(reader.user.id));
  return {
    heraldToken: await token(herald.user.id),
    heraldId: herald.account.id,
    readerTokens,
    seconds: (performance.now() - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// Inbound

interface FollowSetup {
  actors: RemoteActor[];
  actorAccountIds: string[];
  seconds: number;
}

/**
 * The readers follow every remote actor through the API, as people do: the first lookup finds the
 * actor by WebFinger, each follow goes out as a Follow, and the remote server answers with an
 * Accept (signed by the actor: Rookery fetches and caches its key here, so the measured runs find
 * every key cached).
 */
async function followPosters(
  options: Options,
  server: Rookery,
  fediverse: Fediverse,
  db: Db,
  readerTokens: string[],
): Promise<FollowSetup> {
  const started = performance.now();
  const actors: RemoteActor[] = [];
  for (let k = 0; k < options.actors; k++)
    actors.push(await fediverse.addActor(`r${k % options.actorHosts}.remote.test`, `poster${k}`));
  const ids: string[] = [];
  const progress = new Progress("follows", actors.length * (readerTokens.length + 1), options.quiet);
  for (const actor of actors) {
    const account = await apiJson(
      server,
      "GET",
      `/api/v1/accounts/lookup?acct=${encodeURIComponent(`${actor.username}@${actor.host}:${fediverse.port}`)}`,
      readerTokens[0]!,
    );
    ids.push(String(account.id));
    progress.tick();
  }
  await runPool(
    readerTokens.flatMap((token) => ids.map((id) => ({ token, id }))),
    4,
    async ({ token, id }) => {
      await apiJson(server, "POST", `/api/v1/accounts/${id}/follow`, token, {});
      progress.tick();
    },
  );
  progress.finish();
  const expected = readerTokens.length * ids.length;
  await until("the remote actors to accept the follows", options.timeout, async () => {
    if (fediverse.follows.failed.length > 0)
      throw new Error(`an Accept was refused: ${fediverse.follows.failed.join("; ")}`);
    const follows = await count(
      db.kysely
        .selectFrom("follows")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("target_account_id", "in", ids)
        .executeTakeFirst(),
    );
    return follows >= expected;
  });
  await until("the job queue to drain after the follows", options.timeout, async () => {
    const jobs = await backlog(db);
    return jobs.federation + jobs.other === 0;
  });
  return { actors, actorAccountIds: ids, seconds: (performance.now() - started) / 1000 };
}

interface InboundResult {
  title: string;
  ld: boolean;
  activities: number;
  concurrency: number;
  prepareSeconds: number;
  statusCodes: Record<string, number>;
  samples: string[];
  /** Seconds from the first POST to the last answer. */
  acceptSeconds: number;
  stored: number;
  /** When storing started, in seconds after the first POST (0, or when the worker was ready). */
  storeStart: number;
  /** Seconds from the first POST to the last status row (its updated_at). */
  storeSeconds: number;
  /** Activities whose handling failed at least once and was retried later (by Fedify's inbox retry policy). */
  retried: number;
  /** Seconds from the first POST to the last row of the activities stored at their first attempt. */
  firstAttemptSeconds: number;
  /** Seconds from the first POST until no job was left. */
  drainSeconds: number;
  /** Accepted activities never stored (a few of their ids). */
  missing: string[];
  /** Latency of the activities stored at their first attempt. */
  latency: { p50: number; p90: number; p99: number; max: number };
  backlogPeak: number;
  /** CPU from the first POST until no job was left. */
  cpu: CpuUse;
  /** CPU from the first POST to the last row stored at its first attempt (the busy part of the run). */
  busy: CpuUse;
  /** With --workers after: the web process while POSTs were answered, the worker while it stored. */
  acceptCpu?: CpuUse;
  storeCpu?: CpuUse;
  rssPeak: number;
}

/**
 * The activities whose handling failed at least once: Fedify's inbox queue names each in its log,
 * and a decoded Create's job logs its activity when it fails.
 */
function retriedActivities(logFiles: string[]): Set<string> {
  const ids = new Set<string>();
  for (const file of logFiles)
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const id = line.includes('"category":"fedify.federation.inbox"')
        ? /"activityId":"([^"]+)"/.exec(line)?.[1]
        : line.includes('"msg":"inbox: an activity could not be handled"')
          ? /"activity":"([^"]+)"/.exec(line)?.[1]
          : undefined;
      if (id) ids.add(id);
    }
  return ids;
}

async function inbound(
  options: Options,
  engine: Engine,
  server: Rookery,
  db: Db,
  client: RookeryClient,
  setup: FollowSetup,
  baseUrl: string,
  ld: boolean,
  rng: Random,
): Promise<InboundResult> {
  const n = ld ? options.ldActivities : options.activities;
  const label = ld ? "inbound-ld" : "inbound";
  const title = ld
    ? "Create(Note), Linked Data signature + HTTP signature"
    : "Create(Note), HTTP signature (draft-cavage)";
  // Signed ahead of time (the Date must stay within the hour Fedify allows: it does).
  const preparing = performance.now();
  const progress = new Progress(`${label} sign`, n, options.quiet);
  const inbox = new URL(`${baseUrl}/inbox`);
  const posts: Array<{ post: SignedPost; uri: string }> = [];
  // Published just before they are sent, 500 a second (the target rate), as a busy fediverse would.
  const newest = Date.now();
  for (let i = 0; i < n; i++) {
    const actor = setup.actors[i % setup.actors.length]!;
    const published = new Date(newest - (n - i) * (1000 / INBOUND_TARGET));
    let activity = createNote(actor, sentence(rng), rng.pick(TAGS), published);
    const uri = (activity.object as { id: string }).id;
    if (ld) activity = await ldSign(activity, actor);
    posts.push({ post: await signCavage(inbox, JSON.stringify(activity), actor), uri });
    progress.tick();
  }
  progress.finish();
  const prepareSeconds = (performance.now() - preparing) / 1000;
  const retriedBefore = retriedActivities(server.logFiles);
  // --workers after: nothing is stored while the POSTs are answered.
  if (options.workers === "after") await server.stopWorkers();

  const storedNow = () =>
    count(
      db.kysely
        .selectFrom("statuses")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("account_id", "in", setup.actorAccountIds)
        .executeTakeFirst(),
    );
  const before = await storedNow();
  const sentAt = new Map<string, number>();
  const statusCodes: Record<string, number> = {};
  const samples: string[] = [];
  let backlogPeak = 0;
  let rssPeak = 0;
  let stored = 0;
  let sampling = true;
  const send = new Progress(`${label} POST`, n, options.quiet);
  const mark = cpuMark(server, engine);
  const firstPost = Date.now();
  const marks: Array<{ at: number; mark: CpuMark }> = [];
  // The database is watched while the POSTs go out: rows stored and jobs waiting.
  const watcher = (async () => {
    while (sampling) {
      stored = (await storedNow()) - before;
      const jobs = await backlog(db);
      backlogPeak = Math.max(backlogPeak, jobs.federation);
      rssPeak = Math.max(
        rssPeak,
        server.pids.reduce((sum, pid) => sum + memoryOf(pid).rss, 0),
      );
      marks.push({ at: Date.now(), mark: cpuMark(server, engine) });
      await sleep(100);
    }
  })();
  await runPool(posts, options.concurrency, async ({ post, uri }) => {
    sentAt.set(uri, Date.now());
    const answer = await client.post(post);
    statusCodes[answer.status] = (statusCodes[answer.status] ?? 0) + 1;
    if (answer.status !== 202 && samples.length < 3) samples.push(`${answer.status} ${answer.body.slice(0, 200)}`);
    send.tick();
  });
  const acceptSeconds = (Date.now() - firstPost) / 1000;
  send.finish();
  let acceptCpu: CpuUse | undefined;
  let storeMark = mark;
  let storeStart = 0;
  if (options.workers === "after") {
    acceptCpu = cpuSince(mark, cpuMark(server, engine));
    say(`[${engine}] starting the worker process`);
    await server.startWorkers(options.workerProcesses);
    storeStart = (Date.now() - firstPost) / 1000;
    storeMark = cpuMark(server, engine);
  }
  const accepted = statusCodes["202"] ?? 0;
  const storing = new Progress(`${label} store`, accepted, options.quiet);
  let shown = 0;
  let last = stored;
  let lastChange = performance.now();
  await until("the accepted activities to be stored", options.timeout, () => {
    storing.tick(stored - shown);
    shown = stored;
    if (stored !== last) {
      last = stored;
      lastChange = performance.now();
    }
    // Nothing more for 90 s (longer than the inbox's first retries): measured as they are; the log says why.
    return stored >= accepted || performance.now() - lastChange > 90_000;
  });
  storing.finish();
  await until("the job queue to drain", options.timeout, async () => {
    const jobs = await backlog(db);
    return jobs.federation + jobs.other === 0;
  });
  const drainSeconds = (Date.now() - firstPost) / 1000;
  const end = cpuMark(server, engine);
  const cpu = cpuSince(mark, end);
  const storeCpu = options.workers === "after" ? cpuSince(storeMark, end) : undefined;
  sampling = false;
  await watcher;
  // The log lines of the last moments arrive through a pipe.
  await sleep(300);
  const retried = new Set(
    [...retriedActivities(server.logFiles)]
      .filter((id) => !retriedBefore.has(id))
      .map((id) => id.replace(/\/activity$/, "")),
  );

  // Each row's updated_at is when it was written: the latency of each activity, and the last one.
  const rows = await db.kysely
    .selectFrom("statuses")
    .select(["uri", "updated_at"])
    .where("account_id", "in", setup.actorAccountIds)
    .execute();
  const latencies: number[] = [];
  let lastRow = firstPost;
  let lastFirstAttempt = firstPost;
  let storedRows = 0;
  for (const row of rows) {
    const sent = sentAt.get(row.uri);
    if (sent === undefined) continue;
    storedRows++;
    const at = Date.parse(String(row.updated_at));
    lastRow = Math.max(lastRow, at);
    if (retried.has(row.uri)) continue;
    latencies.push(at - sent);
    lastFirstAttempt = Math.max(lastFirstAttempt, at);
  }
  latencies.sort((a, b) => a - b);
  // CPU until the last row stored at its first attempt: the retries' waits are idle time.
  const busyEnd = marks.find((m) => m.at >= lastFirstAttempt)?.mark ?? end;
  const busy = cpuSince(mark, busyEnd);
  const storedUris = new Set(rows.map((row) => row.uri));
  const missing = [...sentAt.keys()].filter((uri) => !storedUris.has(uri));
  const result: InboundResult = {
    title,
    ld,
    activities: n,
    concurrency: options.concurrency,
    prepareSeconds,
    statusCodes,
    samples,
    acceptSeconds,
    stored: storedRows,
    storeStart,
    storeSeconds: (lastRow - firstPost) / 1000,
    retried: retried.size,
    firstAttemptSeconds: (lastFirstAttempt - firstPost) / 1000,
    drainSeconds,
    missing: missing.slice(0, 5),
    latency: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    backlogPeak,
    cpu,
    busy,
    acceptCpu,
    storeCpu,
    rssPeak,
  };
  const rate = storeRate(result);
  say(
    `[${engine}] ${label}: ${fmt(accepted / acceptSeconds)} accepted/s; ${fmt(rate.all)} stored/s ` +
      `(${result.stored}/${n}, last row at ${fmt(result.storeSeconds, 2)} s); ${result.retried} retried; ` +
      `${fmt(rate.firstAttempts)} stored/s at first attempt (last at ${fmt(result.firstAttemptSeconds, 2)} s); ` +
      `drained at ${fmt(drainSeconds, 2)} s; latency p50 ${fmt(result.latency.p50)} ms p99 ${fmt(result.latency.p99)} ms; ` +
      `Rookery CPU ${fmt(cpu.server, 1)} s (${fmt((cpu.server * 1000) / n, 2)} ms per activity)` +
      (acceptCpu && storeCpu
        ? `; accepting ${fmt((acceptCpu.server * 1000) / n, 2)} ms, storing ${fmt((storeCpu.server * 1000) / n, 2)} ms per activity`
        : ""),
  );
  return result;
}

/** Stored per second: every row (retries included), and the rows stored at their first attempt. */
function storeRate(r: InboundResult): { all: number; firstAttempts: number } {
  return {
    all: r.stored / (r.storeSeconds - r.storeStart),
    firstAttempts: (r.stored - r.retried) / (r.firstAttemptSeconds - r.storeStart),
  };
}

// ---------------------------------------------------------------------------------------------
// Outbound

interface OutboundResult {
  title: string;
  /** ms from the POST to the API's answer. */
  postMs: number;
  inboxes: number;
  expectedInboxes: number;
  requests: number;
  p50: number;
  p90: number;
  max: number;
  first: number;
  cpu: CpuUse;
}

/** Arrivals of Creates of `uri` at the sink, from index `from` of its record. */
const arrivalsOf = (fediverse: Fediverse, uris: Set<string>, from: number) =>
  fediverse.arrivals.slice(from).filter((a) => a.type === "Create" && a.objectId !== undefined && uris.has(a.objectId));

async function outbound(
  options: Options,
  engine: Engine,
  server: Rookery,
  fediverse: Fediverse,
  seeded: Seeded,
  title: string,
  rng: Random,
): Promise<OutboundResult> {
  const from = fediverse.arrivals.length;
  const mark = cpuMark(server, engine);
  const t0 = performance.now();
  const status = await apiJson(server, "POST", "/api/v1/statuses", seeded.heraldToken, {
    status: `${sentence(rng)} #${rng.pick(TAGS)}`,
    visibility: "public",
    language: "en",
  });
  const postMs = performance.now() - t0;
  const uri = String(status.uri);
  const uris = new Set([uri]);
  const progress = new Progress(`outbound`, options.sinkHosts, options.quiet);
  let seen = 0;
  await until(`the Create to reach ${options.sinkHosts} inboxes`, options.timeout, () => {
    const hosts = new Set(arrivalsOf(fediverse, uris, from).map((a) => a.host)).size;
    progress.tick(hosts - seen);
    seen = hosts;
    return hosts >= options.sinkHosts;
  });
  progress.finish();
  // A moment for any request beyond one per inbox (retries, duplicates) to show.
  await sleep(1000);
  const cpu = cpuSince(mark, cpuMark(server, engine));
  const arrivals = arrivalsOf(fediverse, uris, from);
  const firstByHost = new Map<string, number>();
  for (const a of arrivals) if (!firstByHost.has(a.host)) firstByHost.set(a.host, a.at - t0);
  const times = [...firstByHost.values()].sort((a, b) => a - b);
  const result: OutboundResult = {
    title,
    postMs,
    inboxes: firstByHost.size,
    expectedInboxes: options.sinkHosts,
    requests: arrivals.length,
    p50: percentile(times, 50),
    p90: percentile(times, 90),
    max: percentile(times, 100),
    first: percentile(times, 0),
    cpu,
  };
  say(
    `[${engine}] outbound (${title}): ${result.inboxes}/${options.sinkHosts} inboxes, ${result.requests} requests, ` +
      `first ${fmt(result.first)} ms, p50 ${fmt(result.p50)} ms, max ${fmt(result.max)} ms`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------
// Storm

interface StormSample {
  /** ms since the first post. */
  at: number;
  rss: number;
  federationJobs: number;
  delivered: number;
}

interface StormRound {
  postSeconds: number;
  expected: number;
  delivered: number;
  requests: number;
  /** Seconds from the round's first post to its last arrival. */
  lastArrivalSeconds: number;
  drained: boolean;
  backlogPeak: number;
  rssStart: number;
  rssPeak: number;
  /** ms after the round's first post. */
  rssPeakAt: number;
  /** Two seconds after the last arrival. */
  rssEnd: number;
  cpu: CpuUse;
}

interface StormResult {
  posts: number;
  rounds: StormRound[];
  /** Every sample, ms relative to the first round's first post. */
  samples: StormSample[];
  hwm: number;
}

async function storm(
  options: Options,
  engine: Engine,
  server: Rookery,
  db: Db,
  fediverse: Fediverse,
  seeded: Seeded,
  rng: Random,
): Promise<StormResult> {
  // The process that delivers: the server, or its worker process.
  const pid = server.jobsPid;
  const samples: StormSample[] = [];
  fediverse.sinkDelayMs = options.sinkDelay;
  let sampling = true;
  let delivered = () => 0;
  // Sampled in absolute time; made relative to the first post afterwards.
  const sampler = (async () => {
    while (sampling) {
      const jobs = await backlog(db);
      samples.push({
        at: performance.now(),
        rss: memoryOf(pid).rss,
        federationJobs: jobs.federation,
        delivered: delivered(),
      });
      await sleep(250);
    }
  })();
  await sleep(1000);
  const rounds: StormRound[] = [];
  const start = performance.now();
  let total = 0;
  for (let round = 1; round <= options.stormRounds; round++) {
    const from = fediverse.arrivals.length;
    const uris = new Set<string>();
    const expected = options.stormPosts * options.sinkHosts;
    const before = total;
    delivered = () => before + arrivalsOf(fediverse, uris, from).length;
    const rssStart = memoryOf(pid).rss;
    const mark = cpuMark(server, engine);
    const t0 = performance.now();
    const label = options.stormRounds > 1 ? `storm ${round} ` : "storm ";
    const posting = new Progress(`${label}posts`, options.stormPosts, options.quiet);
    for (let i = 0; i < options.stormPosts; i++) {
      const status = await apiJson(server, "POST", "/api/v1/statuses", seeded.heraldToken, {
        status: `${sentence(rng)} #${rng.pick(TAGS)}`,
        visibility: "public",
        language: "en",
      });
      uris.add(String(status.uri));
      posting.tick();
    }
    posting.finish();
    const postSeconds = (performance.now() - t0) / 1000;
    const progress = new Progress(`${label}deliver`, expected, options.quiet);
    let shown = 0;
    let drained = true;
    try {
      await until(`${expected} deliveries`, options.timeout, () => {
        const now = arrivalsOf(fediverse, uris, from).length;
        progress.tick(now - shown);
        shown = now;
        return now >= expected;
      });
    } catch {
      drained = false;
    }
    progress.finish();
    const arrivals = arrivalsOf(fediverse, uris, from);
    total = before + arrivals.length;
    const lastArrival = arrivals.reduce((max, a) => Math.max(max, a.at), t0);
    const cpu = cpuSince(mark, cpuMark(server, engine));
    // Two more seconds: memory once the backlog is gone.
    await sleep(2000);
    const mine = samples.filter((s) => s.at >= t0);
    const peak = mine.reduce((best, s) => (s.rss > best.rss ? s : best), mine[0]!);
    const result: StormRound = {
      postSeconds,
      expected,
      delivered: arrivals.length,
      requests: fediverse.arrivals.length - from,
      lastArrivalSeconds: (lastArrival - t0) / 1000,
      drained,
      backlogPeak: Math.max(...mine.map((s) => s.federationJobs)),
      rssStart,
      rssPeak: peak.rss,
      rssPeakAt: peak.at - t0,
      rssEnd: memoryOf(pid).rss,
      cpu,
    };
    rounds.push(result);
    say(
      `[${engine}] storm${options.stormRounds > 1 ? ` round ${round}` : ""}: ${result.delivered}/${expected} deliveries in ${fmt(result.lastArrivalSeconds, 1)} s ` +
        `(${fmt(result.delivered / result.lastArrivalSeconds)}/s), backlog peak ${result.backlogPeak} jobs, ` +
        `RSS ${mib(result.rssStart)} → peak ${mib(result.rssPeak)} → ${mib(result.rssEnd)}`,
    );
  }
  sampling = false;
  await sampler;
  fediverse.sinkDelayMs = 0;
  for (const sample of samples) sample.at -= start;
  return { posts: options.stormPosts, rounds, samples: samples.filter((s) => s.at >= -500), hwm: memoryOf(pid).hwm };
}

// ---------------------------------------------------------------------------------------------
// One engine

interface EngineRun {
  engine: Engine;
  startedAt: Date;
  load: number[];
  databaseVersion: string;
  commit: string;
  seeded: Seeded;
  follows?: FollowSetup;
  inbound: InboundResult[];
  outbound: OutboundResult[];
  storm?: StormResult;
  problems: Map<string, number>;
  refused: Map<string, number>;
  logFiles: string[];
  profiles: string[];
}

async function databaseVersion(db: Db): Promise<string> {
  return db.engine === "sqlite"
    ? `SQLite ${(await sql<{ v: string }>`select sqlite_version() as v`.execute(db.kysely)).rows[0]!.v} (node:sqlite, WAL)`
    : `PostgreSQL ${(await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db.kysely)).rows[0]!.v.split(" ")[0]}`;
}

/** Counts the log lines of level warn and above, and the inbox's refusals, by message (ids left out). */
function readLog(files: string[]): { problems: Map<string, number>; refused: Map<string, number> } {
  const problems = new Map<string, number>();
  const refused = new Map<string, number>();
  const general = (text: string) =>
    text
      .replace(/https?:\/\/[^\s"')]+/g, "<url>")
      .replace(/#\d+/g, "#n")
      .replace(/\{"(?:[^{}]|\{[^{}]*\})*\}:?/g, "")
      .replace(/\d{6,}/g, "N")
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, 220);
  for (const file of files)
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      if (!/"level":([4-6]\d)/.test(line) && !line.includes("inbox: activity refused")) continue;
      try {
        const entry = JSON.parse(line) as { level: number; msg?: string; reason?: string; err?: { message?: string } };
        if (entry.msg === "inbox: activity refused") {
          const reason = general(entry.reason ?? "?");
          refused.set(reason, (refused.get(reason) ?? 0) + 1);
        } else if (entry.level >= 40) {
          const key = general(`${entry.msg ?? ""}${entry.err?.message ? `: ${entry.err.message}` : ""}`);
          problems.set(key, (problems.get(key) ?? 0) + 1);
        }
      } catch {
        // not JSON
      }
    }
  return { problems, refused };
}

async function benchmark(options: Options, engine: Engine): Promise<EngineRun> {
  const startedAt = new Date();
  const load = loadavg();
  const dir = join(options.dataDir, `federation-${engine}`);
  say(`[${engine}] load average ${load.map((l) => l.toFixed(2)).join(" ")}; preparing a fresh database`);
  await freshDatabase(options, engine);
  const url = databaseUrl(options, engine);
  const actorHosts = Array.from({ length: options.actorHosts }, (_, i) => `r${i}.remote.test`);
  const sinkHosts = Array.from({ length: options.sinkHosts }, (_, i) => `s${i}.sink.test`);
  const pki: Pki = makePki([ROOKERY_HOST, ...actorHosts, ...sinkHosts]);
  let serverPort = 0;
  let front: tls.Server | undefined;
  let client: RookeryClient | undefined;
  let fediverse: Fediverse | undefined;
  let server: Rookery | undefined;
  let db: Db | undefined;
  const profileDir = join(dir, "profiles");
  try {
    front = await tlsFront(pki, () => serverPort);
    const frontPort = (front.address() as AddressInfo).port;
    const domain = `${ROOKERY_HOST}:${frontPort}`;
    const baseUrl = `https://${domain}`;
    // Follows' Accepts go out on a few connections; the measured POSTs get their own client.
    const acceptClient = new RookeryClient(pki, frontPort, domain, 4);
    client = new RookeryClient(pki, frontPort, domain, options.concurrency);
    fediverse = await startFediverse({ pki, actorHosts, sinkHosts, accept: (post) => acceptClient.post(post) });
    const env: Record<string, string> = {
      DATABASE_URL: url,
      ROOKERY_DATA_DIR: dir,
      LOCAL_DOMAIN: domain,
      LOCAL_HTTPS: "true",
      ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
      OUTBOUND_HOSTS: [ROOKERY_HOST, ...actorHosts, ...sinkHosts].map((host) => `${host}=127.0.0.1`).join(","),
      NODE_EXTRA_CA_CERTS: pki.caFile,
      EMAIL_DOMAIN_DNS_CHECK: "false",
      ...options.env,
    };
    say(`[${engine}] seeding: herald with ${options.followers} remote followers on ${options.sinkHosts} servers`);
    const ctx = await boot(loadConfig({ ...env, LOG_LEVEL: "warn" }), { outboundAgent: false });
    let seeded: Seeded;
    try {
      seeded = await seed(ctx, options, fediverse, sinkHosts);
    } finally {
      await ctx.db.close();
    }
    const nodeOptions = [options.nodeOptions];
    if (options.cpuProf) {
      rmSync(profileDir, { recursive: true, force: true });
      mkdirSync(profileDir, { recursive: true });
      nodeOptions.push(`--cpu-prof --cpu-prof-dir=${profileDir}`);
    }
    if (nodeOptions.join("").trim()) env.NODE_OPTIONS = nodeOptions.join(" ").trim();
    const web = await startServer(dir, options.workers === "same" ? env : { ...env, ROOKERY_ROLE: "web" }, "info");
    server = new Rookery(web, dir, env);
    serverPort = server.port;
    if (options.workers !== "same") await server.startWorkers(options.workerProcesses);
    say(
      `[${engine}] server pid ${server.pids.join(" + ")} at ${baseUrl} (plain HTTP on ${server.port}); logs in ${dir}`,
    );
    db = await openDatabase(url);
    const run: EngineRun = {
      engine,
      startedAt,
      load,
      databaseVersion: await databaseVersion(db),
      commit: gitCommit(),
      seeded,
      inbound: [],
      outbound: [],
      problems: new Map(),
      refused: new Map(),
      logFiles: server.logFiles,
      profiles: [],
    };
    const rng = new Random(7);
    if (options.scenarios.has("inbound") || options.scenarios.has("inbound-ld")) {
      say(
        `[${engine}] ${options.readers} readers follow ${options.actors} remote actors on ${options.actorHosts} servers`,
      );
      run.follows = await followPosters(options, server, fediverse, db, seeded.readerTokens);
      if (options.scenarios.has("inbound"))
        run.inbound.push(await inbound(options, engine, server, db, client, run.follows, baseUrl, false, rng));
      if (options.scenarios.has("inbound-ld"))
        run.inbound.push(await inbound(options, engine, server, db, client, run.follows, baseUrl, true, rng));
    }
    // --workers after stops the worker for the inbound runs; the rest needs it.
    if (options.workers !== "same" && server.workers.length === 0) await server.startWorkers(options.workerProcesses);
    if (options.scenarios.has("outbound")) {
      run.outbound.push(
        await outbound(options, engine, server, fediverse, seeded, "first post (new connections)", rng),
      );
      run.outbound.push(await outbound(options, engine, server, fediverse, seeded, "second post (warm)", rng));
    }
    if (options.scenarios.has("storm")) run.storm = await storm(options, engine, server, db, fediverse, seeded, rng);
    await acceptClient.close();
    await db.close();
    db = undefined;
    await server.stop();
    const log = readLog(server.logFiles);
    run.problems = log.problems;
    run.refused = log.refused;
    if (options.cpuProf) {
      run.profiles = readdirSync(profileDir).map((name) => join(profileDir, name));
      say(`[${engine}] CPU profile: ${run.profiles.join(", ")}`);
    }
    return run;
  } finally {
    await db?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await client?.close().catch(() => {});
    await fediverse?.close().catch(() => {});
    if (front) await new Promise((resolve) => front!.close(resolve));
    removePki(pki);
    if (engine === "postgres" && !options.keepDatabase) await dropPostgresDatabase(options.postgresUrl).catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// Results

const ENGINE_TITLES: Record<Engine, string> = { sqlite: "SQLite", postgres: "PostgreSQL" };
function workersText(options: Options): string {
  const processes =
    options.workerProcesses === 1
      ? "a process of their own (ROOKERY_ROLE=worker, 2 loops)"
      : `${options.workerProcesses} processes of their own (ROOKERY_ROLE=worker, 2 loops each)`;
  if (options.workers === "same")
    return "job workers in the server process (2 loops, as `node src/main.ts` starts them)";
  const text = `job workers in ${processes} beside the web process (ROOKERY_ROLE=web)`;
  return options.workers === "separate"
    ? text
    : `${text}; for the inbound runs the workers were started only once every POST had been answered`;
}

function reproduce(options: Options, engine: Engine): string {
  const flags = [`--engine ${engine}`];
  const defaults = parseOptions([]) as Options;
  const pairs: Array<[string, keyof Options]> = [
    ["activities", "activities"],
    ["ld-activities", "ldActivities"],
    ["concurrency", "concurrency"],
    ["actors", "actors"],
    ["actor-hosts", "actorHosts"],
    ["readers", "readers"],
    ["followers", "followers"],
    ["sink-hosts", "sinkHosts"],
    ["storm-posts", "stormPosts"],
    ["storm-rounds", "stormRounds"],
    ["sink-delay", "sinkDelay"],
    ["workers", "workers"],
    ["worker-processes", "workerProcesses"],
  ];
  for (const [flag, key] of pairs) if (options[key] !== defaults[key]) flags.push(`--${flag} ${String(options[key])}`);
  if (engine === "postgres")
    for (const [setting, value] of options.postgresSettings) flags.push(`--postgres-set ${setting}=${value}`);
  for (const [name, value] of Object.entries(options.env)) flags.push(`--env ${name}=${value}`);
  if ([...options.scenarios].join(",") !== SCENARIOS.join(","))
    flags.push(`--scenarios ${[...options.scenarios].join(",")}`);
  return `node bench/federation.ts ${flags.join(" ")}`;
}

function section(options: Options, run: EngineRun): string {
  const cpu = cpus();
  const lines: string[] = [];
  const pgRun = run.engine === "postgres";
  lines.push(`## Federation: ${ENGINE_TITLES[run.engine]}`, "");
  lines.push(
    `- Date: ${run.startedAt.toISOString().replace(/\.\d+Z$/, "Z")} · commit \`${run.commit}\` · Node ${process.version} · ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? "unknown"}) · load average at start ${run.load.map((l) => l.toFixed(2)).join(" / ")}`,
  );
  const settings =
    run.engine === "postgres" && options.postgresSettings.length > 0
      ? ` (database settings: ${options.postgresSettings.map(([k, v]) => `${k}=${v}`).join(", ")})`
      : "";
  lines.push(`- Database: ${run.databaseVersion}${settings}; a fresh database for the run`);
  lines.push(
    `- Setup: the server at \`https://rookery.test:PORT\` behind a TLS front in the benchmark process; ${workersText(options)}; LOG_LEVEL=info. ` +
      `The benchmark process also serves the remote servers and the sink over HTTPS and sends the inbound POSTs, on the same 2 cores.`,
  );
  lines.push(`- Reproduce: \`${reproduce(options, run.engine)}\``);
  lines.push("");

  if (run.inbound.length > 0) {
    const f = run.follows!;
    lines.push(
      `**Inbound** — ${options.actors} remote actors on ${options.actorHosts} servers, each followed by ${options.readers} local users (follows made through the API and accepted by the remote servers in ${fmt(f.seconds, 1)} s, which also cached every actor's key). ` +
        `Each activity is a public \`Create(Note)\` with a hashtag, as Mastodon 4.3 sends it to a shared inbox (published to the second), signed ahead of time, POSTed to \`/inbox\` over HTTPS, ${options.concurrency} at a time on keep-alive connections. ` +
        `Accepted/s: 202s over the time from the first POST to the last answer. Stored/s: status rows over the time from the first POST${options.workers === "after" ? " (here: from the worker's start)" : ""} to the last row written (its \`updated_at\`); ` +
        `"retried" activities failed once and were stored by a later attempt (Fedify's inbox retry: 10 s, then 40 s), so the next column leaves them out. ` +
        `Latency: from an activity's POST to its row (first attempts). Drained: until no job was left (home feeds, tags, streaming). CPU: share of a core from the first POST to the last first-attempt row; per activity, all of it until drained. Target: ≥ ${INBOUND_TARGET} stored/s on SQLite with signatures checked.`,
      "",
    );
    lines.push(
      `| Run | Activities | Answers | Accepted/s | Stored/s (last row) | Retried | Stored/s, first attempts (last row) | Drained | Latency p50 / p90 / p99 / max | Inbox jobs peak | Rookery CPU |${pgRun ? " DB CPU |" : ""} Bench CPU | RSS peak | Target |`,
    );
    lines.push(`|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|${pgRun ? "---:|" : ""}---:|---:|---|`);
    for (const r of run.inbound) {
      const accepted = r.statusCodes["202"] ?? 0;
      const rate = storeRate(r);
      const answers = Object.entries(r.statusCodes)
        .map(([code, n]) => `${fmt(n)} × ${code}`)
        .join(", ");
      const percent = (value: number) => `${fmt((value / INBOUND_TARGET) * 100)} % of ${INBOUND_TARGET}/s`;
      const target =
        run.engine === "sqlite" && !r.ld
          ? rate.all >= INBOUND_TARGET
            ? `met (${percent(rate.all)})`
            : `**not met**: ${percent(rate.all)}; ${percent(rate.firstAttempts)} without the retried`
          : `${percent(rate.all)}; ${percent(rate.firstAttempts)} without the retried`;
      const perActivity = (cpu: CpuUse) => `${fmt((cpu.server * 1000) / r.activities, 2)} ms per activity`;
      const cpuText =
        r.acceptCpu && r.storeCpu
          ? `${share(r.busy.server, r.busy.wall)} (${perActivity(r.cpu)}: accepting ${perActivity(r.acceptCpu)}, storing ${perActivity(r.storeCpu)})`
          : `${share(r.busy.server, r.busy.wall)} (${perActivity(r.cpu)})`;
      lines.push(
        `| ${r.title} | ${fmt(r.activities)} | ${answers} | ${fmt(accepted / r.acceptSeconds)} | ${fmt(rate.all)} (${seconds(r.storeSeconds * 1000)}) | ${fmt(r.retried)} | ${fmt(rate.firstAttempts)} (${seconds(r.firstAttemptSeconds * 1000)}) | ${seconds(r.drainSeconds * 1000)} | ` +
          `${fmt(r.latency.p50)} / ${fmt(r.latency.p90)} / ${fmt(r.latency.p99)} / ${fmt(r.latency.max)} ms | ${fmt(r.backlogPeak)} | ` +
          `${cpuText} |${pgRun ? ` ${share(r.busy.db, r.busy.wall)} |` : ""} ${share(r.busy.bench, r.busy.wall)} | ${mib(r.rssPeak)} | ${target} |`,
      );
    }
    for (const r of run.inbound)
      if (r.stored < (r.statusCodes["202"] ?? 0))
        lines.push(
          "",
          `Accepted but never stored (${r.title}): ${fmt((r.statusCodes["202"] ?? 0) - r.stored)}, e.g. ${r.missing.map((uri) => `\`${uri}\``).join(", ")}`,
        );
    for (const r of run.inbound)
      if (r.samples.length)
        lines.push("", `Non-202 answers (${r.title}): ${r.samples.map((s) => `\`${s}\``).join("; ")}`);
    lines.push("");
  }

  if (run.outbound.length > 0) {
    lines.push(
      `**Outbound** — \`herald\` has ${fmt(options.followers)} remote followers, ${fmt(options.followers / options.sinkHosts)} on each of ${options.sinkHosts} servers with a shared inbox each, all served by one HTTPS sink under ${options.sinkHosts} host names (it checks nothing, answers 202, records when each POST arrived). ` +
        `A public post through \`POST /api/v1/statuses\`; times from that POST to the Create's arrival at each shared inbox. Target: ≤ ${OUTBOUND_TARGET_S} s to the last inbox.`,
      "",
    );
    lines.push(
      `| Post | API answer | Inboxes reached | Requests | First | p50 | p90 | Last | Server CPU |${pgRun ? " DB CPU |" : ""} Target |`,
    );
    lines.push(`|---|---:|---:|---:|---:|---:|---:|---:|---:|${pgRun ? "---:|" : ""}---|`);
    for (const r of run.outbound) {
      const met = r.inboxes >= r.expectedInboxes && r.max <= OUTBOUND_TARGET_S * 1000;
      lines.push(
        `| ${r.title} | ${fmt(r.postMs)} ms | ${r.inboxes}/${r.expectedInboxes} | ${r.requests} | ${seconds(r.first)} | ${seconds(r.p50)} | ${seconds(r.p90)} | ${seconds(r.max)} | ` +
          `${fmt(r.cpu.server, 1)} s in ${fmt(r.cpu.wall, 1)} s |${pgRun ? ` ${r.cpu.db === undefined ? "–" : `${fmt(r.cpu.db, 1)} s`} |` : ""} ${met ? `met (${fmt((r.max / (OUTBOUND_TARGET_S * 1000)) * 100)} % of ${OUTBOUND_TARGET_S} s)` : `**not met** (${fmt(r.max / 1000, 1)} s)`} |`,
      );
    }
    lines.push("");
  }

  if (run.storm) {
    const s = run.storm;
    lines.push(
      `**Delivery storm** — ${s.rounds.length > 1 ? `${s.rounds.length} rounds, one after the other, of ` : ""}${s.posts} public posts by \`herald\` in a row through the API, each to the same ${options.sinkHosts} shared inboxes${options.sinkDelay ? `; the sink answered each POST after ${options.sinkDelay} ms` : ""}. ` +
        `The resident memory (VmRSS) of the process that delivers${options.workers === "same" ? " (the server)" : " (the worker process)"} and the federation jobs waiting, every 250 ms; a round ends 2 s after its last delivery arrived.`,
      "",
    );
    lines.push(
      `| Round | Posting | Deliveries | Requests | Last arrival | Deliveries/s | Jobs waiting, peak | RSS at start | RSS peak (at) | RSS at end | Server CPU |${pgRun ? " DB CPU |" : ""}`,
    );
    lines.push(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|${pgRun ? "---:|" : ""}`);
    s.rounds.forEach((r, index) =>
      lines.push(
        `| ${index + 1} | ${fmt(r.postSeconds, 1)} s | ${fmt(r.delivered)}/${fmt(r.expected)}${r.drained ? "" : " (timed out)"} | ${fmt(r.requests)} | ${fmt(r.lastArrivalSeconds, 1)} s | ${fmt(r.delivered / r.lastArrivalSeconds)} | ${fmt(r.backlogPeak)} | ` +
          `${mib(r.rssStart)} | ${mib(r.rssPeak)} (${fmt(r.rssPeakAt / 1000, 1)} s) | ${mib(r.rssEnd)} | ${share(r.cpu.server, r.cpu.wall)} |${pgRun ? ` ${share(r.cpu.db, r.cpu.wall)} |` : ""}`,
      ),
    );
    // About fifteen points of the run: memory against the backlog.
    const step = Math.max(1, Math.floor(s.samples.length / 15));
    const points = s.samples.filter((_, i) => i % step === 0 || i === s.samples.length - 1);
    lines.push(
      "",
      `Peak resident set of the process (VmHWM) at the end: ${mib(s.hwm)}. Over time (s: RSS, federation jobs waiting, delivered): ${points
        .map((p) => `${fmt(p.at / 1000, 1)}: ${fmt(p.rss / 1024)} MiB, ${fmt(p.federationJobs)}, ${fmt(p.delivered)}`)
        .join(" · ")}`,
      "",
    );
  }

  if (run.problems.size === 0 && run.refused.size === 0) {
    lines.push("The server logged no warnings or errors, and refused no activity.");
  } else {
    if (run.problems.size > 0)
      lines.push(
        `Server log, warnings and errors: ${[...run.problems].map(([msg, n]) => `${n} × "${msg.replace(/`/g, "'")}"`).join("; ")}.`,
      );
    if (run.refused.size > 0)
      lines.push(
        `Activities refused: ${[...run.refused].map(([msg, n]) => `${n} × "${msg.replace(/`/g, "'")}"`).join("; ")}.`,
      );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  let options: Options | "help";
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench/federation: ${(error as Error).message}\nRun with --help for the options.\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(HELP);
    return;
  }
  quiet = options.quiet;
  const resultsFile = join(REPO_ROOT, "bench", "RESULTS.md");
  for (const engine of options.engines) {
    const run = await benchmark(options, engine);
    const text = section(options, run);
    if (!options.results) {
      process.stdout.write(`${text}\n\n`);
      continue;
    }
    // SQLite's section before PostgreSQL's.
    const before = engine === "sqlite" ? "<!-- bench:federation-postgres:begin -->" : undefined;
    writeFileSync(
      resultsFile,
      replaceMarkedSection(readFileSync(resultsFile, "utf8"), `federation-${engine}`, text, before),
    );
    say(`[${engine}] written to bench/RESULTS.md`);
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(
    `\nbench/federation failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
}
