/**
 * Query plans of the profile directory on a seeded table of a few thousand accounts (most of them
 * remote, unlisted or never posting, a few suspended, silenced, moved or not yet approved, many
 * hidden from the viewer), on both engines, as seeded and once the planner has statistics. The
 * listed accounts must be read from the order's own partial index (migration 0027) and the read
 * must stop after what the page needs — no scan of the whole table, no sort; the checks over what
 * was read (users, the viewer's blocks and mutes) must be index lookups. The SQL is the service's
 * own, captured as it runs; PostgreSQL's plans are taken with EXPLAIN ANALYZE, so a sort is judged
 * by the rows it really read.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CompiledQuery, sql, type LogEvent } from "kysely";
import type { Ctx } from "../../src/context.ts";
import { newId } from "../../src/db/ids.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { refreshStatistics } from "../../src/db/statistics.ts";
import { directoryAccounts, type DirectoryQuery } from "../../src/services/accounts/directory.ts";
import { createTestServer, TEST_ENGINE, type TestServer } from "../kit.ts";
import { disableAutovacuum, reportTableCounters } from "./pg_statistics.ts";

const ACCOUNTS = 20_000;

async function insertChunked(
  ctx: Ctx,
  table: "accounts" | "users" | "blocks" | "mutes" | "account_domain_blocks",
  rows: object[],
) {
  for (let i = 0; i < rows.length; i += 400) {
    // deno-lint-ignore no-explicit-any
    await ctx.db.kysely
      .insertInto(table)
      .values(rows.slice(i, i + 400) as any)
      .execute();
  }
}

/**
 * Half the accounts local (each with a user: some unconfirmed, unapproved or disabled), a
 * third listed in the directory, three in four having posted. The viewer (the first account)
 * blocks, mutes and is blocked by a few hundred of them, spread over the list, and blocks one of the
 * remote domains; every other account blocks and mutes one account and blocks one domain, so
 * that none of these tables is small enough to be read whole. (A local directory of a few hundred
 * accounts is another matter: PostgreSQL rightly reads it whole from the correlated `new` index and
 * sorts it, a millisecond's work, rather than fetch a page's rows one by one in `active` order.)
 */
async function seed(ctx: Ctx): Promise<AccountRow> {
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
    id: newId(now - 10_000_000 + i),
    username: `user${i}`,
    domain: i % 2 === 0 ? null : `remote${i % 11}.example`,
    uri: `https://x.example/users/${i}`,
    discoverable: i % 3 === 0 ? true : i % 3 === 1 ? false : null,
    suspended_at: i % 97 === 0 && i > 0 ? at(1) : null,
    silenced_at: i % 89 === 0 && i > 0 ? at(1) : null,
    moved_to_account_id: null as string | null,
    last_status_at: i % 4 === 3 ? null : at((i * 7919) % 100_000),
    created_at: at(200_000),
    updated_at: at(200_000),
  }));
  for (let i = 83; i < ACCOUNTS; i += 83) accounts[i].moved_to_account_id = accounts[1].id;
  await insertChunked(ctx, "accounts", accounts);
  const local = accounts.filter((a) => a.domain === null);
  await insertChunked(
    ctx,
    "users",
    local.map((a, i) => ({
      id: newId(),
      account_id: a.id,
      email: `${a.username}@rookery.test`,
      confirmed_at: i % 13 === 5 ? null : at(100),
      approved: i % 17 !== 6,
      disabled: i % 19 === 7,
      created_at: at(100),
      updated_at: at(100),
    })),
  );
  const viewer = accounts[0].id;
  const others = accounts.slice(1);
  /** `count` accounts spread over the whole list, from `from` on. */
  const spread = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => accounts[from + i * Math.floor((ACCOUNTS - from) / count)].id);
  const pair = (account_id: string, target_account_id: string) => ({
    id: newId(),
    account_id,
    target_account_id,
    created_at: at(5),
  });
  await insertChunked(ctx, "blocks", [
    ...spread(4, 300).map((target) => pair(viewer, target)),
    ...spread(8, 300).map((blocker) => pair(blocker, viewer)),
    ...others.map((a, i) => pair(a.id, others[(i + 1) % others.length].id)),
  ]);
  await insertChunked(ctx, "mutes", [
    ...spread(12, 300).map((target) => ({ ...pair(viewer, target), updated_at: at(5) })),
    ...others.map((a, i) => ({ ...pair(a.id, others[(i + 2) % others.length].id), updated_at: at(5) })),
  ]);
  await insertChunked(ctx, "account_domain_blocks", [
    { id: newId(), account_id: viewer, domain: "remote3.example", created_at: at(5) },
    ...others.map((a, i) => ({ id: newId(), account_id: a.id, domain: `blocked${i}.example`, created_at: at(5) })),
  ]);
  return ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", viewer).executeTakeFirstOrThrow();
}

/** Tables that grow with use: no query may read one whole. */
const LARGE = new Set(["accounts", "users", "blocks", "mutes", "account_domain_blocks"]);

/** The index a page of `query` must be read from. */
function indexFor(query: Pick<DirectoryQuery, "order" | "local">): string {
  return `index_accounts_directory_${query.order}${query.local ? "_local" : ""}`;
}

