import https from "node:https";
import tls from "node:tls";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
const run = promisify(execFile);
import { makeTestPki } from "./certs.ts";

const pki = makeTestPki(["a.test"]);
const server = https.createServer({ key: pki.leaf["a.test"].key, cert: pki.leaf["a.test"].cert }, (req, res) => {
  res.setHeader("content-type", "text/plain"); res.end(`hello ${req.headers.host}`);
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const port = (server.address() as any).port;
const url = `https://a.test:${port}/`;
const tryIt = async (label: string, f: () => Promise<string>) => {
  try { console.log(label, "OK:", await f()); } catch (e: any) { console.log(label, "FAIL:", e.cause?.code ?? e.code ?? e.message); }
};
const httpsGet = (u: string, opts: https.RequestOptions = {}) => new Promise<string>((resolve, reject) => {
  const r = https.request(u, { ...opts }, (res) => { let b = ""; res.on("data", (c) => (b += c)); res.on("end", () => resolve(b)); });
  r.on("error", reject); r.end();
});
const loopbackLookup = (hostname: string, options: any, cb: any) => {
  if (typeof options === "function") { cb = options; options = {}; }
  if (hostname.endsWith(".test")) return options?.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4);
  return cb(Object.assign(new Error("ENOTFOUND " + hostname), { code: "ENOTFOUND" }));
};

// 1. Nothing configured: name does not resolve.
await tryIt("fetch, no config", async () => (await fetch(url)).text());
// 2. https with lookup only: resolves, but the CA is unknown.
await tryIt("https lookup only", () => httpsGet(url, { lookup: loopbackLookup as any, agent: false }));
// 3. undici Agent (npm undici 7.29.1) as global dispatcher: connect.lookup + connect.ca.
const { Agent, setGlobalDispatcher, getGlobalDispatcher } = await import("undici");
const original = getGlobalDispatcher();
setGlobalDispatcher(new Agent({ connect: { ca: [...tls.rootCertificates, pki.caPem], lookup: loopbackLookup as any } }));
await tryIt("global fetch via undici Agent{connect:{ca,lookup}}", async () => (await fetch(url)).text());
setGlobalDispatcher(original);
// 4. tls.setDefaultCACertificates (Node >= 22.15/24.5): in-process CA for every TLS client that uses the default store.
tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
await tryIt("https lookup + setDefaultCACertificates", () => httpsGet(url, { lookup: loopbackLookup as any, agent: false }));
setGlobalDispatcher(new Agent({ connect: { lookup: loopbackLookup as any } }));
await tryIt("global fetch undici Agent{lookup} + setDefaultCACertificates", async () => (await fetch(url)).text());
setGlobalDispatcher(original);
// 5. NODE_EXTRA_CA_CERTS in a child process (read once at startup).
const child = `const https=require("node:https");https.get(${JSON.stringify(`https://127.0.0.1:${port}/`)},{servername:"a.test",headers:{host:"a.test"}},r=>{let b="";r.on("data",c=>b+=c);r.on("end",()=>console.log("child ok:",b))}).on("error",e=>console.log("child fail:",e.code))`;
console.log("with NODE_EXTRA_CA_CERTS ->", (await run(process.execPath, ["-e", child], { env: { ...process.env, NODE_EXTRA_CA_CERTS: pki.caFile } })).stdout.trim());
console.log("without ->", (await run(process.execPath, ["-e", child], { env: { ...process.env } })).stdout.trim());
const setLater = `process.env.NODE_EXTRA_CA_CERTS=${JSON.stringify(pki.caFile)};` + child;
console.log("set in-process after start ->", (await run(process.execPath, ["-e", setLater], { env: { ...process.env } })).stdout.trim());
server.close();
