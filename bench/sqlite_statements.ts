/**
 * A diagnostic hook for a server process: times every node:sqlite statement by its SQL (lists of
 * placeholders folded) and writes the totals, slowest first, to /tmp/sqlite-statements-PID.json
 * when the process exits. Load it with
 * `node bench/federation.ts --node-options="--import $PWD/bench/sqlite_statements.ts" …`.
 */
import { writeFileSync } from "node:fs";
import { DatabaseSync, StatementSync } from "node:sqlite";

const totals = new Map<string, { count: number; ms: number }>();
const fold = (sql: string) => sql.replace(/\(\?(?:, \?)+\)/g, "(?…)").replace(/\s+/g, " ");

function record(sql: string, started: number): void {
  const key = fold(sql);
  const total = totals.get(key) ?? { count: 0, ms: 0 };
  total.count++;
  total.ms += performance.now() - started;
  totals.set(key, total);
}

type Method = (this: StatementSync, ...args: unknown[]) => unknown;
const statement = StatementSync.prototype as unknown as Record<"all" | "get" | "run", Method>;
for (const name of ["all", "get", "run"] as const) {
  const original = statement[name];
  statement[name] = function (this: StatementSync, ...args: unknown[]) {
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      record(this.sourceSQL, started);
    }
  };
}
const exec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
  const started = performance.now();
  try {
    return exec.call(this, sql);
  } finally {
    record(sql, started);
  }
};

process.on("exit", () => {
  const rows = [...totals]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([sql, { count, ms }]) => ({ ms: Math.round(ms), count, microsEach: Math.round((ms / count) * 1000), sql }));
  writeFileSync(`/tmp/sqlite-statements-${process.pid}.json`, JSON.stringify(rows, null, 1));
});
