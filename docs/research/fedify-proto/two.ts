// Two Fedify+Fastify servers on loopback under a.test / b.test with real TLS (throwaway CA),
// SQL-backed KvStore and MessageQueue, Rookery's address policy at connect time.
import { createServer } from "node:net";
import tls from "node:tls";
import Fastify from "fastify";
import { setGlobalDispatcher } from "undici";
import { AsyncLocalStorage } from "node:async_hooks";
import { configure, getConsoleSink } from "@logtape/logtape";
import { createFederation, signRequest, kvCache, getAuthenticatedDocumentLoader, type Federation, type HttpMessageSignaturesSpecDeterminer } from "@fedify/fedify";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import { Accept, Create, Endpoints, Follow, Note, Person, isActor } from "@fedify/vocab";
import { openDatabase } from "/work/main/src/db/connect.ts";
import { sql } from "/work/main/node_modules/kysely/dist/index.js";
import { makeTestPki } from "./certs.ts";
import { createSafeAgent } from "./ssrf_dispatcher.ts";
import { SqlKvStore } from "./sql_kv.ts";
import { SqlMessageQueue } from "./sql_mq.ts";
import { mountFederation } from "./adapter.ts";

await configure({ contextLocalStorage: new AsyncLocalStorage(), sinks: { console: getConsoleSink() }, loggers: [
  { category: ["fedify"], sinks: ["console"], lowestLevel: (process.env.FEDIFY_LOG as any) ?? "fatal" },
  { category: ["logtape", "meta"], sinks: ["console"], lowestLevel: "warning" },
] });

const freePort = () => new Promise<number>((r) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as any).port; s.close(() => r(p)); }); });
const pki = makeTestPki(["a.test", "b.test"]);
// Outbound: trust the test CA in-process and send *.test to 127.0.0.1 through the policy-checking agent.
tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
setGlobalDispatcher(createSafeAgent({
  allowedPrivateAddresses: ["127.0.0.1/32"],
  resolve: async (h) => (h.endsWith(".test") ? [{ address: "127.0.0.1", family: 4 }] : []),
}));

interface Data { name: string }
type Events = string[];
const genKeys = async () => [
  await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]),
  await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"]) as CryptoKeyPair,
];

// Built-in-equivalent loaders that skip Fedify's DNS-based check (the global dispatcher enforces the
// address policy at connect time) and can preload extra contexts; userAgent goes here, not in options.
function customLoaders(kv: SqlKvStore, origin: string) {
  const userAgent = { software: "Rookery/0.1.0", url: new URL(origin) };
  const extra: Record<string, unknown> = {}; // e.g. Akkoma's litepub-0.1.jsonld by path
  const base = getDocumentLoader({ allowPrivateAddress: true, userAgent });
  const withExtra = async (url: string, o?: any) => (url in extra ? { contextUrl: null, document: extra[url], documentUrl: url } : base(url, o));
  const cached = kvCache({ loader: withExtra, kv, prefix: ["_fedify", "remoteDocument"] });
  const specDeterminer: HttpMessageSignaturesSpecDeterminer = {
    determineSpec: async (o) => (await kv.get<any>(["_fedify", "httpMessageSignaturesSpec", o])) ?? "rfc9421",
    rememberSpec: (o, spec) => kv.set(["_fedify", "httpMessageSignaturesSpec", o], spec),
  };
  return {
    documentLoaderFactory: () => cached,
    contextLoaderFactory: () => cached,
    authenticatedDocumentLoaderFactory: (identity: any) => getAuthenticatedDocumentLoader(identity, { allowPrivateAddress: true, userAgent, specDeterminer }),
  };
}

