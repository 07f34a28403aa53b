import { testMessageQueue } from "@fedify/testing";
import { openDatabase } from "/work/main/src/db/connect.ts";
import { migrateToLatest } from "/work/main/src/db/migrate.ts";
import { JobQueue } from "/work/main/src/jobs/queue.ts";
import { JobMessageQueue } from "./job_mq.ts";

const url = process.argv[2] ?? `sqlite:/tmp/fedify-research/jobs-${process.pid}.sqlite`;
const schema = url.startsWith("postgres") ? `fedify_research_jobs_${process.pid}` : undefined;
const log: any = { info() {}, warn: (o: any, m: string) => console.warn("warn", m), error: (o: any, m: string) => console.error("error", m, o), debug() {}, trace() {}, fatal() {}, child() { return log; } };
const db1 = await openDatabase(url, { schema }); await migrateToLatest(db1);
const db2 = await openDatabase(url, { schema });   // a second "process"
const q1 = new JobQueue(db1, log), q2 = new JobQueue(db2, log);
const t = Date.now();
await testMessageQueue(
  async () => { const q = [q1, q2][(globalThis as any).__n = ((globalThis as any).__n ?? -1) + 1]; await q.start({ pollInterval: 200, concurrency: 4 }); return new JobMessageQueue(q, "federation.outbox"); },
  async () => { await q1.stop(); await q2.stop(); },
);
console.log(db1.engine, "JobMessageQueue passed testMessageQueue in", Date.now() - t, "ms");
if (schema) await (db1.kysely as any).schema.dropSchema(schema).cascade().execute();
await db1.close(); await db2.close();
process.exit(0);
