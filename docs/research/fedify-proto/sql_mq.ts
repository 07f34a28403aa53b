// Fedify MessageQueue over one SQL table with ordering keys (SQLite and PostgreSQL via Kysely).
// At-least-once: a claimed message is leased, handled, then deleted; a crashed worker's lease
// expires and another process takes it. Same ordering key => only the oldest message is claimable.
//   SQLite: CREATE TABLE federation_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL,
//     message TEXT NOT NULL, ordering_key TEXT, run_at INTEGER NOT NULL, locked_until INTEGER,
//     locked_by TEXT, attempts INTEGER NOT NULL DEFAULT 0);
//   PostgreSQL: seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_at/locked_until BIGINT.
//   CREATE INDEX … (queue, run_at); CREATE INDEX … (ordering_key, seq) WHERE ordering_key IS NOT NULL;
import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "/work/main/node_modules/kysely/dist/index.js";
import type { MessageQueue, MessageQueueEnqueueOptions, MessageQueueListenOptions } from "@fedify/fedify";

type Engine = "sqlite" | "postgres";
const wakeups = new EventTarget(); // same-process wake-up; other processes poll
const delayMs = (o?: MessageQueueEnqueueOptions) => Math.max(0, o?.delay?.total({ unit: "millisecond" }) ?? 0);

export class SqlMessageQueue implements MessageQueue {
  readonly nativeRetrial = false;
  readonly #db: Kysely<any>; readonly #engine: Engine; readonly #queue: string;
  readonly #workers: number; readonly #pollMs: number; readonly #leaseMs: number; readonly #me = randomUUID();
  constructor(db: Kysely<any>, engine: Engine, queue: "inbox" | "outbox" | "fanout", o: { workers?: number; pollMs?: number; leaseMs?: number } = {}) {
    this.#db = db; this.#engine = engine; this.#queue = queue;
    this.#workers = o.workers ?? 4; this.#pollMs = o.pollMs ?? 1000; this.#leaseMs = o.leaseMs ?? 5 * 60_000;
  }
  enqueue(message: any, options?: MessageQueueEnqueueOptions) { return this.enqueueMany([message], options); }
  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
    if (messages.length === 0) return;
    const runAt = Date.now() + delayMs(options);
    await this.#db.insertInto("federation_messages").values(messages.map((m) => ({
      queue: this.#queue, message: JSON.stringify(m), ordering_key: options?.orderingKey ?? null, run_at: runAt,
    }))).execute();
    wakeups.dispatchEvent(new Event(this.#queue));
  }
  async #claim(): Promise<{ seq: unknown; message: string } | undefined> {
    const now = Date.now();
    const lockClause = this.#engine === "postgres" ? sql`FOR UPDATE SKIP LOCKED` : sql``;
    const r = await sql<{ seq: unknown; message: string }>`
      UPDATE federation_messages SET locked_until = ${now + this.#leaseMs}, locked_by = ${this.#me}, attempts = attempts + 1
      WHERE seq IN (
        SELECT m.seq FROM federation_messages m
        WHERE m.queue = ${this.#queue} AND m.run_at <= ${now}
          AND (m.locked_until IS NULL OR m.locked_until < ${now})
          AND (m.ordering_key IS NULL OR NOT EXISTS (
            SELECT 1 FROM federation_messages o
            WHERE o.queue = m.queue AND o.ordering_key = m.ordering_key AND o.seq < m.seq))
        ORDER BY m.run_at, m.seq LIMIT 1 ${lockClause})
      RETURNING seq, message`.execute(this.#db);
    return r.rows[0];
  }
  async listen(handler: (message: any) => Promise<void> | void, options: MessageQueueListenOptions = {}): Promise<void> {
    const { signal } = options;
    let wake: (() => void) | undefined;
    const onWake = () => wake?.();
    wakeups.addEventListener(this.#queue, onWake);
    signal?.addEventListener("abort", onWake, { once: true });
    const loop = async () => {
      while (!signal?.aborted) {
        const row = await this.#claim().catch(() => undefined);
        if (!row) {
          await new Promise<void>((resolve) => { const t = setTimeout(resolve, this.#pollMs); wake = () => { clearTimeout(t); resolve(); }; });
          continue;
        }
        try {
          await handler(JSON.parse(row.message));
          await this.#db.deleteFrom("federation_messages").where("seq", "=", row.seq as any).where("locked_by", "=", this.#me).execute();
        } catch {
          // Unexpected error (Fedify already retries deliveries itself): release with a short backoff.
          await this.#db.updateTable("federation_messages")
            .set({ locked_until: null, locked_by: null, run_at: Date.now() + 30_000 })
            .where("seq", "=", row.seq as any).execute();
        }
      }
    };
    await Promise.all(Array.from({ length: this.#workers }, loop)); // in-flight handlers finish first
    wakeups.removeEventListener(this.#queue, onWake);
  }
}
