import http from "node:http";
import { Agent, setGlobalDispatcher } from "undici";
const s = http.createServer((q, r) => r.end(String(q.headers["user-agent"]))).listen(0, "127.0.0.1");
await new Promise((r) => s.once("listening", r));
const u = `http://127.0.0.1:${(s.address() as any).port}/`;
console.log("default fetch UA:", await (await fetch(u, { method: "POST", body: "{}" })).text());
const withUa = new Agent().compose((dispatch) => (opts, handler) => {
  const h = opts.headers as any;
  const ua = "Rookery/0.1.0 (+https://a.test/)";
  if (Array.isArray(h)) {
    const i = h.findIndex((x: any, j: number) => j % 2 === 0 && String(x).toLowerCase() === "user-agent");
    if (i < 0) opts = { ...opts, headers: [...h, "user-agent", ua] };
    else if (String(h[i + 1]) === "node") { const c = [...h]; c[i + 1] = ua; opts = { ...opts, headers: c }; }
  } else {
    const k = Object.keys(h ?? {}).find((x) => x.toLowerCase() === "user-agent");
    if (!k || String(h[k]) === "node") opts = { ...opts, headers: { ...(h ?? {}), [k ?? "user-agent"]: ua } };
  }
  return dispatch(opts, handler);
});
setGlobalDispatcher(withUa);
console.log("composed UA:", await (await fetch(u, { method: "POST", body: "{}" })).text());
console.log("explicit UA kept:", await (await fetch(u, { headers: { "user-agent": "Fedify/2.3.6" } })).text());
s.close();
