import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { newId } from "../src/db/ids.ts";
import type { JobRow } from "../src/db/schema.ts";
import { JobQueue } from "../src/jobs/queue.ts";
import { createTestServer, createUser, eventually, testApplication, TEST_ENGINE, type TestServer } from "./kit.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A job name of its own per test, so tests never claim each other's jobs. */
const jobName = (label: string) => `test.${label}.${randomBytes(3).toString("hex")}`;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe(`job queue (${TEST_ENGINE})`, () => {
  let server: TestServer;
  const queues: JobQueue[] = [];
  /** A queue of its own on the server's database (the server's queue keeps only its built-in handlers). */
  const newQueue = () => {
    const queue = new JobQueue(server.ctx.db, server.ctx.log);
    queues.push(queue);
    return queue;
  };
  const jobsNamed = (name: string) =>
    server.ctx.db.kysely.selectFrom("jobs").selectAll().where("name", "=", name).orderBy("id").execute();
  const jobById = (id: string) =>
    server.ctx.db.kysely.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();

  before(async () => {
    server = await createTestServer();
  });
  after(async () => {
    for (const queue of queues) await queue.stop();
    await server.close();
  });

  test("drain runs an enqueued job once with its payload, then deletes it", async () => {
    const queue = newQueue();
    const name = jobName("echo");
    const calls: Array<[unknown, JobRow]> = [];
    queue.register(name, async (payload, job) => void calls.push([payload, job]));
    const id = await queue.enqueue(name, { statusId: "123", tags: ["a", "b"], n: 1 });
    const stored = await jobById(id);
    assert.ok(stored);
    assert.deepEqual([stored.attempts, stored.max_attempts, stored.failed_at, stored.locked_until], [0, 5, null, null]);

    assert.equal(await queue.drain(), 1);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0][0], { statusId: "123", tags: ["a", "b"], n: 1 });
    assert.equal(calls[0][1].id, id);
    assert.equal(calls[0][1].attempts, 1);
    assert.equal(await jobById(id), undefined);
    assert.equal(await queue.drain(), 0);
    assert.equal(calls.length, 1);

    // No payload is stored as null.
    await queue.enqueue(name, undefined);
    assert.equal(await queue.drain(), 1);
    assert.equal(calls[1][0], null);
  });

  test("a queue only claims jobs it has a handler for", async () => {
    const queue = newQueue();
    const name = jobName("unhandled");
    const id = await queue.enqueue(name, null);
    assert.equal(await queue.claim(), undefined);
    queue.register(jobName("other"), async () => {});
    assert.equal(await queue.claim(), undefined);
    assert.ok(await jobById(id));
    queue.register(name, async () => {});
    assert.equal((await queue.claim())?.id, id);
  });

  test("a job with runAt in the future is not claimed until it is due", async () => {
    const queue = newQueue();
    const name = jobName("later");
    const ran: unknown[] = [];
    queue.register(name, async (payload) => void ran.push(payload));
    const runAt = new Date(Date.now() + HOUR);
    const id = await queue.enqueue(name, "later", { runAt });
    assert.equal((await jobById(id))?.run_at, runAt.toISOString());

    assert.equal(await queue.claim(), undefined);
    assert.equal(await queue.claim(new Date(runAt.getTime() - 1000)), undefined);
    assert.equal(await queue.drain(), 0);
    assert.deepEqual(ran, []);

    const claimAt = new Date(runAt.getTime() + 1000);
    const job = await queue.claim(claimAt, 60_000);
    assert.ok(job);
    assert.equal(job.id, id);
    assert.equal(job.attempts, 1);
    assert.ok(job.locked_by);
    assert.equal(job.locked_until, new Date(claimAt.getTime() + 60_000).toISOString());

    // While the lease lasts nobody claims it again (not even another queue); once it runs out it is retried.
    const other = newQueue();
    other.register(name, async () => {});
    assert.equal(await other.claim(new Date(claimAt.getTime() + 30_000)), undefined);
    assert.equal(await queue.claim(new Date(claimAt.getTime() + 59_000)), undefined);
    const again = await other.claim(new Date(claimAt.getTime() + 61_000));
    assert.equal(again?.id, id);
    assert.equal(again?.attempts, 2);
    assert.notEqual(again?.locked_by, job.locked_by);
  });

  test("due jobs are claimed in run_at order", async () => {
    const queue = newQueue();
    const name = jobName("order");
    queue.register(name, async () => {});
    const now = Date.now();
    const late = await queue.enqueue(name, "late", { runAt: new Date(now - 1000) });
    const early = await queue.enqueue(name, "early", { runAt: new Date(now - 60_000) });
    const middle = await queue.enqueue(name, "middle", { runAt: new Date(now - 30_000) });
    const order = [(await queue.claim())?.id, (await queue.claim())?.id, (await queue.claim())?.id];
    assert.deepEqual(order, [early, middle, late]);
  });

  test("a failing job is retried with backoff and fails for good after max_attempts", async () => {
    const queue = newQueue();
    const name = jobName("fail");
    let calls = 0;
    queue.register(name, async () => {
      calls++;
      throw new Error(`boom ${calls}`);
    });
    const id = await queue.enqueue(name, null, { maxAttempts: 3 });

    const before = Date.now();
    assert.equal(await queue.drain(), 1, "the failed job is not retried at once");
    let row = await jobById(id);
    assert.ok(row);
    assert.equal(row.attempts, 1);
    assert.equal(row.last_error, "boom 1");
    assert.equal(row.failed_at, null);
    assert.equal(row.locked_until, null);
    assert.equal(row.locked_by, null);
    const delay = Date.parse(row.run_at) - before;
    assert.ok(delay >= 1900 && delay <= 4000, `first retry after ~2 s, got ${delay} ms`);

    assert.equal(await queue.claim(new Date(Date.parse(row.run_at) - 100)), undefined);
    const second = await queue.claim(new Date(Date.parse(row.run_at) + 1));
    assert.ok(second);
    const secondAt = Date.now();
    await queue.perform(second);
    row = await jobById(id);
    assert.ok(row);
    assert.equal(row.attempts, 2);
    assert.equal(row.last_error, "boom 2");
    assert.equal(row.failed_at, null);
    const secondDelay = Date.parse(row.run_at) - secondAt;
    assert.ok(secondDelay >= 3900 && secondDelay <= 6000, `second retry after ~4 s, got ${secondDelay} ms`);

    const future = () => new Date(Date.now() + DAY);
    assert.equal(await queue.drain(future), 1);
    row = await jobById(id);
    assert.ok(row);
    assert.equal(row.attempts, 3);
    assert.equal(row.last_error, "boom 3");
    assert.ok(row.failed_at, "failed_at is set after the last attempt");
    assert.equal(calls, 3);

    // A failed job stays for inspection and is never claimed again.
    assert.equal(await queue.claim(new Date(Date.now() + 365 * DAY)), undefined);
    assert.equal(await queue.drain(future), 0);
    assert.equal(calls, 3);
  });

  test("a job whose handler is missing at run time records the reason", async () => {
    const queue = newQueue();
    const name = jobName("vanished");
    queue.register(name, async () => {});
    const id = await queue.enqueue(name, null, { maxAttempts: 1 });
    const job = await queue.claim();
    assert.ok(job);
    const other = newQueue();
    await other.perform(job);
    const row = await jobById(id);
    assert.equal(row?.last_error, `no handler for job ${name}`);
    assert.ok(row?.failed_at);
  });

  test("concurrent claims never hand out the same job", async () => {
    const name = jobName("race");
    const claimers = Array.from({ length: 4 }, () => {
      const queue = newQueue();
      queue.register(name, async () => {});
      return queue;
    });
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add(await claimers[0].enqueue(name, i));
    assert.equal(ids.size, 20);

    const claimed: string[] = [];
    const owners = new Map<string, string | null>();
    for (let round = 0; round < 30; round++) {
      const jobs = await Promise.all(claimers.flatMap((queue) => [queue.claim(), queue.claim()]));
      const got = jobs.filter((job): job is JobRow => job !== undefined);
      for (const job of got) {
        claimed.push(job.id);
        owners.set(job.id, job.locked_by);
      }
      if (got.length === 0) break;
    }
    assert.equal(new Set(claimed).size, claimed.length, `a job was claimed twice: ${claimed.join(",")}`);
    assert.deepEqual(new Set(claimed), ids);
    // The database agrees: each job was claimed exactly once, by the queue that got it.
    for (const row of await jobsNamed(name)) {
      assert.equal(row.attempts, 1, row.id);
      assert.equal(row.locked_by, owners.get(row.id), row.id);
    }
  });

  test("concurrent drains run each job exactly once", async () => {
    const name = jobName("drains");
    const runs = new Map<number, number>();
    const drainers = Array.from({ length: 4 }, () => {
      const queue = newQueue();
      queue.register(name, async (payload) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        runs.set(payload as number, (runs.get(payload as number) ?? 0) + 1);
      });
      return queue;
    });
    for (let i = 0; i < 20; i++) await drainers[0].enqueue(name, i);
    const counts = await Promise.all(drainers.map((queue) => queue.drain()));
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      20,
    );
    assert.equal(runs.size, 20);
    assert.ok(
      [...runs.values()].every((n) => n === 1),
      JSON.stringify([...runs]),
    );
    assert.deepEqual(await jobsNamed(name), []);
  });

  test("a started worker runs enqueued jobs; stop() waits for the running handler", async () => {
    const queue = newQueue();
    const name = jobName("worker");
    const done: unknown[] = [];
    const started = deferred();
    const gate = deferred();
    const order: string[] = [];
    queue.register(name, async (payload) => {
      if (payload === "slow") {
        started.resolve();
        await gate.promise;
        order.push("handler finished");
      }
      done.push(payload);
    });
    await queue.start({ pollInterval: 50, concurrency: 2 });
    await queue.start(); // a second start is harmless

    const quick = await queue.enqueue(name, "quick");
    await eventually(async () => (await jobById(quick)) === undefined, "the worker to run the job");
    assert.deepEqual(done, ["quick"]);

    await queue.enqueue(name, "slow");
    await started.promise;
    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
      order.push("stop resolved");
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(stopped, false, "stop() waits for the running handler");
    gate.resolve();
    await stopping;
    assert.deepEqual(order, ["handler finished", "stop resolved"]);
    assert.deepEqual(done, ["quick", "slow"]);

    // A stopped worker claims nothing more.
    const left = await queue.enqueue(name, "after stop");
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(await jobById(left), "the job enqueued after stop() is still waiting");
    assert.deepEqual(done, ["quick", "slow"]);
  });

  test("a name's concurrency caps how many of its jobs one process runs at once; other jobs still run", async () => {
    const queue = newQueue();
    const slow = jobName("capped");
    const other = jobName("other");
    let running = 0;
    let most = 0;
    const ran: string[] = [];
    queue.register(
      slow,
      async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 150));
        running--;
      },
      { concurrency: 1 },
    );
    queue.register(other, async (payload) => void ran.push(String(payload)));
    for (let i = 0; i < 3; i++) await queue.enqueue(slow, i);
    await queue.start({ pollInterval: 20, concurrency: 2 });
    await queue.enqueue(other, "meanwhile");
    await eventually(async () => ran.length === 1, "the other job to run beside the capped one", 2000);
    await eventually(async () => (await jobsNamed(slow)).length === 0, "the capped jobs to finish");
    assert.equal(most, 1);
    await queue.stop();
  });

  test("jobs sharing an ordering key run one at a time in order; other keys and unkeyed jobs do not wait", async () => {
    const queue = newQueue();
    const name = jobName("ordered");
    const events: string[] = [];
    let running = 0;
    let most = 0;
    queue.register(name, async (payload) => {
      const { key, n } = payload as { key: string; n: number };
      running++;
      most = Math.max(most, running);
      events.push(`start ${key}${n}`);
      await new Promise((resolve) => setTimeout(resolve, key === "a" ? 60 : 5));
      events.push(`end ${key}${n}`);
      running--;
    });
    for (let n = 1; n <= 3; n++) await queue.enqueue(name, { key: "a", n }, { orderingKey: "inbox.a" });
    await queue.enqueue(name, { key: "b", n: 1 }, { orderingKey: "inbox.b" });
    await queue.enqueue(name, { key: "u", n: 1 });
    await queue.start({ pollInterval: 10, concurrency: 3 });
    await eventually(async () => (await jobsNamed(name)).length === 0, "every ordered job to finish");
    await queue.stop();
    const ofA = events.filter((e) => e.endsWith("a1") || e.endsWith("a2") || e.endsWith("a3"));
    assert.deepEqual(ofA, ["start a1", "end a1", "start a2", "end a2", "start a3", "end a3"]);
    // b and the unkeyed job ran beside a's first job, not after all of a.
    assert.ok(events.indexOf("end b1") < events.indexOf("end a1"), events.join(", "));
    assert.ok(events.indexOf("end u1") < events.indexOf("end a1"), events.join(", "));
    assert.ok(most >= 2);
  });

  test("a claim finds the runnable job behind pages of waiting jobs it may not run (held by a key, running, another queue's)", async () => {
    const queue = newQueue();
    const name = jobName("deep");
    queue.register(name, async () => {});
    const earlier = new Date(Date.now() - 60_000);
    const head = await queue.enqueue(name, "head", { orderingKey: "deep", runAt: earlier });
    const claimedHead = await queue.claim();
    assert.equal(claimedHead?.id, head, "the head of the key runs");
    // Older than the runnable job, so they come first in the walk: 70 held behind the head…
    for (let n = 0; n < 70; n++) await queue.enqueue(name, `held ${n}`, { orderingKey: "deep", runAt: earlier });
    // …40 another process's queue handles…
    for (let n = 0; n < 40; n++) await queue.enqueue(jobName("other"), n, { runAt: earlier });
    const runnable = await queue.enqueue(name, "free");
    const claimed = await queue.claim();
    assert.equal(claimed?.id, runnable);
    assert.equal(claimed?.payload, JSON.stringify("free"));
    assert.equal(await queue.claim(), undefined, "nothing else may run while the head runs");
  });

  test("a retrying job holds back the later jobs of its key until it succeeds or fails for good", async () => {
    const queue = newQueue();
    const name = jobName("orderedfail");
    const ran: string[] = [];
    queue.register(name, async (payload) => {
      ran.push(String(payload));
      if (payload === "first") throw new Error("the first one fails");
    });
    await queue.enqueue(name, "first", { orderingKey: "k", maxAttempts: 2 });
    await queue.enqueue(name, "second", { orderingKey: "k" });
    const future = (ms: number) => () => new Date(Date.now() + ms);
    assert.equal(await queue.drain(), 1, "only the first runs; the second waits behind it");
    assert.deepEqual(ran, ["first"]);
    await queue.drain(future(DAY));
    assert.deepEqual(ran, ["first", "first", "second"], "after the first failed for good, the second runs");
  });

  test("a long-running job keeps its lease past its length; others' leases are not extended", async () => {
    const queue = newQueue();
    const long = jobName("long");
    const short = jobName("hung");
    const gate = deferred();
    const claimedTwice: string[] = [];
    queue.register(long, async () => gate.promise, { longRunning: true });
    queue.register(short, async () => gate.promise);
    const longId = await queue.enqueue(long, null);
    const shortId = await queue.enqueue(short, null);
    await queue.start({ pollInterval: 20, concurrency: 2, leaseMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 900));
    // A second queue sees the hung job's lease expired, never the long one's.
    const other = newQueue();
    other.register(long, async () => void claimedTwice.push("long"));
    other.register(short, async () => void claimedTwice.push("short"));
    const claimed = await other.claim();
    assert.equal(claimed?.id, shortId);
    assert.notEqual(claimed?.id, longId);
    assert.ok(new Date((await jobById(longId))!.locked_until!).getTime() > Date.now());
    gate.resolve();
    await queue.stop();
  });

  test("stop() signals shutdown to running handlers", async () => {
    const queue = newQueue();
    const name = jobName("shutdown");
    const started = deferred();
    let aborted = false;
    queue.register(name, async (_payload, _job, _now, shutdown) => {
      started.resolve();
      await new Promise<void>((resolve) => shutdown.addEventListener("abort", () => resolve(), { once: true }));
      aborted = shutdown.aborted;
      throw new Error("gave up for the shutdown");
    });
    const id = await queue.enqueue(name, null);
    await queue.start({ pollInterval: 20 });
    await started.promise;
    await queue.stop();
    assert.equal(aborted, true);
    const job = await jobById(id);
    assert.ok(job && job.failed_at === null, "the job stays, to run again after the restart");
  });

  test("a job whose every attempt died with its worker is not claimed again; failExhausted records it", async () => {
    const queue = newQueue();
    const name = jobName("crashing");
    queue.register(name, async () => {});
    const id = await queue.enqueue(name, null, { maxAttempts: 2 });
    // Two claims whose workers never reported back (their leases ran out).
    for (let i = 0; i < 2; i++) {
      const claimed = await queue.claim(new Date(), 1);
      assert.equal(claimed?.id, id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(await queue.claim(), undefined);
    assert.equal(await queue.failExhausted(), 1);
    const job = await jobById(id);
    assert.ok(job?.failed_at);
    assert.match(String(job?.last_error), /worker stopped/);
  });

  test("a started worker wakes up for a job that becomes due, and for enqueues at once", async () => {
    const queue = newQueue();
    const name = jobName("wake");
    const ran: number[] = [];
    queue.register(name, async () => void ran.push(Date.now()));
    // A long poll interval: only the enqueue wake-up can make the job run quickly.
    await queue.start({ pollInterval: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const enqueuedAt = Date.now();
    await queue.enqueue(name, null);
    await eventually(async () => ran.length === 1, "the woken worker to run the job", 3000);
    assert.ok(ran[0] - enqueuedAt < 2000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopAt = Date.now();
    await queue.stop();
    assert.ok(Date.now() - stopAt < 1000, "stop() does not wait out the poll interval of a sleeping worker");
  });

  test("stop() right after start() does not wait out the poll interval", {}, async () => {
    const queue = newQueue();
    const name = jobName("quickstop");
    queue.register(name, async () => {});
    await queue.start({ pollInterval: 60_000 });
    const stopAt = Date.now();
    const stopped = queue.stop().then(() => true);
    const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), 2000));
    const inTime = await Promise.race([stopped, timedOut]);
    if (!inTime) {
      // Release the sleeping loops (enqueue wakes them) so the suite does not wait a minute.
      await queue.enqueue(name, null);
      await stopped;
    }
    assert.ok(inTime, `stop() took ${Date.now() - stopAt} ms`);
  });

  test("recurring jobs: one pending run even when scheduled twice, and the next run after each", async () => {
    const queue = newQueue();
    const name = jobName("tick");
    let ticks = 0;
    queue.register(name, async () => void ticks++);
    queue.recurring(name, 10 * 60_000);
    await queue.scheduleRecurring();
    await queue.scheduleRecurring();
    let pending = await jobsNamed(name);
    assert.equal(pending.length, 1);
    assert.ok(Date.parse(pending[0].run_at) <= Date.now(), "the first run is due at once");

    assert.equal(await queue.drain(), 1);
    assert.equal(ticks, 1);
    pending = await jobsNamed(name);
    assert.equal(pending.length, 1, "the next run is scheduled");
    const next = Date.parse(pending[0].run_at) - Date.now();
    assert.ok(next > 9 * 60_000 && next <= 10 * 60_000, `next run in ~10 min, got ${next} ms`);
    assert.equal(await queue.drain(), 0, "the next run is not due yet");

    await queue.scheduleRecurring();
    assert.equal((await jobsNamed(name)).length, 1);

    // start() schedules the recurring jobs too, without a duplicate.
    await queue.start({ pollInterval: 100 });
    await queue.stop();
    assert.equal((await jobsNamed(name)).length, 1);
  });

  test("recurring jobs: two workers starting at the same time schedule one run", {}, async () => {
    const name = jobName("together");
    const [a, b] = [newQueue(), newQueue()];
    for (const queue of [a, b]) {
      queue.register(name, async () => {});
      queue.recurring(name, 60_000);
    }
    await Promise.all([a.scheduleRecurring(), b.scheduleRecurring()]);
    assert.equal((await jobsNamed(name)).length, 1);
  });

  test("a recurring job that failed for good is scheduled afresh", async () => {
    const queue = newQueue();
    const name = jobName("broken");
    queue.register(name, async () => {
      throw new Error("always");
    });
    queue.recurring(name, 60_000);
    const id = await queue.enqueue(name, null, { maxAttempts: 1 });
    assert.equal(await queue.drain(), 1);
    assert.ok((await jobById(id))?.failed_at);
    await queue.scheduleRecurring();
    const rows = await jobsNamed(name);
    assert.equal(rows.length, 2);
    assert.equal(rows.filter((r) => r.failed_at === null).length, 1);
  });

  test("maintenance.prune deletes expired authorization codes and long-failed jobs, keeps fresh ones, and reschedules itself", async () => {
    const { ctx } = server;
    const application = await testApplication(ctx);
    const { user } = await createUser(ctx, "pruned");
    const now = Date.now();
    const grant = async (label: string, expiresAt: number) => {
      const id = newId();
      await ctx.db.kysely
        .insertInto("oauth_access_grants")
        .values({
          id,
          code_digest: `${label}-${randomBytes(8).toString("hex")}`,
          application_id: application.id,
          user_id: user.id,
          redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
          scopes: "read",
          expires_at: new Date(expiresAt).toISOString(),
          created_at: new Date(expiresAt - 600_000).toISOString(),
        })
        .execute();
      return id;
    };
    const expired = await grant("expired", now - 2 * DAY);
    const recentlyExpired = await grant("recent", now - HOUR);
    const fresh = await grant("fresh", now + 10 * 60_000);

    const failedJob = async (label: string, failedAt: number) => {
      const id = newId();
      await ctx.db.kysely
        .insertInto("jobs")
        .values({
          id,
          name: jobName(label),
          payload: "null",
          run_at: new Date(failedAt).toISOString(),
          attempts: 5,
          max_attempts: 5,
          failed_at: new Date(failedAt).toISOString(),
          created_at: new Date(failedAt).toISOString(),
        })
        .execute();
      return id;
    };
    const oldFailure = await failedJob("old-failure", now - 31 * DAY);
    const recentFailure = await failedJob("recent-failure", now - DAY);

    await ctx.jobs.enqueue("maintenance.prune", null);
    assert.equal(await ctx.jobs.drain(), 1);

    const grants = await ctx.db.kysely.selectFrom("oauth_access_grants").select("id").execute();
    const grantIds = new Set(grants.map((g) => g.id));
    assert.equal(grantIds.has(expired), false, "a code expired two days ago is deleted");
    assert.equal(grantIds.has(recentlyExpired), true, "a code expired an hour ago is kept (a day of grace)");
    assert.equal(grantIds.has(fresh), true, "an unexpired code is kept");
    assert.equal(await jobById(oldFailure), undefined, "a job failed 31 days ago is deleted");
    assert.ok(await jobById(recentFailure), "a job failed yesterday is kept");

    const next = await jobsNamed("maintenance.prune");
    assert.equal(next.length, 1, "the next maintenance run is scheduled");
    const inMs = Date.parse(next[0].run_at) - Date.now();
    assert.ok(inMs > 5 * HOUR && inMs <= 6 * HOUR, `next maintenance in ~6 h, got ${inMs} ms`);
  });
});
