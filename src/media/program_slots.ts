/**
 * How many ffmpeg and ffprobe programs one process runs at once. Each takes tens to hundreds of
 * megabytes and a core, and uploads arrive in bursts (24 parallel video uploads once ran 18
 * programs and 940 MB), so every run takes a slot first (`runTool` does) and gives it back when
 * the program has exited.
 *
 * Policy, by who is waiting:
 * - A request (an upload's ffprobe, with its client waiting) waits in a short queue; when the queue
 *   is full, or the wait passes `waitMs`, it is refused with `ProgramsBusy` (the upload answers 503
 *   with Retry-After). A client that hangs up leaves the queue.
 * - Background work (a conversion in a job) is never refused: it waits as long as it takes, in the
 *   same first-come order, and holds at most `limit - 1` slots (all of them only when `limit` is 1),
 *   so a long conversion cannot keep every request waiting until it is refused.
 * Nobody holds a slot while waiting for another, so waiting never deadlocks.
 */
import { availableParallelism } from "node:os";

/** Two programs at once on one or two cores, one per core above that, at most eight. */
export function defaultProgramLimit(cores = availableParallelism()): number {
  return Math.min(8, Math.max(2, cores));
}

export interface SlotLimits {
  /** Programs that may run at once. */
  limit: number;
  /** Requests that may wait for a slot; the next one is refused at once. Background work is not counted. */
  queue: number;
  /** How long a request waits for a slot before it is refused. */
  waitMs: number;
  /** The Retry-After a refusal suggests, in seconds. */
  retryAfterSeconds: number;
}

/** Too many programs run and too many requests wait for one already; try again later. */
export class ProgramsBusy extends Error {
  override name = "ProgramsBusy";
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface TakeOptions {
  /** Work for a job, not a waiting client: never refused, never timed out. */
  background?: boolean;
  /** Leaves the queue when it fires (a client hanging up, workers shutting down); rejects with its reason. */
  signal?: AbortSignal;
}

interface Waiter {
  background: boolean;
  grant: (release: () => void) => void;
  /** Removes the waiter's timer and abort listener. */
  forget: () => void;
}

export class ProgramSlots {
  readonly limit: number;
  readonly queue: number;
  readonly waitMs: number;
  readonly retryAfterSeconds: number;
  /** The most slots background work may hold at once. */
  readonly backgroundLimit: number;
  #held = 0;
  #heldBackground = 0;
  readonly #waiters: Waiter[] = [];

  constructor(limits: Partial<SlotLimits> = {}) {
    this.limit = limits.limit ?? defaultProgramLimit();
    this.queue = limits.queue ?? this.limit * 4;
    this.waitMs = limits.waitMs ?? 30_000;
    this.retryAfterSeconds = limits.retryAfterSeconds ?? 10;
    if (!Number.isInteger(this.limit) || this.limit < 1) throw new RangeError("limit must be a whole number above 0");
    if (!Number.isInteger(this.queue) || this.queue < 0) throw new RangeError("queue must be a whole number");
    this.backgroundLimit = Math.max(1, this.limit - 1);
  }

  /** Slots held now. */
  get running(): number {
    return this.#held;
  }

  /** Requests and background work waiting for a slot now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Waits for a slot and answers the function that gives it back (calling it again does nothing).
   * Throws ProgramsBusy for a request that cannot wait, and the signal's reason when it fires first.
   */
  take(options: TakeOptions = {}): Promise<() => void> {
    const background = options.background ?? false;
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.#held < this.limit && this.#fits(background)) return Promise.resolve(this.#grant(background));
    if (!background && this.#waiters.filter((w) => !w.background).length >= this.queue)
      return Promise.reject(
        new ProgramsBusy(
          `${this.#held} programs run and ${this.queue} requests wait for one already`,
          this.retryAfterSeconds,
        ),
      );
    return new Promise((resolve, reject) => {
      const leave = (error: Error) => {
        const index = this.#waiters.indexOf(waiter);
        if (index < 0) return;
        this.#waiters.splice(index, 1);
        waiter.forget();
        reject(error);
      };
      const onAbort = () => leave(signal!.reason as Error);
      const timer = background
        ? undefined
        : setTimeout(
            () => leave(new ProgramsBusy(`no program slot came free within ${this.waitMs} ms`, this.retryAfterSeconds)),
            this.waitMs,
          );
      const waiter: Waiter = {
        background,
        grant: resolve,
        forget: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #fits(background: boolean): boolean {
    return !background || this.#heldBackground < this.backgroundLimit;
  }

  #grant(background: boolean): () => void {
    this.#held++;
    if (background) this.#heldBackground++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      if (background) this.#heldBackground--;
      this.#handOn();
    };
  }

  /** Gives free slots to the first waiters that may take them, in the order they came. */
  #handOn(): void {
    while (this.#held < this.limit) {
      const index = this.#waiters.findIndex((w) => this.#fits(w.background));
      if (index < 0) return;
      const [waiter] = this.#waiters.splice(index, 1);
      waiter.forget();
      waiter.grant(this.#grant(waiter.background));
    }
  }
}
