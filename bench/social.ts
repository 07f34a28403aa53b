/**
 * Social-graph benchmark. Seeds a graph in bulk — thousands of local accounts, three authors
 * followed by every one of them, users following 1,500 accounts, 100,000 statuses over ten days,
 * and their stored home feeds — then measures, per engine:
 * - the fan-out of a post by an author with 10,000+ followers (`feeds.fanout`, in-process: the
 *   time until every follower's feed holds it) and by an author with a handful of followers;
 * - home timeline pages against the real server (`node src/main.ts`) with autocannon, for users
 *   following 1,500 accounts and users following a dozen, beside the public timeline on the same
 *   data and a bare Fastify route sending a home page's bytes (the ceiling).
 * Writes one section per engine of bench/RESULTS.md (`--no-results` prints it instead).
 *
 * Run `node bench/social.ts --help` for the options.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import Fastify from "fastify";
import { sql } from "kysely";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import { newId } from "../src/db/ids.ts";
import { refreshStatistics } from "../src/db/statistics.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { insertApplication, OOB_REDIRECT_URI } from "../src/services/auth/applications.ts";
import { issueAccessToken } from "../src/services/auth/tokens.ts";
import { fanOutStatus } from "../src/services/timelines/feeds.ts";
import {
  benchEnvironment,
  DEFAULT_DATA_DIR,
  gitCommit,
  Progress,
  Random,
  REPO_ROOT,
  sentence,
  type Engine,
  recreatePostgresDatabase,
} from "./common.ts";
import { fire, replaceMarkedSection, startServer, type Request } from "./server.ts";

const HELP = `Usage: node bench/social.ts [options]

Seeds a social graph in bulk (a fresh database each run) and measures the fan-out of a post to
10,000+ followers' home feeds and home timeline pages against the real server, for each engine.

Options:
  --engine sqlite|postgres|both  (default: both)
  --accounts N          Local accounts; every one follows the three most followed (default: 10500)
  --statuses N          Statuses over the last ten days (default: 100000)
  --duration S          Seconds per load scenario (default: 10)
  --connections N       Concurrent connections (default: 10)
  --data-dir DIR        Where the databases and server logs go (default: ${DEFAULT_DATA_DIR})
  --postgres-url URL    Database for PostgreSQL; dropped and recreated, its name must start with
                        rookery_bench (default: postgres://postgres@127.0.0.1:5432/rookery_bench_social)
  --no-results          Print the sections instead of writing bench/RESULTS.md
  --quiet               No progress display
  -h, --help            Show this help
`;

interface Options {
  engines: Engine[];
  accounts: number;
  statuses: number;
  duration: number;
  connections: number;
  dataDir: string;
  postgresUrl: string;
  results: boolean;
  quiet: boolean;
}

/** Authors every account follows. */
const CELEBRITIES = 3;
/** Token users following `HEAVY_FOLLOWS` accounts, and as many following `REGULAR_FOLLOWS`. */
const HEAVY_USERS = 20;
const HEAVY_FOLLOWS = 1500;
const REGULAR_USERS = 20;
const REGULAR_FOLLOWS = 12;
const DAY = 24 * 60 * 60 * 1000;

