import { randomUUID } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import type { FastifyBaseLogger } from "fastify";
import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Db } from "../db/connect.ts";
import { newId } from "../db/ids.ts";
import { prepared } from "../db/prepared.ts";
import type { Database, JobRow, JobWorkerRow } from "../db/schema.ts";

/** The columns an enqueue writes. */
type JobInsert = Pick<
  JobRow,
  "id" | "name" | "payload" | "run_at" | "max_attempts" | "unique_key" | "ordering_key" | "created_at"
>;

/**
 * A job's work; `now` is the time the job was claimed for (tests drain jobs "in the future").
 * `shutdown` fires when the workers stop: long work may give up (and throw) so the job runs again later.
 */
export type JobHandler = (payload: unknown, job: JobRow, now: Date, shutdown: AbortSignal) => Promise<void>;

export interface HandlerOptions {
  /** Jobs of this name run at most this many at a time in one process (long work leaves loops for the rest). */
  concurrency?: number;
  /** Keep extending the lease while the job runs (work that may outlast it, such as a conversion). */
  longRunning?: boolean;
}

export interface EnqueueOptions {
  /** When the job may run; now by default. */
  runAt?: Date;
  maxAttempts?: number;
  /** Enqueue only if no live job has this key (the insert is then a no-op). */
  uniqueKey?: string;
  /**
   * Jobs with the same ordering key run one at a time, in the order they were enqueued: a job waits
   * while an earlier one with its key is waiting, retrying or running (a failed one no longer counts).
   */
  orderingKey?: string;
}

export interface WorkerOptions {
  /** Jobs run at the same time by this process. */
  concurrency?: number;
  /**
   * How often idle workers look for due jobs, in ms (enqueues in this process wake them at once; on
   * SQLite, so do another process's commits: see `#watchElsewhere`).
   */
  pollInterval?: number;
  /**
   * How long a claimed job stays locked. It bounds a worker that is alive but stuck; the jobs of a
   * worker that is gone are released sooner, by its missed heartbeats or its dead process.
   */
  leaseMs?: number;
  /** How often, in ms, this process refreshes its worker row and releases the jobs of workers that are gone. */
  heartbeatMs?: number;
}

/**
 * While the loops sleep on SQLite, the database is asked whether another process committed (an
 * enqueue by a web process, the CLI) this soon after they went idle, then twice as late each time
 * up to the last: a job enqueued elsewhere starts within a few milliseconds under load and within
 * 50 ms on an idle server, instead of at the next poll.
 */
const WATCH_ELSEWHERE_MS = { first: 2, last: 50 };
const DEFAULT_LEASE_MS = 5 * 60_000;
const DEFAULT_HEARTBEAT_MS = 5_000;
/** Waiting jobs a claim looks at a time (running ones and those behind an ordering key are passed over). */
const CLAIM_PAGE = 32;
/** A worker whose heartbeat is this many intervals old is gone (a live one refreshes it every interval). */
const MISSED_HEARTBEATS = 3;

/** The started queues of this process: a row with this process's PID and another ID is an earlier process's. */
const workersOfThisProcess = new Set<string>();

/** The PID namespace of this process (Linux): containers sharing a host name may each have their own. */
function currentPidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

/** This boot of this machine (Linux): the same host name and namespace on another machine is not here. */
function currentBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** Whether a process with this PID exists (EPERM: it does, owned by another user). */
function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * The claim: the first due job of `names` that is not locked, has attempts left and is not behind
 * an earlier job with its ordering key, locked until `until` for `worker`. With `ids` (PostgreSQL's
 * page of waiting jobs) only among those, skipping rows another worker is claiming.
 */
