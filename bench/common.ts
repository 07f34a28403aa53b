/**
 * Shared by bench/seed.ts and bench/run.ts: where a benchmark data set lives, what its manifest
 * holds, the deterministic random numbers, and the progress display on stderr.
 */
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

export type Engine = "sqlite" | "postgres";

/** The repository root (bench/..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Local domain of every benchmark data set; `.localhost` keeps public URLs on http://. */
export const BENCH_DOMAIN = "bench.localhost";

export const DEFAULT_DATA_DIR = join(tmpdir(), "rookery-bench");
export const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/rookery_bench";
export const DEFAULT_USERS = 200;
export const DEFAULT_STATUSES = 20_000;
/** How many seeded users get a bearer token the benchmark uses. */
export const TOKEN_USERS = 20;

/** Bumped when the seed changes shape, so run.ts reseeds instead of reusing an old data set. */
export const MANIFEST_FORMAT = 1;

export interface ManifestToken {
  username: string;
  accountId: string;
  token: string;
  bookmarks: number;
}

export interface ManifestThread {
  rootId: string;
  /** A status in the middle of the thread: it has both ancestors and descendants. */
  focusId: string;
  size: number;
  focusAncestors: number;
  focusDescendants: number;
}

export interface Manifest {
  format: number;
  engine: Engine;
  databaseUrl: string;
  localDomain: string;
  users: number;
  statuses: number;
  randomSeed: number;
  seededAt: string;
  seedSeconds: number;
  commit: string;
  /** Row counts after seeding. */
  counts: Record<string, number>;
  tokens: ManifestToken[];
  /** Public and unlisted statuses (originals and boosts) anyone may read: a random sample. */
  publicStatusIds: string[];
  threads: ManifestThread[];
}

export function engineDir(dataDir: string, engine: Engine): string {
  return join(resolve(dataDir), engine);
}

export function manifestPath(dataDir: string, engine: Engine): string {
  return join(engineDir(dataDir, engine), "manifest.json");
}

/** The seeded database, which benchmark runs never write to (they work on a copy). */
export function defaultDatabaseUrl(dataDir: string, engine: Engine, postgresUrl: string): string {
  return engine === "sqlite" ? `sqlite:${join(engineDir(dataDir, engine), "seed.sqlite")}` : postgresUrl;
}

/** The copy of the seeded database a benchmark run's server uses: `run.sqlite`, or database `…_run`. */
export function workingDatabaseUrl(seedUrl: string): string {
  if (seedUrl.startsWith("sqlite:")) return `sqlite:${join(dirname(seedUrl.slice("sqlite:".length)), "run.sqlite")}`;
  const url = new URL(seedUrl);
  url.pathname = `/${postgresDatabaseName(seedUrl)}_run`;
  return url.toString();
}

/** The environment a benchmark server and the seed share (the seed passes it to loadConfig). */
export function benchEnvironment(databaseUrl: string, dataDir: string, engine: Engine): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ROOKERY_DATA_DIR: engineDir(dataDir, engine),
    LOCAL_DOMAIN: BENCH_DOMAIN,
    EMAIL_DOMAIN_DNS_CHECK: "false",
  };
}

/** `git rev-parse --short HEAD`, with "+dirty" when src/ or package files differ from it. */
export function gitCommit(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "package.json", "package-lock.json"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }).trim();
    return dirty ? `${commit}+dirty` : commit;
  } catch {
    return "unknown";
  }
}

/** The database name of a postgres:// URL. */
export function postgresDatabaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
}

/** The same server with the maintenance database `postgres`, to create and drop benchmark databases. */
export function postgresMaintenanceUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = "/postgres";
  return parsed.toString();
}

/** A refusal or a wrong input, reported by its message alone (no stack trace). */
export class BenchError extends Error {
  override name = "BenchError";
}

/** Benchmark databases are dropped and recreated; only names that say so may be. */
export function assertBenchDatabaseName(name: string): void {
  if (!/^rookery_bench[a-z0-9_]*$/.test(name)) {
    throw new BenchError(
      `refusing to recreate PostgreSQL database "${name}": benchmark databases must be named rookery_bench…`,
    );
  }
}

/** Drops the benchmark database of `url` (named rookery_bench…), if it is there. */
export async function dropPostgresDatabase(url: string): Promise<void> {
  const name = postgresDatabaseName(url);
  assertBenchDatabaseName(name);
  const client = new pg.Client({ connectionString: postgresMaintenanceUrl(url) });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * Drops the benchmark database of `url` (named rookery_bench…) and creates it again, empty or as a
 * copy of `template`, waiting for connections still leaving the template.
 */
export async function recreatePostgresDatabase(url: string, template?: string): Promise<void> {
  const name = postgresDatabaseName(url);
  assertBenchDatabaseName(name);
  const client = new pg.Client({ connectionString: postgresMaintenanceUrl(url) });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    const from = template === undefined ? "" : ` TEMPLATE "${postgresDatabaseName(template)}"`;
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}"${from}`);
        return;
      } catch (error) {
        // The seed's or the inspection's connections may take a moment to go away.
        if (attempt >= 40 || !/being accessed by other users/.test(String(error))) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await client.end();
  }
}