function parseOptions(argv: string[]): Options | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      engine: { type: "string", default: "both" },
      accounts: { type: "string", default: "10500" },
      statuses: { type: "string", default: "100000" },
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "10" },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
      "postgres-url": { type: "string", default: "postgres://postgres@127.0.0.1:5432/rookery_bench_social" },
      "no-results": { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return "help";
  const number = (name: string, raw: string, min: number) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min}`);
    return n;
  };
  const engine = values.engine;
  if (!["sqlite", "postgres", "both"].includes(engine)) throw new Error("--engine must be sqlite, postgres or both");
  return {
    engines: engine === "both" ? ["sqlite", "postgres"] : [engine as Engine],
    accounts: number("accounts", values.accounts, HEAVY_USERS + REGULAR_USERS + CELEBRITIES + HEAVY_FOLLOWS),
    statuses: number("statuses", values.statuses, 1000),
    duration: number("duration", values.duration, 1),
    connections: number("connections", values.connections, 1),
    dataDir: resolve(values["data-dir"]),
    postgresUrl: values["postgres-url"],
    results: !values["no-results"],
    quiet: values.quiet,
  };
}

const say = (options: Options, message: string) => {
  if (!options.quiet) process.stderr.write(`${message}\n`);
};

function databaseUrl(options: Options, engine: Engine): string {
  return engine === "sqlite"
    ? `sqlite:${join(options.dataDir, "social-sqlite", "social.sqlite")}`
    : options.postgresUrl;
}

async function recreate(options: Options, engine: Engine): Promise<void> {
  mkdirSync(join(options.dataDir, `social-${engine}`), { recursive: true });
  if (engine === "sqlite") {
    const file = databaseUrl(options, engine).slice("sqlite:".length);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    return;
  }
  await recreatePostgresDatabase(options.postgresUrl);
}

async function insertChunked(
  ctx: Ctx,
  table: "accounts" | "follows" | "statuses",
  rows: Array<Record<string, unknown>>,
  progress: Progress,
): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    // deno-lint-ignore no-explicit-any
    await ctx.db.kysely
      .insertInto(table)
      .values(chunk as any)
      .execute();
    progress.tick(chunk.length);
  }
}

interface Seeded {
  celebrityId: string;
  regularAuthorId: string;
  heavyTokens: string[];
  regularTokens: string[];
  counts: Record<string, number>;
  seconds: number;
  feedSeconds: number;
}

async function seed(ctx: Ctx, options: Options): Promise<Seeded> {
  const started = performance.now();
  const rng = new Random(42);
  const db = ctx.db.kysely;
  const now = Date.now();
  const stamp = new Date(now - 11 * DAY).toISOString();

  // Token users through the real service; the rest of the accounts in bulk.
  const tokenUsers = [];
  for (let i = 0; i < HEAVY_USERS + REGULAR_USERS; i++)
    tokenUsers.push(
      await createLocalUser(ctx, {
        username: `reader${i}`,
        email: `reader${i}@bench.example`,
        password: `bench-password-${i}`,
        confirmed: true,
        approved: true,
      }),
    );
  const bulk = Array.from({ length: options.accounts - tokenUsers.length }, (_, i) => ({
    id: newId(now - 12 * DAY + i),
    username: `member${i}`,
    display_name: `Member ${i}`,
    uri: `https://${ctx.config.localDomain}/users/member${i}`,
    created_at: stamp,
    updated_at: stamp,
  }));
  await insertChunked(ctx, "accounts", bulk, new Progress("accounts", bulk.length, options.quiet));
  const accountIds = [...tokenUsers.map((u) => u.account.id), ...bulk.map((a) => a.id)];
  const celebrities = bulk.slice(0, CELEBRITIES).map((a) => a.id);

  // Follows: everyone → the celebrities; heavy readers → 1,500 accounts; everyone else → a dozen.
  const follows: Array<Record<string, unknown>> = [];
  const heavy = new Set(tokenUsers.slice(0, HEAVY_USERS).map((u) => u.account.id));
  for (const follower of accountIds) {
    const targets = new Set(celebrities);
    const wanted = (heavy.has(follower) ? HEAVY_FOLLOWS : REGULAR_FOLLOWS) + CELEBRITIES;
    while (targets.size < wanted) {
      const target = rng.pick(accountIds);
      if (target !== follower) targets.add(target);
    }
    targets.delete(follower);
    for (const target of targets)
      follows.push({
        id: newId(),
        account_id: follower,
        target_account_id: target,
        created_at: stamp,
        updated_at: stamp,
      });
  }
  await insertChunked(ctx, "follows", follows, new Progress("follows", follows.length, options.quiet));

  // Statuses over the last ten days, oldest first; the celebrities post 30 each.
  const visibilities = ["public", "public", "public", "public", "public", "public", "unlisted", "private"];
  const statuses = Array.from({ length: options.statuses }, (_, i) => {
    const at = now - 10 * DAY + Math.floor((i / options.statuses) * (10 * DAY - 60_000));
    const id = newId(at);
    const author =
      i % Math.floor(options.statuses / (30 * CELEBRITIES)) === 0
        ? celebrities[i % CELEBRITIES]!
        : rng.pick(accountIds);
    const text = sentence(rng);
    return {
      id,
      uri: `https://${ctx.config.localDomain}/statuses/${id}`,
      account_id: author,
      text,
      content: `<p>${text}</p>`,
      visibility: rng.pick(visibilities),
      local: true,
      conversation_id: id,
      created_at: new Date(at).toISOString(),
      updated_at: new Date(at).toISOString(),
    };
  });
  await insertChunked(ctx, "statuses", statuses, new Progress("statuses", statuses.length, options.quiet));
  await sql`UPDATE accounts SET
      followers_count = (SELECT COUNT(*) FROM follows WHERE follows.target_account_id = accounts.id),
      following_count = (SELECT COUNT(*) FROM follows WHERE follows.account_id = accounts.id),
      statuses_count = (SELECT COUNT(*) FROM statuses WHERE statuses.account_id = accounts.id)`.execute(db);

  // The stored home feeds, as the fan-out would have written them (these posts have no replies,
  // boosts or mentions, so every follower takes every post): followers' entries, then own posts.
  say(options, "building home feeds");
  const feedStart = performance.now();
  await sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
    SELECT f.account_id, s.id, s.id FROM follows f JOIN statuses s ON s.account_id = f.target_account_id
    WHERE s.visibility IN ('public', 'unlisted', 'private')`.execute(db);
  await sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
    SELECT s.account_id, s.id, s.id FROM statuses s WHERE true ON CONFLICT DO NOTHING`.execute(db);
  const feedSeconds = (performance.now() - feedStart) / 1000;
  // What autovacuum does on a live server a while after bulk writes: statistics, and the visibility
  // map that lets the feed's index-only scan skip the table.
  if (ctx.db.engine === "postgres") await sql`VACUUM (ANALYZE)`.execute(db);
  else await refreshStatistics(ctx.db, { afterMigration: true });

  const app = await insertApplication(db, {
    name: "Rookery social bench",
    website: "https://bench.example/",
    redirectUris: [OOB_REDIRECT_URI],
    scopes: ["read", "write"],
  });
  const tokens: string[] = [];
  for (const user of tokenUsers)
    tokens.push(
      (await issueAccessToken(db, { applicationId: app.id, userId: user.user.id, scopes: "read write" })).accessToken,
    );
  const count = async (table: "accounts" | "follows" | "statuses" | "home_feed_entries") =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    celebrityId: celebrities[0]!,
    regularAuthorId: tokenUsers[HEAVY_USERS]!.account.id,
    heavyTokens: tokens.slice(0, HEAVY_USERS),
    regularTokens: tokens.slice(HEAVY_USERS),
    counts: {
      accounts: await count("accounts"),
      follows: await count("follows"),
      statuses: await count("statuses"),
      home_feed_entries: await count("home_feed_entries"),
    },
    seconds: (performance.now() - started) / 1000,
    feedSeconds,
  };
}

