// Design A: one undici Agent installed as the global dispatcher, so every global fetch() (which is
// what Fedify 2.3.6 uses for delivery, documents, keys, WebFinger and NodeInfo) connects only to
// addresses Rookery's policy allows, checked at connect time (no DNS rebinding window).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector } from "undici";
import { isReachableAddress } from "/work/main/src/services/http/addresses.ts";

export interface DispatcherOptions {
  allowedPrivateAddresses: readonly string[];
  /** Host name -> addresses; tests map *.test to 127.0.0.1. Defaults to dns.lookup(all). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  ca?: string[];
  maxResponseSize?: number;
}

export function createSafeAgent(o: DispatcherOptions): Agent {
  const resolve = o.resolve ?? ((h: string) => new Promise<LookupAddress[]>((res, rej) =>
    dnsLookup(h, { all: true, verbatim: true }, (e, a) => (e ? rej(e) : res(a)))));
  const refuse = (host: string, address: string) =>
    Object.assign(new Error(`refused to connect to ${host} (${address}): not a public address`), { code: "EADDRREFUSED_SSRF" });
  // Called by net/tls.connect for host names (never for IP literals, hence the wrapper below).
  const checkedLookup = (hostname: string, options: any, callback: any) => {
    if (typeof options === "function") { callback = options; options = {}; }
    resolve(hostname).then((all) => {
      if (all.length === 0) return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
      for (const a of all) if (!isReachableAddress(a.address, o.allowedPrivateAddresses)) return callback(refuse(hostname, a.address));
      const family = options?.family === 6 || options?.family === "IPv6" ? 6 : options?.family === 4 || options?.family === "IPv4" ? 4 : 0;
      const matching = family ? all.filter((a) => a.family === family) : all;
      if (options?.all) callback(null, matching); else callback(null, matching[0].address, matching[0].family);
    }, (e) => callback(e));
  };
  const connector = buildConnector({ ca: o.ca, lookup: checkedLookup as any, timeout: 5_000 });
  return new Agent({
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
    maxResponseSize: o.maxResponseSize ?? 1024 * 1024,
    connect: (opts, cb) => {
      const host = opts.hostname.startsWith("[") ? opts.hostname.slice(1, -1) : opts.hostname;
      if (isIP(host) && !isReachableAddress(host, o.allowedPrivateAddresses)) return cb(refuse(host, host), null);
      return connector(opts, cb);
    },
  });
}

if (import.meta.main) {
  const { setGlobalDispatcher } = await import("undici");
  const http = await import("node:http");
  const s = http.createServer((q, r) => r.end("x".repeat(Number(new URL(q.url!, "http://x").searchParams.get("n") ?? 10)))).listen(0, "127.0.0.1");
  await new Promise((r) => s.once("listening", r));
  const port = (s.address() as any).port;
  const t = async (label: string, u: string) => { try { const r = await fetch(u); console.log(label, r.status, (await r.text()).length); } catch (e: any) { console.log(label, "->", e.cause?.code ?? e.cause?.message ?? e.message); } };
  setGlobalDispatcher(createSafeAgent({ allowedPrivateAddresses: [] }));
  await t("policy=[] loopback literal", `http://127.0.0.1:${port}/`);
  await t("policy=[] localhost name", `http://localhost:${port}/`);
  await t("policy=[] 169.254 literal", `http://169.254.169.254/`);
  setGlobalDispatcher(createSafeAgent({ allowedPrivateAddresses: ["127.0.0.1/32"], resolve: async () => [{ address: "127.0.0.1", family: 4 }] }));
  await t("allow 127.0.0.1, name a.test", `http://a.test:${port}/`);
  await t("allow 127.0.0.1, 2 MiB body", `http://a.test:${port}/?n=${2 * 1024 * 1024}`);
  s.close();
}
