/**
 * SQLite waits for another process's write lock with the event loop free (db/sqlite.ts): SQLite's
 * own busy handler slept with the loop stopped, so a web process served nothing while its worker
 * process committed. Another connection to the same file stands in for the other process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { after, before, describe, test } from "node:test";
import { Kysely, sql, type Generated } from "kysely";
import { NodeSqliteDialect, openSqliteFile } from "../../src/db/sqlite.ts";

interface Db {
  notes: { id: Generated<number>; body: string };
}

describe("SQLite: waiting for another process's write lock", () => {
  let dir: string;
  let other: DatabaseSync;
  const open = (busyTimeoutMs?: number) =>
    new Kysely<Db>({ dialect: new NodeSqliteDialect(join(dir, "locks.sqlite"), { busyTimeoutMs }) });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "rookery-locks-"));
    const db = open();
    await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db);
    await db.destroy();
    other = openSqliteFile(join(dir, "locks.sqlite"));
  });
  after(() => {
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a write waits for the lock without stopping the event loop, then succeeds", async () => {
    const db = open();
    try {
      other.exec("BEGIN IMMEDIATE");
      other.exec("INSERT INTO notes (body) VALUES ('theirs')");
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 5);
      const mine = db.insertInto("notes").values({ body: "mine" }).execute();
      const transaction = db.transaction().execute(async (tx) => {
        await tx.insertInto("notes").values({ body: "in a transaction" }).execute();
      });
      await new Promise((resolve) => setTimeout(resolve, 120));
      const ticksWhileLocked = ticks;
      other.exec("COMMIT");
      await Promise.all([mine, transaction]);
      clearInterval(ticker);
      // SQLite's own wait would have held the loop for the whole 120 ms: no tick at all.
      assert.ok(ticksWhileLocked >= 5, `the loop ran ${ticksWhileLocked} times while the lock was held`);
      const bodies = (await db.selectFrom("notes").select("body").orderBy("id").execute()).map((row) => row.body);
      assert.deepEqual(bodies, ["theirs", "mine", "in a transaction"]);
    } finally {
      if (other.isTransaction) other.exec("ROLLBACK");
      await db.destroy();
    }
  });

  test("reads go on while another connection holds the write lock", async () => {
    const db = open();
    try {
      other.exec("BEGIN IMMEDIATE");
      other.exec("INSERT INTO notes (body) VALUES ('uncommitted')");
      const rows = await db.selectFrom("notes").select("body").where("body", "=", "uncommitted").execute();
      assert.deepEqual(rows, []);
    } finally {
      other.exec("ROLLBACK");
      await db.destroy();
    }
  });

  test("a lock held past the timeout fails the statement with SQLITE_BUSY, and the connection serves the next", async () => {
    const db = open(150);
    try {
      other.exec("BEGIN IMMEDIATE");
      const started = Date.now();
      await assert.rejects(db.insertInto("notes").values({ body: "too late" }).execute(), (error: unknown) => {
        assert.equal((error as { errcode?: number }).errcode, 5);
        return true;
      });
      assert.ok(Date.now() - started >= 150);
      other.exec("ROLLBACK");
      await db.insertInto("notes").values({ body: "next" }).execute();
      const next = await db.selectFrom("notes").select("body").where("body", "in", ["too late", "next"]).execute();
      assert.deepEqual(
        next.map((row) => row.body),
        ["next"],
      );
    } finally {
      if (other.isTransaction) other.exec("ROLLBACK");
      await db.destroy();
    }
  });
});
