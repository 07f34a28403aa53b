import { Kysely, PostgresDialect, type LogEvent } from "kysely";
import type { Pool } from "pg";
import type { Database } from "./schema.ts";
import { StopReadsForGoneClients } from "./abort.ts";
import { inGroupableWork, NodeSqliteDialect, runGroupable, type GroupCommit } from "./sqlite.ts";
import type { Engine } from "./migrations/types.ts";

export type { Engine };

/** The database handle every service uses. */
export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  /** Number of queries run so far (tests use it to prove batching). */
  readonly queryCount: number;
  /**
   * Runs background work (the job loops) whose commits SQLite may group (db/sqlite.ts
   * `GroupCommit`); on PostgreSQL it just runs it.
   */
  groupable<T>(work: () => Promise<T>): Promise<T>;
  /** Whether the current work is groupable work (on SQLite; never on PostgreSQL). */
  inGroupable(): boolean;
  /** Commits grouped work now. */
  flush(): Promise<void>;
  /**
   * Runs `callback` once what was written so far is committed: at once, or after the open group
   * commits. What other processes are told of a change must wait for it.
   */
  afterCommit(callback: () => void): void;
  /**
   * Whether another process committed to the database since the last time this was asked (the
   * first answer may be a spurious yes); absent where that cannot be known cheaply (PostgreSQL).
   * Idle job loops use it to wake when another process enqueues.
   */
  changedElsewhere?: () => boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: the schema to use (created if missing); tests give each app its own. */
  schema?: string;
  /** PostgreSQL only: maximum pool size. */
  poolSize?: number;
  /** Called with every failed query (for logging). */
  onError?: (event: LogEvent) => void;
  /** Called with every query run (the plan tests read the SQL the services build). */
  onQuery?: (event: LogEvent) => void;
  /** SQLite only: called when grouped work could not be committed (it was rolled back). */
  onGroupLost?: (error: unknown) => void;
  /** SQLite only: how grouped work's commits are grouped (default GROUP_COMMIT). */
  groupCommit?: Omit<GroupCommit, "onLost">;
}

/**
 * SQLite's grouping of background work's commits: a group commits after 5 ms or 100
 * transactions, and 2 ms pass before the next opens, in which other processes (the web process
 * enqueuing received activities) take the write lock. Measured in bench/RESULTS.md.
 */
export const GROUP_COMMIT = { maxMs: 5, maxTransactions: 100, pauseMs: 2 };

function isoTimestamp(value: string): string {
  return new Date(
    value.includes("T") || value.includes("+") || value.endsWith("Z") ? value : `${value.replace(" ", "T")}Z`,
  ).toISOString();
}

type PgModule = typeof import("pg").default;

function pgTypes(pg: PgModule) {
  return {
    getTypeParser(oid: number, format?: "text" | "binary") {
      // timestamptz and timestamp come back as ISO strings, like SQLite's stored text.
      if (oid === 1184 || oid === 1114) return (value: string) => isoTimestamp(value);
      // int8 stays a string (IDs); count(*) callers convert with Number().
      return pg.types.getTypeParser(oid, format as "text");
    },
  };
}

/** Opens `sqlite:PATH` or `postgres://…`. */
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Db> {
  let count = 0;
  const log = (event: LogEvent) => {
    count++;
    if (event.level === "error") options.onError?.(event);
    options.onQuery?.(event);
  };
  const plugins = [new StopReadsForGoneClients()];
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    const dialect = new NodeSqliteDialect(path, {
      groupCommit: { ...(options.groupCommit ?? GROUP_COMMIT), onLost: options.onGroupLost ?? (() => {}) },
    });
    const kysely = new Kysely<Database>({ dialect, log, plugins });
    const driver = dialect.driver!;
    return {
      kysely,
      engine: "sqlite",
      get queryCount() {
        return count;
      },
      groupable: runGroupable,
      inGroupable: inGroupableWork,
      flush: () => driver.flush(),
      afterCommit: (callback) => driver.afterCommit(callback),
      changedElsewhere: () => driver.changedElsewhere(),
      close: () => kysely.destroy(),
    };
  }
  // Loaded only for PostgreSQL: SQLite deployments and the CLI's SQLite runs never pay for it.
  const pg: PgModule = (await import("pg")).default;
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types: pgTypes(pg),
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // JIT compilation pays off for long analytical queries; Rookery's are short, and a query that
    // crosses `jit_above_cost` on stale statistics (a job claim on a fresh backlog) took 28 ms
    // with JIT against 0.2 ms without.
    options: ["-c jit=off", options.schema ? `-c search_path=${options.schema}` : ""].join(" ").trim(),
  });
  // A dropped idle connection (database restart) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  try {
    // Connect once now, so a wrong DATABASE_URL fails at start-up rather than on the first request.
    const client = await pool.connect();
    try {
      if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema.replace(/"/g, "")}"`);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log, plugins });
  return {
    kysely,
    engine: "postgres",
    get queryCount() {
      return count;
    },
    groupable: (work) => work(),
    inGroupable: () => false,
    flush: async () => {},
    afterCommit: (callback) => callback(),
    close: () => kysely.destroy(),
  };
}