function claimStatement(
  db: Kysely<Database>,
  claim: { names: string[]; now: string; until: string; worker: string; ids?: string[] },
) {
  let candidate = db
    .selectFrom("jobs")
    .select("id")
    .where("name", "in", claim.names)
    .where("failed_at", "is", null)
    // A job whose every attempt was cut short (its worker died) is not run again; failExhausted() records it.
    .whereRef("attempts", "<", "max_attempts")
    .where("run_at", "<=", claim.now)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", claim.now)]))
    // Behind an earlier job with the same ordering key that has not finished or failed: not yet.
    .where((eb) =>
      eb.or([
        eb("jobs.ordering_key", "is", null),
        eb.not(
          eb.exists(
            eb
              .selectFrom("jobs as earlier")
              .select(sql`1`.as("one"))
              .whereRef("earlier.ordering_key", "=", "jobs.ordering_key")
              .whereRef("earlier.id", "<", "jobs.id")
              .where("earlier.failed_at", "is", null),
          ),
        ),
      ]),
    )
    .orderBy("run_at")
    .orderBy("id")
    .limit(1);
  if (claim.ids) candidate = candidate.where("id", "in", claim.ids).forUpdate().skipLocked();
  return db
    .updateTable("jobs")
    .set((eb) => ({ locked_until: claim.until, locked_by: claim.worker, attempts: eb("attempts", "+", 1) }))
    .where("id", "=", candidate)
    .returningAll();
}

