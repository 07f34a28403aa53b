/**
 * Planner statistics (db/statistics.ts): the check analyzes what changed a lot or was never
 * analyzed, skips the rest, and does nothing when nothing changed — on PostgreSQL by the counters of
 * `pg_stat_user_tables` in the server's own schema, on SQLite by `PRAGMA optimize`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { newId } from "../../src/db/ids.ts";
import { ANALYZE_THRESHOLD, refreshStatistics } from "../../src/db/statistics.ts";
import { createTestServer, TEST_ENGINE, type TestServer } from "../kit.ts";
import { disableAutovacuum, reportTableCounters, tableCounters } from "./pg_statistics.ts";

/** Inserts `count` remote accounts. */
async function insertAccounts(server: TestServer, count: number): Promise<void> {
  const at = new Date().toISOString();
  await server.ctx.db.kysely
    .insertInto("accounts")
    .values(
      Array.from({ length: count }, (_, i) => ({
        id: newId(),
        username: `bulk${i}`,
        domain: "bulk.example",
        uri: `https://bulk.example/users/${i}`,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
}

/** Inserts `count` hashtags. */
async function insertTags(server: TestServer, count: number): Promise<void> {
  const at = new Date().toISOString();
  await server.ctx.db.kysely
    .insertInto("tags")
    .values(Array.from({ length: count }, (_, i) => ({ id: newId(), name: `few${i}`, created_at: at, updated_at: at })))
    .execute();
}

describe(`planner statistics (${TEST_ENGINE})`, { skip: TEST_ENGINE !== "postgres" }, () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
    await disableAutovacuum(server.ctx.db);
  });
  after(() => server.close());

  test("after the migrations every table of the schema was analyzed", async () => {
    assert.equal((await tableCounters(server.ctx.db, "tags")).analyzed, true);
    assert.equal((await tableCounters(server.ctx.db, "home_feed_entries")).analyzed, true);
  });

  test("a table changed past the threshold is analyzed; one changed less is skipped", async () => {
    await insertAccounts(server, 200);
    await insertTags(server, ANALYZE_THRESHOLD - 10);
    await reportTableCounters(server.ctx.db);
    const analyzed = await refreshStatistics(server.ctx.db);
    assert.ok(analyzed.includes("accounts"), analyzed.join(", "));
    assert.ok(!analyzed.includes("tags"), analyzed.join(", "));
    assert.equal((await tableCounters(server.ctx.db, "accounts")).modifiedSinceAnalyze, 0);
    assert.equal((await tableCounters(server.ctx.db, "tags")).modifiedSinceAnalyze, ANALYZE_THRESHOLD - 10);
  });

  test("a table never analyzed is analyzed once it has rows, however few", async () => {
    await sql`CREATE TABLE imported (id bigint PRIMARY KEY)`.execute(server.ctx.db.kysely);
    await reportTableCounters(server.ctx.db);
    assert.ok(!(await refreshStatistics(server.ctx.db)).includes("imported"));
    await sql`INSERT INTO imported VALUES (1), (2), (3)`.execute(server.ctx.db.kysely);
    await reportTableCounters(server.ctx.db);
    assert.deepEqual(await refreshStatistics(server.ctx.db), ["imported"]);
    assert.equal((await tableCounters(server.ctx.db, "imported")).analyzed, true);
  });

  test("when nothing changed, the check analyzes nothing", async () => {
    await reportTableCounters(server.ctx.db);
    await refreshStatistics(server.ctx.db);
    assert.deepEqual(await refreshStatistics(server.ctx.db), []);
  });

  test("the check reads only the server's own schema", async () => {
    // Another server on the same database, with tables just as stale, is none of this one's business.
    const other = await createTestServer();
    try {
      await insertAccounts(other, 200);
      await reportTableCounters(other.ctx.db);
      await reportTableCounters(server.ctx.db);
      assert.deepEqual(await refreshStatistics(server.ctx.db), []);
      assert.equal((await tableCounters(other.ctx.db, "accounts")).modifiedSinceAnalyze, 200);
    } finally {
      await other.close();
    }
  });
});

describe(`planner statistics (${TEST_ENGINE})`, { skip: TEST_ENGINE !== "sqlite" }, () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const stat1 = async (table: string) =>
    (await sql<{ tbl: string }>`SELECT tbl FROM sqlite_stat1 WHERE tbl = ${table}`.execute(server.ctx.db.kysely)).rows;

  test("a table that gained rows is analyzed, then the check has nothing to do", async () => {
    await insertAccounts(server, 200);
    const analyzed = await refreshStatistics(server.ctx.db);
    assert.ok(analyzed.includes("accounts"), analyzed.join(", "));
    assert.ok((await stat1("accounts")).length > 0);
    assert.deepEqual(await refreshStatistics(server.ctx.db), []);
  });
});
