import { AsyncLocalStorage } from "node:async_hooks";
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
  readonly #groupCommit: GroupCommit | undefined;
  /** The driver made for Kysely (its group commits are flushed and waited for through it). */
  driver: NodeSqliteDriver | undefined;
  /**
   * `busyTimeoutMs`: how long a statement waits for another process's write lock before it fails;
   * `groupCommit`: how groupable work's commits are grouped (none without it).
   */
  constructor(
    path: string,
    { busyTimeoutMs = BUSY_TIMEOUT_MS, groupCommit }: { busyTimeoutMs?: number; groupCommit?: GroupCommit } = {},
  ) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#groupCommit = groupCommit;
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    this.driver = new NodeSqliteDriver(this.#path, this.#busyTimeoutMs, this.#groupCommit);
    return this.driver;
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
 * microseconds, its transaction for a millisecond or so and a worker's grouped commits
 * (GroupCommit) for a few: a few quick tries first, then one every millisecond, so the lock is
 * taken soon after it is let go.
 */
const BUSY_PAUSES = [0, 0, 0, 0, 0, 0, 0, 0, 1];

const pause = (ms: number) =>
  new Promise<void>((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));

/**
 * Commits in groups: the transactions and statements of background work (the job loops) share one
 * SQLite transaction, committed when it is `maxMs` old or holds `maxTransactions` of them, when the
 * loops go idle, and before any other work uses the connection. A commit writes every page its
 * transaction changed to the write-ahead log, one write call per page: the pages a run of jobs
 * shares (the jobs table, index pages) are written once a group instead of once a job.
 */
export interface GroupCommit {
  maxMs: number;
  maxTransactions: number;
  /**
   * After a group commits, this long passes before the next one opens (the work in between commits
   * as it goes): other processes waiting for the write lock get their turn.
   */
  pauseMs: number;
  /** Called when a group could not be committed (its work was rolled back; the jobs in it run again). */
  onLost: (error: unknown) => void;
}

/** The async context of work whose commits may be grouped (see GroupCommit). */
const groupable = new AsyncLocalStorage<boolean>();

/** Whether the current work is groupable (see runGroupable). */
export const inGroupableWork = (): boolean => groupable.getStore() === true;

/** Runs `work` (and all it starts) as groupable background work. */
export function runGroupable<T>(work: () => Promise<T>): Promise<T> {
  return groupable.run(true, work);
}

/** The open group: since when, how many transactions it holds, what waits for its commit. */
interface Group {
  openedAt: number;
  transactions: number;
  timer: NodeJS.Timeout;
  afterCommit: (() => void)[];
}

const SAVEPOINT = "rookery_grouped";

export class NodeSqliteDriver implements Driver {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  readonly #groupCommit: GroupCommit | undefined;
  #connection: NodeSqliteConnection | undefined;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;
  #group: Group | undefined;
  #nextGroupAt = 0;
  /** Whether the connection's current holder works inside the group. */
  #holderGrouped = false;

  constructor(path: string, busyTimeoutMs: number, groupCommit: GroupCommit | undefined) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#groupCommit = groupCommit;
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
    const connection = this.#connection!;
    const grouped = this.#groupCommit !== undefined && groupable.getStore() === true;
    try {
      if (!grouped) await this.#commitGroup();
      else if (!this.#group && Date.now() >= this.#nextGroupAt) await this.#openGroup(connection);
    } catch (error) {
      await this.releaseConnection();
      throw error;
    }
    this.#holderGrouped = grouped && this.#group !== undefined;
    return connection;
  }

  async releaseConnection(): Promise<void> {
    const group = this.#group;
    if (group && this.#holderGrouped) {
      // A failed statement that SQLite answered by rolling back the whole transaction (a full disk).
      if (!this.#connection!.inTransaction) this.#lose(new Error("SQLite rolled back the grouped transaction"));
      else if (
        group.transactions >= this.#groupCommit!.maxTransactions ||
        Date.now() - group.openedAt >= this.#groupCommit!.maxMs
      )
        await this.#commitGroup();
    }
    this.#holderGrouped = false;
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async #openGroup(connection: NodeSqliteConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
    const timer = setTimeout(() => void this.flush(), this.#groupCommit!.maxMs);
    timer.unref();
    this.#group = { openedAt: Date.now(), transactions: 0, timer, afterCommit: [] };
  }

  /** Commits the open group, if any, and runs the callbacks that waited for it. */
  async #commitGroup(): Promise<void> {
    const group = this.#group;
    if (!group) return;
    try {
      await this.#connection!.executeQuery(CompiledQuery.raw("commit"));
    } catch (error) {
      this.#lose(error);
      return;
    }
    this.#closeGroup(group);
    // Outside the group: what they write (a signal row) is not grouped work; it waits its turn for
    // the connection this commit still holds.
    groupable.exit(() => group.afterCommit.forEach((callback) => callback()));
  }

  #closeGroup(group: Group): void {
    clearTimeout(group.timer);
    this.#group = undefined;
    this.#nextGroupAt = Date.now() + this.#groupCommit!.pauseMs;
  }

  /** The open group could not be committed: its work is rolled back and what waited for it is dropped. */
  #lose(error: unknown): void {
    const group = this.#group;
    if (!group) return;
    this.#closeGroup(group);
    if (this.#connection!.inTransaction) this.#connection!.rollbackNow();
    this.#groupCommit!.onLost(error);
  }

  /**
   * Whether another connection (another process) committed since the last time this was asked
   * (SQLite's `data_version`; the first answer may be a spurious yes). It is read directly, not in
   * the connection's turn: it reads only the log's header, so an open transaction does not matter.
   */
  changedElsewhere(): boolean {
    return this.#connection?.changedElsewhere() ?? false;
  }

  /** Commits the open group now (the job loops call it when they go idle and when they stop). */
  async flush(): Promise<void> {
    if (!this.#group) return;
    await groupable.exit(async () => {
      await this.acquireConnection();
      await this.releaseConnection();
    });
  }

  /**
   * Runs `callback` once what was written so far is committed: at once, or after the open group
   * commits (dropped if it cannot). What other processes are told (streaming events) must not
   * reach them before they can read it. The callback must not throw; it may start async work.
   */
  afterCommit(callback: () => void): void {
    if (this.#group) this.#group.afterCommit.push(callback);
    else callback();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(
      CompiledQuery.raw(this.#holderGrouped ? `savepoint ${SAVEPOINT}` : "begin immediate"),
    );
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#holderGrouped) {
      await connection.executeQuery(CompiledQuery.raw("commit"));
      return;
    }
    await connection.executeQuery(CompiledQuery.raw(`release ${SAVEPOINT}`));
    this.#group!.transactions++;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#holderGrouped) {
      await connection.executeQuery(CompiledQuery.raw("rollback"));
      return;
    }
    // SQLite may have rolled back the whole transaction already (releaseConnection notices).
    if (!this.#connection!.inTransaction) return;
    await connection.executeQuery(CompiledQuery.raw(`rollback to ${SAVEPOINT}`));
    await connection.executeQuery(CompiledQuery.raw(`release ${SAVEPOINT}`));
  }

  async destroy(): Promise<void> {
    if (this.#group) await this.flush();
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

/** A prepared statement, and whether it answers rows (asking SQLite each time cost more than a lookup by key). */
interface Prepared {
  statement: StatementSync;
  returnsRows: boolean;
}

/**
 * Where a statement's `LIMIT ?` placeholders are: the SQL around them and their parameters'
 * positions (null: it has none). SQLite's planner reads the value bound to a LIMIT's parameter, so
 * binding another value (any value: SQLite does not compare) makes it prepare the whole statement
 * again on its next run: 6 % of a job worker's CPU went to that. The limit is written into the
 * SQL instead, a statement per limit (a few per query: the page sizes).
 */
interface LimitPlaceholders {
  parts: string[];
  parameters: number[];
}

const NO_LIMITS = null;

/** Finds `LIMIT ?` placeholders, skipping quoted strings, quoted names and comments. */
export function findLimitPlaceholders(sql: string): LimitPlaceholders | null {
  const parts: string[] = [];
  const parameters: number[] = [];
  let parameter = 0;
  let start = 0;
  for (let i = 0; i < sql.length; i++) {
    const char = sql[i]!;
    if (char === "'" || char === '"' || char === "`") {
      const end = sql.indexOf(char, i + 1);
      if (end < 0) return NO_LIMITS;
      i = end; // A doubled quote inside is two quoted runs in a row: the same outcome.
      continue;
    }
    // Comments, whose text may hold a quote or a question mark.
    if (char === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      if (end < 0) break;
      i = end;
      continue;
    }
    if (char === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) return NO_LIMITS;
      i = end + 1;
      continue;
    }
    if (char !== "?") continue;
    if (/\blimit\s*$/i.test(sql.slice(Math.max(0, i - 12), i))) {
      parts.push(sql.slice(start, i));
      parameters.push(parameter);
      start = i + 1;
    }
    parameter++;
  }
  if (parameters.length === 0) return NO_LIMITS;
  parts.push(sql.slice(start));
  return { parts, parameters };
}

const isLimitValue = (value: SqliteValue) =>
  (typeof value === "number" && Number.isSafeInteger(value)) || typeof value === "bigint";

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #busyTimeoutMs: number;
  readonly #statements = new Map<string, Prepared>();
  readonly #limits = new Map<string, LimitPlaceholders | null>();

  constructor(db: DatabaseSync, busyTimeoutMs: number) {
    this.#db = db;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  close(): void {
    this.#statements.clear();
    this.#dataVersionStatement = undefined;
    this.#db.close();
  }

  /** `data_version` when changedElsewhere() last read it. */
  #dataVersion: unknown;
  #dataVersionStatement: StatementSync | undefined;

  changedElsewhere(): boolean {
    this.#dataVersionStatement ??= this.#db.prepare("PRAGMA data_version");
    const version = (this.#dataVersionStatement.get() as { data_version: unknown }).data_version;
    const changed = version !== this.#dataVersion;
    this.#dataVersion = version;
    return changed;
  }

  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  /** Rolls back the open transaction, ignoring a failure (the connection is being given up on). */
  rollbackNow(): void {
    try {
      this.#db.exec("rollback");
    } catch {
      // Nothing left to roll back.
    }
  }

  #prepare(sql: string): Prepared {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      const statement = this.#db.prepare(sql);
      prepared = { statement, returnsRows: statement.columns().length > 0 };
      if (this.#statements.size > 500) this.#statements.delete(this.#statements.keys().next().value!);
      this.#statements.set(sql, prepared);
    }
    return prepared;
  }

  /** The SQL and parameters to run: limits written into the SQL (see LimitPlaceholders). */
  #withLimits(sql: string, parameters: SqliteValue[]): [string, SqliteValue[]] {
    let limits = this.#limits.get(sql);
    if (limits === undefined) {
      limits = findLimitPlaceholders(sql);
      if (this.#limits.size > 500) this.#limits.delete(this.#limits.keys().next().value!);
      this.#limits.set(sql, limits);
    }
    if (!limits || !limits.parameters.every((i) => isLimitValue(parameters[i]!))) return [sql, parameters];
    let text = limits.parts[0]!;
    limits.parameters.forEach((i, n) => (text += String(parameters[i]) + limits.parts[n + 1]));
    return [text, parameters.filter((_, i) => !limits.parameters.includes(i))];
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const [sql, parameters] = this.#withLimits(compiled.sql, compiled.parameters.map(toSqliteValue));
    const statement = this.#prepare(sql);
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

  #run<R>({ statement, returnsRows }: Prepared, parameters: SqliteValue[]): QueryResult<R> {
    if (returnsRows) {
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