/** The database's time `agoMs` ago: heartbeats are written and judged by one clock whatever the hosts' clocks say. */
function databaseTime(engine: Db["engine"], agoMs = 0): RawBuilder<string> {
  return engine === "postgres"
    ? sql<string>`now() - ${agoMs}::double precision * interval '1 millisecond'`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`-${agoMs / 1000} seconds`})`;
}

/**
 * Durable jobs stored in the database and claimed atomically (PostgreSQL `FOR UPDATE SKIP LOCKED`,
 * SQLite's single writer), so several processes can share one queue and each job runs once.
 * A failing job is retried with exponential backoff until it has used `max_attempts`.
 *
 * Started workers keep a `job_workers` row with a heartbeat. Every live process releases, when it
 * starts and on each heartbeat, the jobs of workers that are gone: heartbeat missed
 * MISSED_HEARTBEATS times, or on this host (and PID namespace) with no process left behind its PID.
 * The attempt the dead worker used stays counted, as when a lease runs out. Jobs claimed without
 * start() (drain(), tests) have no row behind them and are left to their lease: a missing row cannot
 * tell a dead worker from a live one that never registered.
 */
export class JobQueue {
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;
  readonly #handlers = new Map<string, JobHandler>();
  readonly #options = new Map<string, HandlerOptions>();
  /** Jobs of each name this process is running. */
  readonly #active = new Map<string, number>();
  #shutdown = new AbortController();
  #claiming: Promise<void> = Promise.resolve();
  readonly #recurring = new Map<string, number>();
  readonly #workerId = randomUUID();
  #running = false;
  #loops: Promise<void>[] = [];
  #wake: (() => void)[] = [];
  /** The timer of `#watchElsewhere`, while it runs. */
  #watchTimer: NodeJS.Timeout | undefined;
  #starting: Promise<void> | undefined;
  #leaseMs = DEFAULT_LEASE_MS;
  #heartbeatMs = DEFAULT_HEARTBEAT_MS;
  readonly #host = hostname();
  readonly #pidNamespace = currentPidNamespace();
  readonly #bootId = currentBootId();
  /** When this queue's heartbeat was last written; another's lateness is judged only while its own is on time. */
  #lastBeatAt = 0;
  /** Whether this queue's row is in `job_workers` (from start() until stop() has waited for its jobs). */
  #registered = false;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> = Promise.resolve();
  /** Enqueues waiting to be written together (SQLite; see enqueue()). */
  readonly #unwritten: {
    name: string;
    payload: unknown;
    options: EnqueueOptions;
    resolve: (id: string) => void;
    reject: (error: unknown) => void;
  }[] = [];
  #writing: Promise<void> | undefined;

  constructor(db: Db, log: FastifyBaseLogger) {
    this.#db = db;
    this.#log = log;
  }

  /** Registers the handler of jobs named `name`. */
  register(name: string, handler: JobHandler, options: HandlerOptions = {}): void {
    this.#handlers.set(name, handler);
    this.#options.set(name, options);
  }

  /** Keeps one job named `name` scheduled every `intervalMs` (its handler must be registered). */
  recurring(name: string, intervalMs: number): void {
    this.#recurring.set(name, intervalMs);
  }

  /** Schedules each recurring job that has no pending run (called when workers start; safe to race). */
  async scheduleRecurring(): Promise<void> {
    for (const name of this.#recurring.keys()) await this.enqueue(name, null, { uniqueKey: name });
  }

  /**
   * Enqueues one job in a transaction of its own. On SQLite, outside the job loops' grouped work,
   * the enqueues that arrive while one is being written are written together next, in one
   * transaction: a web process receiving activities takes the one write lock once for a burst of
   * them instead of once each (and waits its turn behind a worker's grouped commits less often).
   * Each caller's promise settles once its job is committed.
   */
  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    if (this.#db.engine !== "sqlite" || this.#db.inGroupable()) {
      const id = await this.enqueueWith(this.#db.kysely, name, payload, options);
      this.wake();
      return id;
    }
    return new Promise<string>((resolve, reject) => {
      this.#unwritten.push({ name, payload, options, resolve, reject });
      this.#writeUnwritten();
    });
  }

  /** Writes the enqueues waiting for a transaction, in turn until none is left. */
  #writeUnwritten(): void {
    if (this.#writing) return;
    this.#writing = (async () => {
      while (this.#unwritten.length > 0) {
        const batch = this.#unwritten.splice(0);
        try {
          const ids = await this.#db.kysely.transaction().execute(async (tx) => {
            const ids: string[] = [];
            for (const job of batch) ids.push(await this.enqueueWith(tx, job.name, job.payload, job.options));
            return ids;
          });
          batch.forEach((job, i) => job.resolve(ids[i]!));
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          // One bad job (a payload that cannot be serialized) must not fail the others: each alone.
          else
            for (const job of batch)
              await this.enqueueWith(this.#db.kysely, job.name, job.payload, job.options).then(job.resolve, job.reject);
        }
        this.wake();
      }
    })().finally(() => {
      this.#writing = undefined;
      // An enqueue that came after the last look at the list but before this.
      if (this.#unwritten.length > 0) this.#writeUnwritten();
    });
  }

  /** Enqueues several jobs in one transaction (all or none), then wakes the workers. */
  async enqueueAll(
    jobs: ReadonlyArray<{ name: string; payload: unknown }>,
    options: EnqueueOptions = {},
  ): Promise<void> {
    await this.#db.kysely.transaction().execute(async (tx) => {
      for (const job of jobs) await this.enqueueWith(tx, job.name, job.payload, options);
    });
    this.wake();
  }

  /** Wakes this process's idle workers, e.g. after a transaction that enqueued jobs committed. */
  wake(): void {
    clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
    for (const wake of this.#wake.splice(0)) wake();
  }

  /**
   * While loops sleep, wakes them when another process commits (see WATCH_ELSEWHERE_MS); a commit
   * that enqueued nothing costs one empty claim. Where the database cannot tell (PostgreSQL),
   * sleeping loops wait for the poll.
   */
  #watchElsewhere(): void {
    const changedElsewhere = this.#db.changedElsewhere;
    if (!changedElsewhere || this.#watchTimer) return;
    let delay = WATCH_ELSEWHERE_MS.first;
    const look = () => {
      this.#watchTimer = undefined;
      if (this.#wake.length === 0) return;
      let changed: boolean;
      try {
        changed = changedElsewhere();
      } catch {
        changed = true; // Let a claim meet the error and log it.
      }
      if (changed) return this.wake();
      delay = Math.min(delay * 2, WATCH_ELSEWHERE_MS.last);
      this.#watchTimer = setTimeout(look, delay);
      this.#watchTimer.unref();
    };
    this.#watchTimer = setTimeout(look, delay);
    this.#watchTimer.unref();
  }

  /**
   * Enqueues inside a transaction, so the job exists exactly when the work that caused it was
   * committed. Workers find it on their next poll, or at once after `wake()`.
   */
  async enqueueWith(
    db: Kysely<Database>,
    name: string,
    payload: unknown,
    options: EnqueueOptions = {},
  ): Promise<string> {
    const id = newId();
    const now = new Date().toISOString();
    await db.executeQuery(
      prepared<keyof JobInsert>(
        db,
        "jobs.insert",
        (slot) =>
          db
            .insertInto("jobs")
            .values({
              id: slot("id"),
              name: slot("name"),
              payload: slot("payload"),
              run_at: slot("run_at"),
              max_attempts: slot("max_attempts"),
              unique_key: slot("unique_key"),
              ordering_key: slot("ordering_key"),
              created_at: slot("created_at"),
            } as JobInsert)
            .onConflict((oc) => oc.doNothing()),
        {
          id,
          name,
          payload: JSON.stringify(payload ?? null),
          run_at: options.runAt?.toISOString() ?? now,
          max_attempts: options.maxAttempts ?? 5,
          unique_key: options.uniqueKey ?? null,
          ordering_key: options.orderingKey ?? null,
          created_at: now,
        },
      ),
    );
    return id;
  }

  /**
   * Claims one due job for this worker, or undefined when none is due. Claims of one process run
   * one after another, so a name's concurrency cannot be overshot by two loops claiming at once;
   * the claimed job counts as running until perform() ends it.
   */
  claim(now = new Date(), leaseMs = this.#leaseMs): Promise<JobRow | undefined> {
    const claimed = this.#claiming.then(() => this.#claimOne(now, leaseMs));
    this.#claiming = claimed.then(
      () => {},
      () => {},
    );
    return claimed;
  }

  /**
   * Walks the waiting jobs in `run_at` order, a page at a time through their index, and claims the
   * first that may run. The walk is written out rather than left to one `ORDER BY … LIMIT 1` with
   * every condition: PostgreSQL plans that from its statistics, which lag behind a queue that
   * fills in seconds, and then read and sorted every due job (and checked each one's ordering key)
   * for each claim — quadratic in a backlog. A page read is an ordered walk of the index on any
   * statistics; only a page's few jobs are checked. SQLite walks the index in order for the
   * one-statement claim anyway (its plan does not depend on the table's size), so it claims directly.
   */
  async #claimOne(now: Date, leaseMs: number): Promise<JobRow | undefined> {
    const names = [...this.#handlers.keys()].filter(
      (name) => (this.#active.get(name) ?? 0) < (this.#options.get(name)?.concurrency ?? Infinity),
    );
    if (names.length === 0) return undefined;
    // SQLite plans without statistics and walks the index in order for the claim itself: one statement.
    if (this.#db.engine === "sqlite") return this.#claimOnSqlite(names, now, leaseMs);
    const nowIso = now.toISOString();
    let after: { run_at: string; id: string } | undefined;
    for (;;) {
      let page = this.#db.kysely
        .selectFrom("jobs")
        .select(["id", "run_at"])
        .where("failed_at", "is", null)
        .where("run_at", "<=", nowIso);
      if (after) page = page.where(sql<boolean>`(run_at, id) > (${after.run_at}, ${after.id})`);
      const waiting = await page.orderBy("run_at").orderBy("id").limit(CLAIM_PAGE).execute();
      if (waiting.length === 0) return undefined;
      const job = await this.#claimAmong(
        waiting.map((row) => row.id),
        names,
        now,
        leaseMs,
      );
      if (job || waiting.length < CLAIM_PAGE) return job;
      after = waiting.at(-1);
    }
  }

  /**
   * SQLite's claim: built once per number of names (db/prepared.ts). It runs for every job, and
   * building it with Kysely cost more than running it (~110 µs against ~80 µs), a tenth of the CPU
   * an inbound activity takes.
   */
  async #claimOnSqlite(names: string[], now: Date, leaseMs: number): Promise<JobRow | undefined> {
    const db = this.#db.kysely;
    const nowIso = now.toISOString();
    const values: Record<string, unknown> = {
      now: nowIso,
      until: new Date(now.getTime() + leaseMs).toISOString(),
      worker: this.#workerId,
    };
    names.forEach((name, i) => (values[`name${i}`] = name));
    const statement = prepared<string>(
      db,
      `jobs.claim.${names.length}`,
      (slot) =>
        claimStatement(db, {
          names: names.map((_, i) => slot(`name${i}`) as string),
          now: slot("now") as string,
          until: slot("until") as string,
          worker: slot("worker") as string,
        }),
      values,
    );
    return this.#claimed((await db.executeQuery<JobRow>(statement)).rows[0]);
  }

  /** Claims the first of `ids` that may run now, if any (PostgreSQL's claim of a page of waiting jobs). */
  async #claimAmong(ids: string[], names: string[], now: Date, leaseMs: number): Promise<JobRow | undefined> {
    const statement = claimStatement(this.#db.kysely, {
      names,
      now: now.toISOString(),
      until: new Date(now.getTime() + leaseMs).toISOString(),
      worker: this.#workerId,
      ids,
    });
    return this.#claimed(await statement.executeTakeFirst());
  }

  /** Counts a claimed job as running. */
  #claimed(job: JobRow | undefined): JobRow | undefined {
    if (job) this.#active.set(job.name, (this.#active.get(job.name) ?? 0) + 1);
    return job;
  }

  /** Runs one claimed job and records its outcome (and ends its count as running). */
  async perform(job: JobRow, now = new Date()): Promise<void> {
    const handler = this.#handlers.get(job.name);
    const db = this.#db.kysely;
    // A long-running job (a conversion) keeps its lease while it works, so no other worker runs it twice.
    const heartbeat = this.#options.get(job.name)?.longRunning
      ? setInterval(() => {
          db.updateTable("jobs")
            .set({ locked_until: new Date(Date.now() + this.#leaseMs).toISOString() })
            .where("id", "=", job.id)
            .where("locked_by", "=", this.#workerId)
            .execute()
            .catch((error: unknown) => this.#log.warn({ err: error, job: job.name }, "could not extend a job's lease"));
        }, this.#leaseMs / 3)
      : undefined;
    heartbeat?.unref();
    try {
      if (!handler) throw new Error(`no handler for job ${job.name}`);
      await handler(JSON.parse(job.payload), job, now, this.#shutdown.signal);
      await db.executeQuery(
        prepared<"id">(db, "jobs.delete", (slot) => db.deleteFrom("jobs").where("id", "=", slot("id") as string), {
          id: job.id,
        }),
      );
      const interval = this.#recurring.get(job.name);
      if (interval !== undefined)
        await this.enqueue(job.name, null, { runAt: new Date(Date.now() + interval), uniqueKey: job.name });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const exhausted = job.attempts >= job.max_attempts;
      this.#log.warn(
        { job: job.name, id: job.id, attempts: job.attempts, err: error },
        exhausted ? "job failed for good" : "job failed; will retry",
      );
      const retryAt = new Date(Date.now() + Math.min(2 ** job.attempts * 1000, 3_600_000));
      await db
        .updateTable("jobs")
        .set({
          last_error: message.slice(0, 2000),
          locked_until: null,
          locked_by: null,
          run_at: retryAt.toISOString(),
          failed_at: exhausted ? new Date().toISOString() : null,
        })
        .where("id", "=", job.id)
        .execute();
    } finally {
      clearInterval(heartbeat);
      this.#active.set(job.name, Math.max(0, (this.#active.get(job.name) ?? 0) - 1));
    }
  }

  /**
   * Records as failed the jobs whose attempts are used up without an outcome (each was claimed and
   * its worker died before finishing): claim() skips them, and this makes them visible as failed.
   */
  async failExhausted(now = new Date()): Promise<number> {
    const result = await this.#db.kysely
      .updateTable("jobs")
      .set({ failed_at: now.toISOString(), last_error: "its worker stopped during every attempt" })
      .where("failed_at", "is", null)
      .whereRef("attempts", ">=", "max_attempts")
      // Released from a worker that is gone (no lock left), or its lease ran out.
      .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", now.toISOString())]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Makes the jobs of workers that are gone claimable at once and removes their rows; answers how
   * many jobs it released. One small read of `job_workers`; `jobs` is touched (through its
   * `locked_by` index) only when a worker is gone.
   */
  async releaseGoneWorkers(): Promise<number> {
    const db = this.#db.kysely;
    const late = databaseTime(this.#db.engine, MISSED_HEARTBEATS * this.#heartbeatMs);
    const stale = databaseTime(this.#db.engine, this.#leaseMs);
    const workers = await db
      .selectFrom("job_workers")
      .select([
        "id",
        "host",
        "pid",
        "pid_namespace",
        "boot_id",
        sql<number>`CASE WHEN heartbeat_at < ${late} THEN 1 ELSE 0 END`.as("late"),
        sql<number>`CASE WHEN heartbeat_at < ${stale} THEN 1 ELSE 0 END`.as("stale"),
      ])
      .where("id", "!=", this.#workerId)
      .execute();
    // After this process could not write its own heartbeat (a database outage), others could not
    // either: lateness is judged again only once its own heartbeat is on time.
    const onTime = !this.#registered || Date.now() - this.#lastBeatAt < 2 * this.#heartbeatMs;
    const gone = workers.filter((worker) => {
      const here = this.#onThisMachine(worker);
      // A live process here keeps its jobs whatever its heartbeat (a stalled event loop), up to the lease.
      if (here) return this.#diedHere(worker) || worker.stale === 1;
      return onTime && worker.late === 1;
    });
    if (gone.length === 0) return 0;
    const ids = gone.map((worker) => worker.id);
    // Released before the rows go: a process that dies in between leaves the rows to the next one.
    const released = await db
      .updateTable("jobs")
      .set({ locked_until: null, locked_by: null })
      .where("locked_by", "in", ids)
      .executeTakeFirst();
    await db.deleteFrom("job_workers").where("id", "in", ids).execute();
    const jobs = Number(released.numUpdatedRows);
    const described = gone.map(({ id, host, pid }) => ({ id, host, pid }));
    if (jobs > 0) {
      this.#log.warn({ workers: described, jobs }, "released the jobs of job workers that are gone");
      this.wake();
    } else this.#log.info({ workers: described }, "removed job workers that are gone");
    return jobs;
  }

  /** Whether `worker` runs on this boot of this machine, in this PID namespace: where its PID can be checked. */
  #onThisMachine(worker: Pick<JobWorkerRow, "host" | "pid_namespace" | "boot_id">): boolean {
    return (
      worker.host === this.#host &&
      worker.pid_namespace === this.#pidNamespace &&
      this.#bootId !== null &&
      worker.boot_id === this.#bootId
    );
  }

  /** Whether `worker`, on this machine, has no process behind it any more. */
  #diedHere(worker: Pick<JobWorkerRow, "id" | "pid">): boolean {
    // This process's own PID: alive only if one of this process's queues is that worker.
    if (worker.pid === process.pid) return !workersOfThisProcess.has(worker.id);
    return !processExists(worker.pid);
  }

  /** Writes this queue's row in `job_workers` (anew, after a process took it for gone and removed it). */
  async #register(): Promise<void> {
    const now = databaseTime(this.#db.engine);
    const row = {
      host: this.#host,
      pid: process.pid,
      pid_namespace: this.#pidNamespace,
      boot_id: this.#bootId,
      heartbeat_at: now,
    };
    await this.#db.kysely
      .insertInto("job_workers")
      .values({ id: this.#workerId, started_at: now, ...row })
      .onConflict((oc) => oc.column("id").doUpdateSet(row))
      .execute();
  }

  /** Refreshes this queue's heartbeat, then releases the jobs of workers that are gone; runs until stop(). */
  #scheduleHeartbeat(): void {
    if (!this.#registered) return;
    this.#heartbeatTimer = setTimeout(() => {
      this.#beating = this.#beat().finally(() => this.#scheduleHeartbeat());
    }, this.#heartbeatMs);
    this.#heartbeatTimer.unref();
  }

  async #beat(): Promise<void> {
    try {
      const refreshed = await this.#db.kysely
        .updateTable("job_workers")
        .set({ heartbeat_at: databaseTime(this.#db.engine) })
        .where("id", "=", this.#workerId)
        .executeTakeFirst();
      if (!this.#registered) return;
      if (Number(refreshed.numUpdatedRows) === 0) {
        this.#log.warn(
          "this process's job workers missed their heartbeats and were taken for gone: their jobs may run twice",
        );
        await this.#register();
      }
      const previous = this.#lastBeatAt;
      this.#lastBeatAt = Date.now();
      // The first heartbeat on time after a late one (an outage) only refreshes: others may be catching up too.
      if (previous !== 0 && this.#lastBeatAt - previous > 2 * this.#heartbeatMs) return;
      await this.releaseGoneWorkers();
    } catch (error) {
      this.#log.warn({ err: error }, "could not refresh the job workers' heartbeat");
    }
  }

  /** Claims and runs due jobs until none is left; returns how many ran (tests and the CLI use it). */
  async drain(now?: () => Date): Promise<number> {
    let count = 0;
    for (
      let at = now?.() ?? new Date(), job = await this.claim(at);
      job;
      at = now?.() ?? new Date(), job = await this.claim(at)
    ) {
      await this.perform(job, at);
      count++;
    }
    return count;
  }

  /** Commits the loops' grouped work (a failure is logged by the database's `onGroupLost`). */
  async #flush(): Promise<void> {
    await this.#db.flush().catch((error: unknown) => this.#log.error({ err: error }, "could not commit grouped jobs"));
  }

  /** Starts worker loops in this process. */
  async start(options: WorkerOptions = {}): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    if (this.#shutdown.signal.aborted) this.#shutdown = new AbortController();
    this.#starting = (async () => {
      await this.#register();
      this.#registered = true;
      this.#lastBeatAt = Date.now();
      workersOfThisProcess.add(this.#workerId);
      this.#scheduleHeartbeat();
      // Before the loops start, so that they claim at once what a process that died here held.
      await this.releaseGoneWorkers().catch((error: unknown) =>
        this.#log.warn({ err: error }, "could not release the jobs of job workers that are gone"),
      );
      await this.scheduleRecurring();
      // stop() may have been called while the recurring jobs were scheduled.
      if (!this.#running) return;
      const concurrency = options.concurrency ?? 2;
      for (let i = 0; i < concurrency; i++) this.#loops.push(this.#loop(options));
    })();
    try {
      await this.#starting;
    } finally {
      this.#starting = undefined;
    }
  }

  /**
   * A worker loop. Its claims and jobs are groupable work (`Db.groupable`): on SQLite their commits
   * are grouped, and the group is committed when the loop finds nothing to do.
   */
  async #loop(options: WorkerOptions): Promise<void> {
    const pollInterval = options.pollInterval ?? 1000;
    while (this.#running) {
      const job = await this.#db.groupable(async () => {
        let claimed: JobRow | undefined;
        try {
          claimed = await this.claim(new Date());
        } catch (error) {
          this.#log.error({ err: error }, "could not claim a job");
        }
        if (claimed)
          await this.perform(claimed).catch((error) =>
            this.#log.error({ err: error }, "could not record a job's outcome"),
          );
        return claimed;
      });
      if (job) continue;
      await this.#flush();
      // stop() may have come while this loop was claiming; it only wakes loops already asleep.
      if (!this.#running) break;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          // Off the list, so that `#wake` holds only loops that sleep.
          const at = this.#wake.indexOf(wake);
          if (at >= 0) this.#wake.splice(at, 1);
          resolve();
        }, pollInterval);
        this.#wake.push(wake);
        this.#watchElsewhere();
      });
    }
  }

  /**
   * Stops claiming new jobs, signals `shutdown` to the running ones (long work may give up) and waits
   * for them, then removes this queue's worker row (its heartbeat goes on until then, so no other
   * process takes over a job that is finishing).
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#shutdown.abort();
    await this.#starting?.catch(() => {});
    this.wake();
    await Promise.all(this.#loops);
    this.#loops = [];
    await this.#flush();
    if (!this.#registered) return;
    this.#registered = false;
    clearTimeout(this.#heartbeatTimer);
    await this.#beating;
    workersOfThisProcess.delete(this.#workerId);
    await this.#db.kysely
      .deleteFrom("job_workers")
      .where("id", "=", this.#workerId)
      .execute()
      .catch((error: unknown) => this.#log.warn({ err: error }, "could not remove this process's job worker row"));
  }
}