/** What is wrong with a SQLite plan: a large table scanned whole, a sort, or accounts not read through `index`. */
function sqliteProblems(details: string[], index: string | undefined): string[] {
  const problems: string[] = [];
  for (const detail of details) {
    const scan = /^SCAN (\w+)(?: AS \w+)?$/.exec(detail);
    if (scan && LARGE.has(scan[1])) problems.push(`full scan: ${detail}`);
    if (/USE TEMP B-TREE/.test(detail)) problems.push(`sort: ${detail}`);
  }
  const main = details.find((d) => /^(SCAN|SEARCH) accounts\b/.test(d));
  if (index && !(main && new RegExp(`USING (COVERING )?INDEX ${index}\\b`).test(main)))
    problems.push(`accounts not read through ${index}: ${details.join(" | ")}`);
  return problems;
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

/**
 * What is wrong with a PostgreSQL plan (EXPLAIN (ANALYZE, FORMAT JSON)): a sequential scan of a
 * large table, a sort; for the ordered read (`index` given), no Limit on top or accounts read
 * through another index than `index`.
 */
function postgresProblems(plan: PlanNode, index: string | undefined): string[] {
  const problems: string[] = [];
  let indexUsed: string | undefined;
  const walk = (node: PlanNode) => {
    const type = node["Node Type"];
    const relation = node["Relation Name"] ?? "";
    if (type === "Seq Scan" && LARGE.has(relation)) problems.push(`sequential scan of ${relation}`);
    if (type === "Sort" || type === "Incremental Sort") {
      const input = node.Plans?.[0];
      problems.push(`sort of ${(input?.["Actual Rows"] ?? 0) * (input?.["Actual Loops"] ?? 1)} rows`);
    }
    if (relation === "accounts" && node["Index Name"]) indexUsed ??= node["Index Name"];
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  if (index && plan["Node Type"] !== "Limit") problems.push(`the read does not stop: ${plan["Node Type"]}`);
  if (index && indexUsed !== index) problems.push(`accounts not read through ${index}: ${JSON.stringify(plan)}`);
  return problems;
}

describe(`query plans of the profile directory (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let viewer: AccountRow;
  let captured: CompiledQuery[] | undefined;

  before(async () => {
    server = await createTestServer({
      onQuery: (event: LogEvent) => {
        if (captured && event.level === "query") captured.push(event.query);
      },
    });
    // Only the migrations' statistics (of empty tables) until a test asks for more.
    if (server.ctx.db.engine === "postgres") await disableAutovacuum(server.ctx.db);
    viewer = await seed(server.ctx);
  });
  after(() => server.close());

  async function problemsOfQuery(compiled: CompiledQuery, index: string | undefined): Promise<string[]> {
    if (server.ctx.db.engine === "sqlite") {
      const plan = await server.ctx.db.kysely.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]),
      );
      return sqliteProblems(
        plan.rows.map((r) => r.detail),
        index,
      );
    }
    const plan = await server.ctx.db.kysely.executeQuery<{ "QUERY PLAN": unknown }>(
      CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${compiled.sql}`, [...compiled.parameters]),
    );
    const json = plan.rows[0]["QUERY PLAN"];
    const parsed = (typeof json === "string" ? JSON.parse(json) : json) as Array<{ Plan: PlanNode }>;
    return postgresProblems(parsed[0].Plan, index);
  }

  /** Reads a page of `query` and returns the problems of the plans of every query it ran. */
  async function problemsOf(signedIn: boolean, query: DirectoryQuery): Promise<string[]> {
    captured = [];
    const page = await directoryAccounts(server.ctx, signedIn ? viewer : undefined, query);
    const queries = captured;
    captured = undefined;
    assert.equal(page.length, query.limit, "the seeded directory fills the page");
    const ordered = queries.filter((q) => /\border by\b/i.test(q.sql));
    assert.ok(ordered.length >= 1, "the listed accounts are read in order");
    const problems: string[] = [];
    for (const compiled of queries)
      problems.push(...(await problemsOfQuery(compiled, ordered.includes(compiled) ? indexFor(query) : undefined)));
    return problems;
  }

  const cases: Array<[string, boolean, DirectoryQuery]> = [
    ["active, anonymous", false, { order: "active", local: false, limit: 40, offset: 0 }],
    ["active, signed in", true, { order: "active", local: false, limit: 40, offset: 0 }],
    ["active, local", false, { order: "active", local: true, limit: 40, offset: 0 }],
    ["active, local, signed in, later page", true, { order: "active", local: true, limit: 40, offset: 40 }],
    ["active, later page", true, { order: "active", local: false, limit: 80, offset: 200 }],
    ["new, anonymous", false, { order: "new", local: false, limit: 40, offset: 0 }],
    ["new, signed in, later page", true, { order: "new", local: false, limit: 40, offset: 120 }],
    ["new, local", true, { order: "new", local: true, limit: 40, offset: 0 }],
  ];
  const check = (label: string) => {
    for (const [name, signedIn, query] of cases) {
      test(`${name}${label}`, async () => {
        assert.deepEqual(await problemsOf(signedIn, query), []);
      });
    }
  };
  // PostgreSQL plans need statistics (db/statistics.ts); it is checked once the server has them.
  if (TEST_ENGINE === "sqlite") describe("as seeded", () => check(" (no statistics)"));
  else {
    // What a server does by itself after bulk writes (maintenance.statistics), without a full ANALYZE.
    describe("after the statistics check", () => {
      before(async () => {
        await reportTableCounters(server.ctx.db);
        await refreshStatistics(server.ctx.db);
      });
      check(" (after the statistics check)");
    });
  }
  describe("with statistics", () => {
    before(async () => {
      if (server.ctx.db.engine === "sqlite") await sql`ANALYZE`.execute(server.ctx.db.kysely);
      else await refreshStatistics(server.ctx.db, { afterMigration: true });
    });
    check("");
  });

  test("the checks catch a bad plan: the directory's order without its conditions sorts the table", async () => {
    const compiled = server.ctx.db.kysely
      .selectFrom("accounts")
      .selectAll()
      .orderBy("last_status_at", "desc")
      .limit(40)
      .compile();
    assert.notDeepEqual(await problemsOfQuery(compiled, indexFor({ order: "active", local: false })), []);
  });
});