async function makeServer(host: string, user: string, events: Events) {
  const port = await freePort();
  const origin = `https://${host}:${port}`;
  const db = await openDatabase(`sqlite:/tmp/fedify-research/${host}-${process.pid}.sqlite`);
  await sql.raw(`CREATE TABLE IF NOT EXISTS federation_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER)`).execute(db.kysely);
  await sql.raw(`CREATE TABLE IF NOT EXISTS federation_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, message TEXT NOT NULL, ordering_key TEXT, run_at INTEGER NOT NULL, locked_until INTEGER, locked_by TEXT, attempts INTEGER NOT NULL DEFAULT 0)`).execute(db.kysely);
  const keys = await genKeys();
  const kv = new SqlKvStore(db.kysely, "sqlite");
  const federation: Federation<Data> = createFederation<Data>({
    kv,
    queue: {
      inbox: new SqlMessageQueue(db.kysely, "sqlite", "inbox", { pollMs: 100 }),
      outbox: new SqlMessageQueue(db.kysely, "sqlite", "outbox", { pollMs: 100 }),
      fanout: new SqlMessageQueue(db.kysely, "sqlite", "fanout", { pollMs: 100 }),
    },
    origin,
    manuallyStartQueue: true,
    ...(process.env.CUSTOM_LOADERS ? customLoaders(kv, origin) : { allowPrivateAddress: true }), // tests only: Fedify's own DNS check cannot resolve *.test
    firstKnock: (process.env.FIRST_KNOCK as any) ?? "rfc9421",
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier !== user) return null;
    const kp = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier), preferredUsername: identifier, name: identifier.toUpperCase(),
      url: new URL(`/@${identifier}`, ctx.canonicalOrigin),
      inbox: ctx.getInboxUri(identifier), endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      followers: ctx.getFollowersUri(identifier),
      publicKey: kp[0].cryptographicKey, assertionMethods: kp.map((k) => k.multikey),
    });
  }).setKeyPairsDispatcher(async (_ctx, identifier) => (identifier === user ? keys : []))
    .mapHandle((_ctx, username) => (username.toLowerCase() === user ? user : null));
  federation.setFollowersDispatcher("/users/{identifier}/followers", async () => ({ items: [] }));
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .setSharedKeyDispatcher(() => ({ identifier: user }))
    .on(Follow, async (ctx, follow) => {
      events.push(`Follow from ${follow.actorId?.href}`);
      const follower = await follow.getActor(ctx);
      if (!isActor(follower)) return;
      await ctx.sendActivity({ identifier: user }, follower, new Accept({
        id: new URL(`#accepts/${crypto.randomUUID()}`, ctx.getActorUri(user)), actor: ctx.getActorUri(user), object: follow,
      }), { orderingKey: follow.actorId?.href });
    })
    .on(Accept, async (_ctx, accept) => { events.push(`Accept from ${accept.actorId?.href}`); })
    .on(Create, async (_ctx, create) => {
      const note = await create.getObject();
      events.push(`Create by ${create.actorId?.href}: id=${create.id?.href} object=${note?.id?.href} attributedTo=${note?.attributionId?.href}`);
    })
    .onError((_ctx, error) => { events.push(`inbox error: ${error.message}`); });

  const app = Fastify({ https: { key: pki.leaf[host].key, cert: pki.leaf[host].cert }, bodyLimit: 1024 * 1024 });
  mountFederation(app, federation, { baseUrl: origin, contextData: () => ({ name: host }) });
  app.get("/@:user", async () => "html profile page");
  await app.listen({ port, host: "127.0.0.1" });
  const controller = new AbortController();
  const queue = federation.startQueue({ name: host }, { signal: controller.signal });
  return { host, port, origin, federation, app, kv, keys, db, stop: async () => { controller.abort(); await queue; await app.close(); await db.close(); } };
}

const eventsA: Events = [], eventsB: Events = [];
const A = await makeServer("a.test", "alice", eventsA);
const B = await makeServer("b.test", "bob", eventsB);
const until = async (f: () => boolean, ms = 15000) => { const d = Date.now() + ms; while (!f()) { if (Date.now() > d) throw new Error("timeout"); await new Promise((r) => setTimeout(r, 20)); } };

// 1. WebFinger + actor fetch across TLS, by acct: handle with a port.
const ctxA = A.federation.createContext(new URL(A.origin), { name: "a.test" });
let t = performance.now();
let bob = await ctxA.lookupObject(`@BOB@b.test:${B.port}`);
if (bob == null) { console.log("handle lookup failed (expected with CUSTOM_LOADERS: WebFinger still runs Fedify's DNS check)"); bob = await ctxA.lookupObject(`${B.origin}/users/bob`); }
console.log("lookup @BOB@b.test:port ->", bob?.id?.href, `${(performance.now() - t).toFixed(0)} ms`);
const wf = await ctxA.lookupWebFinger(`acct:BOB@b.test:${B.port}`);
console.log("webfinger subject/aliases:", wf?.subject, JSON.stringify(wf?.aliases), "links:", wf?.links?.map((l) => l.rel).join(","));

// 2. Follow -> Accept, through both queues and both inboxes.
t = performance.now();
await ctxA.sendActivity({ identifier: "alice" }, bob as Person, new Follow({
  id: new URL(`/follows/${crypto.randomUUID()}`, A.origin), actor: ctxA.getActorUri("alice"), object: bob!.id,
}));
await until(() => eventsA.some((e) => e.startsWith("Accept")));
console.log("Follow -> Accept round trip:", `${(performance.now() - t).toFixed(0)} ms`, eventsB, eventsA);
console.log("A's cached spec for B:", await A.kv.get(["_fedify", "httpMessageSignaturesSpec", B.origin]));

