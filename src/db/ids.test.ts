import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compareIds, idFloorForTime, idForTime, isIdLike, newId } from "./ids.ts";

/** How clients sort IDs: by length, then lexically. */
function clientCompare(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

describe("IDs", () => {
  test("are decimal strings beyond 2^53 that encode the time", () => {
    const now = Date.now();
    const id = newId(now);
    assert.match(id, /^\d+$/);
    assert.ok(BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER));
    assert.equal(Number(BigInt(id) >> 16n), now);
  });

  test("made in the same millisecond still sort in creation order", () => {
    const ms = Date.now() + 10_000;
    const ids = Array.from({ length: 5000 }, () => newId(ms));
    for (let i = 1; i < ids.length; i++) {
      assert.ok(compareIds(ids[i - 1], ids[i]) < 0, `${ids[i - 1]} < ${ids[i]}`);
      assert.ok(clientCompare(ids[i - 1], ids[i]) < 0);
    }
    assert.equal(new Set(ids).size, ids.length);
  });

  test("never go backwards when the clock does", () => {
    const later = newId(Date.now() + 20_000);
    const earlier = newId(Date.now());
    assert.ok(compareIds(later, earlier) < 0);
  });

  test("for a past time sort by that time", () => {
    const a = idForTime(new Date("2020-01-01T00:00:00Z"));
    const b = idForTime(new Date("2021-01-01T00:00:00Z"));
    assert.ok(compareIds(a, b) < 0);
    assert.ok(compareIds(idFloorForTime(new Date("2021-01-01T00:00:00Z")), b) <= 0);
  });

  test("many IDs of one past millisecond never repeat (posts published to the second)", () => {
    const second = new Date("2026-11-26T12:00:00Z");
    const ids = Array.from({ length: 5000 }, () => idForTime(second));
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.every((id) => BigInt(id) >> 16n === BigInt(second.getTime())));
  });

  test("isIdLike accepts 64-bit decimal integers only", () => {
    assert.ok(isIdLike("117665759904079265"));
    assert.ok(isIdLike("-99"));
    assert.ok(!isIdLike("9223372036854775808"));
    assert.ok(!isIdLike("12a"));
    assert.ok(!isIdLike(""));
    assert.ok(!isIdLike("1e5"));
  });
});