interface FanOut {
  followers: number;
  entries: number;
  /** Milliseconds of each run. */
  runs: number[];
}

/** Times `feeds.fanout` of fresh posts by `authorId`, three times. */
async function measureFanOut(ctx: Ctx, authorId: string): Promise<FanOut> {
  const db = ctx.db.kysely;
  const runs: number[] = [];
  let entries = 0;
  for (let i = 0; i < 3; i++) {
    const id = newId();
    const at = new Date().toISOString();
    await db
      .insertInto("statuses")
      .values({
        id,
        uri: `https://${ctx.config.localDomain}/statuses/${id}`,
        account_id: authorId,
        text: "fan-out probe",
        content: "<p>fan-out probe</p>",
        visibility: "public",
        local: true,
        conversation_id: id,
        created_at: at,
        updated_at: at,
      })
      .execute();
    const started = performance.now();
    await fanOutStatus(ctx, id);
    runs.push(performance.now() - started);
    entries = Number(
      (
        await db
          .selectFrom("home_feed_entries")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("status_id", "=", id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  }
  const followers = Number(
    (
      await db
        .selectFrom("follows")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("target_account_id", "=", authorId)
        .executeTakeFirstOrThrow()
    ).n,
  );
  return { followers, entries, runs };
}

interface Load {
  title: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  bytes?: number;
}

async function load(options: Options, port: number, title: string, next: () => Request): Promise<Load> {
  await fire(port, options.connections, 2, next);
  const result = await fire(port, options.connections, options.duration, next);
  const line = `  ${title}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`;
  say(options, line);
  return {
    title,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** A bare Fastify route in this process sending `bytes`: the ceiling of a page of that size. */
async function bare(options: Options, bytes: Buffer): Promise<Load> {
  const app = Fastify({ logger: false });
  app.get("/page", (_req, reply) => reply.type("application/json; charset=utf-8").send(bytes));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/page`,
    duration: options.duration,
    connections: options.connections,
  });
  await app.close();
  return {
    title: `bare Fastify route, the same ${bytes.length.toLocaleString("en")} bytes`,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    bytes: bytes.length,
  };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function benchmark(options: Options, engine: Engine): Promise<string> {
  say(options, `[${engine}] seeding ${options.accounts} accounts and ${options.statuses} statuses`);
  await recreate(options, engine);
  const url = databaseUrl(options, engine);
  const env = benchEnvironment(url, join(options.dataDir, "social"), engine);
  const ctx = await boot(loadConfig({ ...env, LOG_LEVEL: "warn" }));
  let seeded: Seeded;
  let celebrity: FanOut;
  let regular: FanOut;
  try {
    seeded = await seed(ctx, options);
    say(options, `[${engine}] fan-out`);
    celebrity = await measureFanOut(ctx, seeded.celebrityId);
    regular = await measureFanOut(ctx, seeded.regularAuthorId);
  } finally {
    await ctx.db.close();
  }

  say(options, `[${engine}] load`);
  const load1 = Date.now();
  const averages = loadavg();
  // LOG_LEVEL=info, as bench/run.ts and production: one log line per request.
  const server = await startServer(join(options.dataDir, `social-${engine}`), env, "info");
  const loads: Load[] = [];
  let pageBytes: Buffer;
  try {
    const cycle = (tokens: string[], path: string) => {
      let i = 0;
      return () => ({ path, headers: { authorization: `Bearer ${tokens[i++ % tokens.length]}` } });
    };
    const page = await fetch(`http://127.0.0.1:${server.port}/api/v1/timelines/home`, {
      headers: { authorization: `Bearer ${seeded.heavyTokens[0]}` },
    });
    if (page.status !== 200) throw new Error(`home timeline answered ${page.status}: ${await page.text()}`);
    pageBytes = Buffer.from(await page.arrayBuffer());
    loads.push(
      await load(
        options,
        server.port,
        `GET /api/v1/timelines/home (users following ${HEAVY_FOLLOWS.toLocaleString("en")})`,
        cycle(seeded.heavyTokens, "/api/v1/timelines/home"),
      ),
    );
    loads.push(
      await load(
        options,
        server.port,
        `GET /api/v1/timelines/home (users following ${REGULAR_FOLLOWS + CELEBRITIES})`,
        cycle(seeded.regularTokens, "/api/v1/timelines/home"),
      ),
    );
    loads.push(
      await load(
        options,
        server.port,
        "GET /api/v1/timelines/home?limit=40 (following 1,500)",
        cycle(seeded.heavyTokens, "/api/v1/timelines/home?limit=40"),
      ),
    );
    loads.push(
      await load(options, server.port, "GET /api/v1/timelines/public (anonymous, same data)", () => ({
        path: "/api/v1/timelines/public",
      })),
    );
  } finally {
    await server.stop();
  }
  loads.push(await bare(options, pageBytes));
  say(options, `  ${loads[loads.length - 1]!.title}: ${fmt(loads[loads.length - 1]!.rps)} req/s`);

  const ceiling = loads[loads.length - 1]!.rps;
  const rows = loads
    .map(
      (l) =>
        `| ${l.title} | ${fmt(l.rps)} | ${l.p50} | ${l.p99} | ${l.non2xx + l.errors} | ${fmt((l.rps / ceiling) * 100, 1)} % |`,
    )
    .join("\n");
  const title = engine === "sqlite" ? "SQLite" : "PostgreSQL";
  const c = seeded.counts;
  return `## Social graph: ${title}

- Date: ${new Date(load1).toISOString().replace(/\.\d+Z$/, "Z")} · commit \`${gitCommit()}\` · Node ${process.version} · ${cpus().length} CPUs · load average at start ${averages.map((a) => a.toFixed(2)).join(" / ")}
- Data set: ${fmt(c.accounts!)} local accounts, ${fmt(c.follows!)} follows (${CELEBRITIES} accounts followed by every account; ${HEAVY_USERS} users following ${fmt(HEAVY_FOLLOWS)}), ${fmt(c.statuses!)} statuses over ten days, ${fmt(c.home_feed_entries!)} home feed entries (built in ${fmt(seeded.feedSeconds, 1)} s with one INSERT … SELECT); seeded in ${fmt(seeded.seconds)} s
- Reproduce: \`node bench/social.ts --engine ${engine} --duration ${options.duration} --connections ${options.connections}\`

**Fan-out** (\`feeds.fanout\`, in-process, three posts each; the job starts as soon as the post commits):

| Author | Followers | Entries written | Median | Runs |
|---|---:|---:|---:|---|
| followed by every account | ${fmt(celebrity.followers)} | ${fmt(celebrity.entries)} | ${fmt(median(celebrity.runs))} ms | ${celebrity.runs.map((r) => fmt(r)).join(", ")} ms |
| a user with a dozen followers | ${fmt(regular.followers)} | ${fmt(regular.entries)} | ${fmt(median(regular.runs), 1)} ms | ${regular.runs.map((r) => fmt(r, 1)).join(", ")} ms |

**Pages** (${options.connections} connections, ${options.duration} s after 2 s of warm-up; the bare route serves the bytes of one home page of 20):

| Scenario | Req/s | p50 ms | p99 ms | Errors + non-2xx | Of the bare route |
|---|---:|---:|---:|---:|---:|
${rows}
`;
}

async function main(): Promise<void> {
  let options: Options | "help";
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench/social: ${(error as Error).message}\nRun with --help for the options.\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(HELP);
    return;
  }
  const resultsFile = join(REPO_ROOT, "bench", "RESULTS.md");
  for (const engine of options.engines) {
    const section = await benchmark(options, engine);
    if (!options.results) {
      process.stdout.write(`${section}\n`);
      continue;
    }
    const text = readFileSync(resultsFile, "utf8");
    writeFileSync(resultsFile, replaceMarkedSection(text, `social-${engine}`, section.trimEnd()));
    say(options, `[${engine}] written to bench/RESULTS.md`);
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`\nbench/social failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
