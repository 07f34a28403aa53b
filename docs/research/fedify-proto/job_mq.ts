// Fedify MessageQueue over Rookery's durable JobQueue (src/jobs/queue.ts): jobs named
// "federation.inbox" / "federation.outbox" / "federation.fanout", claimed once across processes
// (lease + heartbeat), surviving restarts. Fedify does its own delivery retries by re-enqueueing
// with a delay (nativeRetrial = false), so a job fails only on unexpected errors.
import type { MessageQueue, MessageQueueEnqueueOptions, MessageQueueListenOptions } from "@fedify/fedify";
import type { JobQueue } from "/work/main/src/jobs/queue.ts";

export type FederationQueueName = "federation.inbox" | "federation.outbox" | "federation.fanout";
const delayMs = (o?: MessageQueueEnqueueOptions) => Math.max(0, o?.delay?.total({ unit: "millisecond" }) ?? 0);

export class JobMessageQueue implements MessageQueue {
  readonly nativeRetrial = false;
  readonly #jobs: JobQueue;
  readonly #name: FederationQueueName;
  readonly #concurrency: number;
  constructor(jobs: JobQueue, name: FederationQueueName, concurrency = 8) {
    this.#jobs = jobs; this.#name = name; this.#concurrency = concurrency;
  }
  async enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    // options.orderingKey: needs an ordering_key column in `jobs` (see REPORT §1.4); ignored here.
    await this.#jobs.enqueue(this.#name, message, { runAt: new Date(Date.now() + delayMs(options)), maxAttempts: 3 });
  }
  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
    // In Rookery: one transaction with enqueueWith(tx, …) per message, then jobs.wake().
    for (const m of messages) await this.enqueue(m, options);
  }
  /** Registers the handler; the JobQueue's own workers (started by the worker role) run it. */
  listen(handler: (message: any) => Promise<void> | void, options: MessageQueueListenOptions = {}): Promise<void> {
    this.#jobs.register(this.#name, async (payload) => { await handler(payload); }, { concurrency: this.#concurrency });
    const { signal } = options;
    return new Promise<void>((resolve) => {
      if (signal == null) return; // never resolves, as the interface says
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}
