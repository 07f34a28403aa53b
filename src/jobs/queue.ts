import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../db/connect.ts";
import { newId } from "../db/ids.ts";
import type { Kysely } from "kysely";
import type { Database, JobRow } from "../db/schema.ts";

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
}

export interface WorkerOptions {
  /** Jobs run at the same time by this process. */
  concurrency?: number;
  /** How often idle workers look for due jobs, in ms (enqueues in this process wake them at once). */
  pollInterval?: number;
  /** How long a claimed job stays locked; a crashed worker's jobs are retried after it. */
  leaseMs?: number;
}

const DEFAULT_LEASE_MS = 5 * 60_000;

/**
 * Durable jobs stored in the database and claimed atomically (PostgreSQL `FOR UPDATE SKIP LOCKED`,
 * SQLite's single writer), so several processes can share one queue and each job runs once.
 * A failing job is retried with exponential backoff until it has used `max_attempts`.
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
  #starting: Promise<void> | undefined;
  #leaseMs = DEFAULT_LEASE_MS;

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

  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    const id = await this.enqueueWith(this.#db.kysely, name, payload, options);
    this.wake();
    return id;
  }

  /** Wakes this process's idle workers, e.g. after a transaction that enqueued jobs committed. */
  wake(): void {
    for (const wake of this.#wake.splice(0)) wake();
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
    await db
      .insertInto("jobs")
      .values({
        id,
        name,
        payload: JSON.stringify(payload ?? null),
        run_at: (options.runAt ?? new Date()).toISOString(),
        max_attempts: options.maxAttempts ?? 5,
        unique_key: options.uniqueKey ?? null,
        created_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
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

  async #claimOne(now: Date, leaseMs: number): Promise<JobRow | undefined> {
    const names = [...this.#handlers.keys()].filter(
      (name) => (this.#active.get(name) ?? 0) < (this.#options.get(name)?.concurrency ?? Infinity),
    );
    if (names.length === 0) return undefined;
    const db = this.#db.kysely;
    const nowIso = now.toISOString();
    let candidate = db
      .selectFrom("jobs")
      .select("id")
      .where("name", "in", names)
      .where("failed_at", "is", null)
      // A job whose every attempt was cut short (its worker died) is not run again; failExhausted() records it.
      .whereRef("attempts", "<", "max_attempts")
      .where("run_at", "<=", nowIso)
      .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", nowIso)]))
      .orderBy("run_at")
      .limit(1);
    if (this.#db.engine === "postgres") candidate = candidate.forUpdate().skipLocked();
    const job = await db
      .updateTable("jobs")
      .set((eb) => ({
        locked_until: new Date(now.getTime() + leaseMs).toISOString(),
        locked_by: this.#workerId,
        attempts: eb("attempts", "+", 1),
      }))
      .where("id", "=", candidate)
      .returningAll()
      .executeTakeFirst();
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
      await db.deleteFrom("jobs").where("id", "=", job.id).execute();
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
      .where("locked_until", "<", now.toISOString())
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
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

  /** Starts worker loops in this process. */
  async start(options: WorkerOptions = {}): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (this.#shutdown.signal.aborted) this.#shutdown = new AbortController();
    this.#starting = (async () => {
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

  async #loop(options: WorkerOptions): Promise<void> {
    const pollInterval = options.pollInterval ?? 1000;
    while (this.#running) {
      let job: JobRow | undefined;
      try {
        job = await this.claim(new Date());
      } catch (error) {
        this.#log.error({ err: error }, "could not claim a job");
      }
      if (job) {
        await this.perform(job).catch((error) => this.#log.error({ err: error }, "could not record a job's outcome"));
        continue;
      }
      // stop() may have come while this loop was claiming; it only wakes loops already asleep.
      if (!this.#running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollInterval);
        this.#wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Stops claiming new jobs, signals `shutdown` to the running ones (long work may give up) and waits for them. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#shutdown.abort();
    await this.#starting?.catch(() => {});
    for (const wake of this.#wake.splice(0)) wake();
    await Promise.all(this.#loops);
    this.#loops = [];
  }
}
