/**
 * SQLite prepares a statement again whenever another value is bound to its `LIMIT ?` (its planner
 * reads that value), so the driver writes limits into the SQL (db/sqlite.ts LimitPlaceholders).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Kysely, sql, type Generated } from "kysely";
import { findLimitPlaceholders, NodeSqliteDialect } from "../../src/db/sqlite.ts";

interface Db {
  notes: { id: Generated<number>; body: string };
}

describe("SQLite: limits written into the SQL", () => {
  test("finds LIMIT placeholders, and only those, outside quotes", () => {
    assert.deepEqual(findLimitPlaceholders('select * from "t" where "a" = ? limit ?'), {
      parts: ['select * from "t" where "a" = ? limit ', ""],
      parameters: [1],
    });
    assert.deepEqual(findLimitPlaceholders("select * from t where a = ? LIMIT ? OFFSET ?"), {
      parts: ["select * from t where a = ? LIMIT ", " OFFSET ?"],
      parameters: [1],
    });
    assert.deepEqual(findLimitPlaceholders("select (select 1 from u limit ?), ? from t limit\n ?"), {
      parts: ["select (select 1 from u limit ", "), ? from t limit\n ", ""],
      parameters: [0, 2],
    });
    assert.equal(findLimitPlaceholders("select * from t where a = ?"), null);
    // A question mark in a string or a name is no placeholder.
    assert.equal(findLimitPlaceholders("select 'limit ?' from t where a = ?"), null);
    assert.deepEqual(findLimitPlaceholders(`select "limit ?", 'it''s ?' from t where b = ? limit ?`), {
      parts: [`select "limit ?", 'it''s ?' from t where b = ? limit `, ""],
      parameters: [1],
    });
    assert.equal(findLimitPlaceholders("select * from t limitless where a = ?"), null);
    // Nor is one in a comment, whose quotes quote nothing.
    assert.deepEqual(findLimitPlaceholders("select a -- isn't it? limit ?\nfrom t where b = ? limit ?"), {
      parts: ["select a -- isn't it? limit ?\nfrom t where b = ? limit ", ""],
      parameters: [1],
    });
    assert.deepEqual(findLimitPlaceholders("select /* 'a' limit ? */ a from t limit ? -- the end"), {
      parts: ["select /* 'a' limit ? */ a from t limit ", " -- the end"],
      parameters: [0],
    });
  });

  let dir: string;
  let db: Kysely<Db>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "rookery-limits-"));
    db = new Kysely<Db>({ dialect: new NodeSqliteDialect(join(dir, "limits.sqlite")) });
    await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db);
    await db
      .insertInto("notes")
      .values(["a", "b", "c", "d", "e"].map((body) => ({ body })))
      .execute();
  });
  after(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const bodies = (rows: { body: string }[]) => rows.map((row) => row.body).join("");

  test("each limit and offset is applied, with the other parameters in their places", async () => {
    const page = (after: number, limit: number, offset = 0) =>
      db.selectFrom("notes").select("body").where("id", ">", after).orderBy("id").limit(limit).offset(offset).execute();
    assert.equal(bodies(await page(0, 2)), "ab");
    assert.equal(bodies(await page(1, 3)), "bcd");
    assert.equal(bodies(await page(1, 3, 2)), "de");
    assert.equal(bodies(await page(0, 3, 1)), "bcd");
    assert.equal(bodies(await page(0, -1)), "abcde", "a negative limit is none, as in SQLite");
    const raw = await sql<{ body: string }>`SELECT body FROM notes WHERE body <> ${"c"} ORDER BY id LIMIT ${2}`.execute(
      db,
    );
    assert.equal(bodies(raw.rows), "ab");
  });

  test("a limit that is not an integer stays a parameter, with SQLite's own answer", async () => {
    const rows = await sql<{ body: string }>`SELECT body FROM notes ORDER BY id LIMIT ${"2"}`.execute(db);
    assert.equal(bodies(rows.rows), "ab");
    await assert.rejects(sql`SELECT body FROM notes LIMIT ${1.5}`.execute(db), /datatype mismatch/);
  });
});
