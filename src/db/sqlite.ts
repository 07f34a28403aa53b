import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from "kysely";
import { normalizeRow } from "./normalize.ts";

/**
 * Kysely dialect over Node's built-in `node:sqlite`.
 *
 * Kysely's own SqliteDriver hands the same connection to every caller without a lock, so two
 * concurrent transactions would interleave on one connection. This driver serializes access:
 * a transaction (or a single query) holds the connection until it is released.
 * Values are normalized so that both engines return the same JavaScript types (see normalize.ts).
 */
export class NodeSqliteDialect implements Dialect {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  /** `busyTimeoutMs`: how long a statement waits for another process's write lock before it fails. */
  constructor(path: string, { busyTimeoutMs = BUSY_TIMEOUT_MS }: { busyTimeoutMs?: number } = {}) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    return new NodeSqliteDriver(this.#path, this.#busyTimeoutMs);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}

/** How long a statement waits for another process's write lock before it fails. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens a SQLite file with the pragmas Rookery relies on (WAL, foreign keys). SQLite's own wait
 * for a lock another process holds is switched off once the file is open: it sleeps (1, 2, 5,
 * 10 … ms) with the event loop stopped, so a web process whose worker process was committing
 * served nothing meanwhile. The connection below waits between tries instead (`#run`).
 */
export function openSqliteFile(path: string): DatabaseSync {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path, { readBigInts: true, timeout: BUSY_TIMEOUT_MS });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 0");
  return db;
}

/** SQLITE_BUSY, with any of its extended codes: another connection holds the lock. */
const isBusy = (error: unknown) => ((error as { errcode?: number } | null)?.errcode ?? 0) % 256 === 5;

/**
 * The pauses between tries of a statement that met a lock, in milliseconds (the last repeats); 0
 * is a turn of the event loop. Another process's statement holds the lock for tens of
 * microseconds and its transaction for a millisecond or so: a few quick tries first.
 */
const BUSY_PAUSES = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 5, 5, 10];

const pause = (ms: number) =>
  new Promise<void>((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));

class NodeSqliteDriver implements Driver {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  #connection: NodeSqliteConnection | undefined;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(path: string, busyTimeoutMs: number) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  async init(): Promise<void> {
    this.#connection = new NodeSqliteConnection(openSqliteFile(this.#path), this.#busyTimeoutMs);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // node:sqlite answers synchronously, so without this a burst of requests would chain every
    // query on microtasks and the event loop would never see a socket close or a new request in
    // between: one turn of the loop per acquisition keeps the server fair and lets a client that
    // hung up stop its request (db/abort.ts).
    await new Promise<void>((resolve) => setImmediate(resolve));
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection!;
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async destroy(): Promise<void> {
    this.#connection?.close();
    this.#connection = undefined;
  }
}

type SqliteValue = null | number | bigint | string | Uint8Array;

function toSqliteValue(value: unknown): SqliteValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "string") return value;
  if (value instanceof Uint8Array) return value;
  return JSON.stringify(value);
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #busyTimeoutMs: number;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync, busyTimeoutMs: number) {
    this.#db = db;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  close(): void {
    this.#statements.clear();
    this.#db.close();
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      if (this.#statements.size > 500) this.#statements.delete(this.#statements.keys().next().value!);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.#prepare(compiled.sql);
    const parameters = compiled.parameters.map(toSqliteValue);
    try {
      return this.#run<R>(statement, parameters);
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    // Another process holds the write lock (every explicit transaction begins IMMEDIATE, so this is
    // a BEGIN or a statement on its own, which did nothing yet): try again after a pause, the event
    // loop free meanwhile.
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      await pause(BUSY_PAUSES[Math.min(attempt, BUSY_PAUSES.length - 1)]!);
      try {
        return this.#run<R>(statement, parameters);
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
    }
  }

  #run<R>(statement: StatementSync, parameters: SqliteValue[]): QueryResult<R> {
    if (statement.columns().length > 0) {
      const rows = statement.all(...parameters) as Record<string, unknown>[];
      return { rows: rows.map((row) => normalizeRow(row) as R) };
    }
    const { changes, lastInsertRowid } = statement.run(...parameters);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not supported on SQLite");
  }
}