/** Deterministic random numbers (mulberry32), so one seed value always yields the same data set. */
export class Random {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** An index drawn with the given (unnormalized) weights; `cumulative` from cumulativeWeights(). */
  weighted(cumulative: readonly number[]): number {
    const target = this.next() * cumulative[cumulative.length - 1];
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
  /** `count` distinct items (fewer when there are not enough). */
  sample<T>(items: readonly T[], count: number): T[] {
    if (count >= items.length) return this.shuffle([...items]);
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].map((i) => items[i]);
  }
}

export function cumulativeWeights(weights: readonly number[]): number[] {
  let sum = 0;
  return weights.map((w) => (sum += w));
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  if (seconds < 60) return `${Math.round(seconds)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, "0")}s`;
}

/**
 * Progress of one phase on stderr: a line redrawn in place on a terminal, or a line every few
 * seconds (and at the end) when stderr is a file or a pipe.
 */
export class Progress {
  readonly #label: string;
  readonly #total: number;
  readonly #quiet: boolean;
  readonly #tty = process.stderr.isTTY === true;
  readonly #started = performance.now();
  #done = 0;
  #lastDraw = 0;

  constructor(label: string, total: number, quiet = false) {
    this.#label = label;
    this.#total = total;
    this.#quiet = quiet;
    this.#lastDraw = this.#tty ? 0 : performance.now();
    this.#draw(true);
  }

  tick(count = 1): void {
    this.#done += count;
    this.#draw(false);
  }

  #line(): string {
    const elapsed = (performance.now() - this.#started) / 1000;
    const rate = elapsed > 0 ? this.#done / elapsed : 0;
    const percent = this.#total > 0 ? Math.floor((this.#done / this.#total) * 100) : 100;
    const eta = rate > 0 ? (this.#total - this.#done) / rate : Number.POSITIVE_INFINITY;
    return `${this.#label.padEnd(12)} ${String(this.#done).padStart(String(this.#total).length)}/${this.#total} ${String(percent).padStart(3)}%  ${rate.toFixed(0)}/s  elapsed ${formatDuration(elapsed)}  eta ${this.#done >= this.#total ? "0s" : formatDuration(eta)}`;
  }

  #draw(force: boolean): void {
    if (this.#quiet) return;
    const now = performance.now();
    const interval = this.#tty ? 100 : 5000;
    if (!force && now - this.#lastDraw < interval && this.#done < this.#total) return;
    if (this.#tty) {
      this.#lastDraw = now;
      process.stderr.write(`\r\x1b[2K${this.#line()}`);
    } else if (!force && this.#done < this.#total) {
      // Not a terminal: a line every few seconds; the phase's start and end are left to finish().
      this.#lastDraw = now;
      process.stderr.write(`${this.#line()}\n`);
    }
  }

  /** Ends the phase with its final line. */
  finish(): void {
    if (this.#quiet) return;
    const elapsed = (performance.now() - this.#started) / 1000;
    const line = `${this.#label.padEnd(12)} ${this.#done}/${this.#total} done in ${formatDuration(elapsed)}`;
    process.stderr.write(this.#tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }
}

/** Runs `worker` over `items` with at most `concurrency` at a time, in order of start. */
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const loops = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await worker(items[index], index);
    }
  });
  await Promise.all(loops);
}

// ---------------------------------------------------------------------------------------------
// Vocabulary of generated posts (the seed and the POST scenario)

export const WORDS = (
  "the a an and but so because while after before today tonight yesterday really quite very just still again never always maybe " +
  "coffee tea bread garden river mountain city train bus bike walk rain snow sun morning evening night weekend week project " +
  "code server database query index cache release bug feature test deploy review patch commit branch merge build laptop " +
  "book chapter poem song album concert film picture photo camera light colour sky cloud bird cat dog fox crow rook nest " +
  "friend family neighbour team meeting idea plan question answer problem solution story news update thread post " +
  "is was will be seems feels looks sounds works broke fixed shipped wrote read cooked baked found lost learned tried " +
  "good great tiny huge slow fast quiet loud early late warm cold new old strange lovely tired happy curious"
).split(" ");
export const TAGS = [
  "rookery",
  "fediverse",
  "photography",
  "cats",
  "typescript",
  "coffee",
  "gardening",
  "books",
  "music",
  "birds",
  "cycling",
  "opensource",
  "postgres",
  "sqlite",
  "nodejs",
  "introduction",
  "caturday",
  "sunset",
  "baking",
  "hiking",
  "art",
  "mastodon",
  "climate",
  "history",
  "science",
  "linux",
  "selfhosting",
  "writing",
  "food",
  "travel",
  "running",
  "retrocomputing",
  "knitting",
  "astronomy",
  "fountainpens",
  "boardgames",
  "trains",
  "maps",
  "poetry",
  "languages",
];

/** A sentence of 5–16 words from the vocabulary. */
export function sentence(rng: Random): string {
  const words = Array.from({ length: rng.int(5, 16) }, () => rng.pick(WORDS));
  const text = words.join(" ");
  return `${text[0].toUpperCase()}${text.slice(1)}${rng.pick([".", ".", ".", "!", "?", "…"])}`;
}
