/**
 * The event bus between the code that changes things and the streaming connections that report
 * them, on Mastodon's channel names (`timeline:<account id>`, `timeline:public:local`, …; see
 * reference/streaming.md §7). In one process it is a map of listeners; with `REDIS_URL` it is Redis
 * pub/sub, so a client connected to one process hears of what happened in another. A process
 * subscribes to a Redis channel only while one of its clients listens to it, and marks the channel
 * present (`subscribed:<channel>`, 18 minutes, refreshed every 6) so publishers can skip work
 * nobody would see.
 */
import { Redis } from "ioredis";
import type { FastifyBaseLogger } from "fastify";
import { outsideRequestScope } from "../db/abort.ts";
import type { Db } from "../db/connect.ts";
import { SignalRelay } from "./signals.ts";

/** One message on a channel: an event name and its payload (a string, or data to render). */
export interface BusMessage {
  event: string;
  payload?: unknown;
}

export type Listener = (message: BusMessage) => void;

export interface EventBus {
  publish(channel: string, message: BusMessage): Promise<void>;
  /** Listens to `channel` until the returned function is called. */
  subscribe(channel: string, listener: Listener): Promise<() => void>;
  /** The channels among `channels` that some process has a listener on. */
  present(channels: readonly string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

/** The listeners of this process, by channel. */
class Listeners {
  readonly #byChannel = new Map<string, Set<Listener>>();

  /** Adds a listener; true when it is the channel's first. */
  add(channel: string, listener: Listener): boolean {
    let set = this.#byChannel.get(channel);
    const first = !set;
    if (!set) this.#byChannel.set(channel, (set = new Set()));
    set.add(listener);
    return first;
  }

  /** Removes a listener; true when the channel has none left. */
  remove(channel: string, listener: Listener): boolean {
    const set = this.#byChannel.get(channel);
    if (!set) return false;
    set.delete(listener);
    if (set.size > 0) return false;
    this.#byChannel.delete(channel);
    return true;
  }

  has(channel: string): boolean {
    return this.#byChannel.has(channel);
  }

  channels(): string[] {
    return [...this.#byChannel.keys()];
  }

  deliver(channel: string, message: BusMessage, log: FastifyBaseLogger): void {
    for (const listener of this.#byChannel.get(channel) ?? []) {
      try {
        // A listener serves its own client, never the request that happened to publish.
        outsideRequestScope(() => listener(message));
      } catch (error) {
        log.error({ err: error, channel }, "stream listener failed");
      }
    }
  }
}

/** One process: listeners are called on the next tick, never inside the publisher's call. */
export class LocalBus implements EventBus {
  readonly #listeners = new Listeners();
  readonly #log: FastifyBaseLogger;

  constructor(log: FastifyBaseLogger) {
    this.#log = log;
  }

  async publish(channel: string, message: BusMessage): Promise<void> {
    if (!this.#listeners.has(channel)) return;
    setImmediate(() => this.#listeners.deliver(channel, message, this.#log));
  }

  async subscribe(channel: string, listener: Listener): Promise<() => void> {
    this.#listeners.add(channel, listener);
    return () => void this.#listeners.remove(channel, listener);
  }

  async present(channels: readonly string[]): Promise<Set<string>> {
    return new Set(channels.filter((c) => this.#listeners.has(c)));
  }

  async close(): Promise<void> {}
}

const PRESENCE_TTL_SECONDS = 18 * 60;
const PRESENCE_REFRESH_MS = 6 * 60 * 1000;

/** Redis pub/sub: one connection publishes (and keeps presence), one subscribes. */
export class RedisBus implements EventBus {
  readonly #listeners = new Listeners();
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #log: FastifyBaseLogger;
  readonly #refresh: NodeJS.Timeout;

  constructor(url: string, log: FastifyBaseLogger) {
    this.#log = log;
    const options = { lazyConnect: false, maxRetriesPerRequest: 3, enableOfflineQueue: true };
    this.#pub = new Redis(url, options);
    this.#sub = new Redis(url, options);
    for (const connection of [this.#pub, this.#sub])
      connection.on("error", (error: Error) => log.warn({ err: error }, "Redis connection error"));
    this.#sub.on("message", (channel: string, text: string) => {
      let message: BusMessage;
      try {
        message = JSON.parse(text) as BusMessage;
      } catch {
        return;
      }
      if (typeof message?.event === "string") this.#listeners.deliver(channel, message, this.#log);
    });
    this.#refresh = setInterval(() => void this.#markPresent(this.#listeners.channels()), PRESENCE_REFRESH_MS);
    this.#refresh.unref();
  }

  async #markPresent(channels: readonly string[]): Promise<void> {
    if (channels.length === 0) return;
    const pipeline = this.#pub.pipeline();
    for (const channel of channels) pipeline.set(`subscribed:${channel}`, "1", "EX", PRESENCE_TTL_SECONDS);
    await pipeline.exec().catch((error: unknown) => this.#log.warn({ err: error }, "Redis presence not refreshed"));
  }

  async publish(channel: string, message: BusMessage): Promise<void> {
    await this.#pub.publish(channel, JSON.stringify(message));
  }

  async subscribe(channel: string, listener: Listener): Promise<() => void> {
    if (this.#listeners.add(channel, listener)) {
      await this.#sub.subscribe(channel);
      await this.#markPresent([channel]);
    }
    return () => {
      if (this.#listeners.remove(channel, listener))
        void this.#sub
          .unsubscribe(channel)
          .catch((error: unknown) => this.#log.warn({ err: error }, "unsubscribe failed"));
    };
  }

  async present(channels: readonly string[]): Promise<Set<string>> {
    if (channels.length === 0) return new Set();
    const found = await this.#pub.mget(...channels.map((c) => `subscribed:${c}`));
    return new Set(channels.filter((_, i) => found[i] !== null));
  }

  async close(): Promise<void> {
    clearInterval(this.#refresh);
    await Promise.allSettled([this.#sub.quit(), this.#pub.quit()]);
  }
}

/**
 * Redis pub/sub with `REDIS_URL`; otherwise this process's listeners, with signals (streams to end,
 * announcements) relayed to other processes through the database (see signals.ts).
 */
export function createBus(redisUrl: string | undefined, log: FastifyBaseLogger, db: Db): EventBus {
  return new PublishAfterCommit(
    redisUrl ? new RedisBus(redisUrl, log) : new SignalRelay(new LocalBus(log), db, log),
    db,
    log,
  );
}

/**
 * Messages of grouped background work (`Db.groupable`: the job loops, whose commits SQLite groups)
 * leave once the group is committed (`Db.afterCommit`), since a listener, in another process too,
 * reads the status or notification a message names. Other publishers' writes are committed already:
 * their messages leave at once.
 */
export class PublishAfterCommit implements EventBus {
  readonly #bus: EventBus;
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;
  /** Deferred messages being published (close() waits for them). */
  readonly #sending = new Set<Promise<void>>();

  constructor(bus: EventBus, db: Db, log: FastifyBaseLogger) {
    this.#bus = bus;
    this.#db = db;
    this.#log = log;
  }

  async publish(channel: string, message: BusMessage): Promise<void> {
    if (!this.#db.inGroupable()) return this.#bus.publish(channel, message);
    this.#db.afterCommit(() => {
      const sending = this.#bus
        .publish(channel, message)
        .catch((error: unknown) => this.#log.warn({ err: error, channel }, "could not publish a streaming event"))
        .finally(() => this.#sending.delete(sending));
      this.#sending.add(sending);
    });
  }

  subscribe(channel: string, listener: Listener): Promise<() => void> {
    return this.#bus.subscribe(channel, listener);
  }

  present(channels: readonly string[]): Promise<Set<string>> {
    return this.#bus.present(channels);
  }

  async close(): Promise<void> {
    await Promise.all(this.#sending);
    return this.#bus.close();
  }
}
