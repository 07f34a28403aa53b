/**
 * Fedify's `MessageQueue` on Rookery's job queue: one job per message (`federation.message`),
 * claimed exactly once across processes and kept across restarts, with Fedify's delay as the
 * job's `runAt` and its ordering key as the job's (so the activities about one object reach one
 * server in order). Fedify retries deliveries itself (`nativeRetrial` is false: its policy spreads
 * them over days); the job's own few attempts only cover a worker that died mid-message.
 */
import type { MessageQueue, MessageQueueEnqueueOptions, MessageQueueListenOptions } from "@fedify/fedify";
import { durationMs } from "./durations.ts";
import type { JobQueue } from "../jobs/queue.ts";

export const FEDERATION_JOB = "federation.message";

/** A crashed worker's message is tried again this many times in all. */
const ATTEMPTS = 3;

function runAtOf(options: MessageQueueEnqueueOptions | undefined, now = Date.now()): Date | undefined {
  if (!options?.delay) return undefined;
  const ms = durationMs(options.delay, now);
  if (ms < 0) throw new RangeError("a message's delay must not be negative");
  return new Date(now + ms);
}

export class JobMessageQueue implements MessageQueue {
  readonly nativeRetrial = false;
  readonly #jobs: JobQueue;

  constructor(jobs: JobQueue) {
    this.#jobs = jobs;
  }

  async enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    await this.#jobs.enqueue(FEDERATION_JOB, message, {
      runAt: runAtOf(options),
      orderingKey: options?.orderingKey,
      maxAttempts: ATTEMPTS,
    });
  }

  async enqueueMany(messages: readonly unknown[], options?: MessageQueueEnqueueOptions): Promise<void> {
    const runAt = runAtOf(options);
    await this.#jobs.enqueueAll(
      messages.map((message) => ({ name: FEDERATION_JOB, payload: message })),
      { runAt, orderingKey: options?.orderingKey, maxAttempts: ATTEMPTS },
    );
  }

  /**
   * Hands the messages to `handler` in this process's job workers (which run only where workers
   * are started) until `signal` aborts.
   */
  listen(handler: (message: unknown) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    this.#jobs.register(FEDERATION_JOB, async (payload) => {
      await handler(payload);
    });
    const signal = options?.signal;
    return new Promise((resolve) => {
      if (!signal) return;
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}
