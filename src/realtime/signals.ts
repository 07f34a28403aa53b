/**
 * Signals between processes when there is no Redis. Without `REDIS_URL` the event bus stays in its
 * process, yet some changes are made elsewhere and must still reach every open stream within
 * seconds: a user disabled, suspended or given a new password from the CLI (their streams must
 * close, as the REST API already refuses the token), a token revoked through another web process,
 * an announcement published or removed from the CLI. These travel on a few low-volume channels
 * (`timeline:system:<account>`, `timeline:access_token:<token>`, `timeline:announcements`):
 *
 * - publishing on one of them also writes a row to `stream_signals` (after the change committed;
 *   the publisher's own listeners hear it at once, as before);
 * - a process that listens on one of them reads the rows of the last ten seconds once a second (a
 *   range of the time-ordered primary key, nearly always empty) and delivers those it has not seen
 *   and did not write. The window, not a cursor, is what makes rows committed late, or by a process
 *   whose clock is a few seconds behind, still arrive; seen IDs keep each delivery single.
 * - rows older than ten minutes are deleted by the listening processes as they poll, and by
 *   `maintenance.prune` (a server nobody streams from still has its signals written).
 *
 * Other events (new statuses, notifications) stay in their process: spreading those needs Redis,
 * and the server warns at start when its roles are split without it.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Db } from "../db/connect.ts";
import { idFloorForTime, newId } from "../db/ids.ts";
import { outsideRequestScope } from "../db/abort.ts";
import type { BusMessage, EventBus, Listener } from "./bus.ts";

const SIGNAL_CHANNEL = /^timeline:(?:system:|access_token:|announcements$)/;

/** Whether messages on `channel` must reach other processes even without Redis. */
export const isSignalChannel = (channel: string): boolean => SIGNAL_CHANNEL.test(channel);

/** Rows this recent are read on every poll (late commits, clocks a little behind). */
const WINDOW_MS = 10_000;
/** Rows older than this are deleted. */
const RETENTION_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;
const PAGE = 500;

/** Deletes the signals older than the retention; returns how many. */
export async function deleteOldSignals(db: Db, now = Date.now()): Promise<number> {
  const result = await db.kysely
    .deleteFrom("stream_signals")
    .where("id", "<", idFloorForTime(new Date(now - RETENTION_MS)))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface SignalRelayOptions {
  /** How often a listening process reads new signals, in ms. */
  pollMs?: number;
}

/** A bus that also carries signal channels across processes through the database. */
export class SignalRelay implements EventBus {
  readonly #inner: EventBus;
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;
  readonly #origin = randomUUID();
  readonly #pollMs: number;
  /** IDs read here, with the time in their ID, so each is delivered once while it is in the window. */
  readonly #seen = new Map<string, number>();
  /** Signals older than the first poll are not this process's business. */
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #lastPrune = 0;
  #failing = false;
  #closed = false;

  constructor(inner: EventBus, db: Db, log: FastifyBaseLogger, options: SignalRelayOptions = {}) {
    this.#inner = inner;
    this.#db = db;
    this.#log = log;
    this.#pollMs = options.pollMs ?? 1000;
  }

  /** This process's listeners hear at once; then the row is written for the others (a failure is logged). */
  async publish(channel: string, message: BusMessage): Promise<void> {
    await this.#inner.publish(channel, message);
    if (!isSignalChannel(channel)) return;
    await outsideRequestScope(() => this.#record(channel, message)).catch((error: unknown) =>
      this.#log.error({ err: error, channel }, "a stream signal could not be recorded for other processes"),
    );
  }

  async #record(channel: string, message: BusMessage): Promise<void> {
    // Two processes may make the same ID in the same millisecond: try another.
    for (let attempt = 0; attempt < 3; attempt++) {
      const id = newId();
      const result = await this.#db.kysely
        .insertInto("stream_signals")
        .values({ id, channel, message: JSON.stringify(message), origin: this.#origin })
        .onConflict((oc) => oc.column("id").doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0n) > 0) return;
    }
    this.#log.warn({ channel }, "a stream signal could not be recorded for other processes");
  }

  async subscribe(channel: string, listener: Listener): Promise<() => void> {
    const release = await this.#inner.subscribe(channel, listener);
    if (isSignalChannel(channel)) this.#startPolling();
    return release;
  }

  /** Signal channels count as present: another process may listen. */
  async present(channels: readonly string[]): Promise<Set<string>> {
    const present = await this.#inner.present(channels.filter((c) => !isSignalChannel(c)));
    for (const channel of channels) if (isSignalChannel(channel)) present.add(channel);
    return present;
  }

  /** Reads signals once now (tests; the timer does it every `pollMs`). */
  async poll(): Promise<void> {
    this.#polling ??= this.#readSignals().finally(() => (this.#polling = undefined));
    await this.#polling;
  }

  #startPolling(): void {
    if (this.#timer || this.#closed) return;
    this.#since = Date.now();
    this.#timer = setInterval(() => void this.poll(), this.#pollMs);
    this.#timer.unref();
  }

  async #readSignals(): Promise<void> {
    const now = Date.now();
    const from = idFloorForTime(new Date(Math.max(now - WINDOW_MS, this.#since)));
    try {
      let after = from;
      for (;;) {
        const rows = await this.#db.kysely
          .selectFrom("stream_signals")
          .select(["id", "channel", "message", "origin"])
          .where("id", ">=", after)
          .orderBy("id")
          .limit(PAGE)
          .execute();
        for (const row of rows) {
          if (this.#seen.has(row.id)) continue;
          this.#seen.set(row.id, Number(BigInt(row.id) >> 16n));
          if (row.origin === this.#origin) continue;
          let message: BusMessage;
          try {
            message = JSON.parse(row.message) as BusMessage;
          } catch {
            continue;
          }
          await this.#inner.publish(row.channel, message);
        }
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1]!.id;
      }
      // An ID older than the window is never read again.
      for (const [id, at] of this.#seen) if (at < now - WINDOW_MS) this.#seen.delete(id);
      if (now - this.#lastPrune > PRUNE_EVERY_MS) {
        this.#lastPrune = now;
        await deleteOldSignals(this.#db, now);
      }
      if (this.#failing) this.#log.info("stream signals are read again");
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) this.#log.warn({ err: error }, "stream signals could not be read; retrying every second");
      this.#failing = true;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#polling;
    await this.#inner.close();
  }
}
