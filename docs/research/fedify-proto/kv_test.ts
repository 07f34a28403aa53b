import assert from "node:assert/strict";
import { Temporal } from "@js-temporal/polyfill";
import { openDatabase } from "/work/main/src/db/connect.ts";
import { SqlKvStore } from "./sql_kv.ts";

for (const url of [`sqlite:/tmp/fedify-research/kv-${process.pid}.sqlite`, "postgres://postgres@127.0.0.1:5432/test"]) {
  const schema = `fedify_research_${process.pid}`;
  const db = await openDatabase(url, url.startsWith("postgres") ? { schema } : {});
  const bigint = db.engine === "postgres" ? "bigint" : "integer";
  await (db.kysely as any).schema.createTable("federation_kv").ifNotExists()
    .addColumn("key", "text", (c: any) => c.primaryKey()).addColumn("value", "text", (c: any) => c.notNull())
    .addColumn("expires_at", bigint).execute();
  const kv = new SqlKvStore(db.kysely, db.engine);
  await kv.set(["_fedify", "publicKey", "https://a.test/u#main-key"], { a: 1 });
  await kv.set(["_fedify", "publicKey", "https://b.test/u#main-key"], null, { ttl: Temporal.Duration.from({ minutes: 10 }) });
  await kv.set(["_fedify", "activityIdempotence", "https://a.test\nhttps://x/1\nsharedInbox"], true, { ttl: Temporal.Duration.from({ days: 1 }) });
  await kv.set(["_fedify", "circuit", "a.test"], { state: "closed", failures: [] });
  await kv.set(["_fedify", "circuitX"], 1);
  await kv.set(["x"], "short", { ttl: Temporal.Duration.from({ milliseconds: 50 }) });
  assert.deepEqual(await kv.get(["_fedify", "publicKey", "https://a.test/u#main-key"]), { a: 1 });
  assert.equal(await kv.get(["_fedify", "publicKey", "https://b.test/u#main-key"]), null); // stored null != absent
  assert.equal(await kv.get(["nope"]), undefined);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(await kv.get(["x"]), undefined, "expired");
  const listed = [];
  for await (const e of kv.list(["_fedify", "circuit"])) listed.push(e.key);
  assert.deepEqual(listed, [["_fedify", "circuit", "a.test"]], "prefix is per element, not per string");
  // cas
  assert.equal(await kv.cas(["c"], undefined, { n: 1 }), true);
  assert.equal(await kv.cas(["c"], undefined, { n: 2 }), false);
  assert.equal(await kv.cas(["c"], { n: 1 }, { n: 2 }), true);
  assert.equal(await kv.cas(["c"], { n: 2 }, undefined), true);
  assert.equal(await kv.get(["c"]), undefined);
  // concurrent cas from "two processes": exactly one wins
  const kv2 = new SqlKvStore((await openDatabase(url, url.startsWith("postgres") ? { schema } : {})).kysely, db.engine);
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? kv : kv2).cas(["race"], undefined, i)));
  assert.equal(results.filter(Boolean).length, 1, "one cas wins");
  console.log(db.engine, "KV OK; swept", await kv.sweep());
  if (db.engine === "postgres") await (db.kysely as any).schema.dropSchema(schema).cascade().execute();
  await db.close();
}
process.exit(0);