// 2b. Fan-out timing: one Create to 100 distinct inbox URLs on B (fanout queue -> 100 outbox messages).
if (process.env.FANOUT) {
  let delivered = 0;
  B.app.addHook ? null : null;
  const recipients = Array.from({ length: 100 }, (_, i) => ({ id: new URL(`${B.origin}/users/bob?n=${i}`), inboxId: new URL(`${B.origin}/inbox?n=${i}`) }));
  const before = eventsB.length;
  t = performance.now();
  await ctxA.sendActivity({ identifier: "alice" }, recipients as any, new Create({
    id: new URL(`/creates/${crypto.randomUUID()}`, A.origin), actor: ctxA.getActorUri("alice"),
    object: new Note({ id: new URL(`/notes/${crypto.randomUUID()}`, A.origin), attribution: ctxA.getActorUri("alice"), content: "fan-out" }),
  }));
  const enq = performance.now() - t;
  const count = async () => Number((await sql`SELECT count(*) AS n FROM federation_messages WHERE queue IN ('outbox','fanout')`.execute(A.db.kysely)).rows[0].n);
  while ((await count()) > 0) await new Promise((r) => setTimeout(r, 20));
  console.log(`fan-out to 100 inboxes: enqueue ${enq.toFixed(0)} ms, all delivered after ${(performance.now() - t).toFixed(0)} ms`);
}
// 3. Raw requests at B's shared inbox.
const inbox = new URL("/inbox", B.origin);
const alice = ctxA.getActorUri("alice");
const rsa = { keyId: new URL("#main-key", alice), privateKey: A.keys[0].privateKey };
const create = (noteId: string, attributedTo: string) => ({
  "@context": "https://www.w3.org/ns/activitystreams", id: `${A.origin}/creates/${crypto.randomUUID()}`, type: "Create", actor: alice.href,
  to: ["https://www.w3.org/ns/activitystreams#Public"],
  object: { id: noteId, type: "Note", attributedTo, content: "hi", to: ["https://www.w3.org/ns/activitystreams#Public"] },
});
const post = async (label: string, body: string, spec?: "rfc9421" | "draft-cavage-http-signatures-12", mutate?: (r: Request) => Request) => {
  let req = new Request(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body });
  if (spec) req = await signRequest(req, rsa.privateKey, rsa.keyId, { spec });
  if (mutate) req = mutate(req);
  const res = await fetch(req);
  console.log(label, "->", res.status, (await res.text()).slice(0, 60));
};
await post("unsigned", JSON.stringify(create(`${A.origin}/notes/1`, alice.href)));
await post("cavage signed", JSON.stringify(create(`${A.origin}/notes/2`, alice.href)), "draft-cavage-http-signatures-12");
await post("rfc9421 signed", JSON.stringify(create(`${A.origin}/notes/3`, alice.href)), "rfc9421");
await post("cavage, body altered after signing", JSON.stringify(create(`${A.origin}/notes/4`, alice.href)), "draft-cavage-http-signatures-12",
  (r) => new Request(r, { body: JSON.stringify(create(`${A.origin}/notes/4b`, alice.href)) }));
await post("ORIGIN SPOOF: note id on c.test, attributedTo someone else", JSON.stringify(create("https://c.test/notes/evil", "https://c.test/users/mallory")), "draft-cavage-http-signatures-12");
// RFC 9421 signature that does not cover content-digest (signed with body:null), then any body.
{
  const bodyText = JSON.stringify(create(`${A.origin}/notes/9421-nodigest`, alice.href));
  const unsigned = new Request(inbox, { method: "POST", headers: { "content-type": "application/activity+json" }, body: bodyText });
  const signed = await signRequest(new Request(inbox, { method: "POST", headers: unsigned.headers }), rsa.privateKey, rsa.keyId, { spec: "rfc9421", body: null });
  const res = await fetch(new Request(inbox, { method: "POST", headers: signed.headers, body: bodyText }));
  console.log("rfc9421 without content-digest covered ->", res.status, "Signature-Input:", signed.headers.get("signature-input"));
}
// Date outside window
await post("cavage, Date 2 h old", JSON.stringify(create(`${A.origin}/notes/5`, alice.href)), undefined, (r) => r);
{
  const req = new Request(inbox, { method: "POST", headers: { "content-type": "application/activity+json", date: new Date(Date.now() - 2 * 3600e3).toUTCString() }, body: JSON.stringify(create(`${A.origin}/notes/6`, alice.href)) });
  const res = await fetch(await signRequest(req, rsa.privateKey, rsa.keyId, { spec: "draft-cavage-http-signatures-12" }));
  console.log("cavage with Date 2 h old ->", res.status);
}
await post("1 MiB + 1 body", "x".repeat(1024 * 1024 + 1), "draft-cavage-http-signatures-12");
// GET negotiation: HTML falls through to Fastify, AS JSON served by Fedify.
for (const accept of ["text/html", "application/activity+json", 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"']) {
  const r = await fetch(new URL("/users/bob", B.origin), { headers: { accept } });
  console.log(`GET /users/bob Accept: ${accept} ->`, r.status, r.headers.get("content-type"));
}
for (const q of ["resource=acct:bob@b.test:" + B.port, "resource=bob@b.test:" + B.port, "resource=acct:bob@elsewhere.test", "", `resource=${encodeURIComponent(B.origin + "/@bob")}`]) {
  const r = await fetch(new URL(`/.well-known/webfinger?${q}`, B.origin));
  console.log(`webfinger ?${q} ->`, r.status, r.headers.get("content-type"), (await r.text()).slice(0, 120));
}
const ni = await fetch(new URL("/.well-known/nodeinfo", B.origin)); console.log("/.well-known/nodeinfo ->", ni.status, await ni.text());
await until(() => eventsB.filter((e) => e.startsWith("Create")).length >= 4, 5000).catch(() => {});
console.log("B inbox events:\n  " + eventsB.join("\n  "));
await A.stop(); await B.stop();
process.exit(0);
