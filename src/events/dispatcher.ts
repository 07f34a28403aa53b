/**
 * Dispatches domain events to their subscribers (the table is built in src/subscribers.ts).
 *
 * - A `job` subscriber gets a job row written in the transaction of the change, named
 *   `<event>:<subscriber>`, so the reaction happens exactly when the change was committed, is
 *   retried on failure, and survives a crash: fan-out, notifications, pushes, deliveries.
 *   A job subscriber may also do small work at once, inside that transaction (`inline`): what it
 *   writes commits with the change or not at all, and it saves a job's writing, claiming and
 *   deleting (another server's post reaching a few feeds here). When the work is too big for
 *   that, the job is written as usual.
 * - A `live` subscriber runs in this process right after the commit, once, with failures logged:
 *   signals to open streams, which a retry minutes later would not help and which must not wait
 *   behind a backlog of jobs (a suspended user's streams end now).
 *
 * Services emit inside `transaction()`, which commits, wakes the workers and then calls the live
 * subscribers; a change already committed (or none at all) uses `emitCommitted`.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Kysely, Transaction } from "kysely";
import { outsideRequestScope } from "../db/abort.ts";
import type { Db } from "../db/connect.ts";
import type { Database } from "../db/schema.ts";
import type { JobQueue } from "../jobs/queue.ts";
import type { DomainEvent, EventType } from "./types.ts";

export interface Subscriber<T extends EventType> {
  /** Names the reaction; a job subscriber's jobs are named `<event>:<name>`. */
  readonly name: string;
  readonly mode: "job" | "live";
  /** Attempts of a job subscriber's job (the queue's default otherwise). */
  readonly maxAttempts?: number;
  /** Whether this event concerns the subscriber at all, judged from its payload (no job otherwise). */
  readonly when?: (event: DomainEvent<T>) => boolean;
  run(event: DomainEvent<T>): Promise<void>;
  /**
   * A job subscriber's work done in the transaction `tx` of the change, when it is small: answers
   * what is left to do once the change is committed (run as live subscribers are), or false to
   * have the job written instead. Whatever it wrote before answering false stays, so the job must
   * be harmless to run over it.
   */
  readonly inline?: (tx: Kysely<Database>, event: DomainEvent<T>) => Promise<false | (() => Promise<void>)>;
}

/** What an open transaction's events leave for after its commit. */
interface Pending {
  events: DomainEvent[];
  /** The rest of the work inline job subscribers did. */
  afterCommit: { event: DomainEvent; subscriber: string; run: () => Promise<void> }[];
}

/** Who reacts to each event: every event type has an entry, possibly empty. */
export type SubscriberTable = { readonly [T in EventType]: readonly Subscriber<T>[] };

export const subscriberJobName = (type: EventType, name: string): string => `${type}:${name}`;

export class EventDispatcher {
  readonly #db: Db;
  readonly #jobs: JobQueue;
  readonly #log: FastifyBaseLogger;
  #table: SubscriberTable | undefined;
  /** The events emitted in each open transaction, for the live subscribers after its commit. */
  readonly #pending = new WeakMap<Kysely<Database>, Pending>();

  constructor(db: Db, jobs: JobQueue, log: FastifyBaseLogger) {
    this.#db = db;
    this.#jobs = jobs;
    this.#log = log;
  }

  /** Installs the subscriber table (once, where the process is put together). */
  use(table: SubscriberTable): void {
    this.#table = table;
  }

  /** Registers the job subscribers with the job queue, for processes that run jobs. */
  registerJobs(): void {
    const table = this.#subscribersTable();
    for (const type of Object.keys(table) as EventType[])
      for (const subscriber of this.#of(type))
        if (subscriber.mode === "job")
          this.#jobs.register(subscriberJobName(type, subscriber.name), (payload) =>
            subscriber.run(payload as DomainEvent),
          );
  }

  /**
   * Runs `work` in a transaction. The events it emits write their jobs in it; once it committed,
   * the workers are woken and the live subscribers hear of the events.
   */
  async transaction<T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
    const pending: Pending = { events: [], afterCommit: [] };
    const result = await this.#db.kysely.transaction().execute(async (tx) => {
      this.#pending.set(tx, pending);
      try {
        return await work(tx);
      } finally {
        this.#pending.delete(tx);
      }
    });
    this.#jobs.wake();
    for (const { event, subscriber, run } of pending.afterCommit) await this.#runOnce(event, subscriber, run);
    await this.#runLive(pending.events);
    return result;
  }

  /** Emits `event` as part of the transaction `tx` (one opened by `transaction()`). */
  async emit(tx: Kysely<Database>, event: DomainEvent): Promise<void> {
    const pending = this.#pending.get(tx);
    if (!pending) throw new Error(`the event ${event.type} must be emitted inside ctx.dispatcher.transaction()`);
    for (const subscriber of this.#of(event.type)) {
      if (subscriber.mode !== "job" || !(subscriber.when?.(event) ?? true)) continue;
      const afterCommit = subscriber.inline ? await subscriber.inline(tx, event) : false;
      if (afterCommit) pending.afterCommit.push({ event, subscriber: subscriber.name, run: afterCommit });
      else
        await this.#jobs.enqueueWith(tx, subscriberJobName(event.type, subscriber.name), event, {
          maxAttempts: subscriber.maxAttempts,
        });
    }
    pending.events.push(event);
  }

  /** Emits an event whose change is already committed (or that changes nothing stored). */
  async emitCommitted(event: DomainEvent): Promise<void> {
    if (this.#of(event.type).some((s) => s.mode === "job")) await this.transaction((tx) => this.emit(tx, event));
    else await this.#runLive([event]);
  }

  #subscribersTable(): SubscriberTable {
    if (!this.#table) throw new Error("no subscriber table: call ctx.dispatcher.use() where the context is made");
    return this.#table;
  }

  #of(type: EventType): readonly Subscriber<EventType>[] {
    return this.#subscribersTable()[type] as readonly Subscriber<EventType>[];
  }

  async #runLive(events: readonly DomainEvent[]): Promise<void> {
    for (const event of events)
      for (const subscriber of this.#of(event.type))
        if (subscriber.mode === "live" && (subscriber.when?.(event) ?? true))
          await this.#runOnce(event, subscriber.name, () => subscriber.run(event));
  }

  /** Runs a reaction after the commit, once: a failure is logged. */
  async #runOnce(event: DomainEvent, subscriber: string, run: () => Promise<void>): Promise<void> {
    try {
      // A live reaction serves other clients: the request that caused it may hang up meanwhile.
      await outsideRequestScope(run);
    } catch (error) {
      this.#log.error({ err: error, event: event.type, subscriber }, "event subscriber failed");
    }
  }
}
