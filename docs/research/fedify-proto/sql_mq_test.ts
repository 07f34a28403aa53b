import { testMessageQueue } from "@fedify/testing";
import { openDatabase } from "/work/main/src/db/connect.ts";
import { sql } from "/work/main/node_modules/kysely/dist/index.js";
import { SqlMessageQueue } from "./sql_mq.ts";
const url = process.argv[2] ?? `sqlite:/tmp/fedify-research/mq-${process.pid}.sqlite`;
const schema = url.startsWith("postgres") ? `fedify_research_mq_${process.pid}` : undefined;
const db1 = await openDatabase(url, { schema }), db2 = await openDatabase(url, { schema });
const pg = db1.engine === "postgres";
await sql.raw(`CREATE TABLE federation_messages (seq ${pg ? "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"},
  queue TEXT NOT NULL, message TEXT NOT NULL, ordering_key TEXT, run_at BIGINT NOT NULL, locked_until BIGINT, locked_by TEXT,
  attempts INTEGER NOT NULL DEFAULT 0)`).execute(db1.kysely);
await sql.raw(`CREATE INDEX federation_messages_due ON federation_messages (queue, run_at)`).execute(db1.kysely);
await sql.raw(`CREATE INDEX federation_messages_order ON federation_messages (ordering_key, seq) WHERE ordering_key IS NOT NULL`).execute(db1.kysely);
let n = 0; const t = Date.now();
await testMessageQueue(() => new SqlMessageQueue([db1, db2][n++ % 2].kysely, db1.engine, "outbox", { pollMs: 200 }), () => {}, { testOrderingKey: true });
console.log(db1.engine, "SqlMessageQueue passed testMessageQueue (with ordering keys) in", Date.now() - t, "ms");
if (schema) await sql.raw(`DROP SCHEMA ${schema} CASCADE`).execute(db1.kysely);
await db1.close(); await db2.close(); process.exit(0);
