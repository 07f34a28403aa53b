/**
 * Fedify's key–value store and message queue on Rookery's database and job queue, on both
 * engines: the KvStore contract (get/set/delete, TTL, compare-and-swap, prefix listing with keys
 * that hold `/`, `%` and non-ASCII text) and the MessageQueue contract (delivery once, delay,
 * ordering keys, enqueueMany, listen ending with its signal).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { KvKey } from "@fedify/fedify";
import { Temporal } from "@js-temporal/polyfill";
import { kvDeleteExpired } from "../../src/db/queries/federation_kv.ts";
import { durationMs } from "../../src/federation/durations.ts";
import { DatabaseKvStore, decodeKey, encodeKey } from "../../src/federation/kv.ts";
import { FEDERATION_JOB, JobMessageQueue } from "../../src/federation/queue.ts";
import { JobQueue } from "../../src/jobs/queue.ts";
import { createTestServer, TEST_ENGINE, type TestServer } from "../kit.ts";

const list = async (kv: DatabaseKvStore, prefix?: KvKey) => {
  const entries: Array<[KvKey, unknown]> = [];
  for await (const entry of kv.list(prefix)) entries.push([entry.key, entry.value]);
  return entries;
};

describe(`federation store and queue (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let kv: DatabaseKvStore;
  before(async () => {
    server = await createTestServer();
    kv = new DatabaseKvStore(server.ctx.db);
  });
  after(() => server.close());

  test("durations: days and shorter by arithmetic, weeks and longer by the calendar (as Temporal counts them)", () => {
    const now = Date.UTC(2024, 0, 31, 12);
    for (const like of [
      { days: 1 },
      { hours: 25, minutes: 1, seconds: 2, milliseconds: 3 },
      { minutes: 5 },
      { seconds: -10 },
      { weeks: 2, days: 1 },
      { months: 1 },
      { years: 1, hours: 1 },
    ]) {
      const expected = Temporal.Duration.from(like).total({
        unit: "millisecond",
        relativeTo: Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO("UTC"),
      });
      assert.equal(durationMs(Temporal.Duration.from(like), now), expected, JSON.stringify(like));
      assert.equal(durationMs(like, now), expected, JSON.stringify(like));
    }
    // A month from 31 January 2024 is 29 days (to 29 February), not 30 or 31.
    assert.equal(durationMs({ months: 1 }, now), 29 * 86_400_000);
  });

  test("keys survive encoding whatever they hold", () => {
    for (const key of [["a"], ["a", "b/c"], ["%2F", "", "ü", "0", "a b"]] as KvKey[])
      assert.deepEqual(decodeKey(encodeKey(key)), key);
  });

  test("get, set, overwrite and delete; values keep their JSON shape", async () => {
    const key: KvKey = ["fedify", "remote-document", "https://example.com/users/a"];
    assert.equal(await kv.get(key), undefined);
    await kv.set(key, { document: { id: "x", n: 1 }, list: [1, "two", null] });
    assert.deepEqual(await kv.get(key), { document: { id: "x", n: 1 }, list: [1, "two", null] });
    await kv.set(key, "replaced");
    assert.equal(await kv.get(key), "replaced");
    await kv.delete(key);
    assert.equal(await kv.get(key), undefined);
    await kv.delete(key);
  });

  test("a value with a TTL is gone once it expires, and the housekeeping deletes it", async () => {
    await kv.set(["ttl", "short"], 1, { ttl: Temporal.Duration.from({ milliseconds: 50 }) });
    await kv.set(["ttl", "long"], 2, { ttl: Temporal.Duration.from({ hours: 1 }) });
    assert.equal(await kv.get(["ttl", "short"]), 1);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal(await kv.get(["ttl", "short"]), undefined);
    assert.equal(await kv.get(["ttl", "long"]), 2);
    assert.deepEqual(await list(kv, ["ttl"]), [[["ttl", "long"], 2]]);
    assert.ok((await kvDeleteExpired(server.ctx.db.kysely)) >= 1);
    assert.equal(await kv.get(["ttl", "long"]), 2);
  });

  test("compare-and-swap sets only when the value is the expected one (absent or expired counts as undefined)", async () => {
    const key: KvKey = ["cas", "breaker"];
    assert.equal(await kv.cas!(key, { failures: 1 }, { failures: 2 }), false);
    assert.equal(await kv.cas!(key, undefined, { failures: 1 }), true);
    assert.equal(await kv.cas!(key, undefined, { failures: 9 }), false);
    assert.equal(await kv.cas!(key, { failures: 2 }, { failures: 3 }), false);
    assert.equal(await kv.cas!(key, { failures: 1 }, { failures: 2 }), true);
    assert.deepEqual(await kv.get(key), { failures: 2 });
    await kv.set(["cas", "old"], "stale", { ttl: Temporal.Duration.from({ milliseconds: 10 }) });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(await kv.cas!(["cas", "old"], undefined, "fresh"), true);
    assert.equal(await kv.get(["cas", "old"]), "fresh");
  });

  test("concurrent compare-and-swaps from undefined: exactly one wins", async () => {
    const key: KvKey = ["cas", "race"];
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => kv.cas!(key, undefined, i)));
    assert.equal(results.filter(Boolean).length, 1);
  });

  test("list returns the keys under a prefix, not its neighbours, in key order", async () => {
    await kv.set(["p", "a"], 1);
    await kv.set(["p", "a", "deep"], 2);
    await kv.set(["p", "a/b"], 3);
    await kv.set(["p", "ab"], 4);
    await kv.set(["p"], 0);
    await kv.set(["q"], 5);
    assert.deepEqual(await list(kv, ["p", "a"]), [
      [["p", "a"], 1],
      [["p", "a", "deep"], 2],
    ]);
    const underP = (await list(kv, ["p"])).map(([key]) => key.join("|"));
    assert.deepEqual(underP.sort(), ["p", "p|a", "p|a|deep", "p|a/b", "p|ab"].sort());
    assert.ok((await list(kv)).some(([key]) => key[0] === "q"));
  });

  describe("message queue", () => {
    let jobs: JobQueue;
    let queue: JobMessageQueue;
    const controller = new AbortController();
    const received: unknown[] = [];
    let listening: Promise<void>;
    before(() => {
      jobs = new JobQueue(server.ctx.db, server.ctx.log);
      queue = new JobMessageQueue(jobs);
      listening = queue.listen((message) => void received.push(message), { signal: controller.signal });
    });
    after(() => jobs.stop());

    test("a message is handed over once, in a job of its own", async () => {
      await queue.enqueue({ type: "outbox", id: 1 });
      const rows = await server.ctx.db.kysely
        .selectFrom("jobs")
        .select("name")
        .where("name", "=", FEDERATION_JOB)
        .execute();
      assert.equal(rows.length, 1);
      await jobs.drain();
      await jobs.drain();
      assert.deepEqual(received, [{ type: "outbox", id: 1 }]);
    });

    test("a delayed message waits for its delay", async () => {
      received.length = 0;
      await queue.enqueue("later", { delay: Temporal.Duration.from({ minutes: 10 }) });
      await jobs.drain();
      assert.deepEqual(received, []);
      await jobs.drain(() => new Date(Date.now() + 11 * 60_000));
      assert.deepEqual(received, ["later"]);
    });

    test("enqueueMany stores every message at once; an ordering key keeps them in order", async () => {
      received.length = 0;
      await queue.enqueueMany(["one", "two", "three"], { orderingKey: "https://remote.example/inbox" });
      const keys = await server.ctx.db.kysely
        .selectFrom("jobs")
        .select("ordering_key")
        .where("name", "=", FEDERATION_JOB)
        .execute();
      assert.deepEqual(
        keys.map((k) => k.ordering_key),
        ["https://remote.example/inbox", "https://remote.example/inbox", "https://remote.example/inbox"],
      );
      await jobs.drain();
      assert.deepEqual(received, ["one", "two", "three"]);
    });

    test("a negative delay is refused", async () => {
      await assert.rejects(queue.enqueue("never", { delay: Temporal.Duration.from({ seconds: -1 }) }), RangeError);
    });

    test("listen ends when its signal aborts", async () => {
      controller.abort();
      await listening;
    });
  });
});
