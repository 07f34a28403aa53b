import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { removeStaleFolders } from "./temporary.ts";

test("removeStaleFolders removes only old folders with the prefix, with what they hold", async () => {
  const prefix = `rookery-stale-test-${process.pid}-`;
  const old = mkdtempSync(join(tmpdir(), prefix));
  const fresh = mkdtempSync(join(tmpdir(), prefix));
  const other = mkdtempSync(join(tmpdir(), "rookery-other-test-"));
  mkdirSync(join(old, "inside"));
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(old, hourAgo, hourAgo);
  utimesSync(other, hourAgo, hourAgo);
  try {
    assert.equal(await removeStaleFolders(prefix, 30 * 60_000), 1);
    assert.deepEqual([existsSync(old), existsSync(fresh), existsSync(other)], [false, true, true]);
  } finally {
    for (const path of [old, fresh, other]) rmSync(path, { recursive: true, force: true });
  }
});
