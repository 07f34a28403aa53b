import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { defaultProgramLimit, ProgramsBusy, ProgramSlots } from "./program_slots.ts";

/** Whether a promise has settled, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("ProgramSlots", () => {
  test("the default limit: two on one or two cores, one per core above, at most eight", () => {
    assert.deepEqual([1, 2, 3, 4, 8, 16, 64].map(defaultProgramLimit), [2, 2, 3, 4, 8, 8, 8]);
    const slots = new ProgramSlots({ limit: 2 });
    assert.deepEqual([slots.limit, slots.queue, slots.waitMs], [2, 8, 30_000]);
  });

  test("at most `limit` slots at once; a slot given back goes to the first waiter", async () => {
    const slots = new ProgramSlots({ limit: 2, queue: 4 });
    const first = await slots.take();
    const second = await slots.take();
    assert.equal(slots.running, 2);
    const third = slots.take();
    const fourth = slots.take();
    assert.equal(await settled(third), false);
    assert.equal(slots.waiting, 2);
    first();
    const releaseThird = await third;
    assert.equal(await settled(fourth), false, "the fourth still waits: the third came first");
    assert.deepEqual([slots.running, slots.waiting], [2, 1]);
    second();
    (await fourth)();
    releaseThird();
    assert.deepEqual([slots.running, slots.waiting], [0, 0]);
  });

  test("giving a slot back twice frees it once", async () => {
    const slots = new ProgramSlots({ limit: 1 });
    const release = await slots.take();
    release();
    const again = await slots.take();
    release();
    assert.equal(slots.running, 1);
    again();
    assert.equal(slots.running, 0);
  });

  test("a request finding the queue full is refused at once with ProgramsBusy and its Retry-After", async () => {
    const slots = new ProgramSlots({ limit: 1, queue: 2, retryAfterSeconds: 7 });
    const held = await slots.take();
    const waiting = [slots.take(), slots.take()];
    await assert.rejects(
      slots.take(),
      (error: Error) => error instanceof ProgramsBusy && error.retryAfterSeconds === 7,
    );
    assert.equal(slots.waiting, 2);
    held();
    (await waiting[0])();
    (await waiting[1])();
    assert.equal(slots.running, 0);
  });

  test("a request waiting past waitMs is refused and leaves the queue", async () => {
    const slots = new ProgramSlots({ limit: 1, queue: 4, waitMs: 20 });
    const held = await slots.take();
    await assert.rejects(slots.take(), ProgramsBusy);
    assert.equal(slots.waiting, 0);
    held();
    assert.equal(slots.running, 0);
  });

  test("a waiter whose signal fires leaves the queue with its reason; the slot goes to the next", async () => {
    const slots = new ProgramSlots({ limit: 1, queue: 4 });
    const held = await slots.take();
    const hangUp = new AbortController();
    const gone = slots.take({ signal: hangUp.signal });
    const next = slots.take();
    hangUp.abort(new Error("client gone"));
    await assert.rejects(gone, /client gone/);
    assert.equal(slots.waiting, 1);
    held();
    (await next)();
    assert.deepEqual([slots.running, slots.waiting], [0, 0]);
  });

  test("a signal that fired already takes no slot", async () => {
    const slots = new ProgramSlots({ limit: 1 });
    await assert.rejects(slots.take({ signal: AbortSignal.abort(new Error("stopped")) }), /stopped/);
    assert.equal(slots.running, 0);
  });

  test("background work is never refused nor timed out, and leaves a slot to requests", async () => {
    const slots = new ProgramSlots({ limit: 2, queue: 0, waitMs: 10 });
    const conversion = await slots.take({ background: true });
    // The second slot is free, but background work may hold only one of two.
    const probe = slots.take({ background: true });
    const request = await slots.take();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(await settled(probe), false, "still waiting, past waitMs and with no queue for requests");
    await assert.rejects(slots.take(), ProgramsBusy, "the queue (of requests) is full at 0");
    request();
    assert.equal(await settled(probe), false, "a free slot, but background work holds its share");
    conversion();
    (await probe)();
    assert.deepEqual([slots.running, slots.waiting], [0, 0]);
  });

  test("a request behind waiting background work takes a slot background work may not", async () => {
    const slots = new ProgramSlots({ limit: 3, queue: 4 });
    const conversions = [await slots.take({ background: true }), await slots.take({ background: true })];
    const request = await slots.take();
    const background = slots.take({ background: true });
    const nextRequest = slots.take();
    request();
    (await nextRequest)();
    assert.equal(await settled(background), false);
    conversions[0]();
    (await background)();
    conversions[1]();
    assert.deepEqual([slots.running, slots.waiting], [0, 0]);
  });

  test("with a limit of one, background work and requests share the slot in turn", async () => {
    const slots = new ProgramSlots({ limit: 1, queue: 4 });
    assert.equal(slots.backgroundLimit, 1);
    const request = await slots.take();
    const background = slots.take({ background: true });
    const nextRequest = slots.take();
    request();
    const releaseBackground = await background;
    assert.equal(await settled(nextRequest), false);
    releaseBackground();
    (await nextRequest)();
    assert.equal(slots.running, 0);
  });

  test("a limit below one or a negative queue is a mistake", () => {
    assert.throws(() => new ProgramSlots({ limit: 0 }), RangeError);
    assert.throws(() => new ProgramSlots({ limit: 1.5 }), RangeError);
    assert.throws(() => new ProgramSlots({ queue: -1 }), RangeError);
  });
});
