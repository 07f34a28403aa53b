/**
 * SQLite groups the commits of background work (db/sqlite.ts `GroupCommit`): the job loops'
 * transactions share one SQLite transaction, committed when it is old enough, full enough, when
 * other work needs the connection, or on flush. Another connection to the same file stands in for
 * another process: it sees grouped work only once the group is committed.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { after, before, beforeEach, describe, test } from "node:test";
import { Kysely, sql, type Generated } from "kysely";
import { NodeSqliteDialect, openSqliteFile, runGroupable, type GroupCommit } from "../../src/db/sqlite.ts";
import { openDatabase } from "../../src/db/connect.ts";
import { LocalBus, PublishAfterCommit } from "../../src/realtime/bus.ts";
import { JobQueue } from "../../src/jobs/queue.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { pino } from "pino";

interface Db {
  notes: { id: Generated<number>; body: string };
  children: { id: Generated<number>; parent: number };
}

const silentLog = () => pino({ level: "silent" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("SQLite: grouped commits of background work", () => {
  let dir: string;
  let file: string;
  let other: DatabaseSync;
  const lost: unknown[] = [];
  const open = (group: Partial<GroupCommit> = {}) => {
    const dialect = new NodeSqliteDialect(file, {
      groupCommit: { maxMs: 60_000, maxTransactions: 1000, pauseMs: 0, onLost: (error) => lost.push(error), ...group },
    });
    const db = new Kysely<Db>({ dialect });
    return { db, driver: () => dialect.driver! };
  };
  /** What another process reads. */
  const committed = () =>
    (other.prepare("SELECT body FROM notes ORDER BY id").all() as { body: string }[]).map((row) => row.body);
  const insert = (db: Kysely<Db>, body: string) => db.insertInto("notes").values({ body }).execute();
  const insertInTransaction = (db: Kysely<Db>, ...bodies: string[]) =>
    db.transaction().execute(async (tx) => {
      for (const body of bodies) await insert(tx, body);
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "rookery-group-"));
    file = join(dir, "group.sqlite");
    const { db } = open();
    await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db);
    await sql`CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES notes (id) DEFERRABLE INITIALLY DEFERRED)`.execute(
      db,
    );
    await db.destroy();
    other = openSqliteFile(file);
  });
  beforeEach(() => {
    other.exec("DELETE FROM children; DELETE FROM notes");
    lost.length = 0;
  });
  after(() => {
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("grouped transactions stay unseen by other connections until the group is flushed", async () => {
    const { db, driver } = open();
    try {
      await runGroupable(async () => {
        await insertInTransaction(db, "one", "two");
        await insert(db, "three");
      });
      assert.deepEqual(committed(), []);
      await driver().flush();
      assert.deepEqual(committed(), ["one", "two", "three"]);
    } finally {
      await db.destroy();
    }
  });

  test("a group commits on its own after maxMs", async () => {
    const { db } = open({ maxMs: 30 });
    try {
      await runGroupable(() => insert(db, "timed"));
      assert.deepEqual(committed(), []);
      for (let i = 0; i < 100 && committed().length === 0; i++) await sleep(10);
      assert.deepEqual(committed(), ["timed"]);
    } finally {
      await db.destroy();
    }
  });

  test("a group commits when it holds maxTransactions transactions", async () => {
    const { db } = open({ maxTransactions: 3 });
    try {
      await runGroupable(async () => {
        await insertInTransaction(db, "a");
        await insertInTransaction(db, "b");
        assert.deepEqual(committed(), []);
        await insertInTransaction(db, "c");
      });
      assert.deepEqual(committed(), ["a", "b", "c"]);
    } finally {
      await db.destroy();
    }
  });

  test("other work on the connection commits the group first and commits its own at once", async () => {
    const { db } = open();
    try {
      await runGroupable(() => insertInTransaction(db, "grouped"));
      assert.deepEqual(committed(), []);
      await insertInTransaction(db, "ungrouped");
      assert.deepEqual(committed(), ["grouped", "ungrouped"]);
    } finally {
      await db.destroy();
    }
  });

  test("a grouped transaction that fails is rolled back alone", async () => {
    const { db, driver } = open();
    try {
      await runGroupable(async () => {
        await insertInTransaction(db, "before");
        await assert.rejects(
          db.transaction().execute(async (tx) => {
            await insert(tx, "failed");
            throw new Error("the job failed");
          }),
          /the job failed/,
        );
        await insertInTransaction(db, "after");
      });
      await driver().flush();
      assert.deepEqual(committed(), ["before", "after"]);
      assert.deepEqual(lost, []);
    } finally {
      await db.destroy();
    }
  });

  test("a group that cannot commit is rolled back whole, reported, and what waited for it is dropped", async () => {
    const { db, driver } = open();
    try {
      let told = false;
      await runGroupable(async () => {
        await insertInTransaction(db, "kept only if the group commits");
        // A deferred foreign key is checked at COMMIT: this one fails it.
        await db.transaction().execute((tx) => tx.insertInto("children").values({ parent: 999 }).execute());
        driver().afterCommit(() => (told = true));
      });
      await driver().flush();
      assert.equal(lost.length, 1);
      assert.match(String(lost[0]), /FOREIGN KEY/);
      assert.equal(told, false);
      assert.deepEqual(committed(), []);
      // The connection goes on.
      await insertInTransaction(db, "next");
      assert.deepEqual(committed(), ["next"]);
    } finally {
      await db.destroy();
    }
  });

  test("afterCommit callbacks run once the group is committed, at once when none is open", async () => {
    const { db, driver } = open();
    try {
      const seen: string[][] = [];
      driver().afterCommit(() => seen.push(["no group", ...committed()]));
      assert.deepEqual(seen, [["no group"]]);
      await runGroupable(async () => {
        await insert(db, "grouped");
        driver().afterCommit(() => seen.push(committed()));
      });
      assert.equal(seen.length, 1);
      await driver().flush();
      assert.deepEqual(seen[1], ["grouped"]);
    } finally {
      await db.destroy();
    }
  });

  test("after a commit no group opens for pauseMs: another process gets the write lock", async () => {
    const { db, driver } = open({ pauseMs: 300 });
    try {
      await runGroupable(() => insert(db, "first"));
      await driver().flush();
      // Within the pause, grouped work commits as it goes and leaves the lock free.
      await runGroupable(() => insert(db, "in the pause"));
      assert.deepEqual(committed(), ["first", "in the pause"]);
      other.exec("BEGIN IMMEDIATE");
      other.exec("ROLLBACK");
    } finally {
      await db.destroy();
    }
  });

  test("closing the database commits the open group", async () => {
    const { db } = open();
    await runGroupable(() => insert(db, "closing"));
    await db.destroy();
    assert.deepEqual(committed(), ["closing"]);
  });

  test("streaming messages of grouped work leave once it is committed; others at once", async () => {
    const path = join(dir, "bus.sqlite");
    const db = await openDatabase(`sqlite:${path}`, {
      groupCommit: { maxMs: 60_000, maxTransactions: 1000, pauseMs: 0 },
    });
    const bus = new PublishAfterCommit(new LocalBus(silentLog()), db, silentLog());
    await sql`CREATE TABLE t (x TEXT)`.execute(db.kysely);
    const reader = openSqliteFile(path);
    try {
      // What a listener in another process finds when the message reaches it.
      const found: string[][] = [];
      await bus.subscribe("timeline:public", () =>
        found.push((reader.prepare("SELECT x FROM t ORDER BY rowid").all() as { x: string }[]).map((row) => row.x)),
      );
      await db.groupable(async () => {
        await sql`INSERT INTO t VALUES ('grouped')`.execute(db.kysely);
        await bus.publish("timeline:public", { event: "update", payload: "grouped" });
        await sleep(30);
        assert.deepEqual(found, []);
      });
      await sql`INSERT INTO t VALUES ('ungrouped')`.execute(db.kysely);
      await bus.publish("timeline:public", { event: "update", payload: "ungrouped" });
      for (let i = 0; i < 100 && found.length < 2; i++) await sleep(10);
      // The grouped message left when the ungrouped insert committed the group (its own row is
      // committed by the time a listener reads: it is delivered on a later turn of the loop).
      assert.deepEqual(found, [
        ["grouped", "ungrouped"],
        ["grouped", "ungrouped"],
      ]);
    } finally {
      reader.close();
      await bus.close();
      await db.close();
    }
  });

  test("enqueues written together in one transaction settle each on its own", async () => {
    const db = await openDatabase(`sqlite:${join(dir, "jobs.sqlite")}`);
    try {
      await migrateToLatest(db);
      const queue = new JobQueue(db, silentLog());
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const results = await Promise.allSettled([
        queue.enqueue("first", { n: 1 }),
        queue.enqueue("second", { n: 2 }),
        queue.enqueue("unwritable", circular),
        queue.enqueue("third", { n: 3 }),
      ]);
      assert.deepEqual(
        results.map((result) => result.status),
        ["fulfilled", "fulfilled", "rejected", "fulfilled"],
      );
      const rows = await db.kysely.selectFrom("jobs").select(["id", "name"]).orderBy("name").execute();
      assert.deepEqual(
        rows.map((row) => row.name),
        ["first", "second", "third"],
      );
      const ids = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      assert.deepEqual(new Set(ids), new Set(rows.map((row) => row.id)));
    } finally {
      await db.close();
    }
  });

  test("changedElsewhere answers whether another connection committed since it was last asked", async () => {
    const db = await openDatabase(`sqlite:${join(dir, "versions.sqlite")}`);
    try {
      await sql`CREATE TABLE t (x TEXT)`.execute(db.kysely);
      db.changedElsewhere!(); // The first answer may be a spurious yes.
      assert.equal(db.changedElsewhere!(), false);
      // Its own commits are not another's.
      await sql`INSERT INTO t VALUES ('own')`.execute(db.kysely);
      assert.equal(db.changedElsewhere!(), false);
      const writer = openSqliteFile(join(dir, "versions.sqlite"));
      try {
        writer.exec("INSERT INTO t VALUES ('other')");
      } finally {
        writer.close();
      }
      assert.equal(db.changedElsewhere!(), true);
      assert.equal(db.changedElsewhere!(), false);
    } finally {
      await db.close();
    }
  });

  test("sleeping job loops start a job another process enqueued without waiting for their poll", async () => {
    const path = join(dir, "wake.sqlite");
    const worker = await openDatabase(`sqlite:${path}`);
    const web = await openDatabase(`sqlite:${path}`);
    const queue = new JobQueue(worker, silentLog());
    try {
      await migrateToLatest(worker);
      const ran: unknown[] = [];
      queue.register("elsewhere", async (payload) => {
        ran.push(payload);
      });
      // A poll an hour apart: only the watch on the database can start the job in time.
      await queue.start({ concurrency: 2, pollInterval: 3_600_000 });
      await sleep(200); // The loops are asleep, and the watch has slowed to its last interval.
      await new JobQueue(web, silentLog()).enqueue("elsewhere", { from: "web" });
      for (let i = 0; i < 500 && ran.length === 0; i++) await sleep(10);
      assert.deepEqual(ran, [{ from: "web" }]);
    } finally {
      await queue.stop();
      await web.close();
      await worker.close();
    }
  });
});
