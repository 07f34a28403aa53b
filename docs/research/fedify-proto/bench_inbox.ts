// In-process inbox throughput: federation.fetch() on pre-signed requests (no sockets), SQLite KV+MQ.
import { createFederation, signRequest, signJsonLd, exportJwk } from "@fedify/fedify";
import { Person, Create, CryptographicKey, Endpoints } from "@fedify/vocab";
import { exportSpki } from "@fedify/vocab-runtime";
import { openDatabase } from "/work/main/src/db/connect.ts";
import { sql } from "/work/main/node_modules/kysely/dist/index.js";
import { SqlKvStore } from "./sql_kv.ts";
import { SqlMessageQueue } from "./sql_mq.ts";
import { kvCache, MemoryKvStore, InProcessMessageQueue } from "@fedify/fedify";
import { getDocumentLoader, preloadedContexts } from "@fedify/vocab-runtime";

const N = Number(process.env.N ?? 500);
const db = await openDatabase(`sqlite:/tmp/fedify-research/bench-${process.pid}.sqlite`);
await sql.raw(`CREATE TABLE federation_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER)`).execute(db.kysely);
await sql.raw(`CREATE TABLE federation_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, message TEXT NOT NULL, ordering_key TEXT, run_at INTEGER NOT NULL, locked_until INTEGER, locked_by TEXT, attempts INTEGER NOT NULL DEFAULT 0)`).execute(db.kysely);
const kv = new SqlKvStore(db.kysely, "sqlite");
const remote = await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]);
const alice = "https://a.test/users/alice";
const actorDoc = {
  "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
  id: alice, type: "Person", preferredUsername: "alice", inbox: `${alice}/inbox`,
  publicKey: { id: `${alice}#main-key`, owner: alice, publicKeyPem: await exportSpki(remote.publicKey) },
};
const docs: Record<string, unknown> = { [alice]: actorDoc, [`${alice}#main-key`]: actorDoc };
const loader = async (url: string) => {
  if (url in preloadedContexts) return { contextUrl: null, document: preloadedContexts[url], documentUrl: url };
  if (url.split("#")[0] in docs) return { contextUrl: null, document: docs[url.split("#")[0]], documentUrl: url };
  throw new Error("no network in bench: " + url);
};
let handled = 0;
const fed = createFederation<void>({
  kv: process.env.MEM ? new MemoryKvStore() : kv, queue: process.env.MEM ? new InProcessMessageQueue({ pollInterval: { milliseconds: 50 } }) : new SqlMessageQueue(db.kysely, "sqlite", "inbox", { workers: 4, pollMs: 50 }), origin: "https://b.test", manuallyStartQueue: true,
  documentLoaderFactory: () => loader, contextLoaderFactory: () => loader, authenticatedDocumentLoaderFactory: () => loader,
});
fed.setActorDispatcher("/users/{identifier}", (ctx, id) => new Person({ id: ctx.getActorUri(id), preferredUsername: id, inbox: ctx.getInboxUri(id) }));
fed.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Create, async () => { handled++; });
const controller = new AbortController();
const worker = fed.startQueue(undefined, { signal: controller.signal });

async function run(label: string, ld: boolean, spec: "draft-cavage-http-signatures-12" | "rfc9421") {
  const reqs: Request[] = [];
  for (let i = 0; i < N; i++) {
    let body: any = {
      "@context": "https://www.w3.org/ns/activitystreams", id: `${alice}/statuses/${label}${i}/activity`, type: "Create", actor: alice,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      object: { id: `${alice}/statuses/${label}${i}`, type: "Note", attributedTo: alice, content: `<p>hello ${i}</p>`, to: ["https://www.w3.org/ns/activitystreams#Public"] },
    };
    if (ld) body = await signJsonLd(body, remote.privateKey, new URL(`${alice}#main-key`), { contextLoader: loader });
    reqs.push(await signRequest(new Request("https://b.test/inbox", { method: "POST", headers: { "content-type": "application/activity+json" }, body: JSON.stringify(body) }), remote.privateKey, new URL(`${alice}#main-key`), { spec }));
  }
  const before = handled;
  const t = performance.now();
  const statuses: Record<number, number> = {};
  for (const r of reqs) { const res = await fed.fetch(r, { contextData: undefined }); statuses[res.status] = (statuses[res.status] ?? 0) + 1; }
  const accepted = performance.now() - t;
  while (handled - before < N) await new Promise((r) => setTimeout(r, 10));
  const total = performance.now() - t;
  console.log(`${label}: ${N} POSTs verified+enqueued ${(N / accepted * 1000).toFixed(0)}/s; through listeners ${(N / total * 1000).toFixed(0)}/s`, statuses);
}
await run("warmup", false, "rfc9421");
await run("cavage", false, "draft-cavage-http-signatures-12");
await run("rfc9421", false, "rfc9421");
await run("cavage+LDsig", true, "draft-cavage-http-signatures-12");
controller.abort(); await worker; await db.close(); process.exit(0);
