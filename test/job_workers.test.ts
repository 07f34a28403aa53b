/**
 * Job workers' heartbeats: a live process releases at once the jobs held by a worker that is gone
 * (its heartbeat late, or its process dead on this host), never those of a live one; and the
 * release reads `jobs` through its `locked_by` index only.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { after, afterEach, before, describe, test } from "node:test";
import { CompiledQuery, sql, type LogEvent } from "kysely";
import { pino } from "pino";
import { newId } from "../src/db/ids.ts";
import type { JobRow } from "../src/db/schema.ts";
import { JobQueue } from "../src/jobs/queue.ts";
import { createTestServer, eventually, TEST_ENGINE, type TestServer } from "./kit.ts";

const MINUTE = 60_000;
/** The default heartbeat interval: a worker is gone when its heartbeat is three of them old. */
const HEARTBEAT_MS = 5_000;
const RELEASED = "released the jobs of job workers that are gone";
const TAKEN_FOR_GONE =
  "this process's job workers missed their heartbeats and were taken for gone: their jobs may run twice";

/** A job name of its own per test, so tests never claim each other's jobs. */
const jobName = (label: string) => `test.${label}.${randomBytes(3).toString("hex")}`;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a failure naming `what` after `ms` (a test that waits never hangs). */
async function within<T>(promise: Promise<T>, what: string, ms = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function pidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

type LogLine = Record<string, unknown> & { msg: string; level: number };

/** A logger that keeps its lines, to check what the queue says. */
function recordingLog() {
  const lines: LogLine[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { log, lines };
}

describe(`job workers' heartbeats (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let queues: JobQueue[] = [];
  /** A PID no process has any more, and one that another program holds. */
  let deadPid: number;
  let otherProgram: ChildProcess;
  const namespace = pidNamespace();
  const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

  const db = () => server.ctx.db.kysely;
  const newQueue = (log = server.ctx.log) => {
    const queue = new JobQueue(server.ctx.db, log);
    queues.push(queue);
    return queue;
  };
  const jobById = (id: string) => db().selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
  const workerRows = () => db().selectFrom("job_workers").selectAll().orderBy("started_at").execute();

  /** A worker row as another process would have written it. */
  async function forgeWorker(
    options: {
      host?: string;
      pid?: number;
      pidNamespace?: string | null;
      bootId?: string | null;
      heartbeatAgoMs?: number;
    } = {},
  ): Promise<string> {
    const id = randomUUID();
    await db()
      .insertInto("job_workers")
      .values({
        id,
        host: options.host ?? hostname(),
        pid: options.pid ?? deadPid,
        pid_namespace: options.pidNamespace === undefined ? namespace : options.pidNamespace,
        boot_id: options.bootId === undefined ? bootId : options.bootId,
        started_at: new Date(Date.now() - 10 * MINUTE).toISOString(),
        heartbeat_at: new Date(Date.now() - (options.heartbeatAgoMs ?? 0)).toISOString(),
      })
      .execute();
    return id;
  }

  /** A job `workerId` claimed (one attempt used) with a lease that has minutes to run. */
  async function heldJob(workerId: string, name: string, attempts = 1, maxAttempts = 5): Promise<string> {
    const id = newId();
    await db()
      .insertInto("jobs")
      .values({
        id,
        name,
        payload: "null",
        run_at: new Date(Date.now() - 1000).toISOString(),
        attempts,
        max_attempts: maxAttempts,
        locked_until: new Date(Date.now() + 5 * MINUTE).toISOString(),
        locked_by: workerId,
        created_at: new Date().toISOString(),
      })
      .execute();
    return id;
  }

  /** A queue with a handler for `name` that records the jobs it runs. */
  function runner(name: string, log = server.ctx.log) {
    const queue = newQueue(log);
    const ran: JobRow[] = [];
    queue.register(name, async (_payload, job) => void ran.push(job));
    return { queue, ran };
  }

  before(async () => {
    server = await createTestServer();
    deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    otherProgram = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { stdio: "ignore" });
  });
  afterEach(async () => {
    for (const queue of queues) await queue.stop();
    queues = [];
    await db().deleteFrom("job_workers").execute();
  });
  after(async () => {
    otherProgram.kill("SIGKILL");
    await server.close();
  });

  test("a started worker keeps a row with its host, PID and heartbeat; stop() removes it", async () => {
    const queue = newQueue();
    await queue.start({ pollInterval: 20, heartbeatMs: 50 });
    const [row] = await workerRows();
    assert.ok(row);
    assert.deepEqual([row.host, row.pid, row.pid_namespace], [hostname(), process.pid, namespace]);
    assert.ok(Math.abs(Date.parse(row.heartbeat_at) - Date.now()) < 2000, row.heartbeat_at);
    await eventually(
      async () => (await workerRows())[0]?.heartbeat_at > row.heartbeat_at,
      "the heartbeat to be refreshed",
    );
    await queue.stop();
    assert.deepEqual(await workerRows(), []);
  });

  test("a worker whose heartbeat is three intervals old is gone: a starting worker runs its job at once", async () => {
    const name = jobName("late");
    const gone = await forgeWorker({ host: "elsewhere.example", heartbeatAgoMs: 3 * HEARTBEAT_MS + 1000 });
    const id = await heldJob(gone, name);
    const { log, lines } = recordingLog();
    const { queue, ran } = runner(name, log);
    const startedAt = Date.now();
    await queue.start({ pollInterval: 60_000 });
    await eventually(async () => ran.length === 1, "the released job to run");
    assert.ok(Date.now() - startedAt < 2000, "at once, not after the lease");
    assert.equal(ran[0].id, id);
    // The attempt the dead worker used stays counted, as when a lease runs out.
    assert.equal(ran[0].attempts, 2);
    await eventually(async () => (await jobById(id)) === undefined, "the job to be deleted once done");
    assert.deepEqual(
      (await workerRows()).map((w) => w.pid),
      [process.pid],
      "the gone worker's row is removed",
    );
    const line = lines.find((l) => l.msg === RELEASED);
    assert.ok(line, JSON.stringify(lines));
    assert.equal(line.jobs, 1);
    assert.deepEqual(line.workers, [{ id: gone, host: "elsewhere.example", pid: deadPid }]);
  });

  test("a heartbeat two intervals old is not late: its worker's jobs stay held", async () => {
    const name = jobName("recent");
    const alive = await forgeWorker({ host: "elsewhere.example", heartbeatAgoMs: 2 * HEARTBEAT_MS });
    const id = await heldJob(alive, name);
    const { queue, ran } = runner(name);
    await queue.start({ pollInterval: 20 });
    assert.equal(await queue.releaseGoneWorkers(), 0);
    await sleep(200);
    assert.deepEqual(ran, []);
    assert.equal((await jobById(id))?.locked_by, alive);
    assert.ok((await workerRows()).some((w) => w.id === alive));
  });

  test("on this host, a worker whose process is dead is gone at once, however fresh its heartbeat", async () => {
    const name = jobName("dead");
    const gone = await forgeWorker();
    const id = await heldJob(gone, name);
    const { queue, ran } = runner(name);
    await queue.start({ pollInterval: 60_000 });
    await eventually(async () => ran.length === 1, "the released job to run");
    assert.equal(ran[0].id, id);
    assert.equal(
      (await workerRows()).some((w) => w.id === gone),
      false,
    );
  });

  test("a live process on this machine keeps its jobs however late its heartbeat, up to the lease", async () => {
    const name = jobName("reused");
    const worker = await forgeWorker({ pid: otherProgram.pid! });
    const id = await heldJob(worker, name);
    const queue = newQueue();
    await queue.start({ pollInterval: 20 });
    assert.equal(await queue.releaseGoneWorkers(), 0);
    assert.equal((await jobById(id))?.locked_by, worker);

    // A stalled event loop: many heartbeats missed, the process alive.
    const beatAgo = (ms: number) =>
      db()
        .updateTable("job_workers")
        .set({ heartbeat_at: new Date(Date.now() - ms).toISOString() })
        .where("id", "=", worker)
        .execute();
    await beatAgo(20 * HEARTBEAT_MS);
    assert.equal(await queue.releaseGoneWorkers(), 0);
    assert.equal((await jobById(id))?.locked_by, worker);
    // Past the lease, the PID is taken to be another program's (reused after a restart).
    await beatAgo(5 * MINUTE + 1000);
    assert.equal(await queue.releaseGoneWorkers(), 1);
    const job = await jobById(id);
    assert.deepEqual([job?.locked_by, job?.locked_until, job?.attempts], [null, null, 1]);
  });

  test("a row with this process's PID and another worker ID is an earlier process's", async () => {
    const name = jobName("own-pid");
    const earlier = await forgeWorker({ pid: process.pid });
    const id = await heldJob(earlier, name);
    const live = newQueue();
    await live.start({ pollInterval: 20 });
    const other = newQueue();
    await other.start({ pollInterval: 20 });
    // The two started queues of this process share its PID and stay; the earlier process's worker goes.
    assert.equal((await jobById(id))?.locked_by, null);
    assert.equal((await workerRows()).length, 2);
    assert.equal(await other.releaseGoneWorkers(), 0);
    assert.equal((await workerRows()).length, 2);
  });

  test("another host, PID namespace or machine (same host name, another boot) is judged by its heartbeat only", async () => {
    const name = jobName("elsewhere");
    const otherHost = await forgeWorker({ host: "elsewhere.example" });
    const otherNamespace = await forgeWorker({ pidNamespace: "pid:[1]" });
    // A cloned machine: the same host name and default namespace, its PID dead here but alive there.
    const otherMachine = await forgeWorker({ bootId: "another-boot" });
    const unknownBoot = await forgeWorker({ bootId: null });
    const workers = [otherHost, otherNamespace, otherMachine, unknownBoot];
    const ids = [];
    for (const worker of workers) ids.push(await heldJob(worker, name));
    const queue = newQueue();
    await queue.start({ pollInterval: 20 });
    assert.equal(await queue.releaseGoneWorkers(), 0);
    assert.deepEqual(await Promise.all(ids.map(async (id) => (await jobById(id))?.locked_by)), workers);
    await db()
      .updateTable("job_workers")
      .set({ heartbeat_at: new Date(Date.now() - 4 * HEARTBEAT_MS).toISOString() })
      .where("id", "in", workers)
      .execute();
    assert.equal(await queue.releaseGoneWorkers(), 4);
  });

  test("jobs claimed with no worker row (drain(), an older version) are left to their lease", async () => {
    const name = jobName("unregistered");
    const id = await heldJob(randomUUID(), name);
    const drained = newQueue();
    drained.register(name, async () => {});
    const queue = newQueue();
    await queue.start({ pollInterval: 20 });
    assert.equal(await queue.releaseGoneWorkers(), 0);
    assert.equal(await drained.claim(), undefined);
    assert.ok((await jobById(id))?.locked_by);
  });

  test("a live worker's jobs are never released: two started workers, one running a long job", async () => {
    const name = jobName("long");
    const gate = deferred();
    const started = deferred();
    const busy = newQueue();
    busy.register(name, async () => {
      started.resolve();
      await gate.promise;
    });
    const idle = newQueue();
    await idle.start({ pollInterval: 20, heartbeatMs: 50 });
    await busy.start({ pollInterval: 20, heartbeatMs: 50 });
    const id = await busy.enqueue(name, null);
    await within(started.promise, "the long job to start");
    const holder = (await jobById(id))?.locked_by;
    assert.ok(holder);
    // Many heartbeats of both: a late heartbeat would be 150 ms old.
    await sleep(600);
    assert.equal(await idle.releaseGoneWorkers(), 0);
    const job = await jobById(id);
    assert.equal(job?.locked_by, holder);
    assert.equal(job?.attempts, 1);
    assert.equal((await workerRows()).length, 2);
    gate.resolve();
    await eventually(async () => (await jobById(id)) === undefined, "the long job to finish");
  });

  test("on its heartbeat, a running worker releases and runs what a worker that died meanwhile held", async () => {
    const name = jobName("tick");
    const { queue, ran } = runner(name);
    // A long poll interval: only the release can make the job run soon.
    await queue.start({ pollInterval: 60_000, heartbeatMs: 100 });
    const gone = await forgeWorker();
    const id = await heldJob(gone, name);
    await eventually(async () => ran.length === 1, "the next heartbeat to release the job", 2000);
    assert.equal(ran[0].id, id);
  });

  test("the dead worker's attempt stays counted: a job with none left is not run again, and failExhausted records it", async () => {
    const name = jobName("exhausted");
    const gone = await forgeWorker({ heartbeatAgoMs: 10 * MINUTE, host: "elsewhere.example" });
    const id = await heldJob(gone, name, 2, 2);
    const { queue, ran } = runner(name);
    await queue.start({ pollInterval: 20 });
    const released = await jobById(id);
    assert.deepEqual([released?.locked_by, released?.attempts, released?.failed_at], [null, 2, null]);
    assert.equal(await queue.claim(), undefined);
    assert.equal(await queue.failExhausted(), 1);
    const job = await jobById(id);
    assert.ok(job?.failed_at);
    assert.match(String(job?.last_error), /worker stopped/);
    assert.deepEqual(ran, []);
  });

  test("stop() keeps the heartbeat going while it waits for a running job, then removes the row", async () => {
    const name = jobName("stopping");
    const gate = deferred();
    const started = deferred();
    const queue = newQueue();
    queue.register(name, async () => {
      started.resolve();
      await gate.promise;
    });
    await queue.start({ pollInterval: 20, heartbeatMs: 50 });
    await queue.enqueue(name, null);
    await within(started.promise, "the job to start");
    const stopping = queue.stop();
    const [before] = await workerRows();
    await eventually(
      async () => (await workerRows())[0]?.heartbeat_at > before.heartbeat_at,
      "a heartbeat while stopping",
    );
    gate.resolve();
    await within(stopping, "stop()");
    assert.deepEqual(await workerRows(), []);
  });

  test("a worker taken for gone (its row removed) registers again on its next heartbeat, with a warning", async () => {
    const { log, lines } = recordingLog();
    const queue = newQueue(log);
    await queue.start({ pollInterval: 20, heartbeatMs: 50 });
    const [row] = await workerRows();
    await db().deleteFrom("job_workers").execute();
    await eventually(async () => (await workerRows())[0]?.id === row.id, "the row to come back");
    assert.ok(
      lines.some((l) => l.msg === TAKEN_FOR_GONE && l.level === 40),
      JSON.stringify(lines),
    );
  });
});

/** Whether a SQLite plan reads `jobs` whole. */
const sqliteScansJobs = (details: string[]) => details.some((d) => /^SCAN jobs\b/.test(d));

/** The reads of `jobs` and of indexes in a PostgreSQL plan (EXPLAIN (FORMAT JSON)): node type and index. */
function postgresReadsOfJobs(plan: unknown): string[] {
  const reads: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    // Index scans name their relation; a bitmap heap scan's index is on its Bitmap Index Scan child.
    if (node["Relation Name"] === "jobs" || node["Index Name"])
      reads.push(`${String(node["Node Type"])} ${String(node["Index Name"] ?? "")}`.trim());
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((plan as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
  return reads;
}

describe(`the plan of the release of gone workers' jobs (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let captured: CompiledQuery[] | undefined;
  const JOBS = 20_000;

  before(async () => {
    server = await createTestServer({
      onQuery: (event: LogEvent) => {
        if (captured && event.level === "query") captured.push(event.query);
      },
    });
    // Many pending and failed jobs, a few held by live workers, one by a worker that is gone.
    const now = Date.now();
    const rows = Array.from({ length: JOBS }, (_, i) => ({
      id: newId(now - JOBS + i),
      name: `seed.${i % 7}`,
      payload: "null",
      run_at: new Date(now + (i % 100) * MINUTE).toISOString(),
      attempts: i % 3,
      max_attempts: 5,
      failed_at: i % 10 === 0 ? new Date(now).toISOString() : null,
      locked_until: i % 1000 === 1 ? new Date(now + 5 * MINUTE).toISOString() : null,
      locked_by: i % 1000 === 1 ? `live-${i % 4}` : null,
      created_at: new Date(now).toISOString(),
    }));
    for (let i = 0; i < rows.length; i += 500)
      await server.ctx.db.kysely
        .insertInto("jobs")
        .values(rows.slice(i, i + 500))
        .execute();
  });
  after(() => server.close());

  /** The SQL of the statements the release runs against `jobs`, captured as it runs. */
  async function releaseStatements(): Promise<CompiledQuery[]> {
    const kysely = server.ctx.db.kysely;
    const gone = randomUUID();
    await kysely
      .insertInto("job_workers")
      .values({
        id: gone,
        host: "elsewhere.example",
        pid: 1,
        pid_namespace: null,
        started_at: new Date(Date.now() - 10 * MINUTE).toISOString(),
        heartbeat_at: new Date(Date.now() - 10 * MINUTE).toISOString(),
      })
      .execute();
    const job = newId();
    await kysely
      .insertInto("jobs")
      .values({
        id: job,
        name: "seed.held",
        payload: "null",
        run_at: new Date().toISOString(),
        attempts: 1,
        locked_until: new Date(Date.now() + 5 * MINUTE).toISOString(),
        locked_by: gone,
        created_at: new Date().toISOString(),
      })
      .execute();
    captured = [];
    const released = await new JobQueue(server.ctx.db, server.ctx.log).releaseGoneWorkers();
    const statements = captured.filter((q) => /\bjobs\b/.test(q.sql));
    captured = undefined;
    assert.equal(released, 1);
    assert.equal(statements.length, 1, JSON.stringify(statements.map((q) => q.sql)));
    return statements;
  }

  /** How `query` reads `jobs`: SQLite's plan lines, or PostgreSQL's scan nodes of it. */
  async function readsOfJobs(query: CompiledQuery): Promise<{ scans: boolean; reads: string[] }> {
    const kysely = server.ctx.db.kysely;
    if (server.ctx.db.engine === "sqlite") {
      const plan = await kysely.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]),
      );
      const details = plan.rows.map((r) => r.detail);
      return { scans: sqliteScansJobs(details), reads: details };
    }
    const plan = await kysely.executeQuery<{ "QUERY PLAN": unknown }>(
      CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${query.sql}`, [...query.parameters]),
    );
    const json = plan.rows[0]["QUERY PLAN"];
    const reads = postgresReadsOfJobs(typeof json === "string" ? JSON.parse(json) : json);
    return { scans: reads.some((r) => r.startsWith("Seq Scan")), reads };
  }

  const check = (label: string) =>
    test(`the release reads jobs through index_jobs_on_locked_by${label}`, async () => {
      const [statement] = await releaseStatements();
      assert.match(statement.sql, /^update "jobs"/);
      const { scans, reads } = await readsOfJobs(statement);
      assert.equal(scans, false, JSON.stringify(reads));
      assert.ok(
        reads.some((r) => r.includes("index_jobs_on_locked_by")),
        JSON.stringify(reads),
      );
    });

  describe("without statistics", () => check(" (no statistics)"));
  describe("with statistics", () => {
    before(async () => {
      await sql`ANALYZE`.execute(server.ctx.db.kysely);
    });
    check("");
  });

  test("the check catches a scan: the same update by payload", async () => {
    const query = server.ctx.db.kysely
      .updateTable("jobs")
      .set({ locked_by: null })
      .where("payload", "=", "x")
      .compile();
    assert.equal((await readsOfJobs(query)).scans, true);
  });
});
