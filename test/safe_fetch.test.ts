import assert from "node:assert/strict";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import type { Config } from "../src/config.ts";
import {
  DestinationRefused,
  FetchFailed,
  FetchTimedOut,
  ResponseTooLarge,
  safeFetch,
  TooManyRedirects,
  type SafeFetchOptions,
} from "../src/services/http/safe_fetch.ts";
import { isNonPublicAddress } from "../src/services/http/addresses.ts";
import { ROOKERY_VERSION } from "../src/version.ts";
import { createTestServer, TEST_ENGINE, type TestServer } from "./kit.ts";

const MIB = 1024 * 1024;

interface Site {
  origin: string;
  port: number;
  /** Requests received, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** The answers every test site gives; `label` tells the sites apart. */
function route(label: string, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const url = new URL(req.url ?? "/", "http://site");
  const redirect = (status: number, location: string) => {
    res.writeHead(status, { location });
    res.end();
  };
  switch (url.pathname) {
    case "/hello":
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`hello from ${label}`);
      return;
    case "/echo":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ label, method: req.method, headers: req.headers, body: body.toString() }));
      return;
    case "/to":
      return redirect(Number(url.searchParams.get("status") ?? 302), url.searchParams.get("url")!);
    case "/chain": {
      const left = Number(url.searchParams.get("n"));
      if (left > 0) return redirect(302, `/chain?n=${left - 1}`);
      res.end("arrived");
      return;
    }
    case "/big-declared":
      res.writeHead(200, { "content-length": String(2 * MIB) });
      res.end(Buffer.alloc(2 * MIB, "a"));
      return;
    case "/big-streamed": {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "b");
      let sent = 0;
      const pump = () => {
        while (sent < 4 * MIB && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
      return;
    }
    case "/gzip":
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      res.end(gzipSync("compressed hello"));
      return;
    case "/gzip-bomb":
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      res.end(gzipSync(Buffer.alloc(5 * MIB)));
      return;
    case "/stall-body":
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
      return;
    case "/stall-headers":
      return;
    default:
      res.writeHead(404);
      res.end("not found");
  }
}

async function startSite(host: string, label: string): Promise<Site> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://site").pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => route(label, req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const totalHits = (site: Site) => [...site.hits.values()].reduce((a, b) => a + b, 0);

describe(`safeFetch (${TEST_ENGINE})`, () => {
  /** Allows 127.0.0.1 only, as ALLOWED_PRIVATE_ADDRESSES=127.0.0.1. */
  let allowed: TestServer;
  /** Allows nothing private. */
  let strict: TestServer;
  let main: Site;
  let other: Site;
  let v6: Site;
  /** The same configuration with all of loopback allowed (proves the other sites are reachable at all). */
  let loopback: { config: Config };

  before(async () => {
    [allowed, strict, main, other, v6] = await Promise.all([
      createTestServer({ env: { ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1" } }),
      createTestServer(),
      startSite("127.0.0.1", "main"),
      startSite("127.0.0.2", "other"),
      startSite("::1", "v6"),
    ]);
    loopback = { config: { ...allowed.config, allowedPrivateAddresses: ["127.0.0.0/8", "::1"] } };
  });
  after(async () => {
    await Promise.all([allowed.close(), strict.close(), main.close(), other.close(), v6.close()]);
  });

  test("fetches an allowed address, says who is asking, and reports status, headers, body and URL", async () => {
    const res = await safeFetch(allowed.ctx, `${main.origin}/echo`);
    assert.equal(res.status, 200);
    assert.equal(res.url, `${main.origin}/echo`);
    assert.equal(res.headers["content-type"], "application/json");
    const echoed = JSON.parse(res.body.toString());
    assert.equal(echoed.label, "main");
    assert.equal(echoed.headers["user-agent"], `Rookery/${ROOKERY_VERSION} (+https://rookery.test/)`);
    assert.equal(echoed.headers.host, `127.0.0.1:${main.port}`);
  });

  test("answers of any status are returned, not thrown", async () => {
    const res = await safeFetch(allowed.ctx, `${main.origin}/nothing-here`);
    assert.equal(res.status, 404);
    assert.equal(res.body.toString(), "not found");
  });

  test("refuses loopback, private, link-local, CGNAT, multicast and unspecified destinations", async () => {
    const before = totalHits(main) + totalHits(v6);
    const urls = [
      `${main.origin}/hello`,
      `http://localhost:${main.port}/hello`,
      `http://[::1]:${v6.port}/hello`,
      `http://[::ffff:127.0.0.1]:${main.port}/hello`,
      `http://2130706433:${main.port}/hello`, // 127.0.0.1 written as one number
      `http://0.0.0.0:${main.port}/hello`,
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://100.64.0.1/",
      "http://224.0.0.1/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[::ffff:10.0.0.1]/",
      "http://[64:ff9b::a9fe:a9fe]/", // NAT64 of 169.254.169.254
      "http://[64:ff9b::7f00:1]/",
    ];
    for (const url of urls) {
      await assert.rejects(safeFetch(strict.ctx, url, { timeoutMs: 2000 }), DestinationRefused, url);
    }
    assert.equal(totalHits(main) + totalHits(v6), before, "nothing was contacted");
  });

  test("a NAT64 address (64:ff9b::/96) is judged by the IPv4 address it carries", () => {
    assert.equal(isNonPublicAddress("64:ff9b::808:808"), false);
    assert.equal(isNonPublicAddress("64:ff9b::8.8.8.8"), false);
    assert.equal(isNonPublicAddress("64:ff9b::a00:1"), true);
    assert.equal(isNonPublicAddress("64:ff9b::7f00:1"), true);
    assert.equal(isNonPublicAddress("64:ff9b::"), true);
    assert.equal(isNonPublicAddress("64:ff9b:1::808:808"), true, "the local-use NAT64 prefix stays refused");
  });

  test("ALLOWED_PRIVATE_ADDRESSES lets only the listed addresses through", async () => {
    assert.equal((await safeFetch(allowed.ctx, `${main.origin}/hello`)).body.toString(), "hello from main");
    for (const url of [`${other.origin}/hello`, `http://[::1]:${v6.port}/hello`, "http://10.0.0.1/"]) {
      await assert.rejects(safeFetch(allowed.ctx, url, { timeoutMs: 2000 }), DestinationRefused, url);
    }
    // With the whole range listed, the same sites answer.
    assert.equal((await safeFetch(loopback, `${other.origin}/hello`)).body.toString(), "hello from other");
    assert.equal((await safeFetch(loopback, `${v6.origin}/hello`)).body.toString(), "hello from v6");
  });

  test("refuses URLs that are not http(s) or carry credentials", async () => {
    for (const url of [
      "file:///etc/passwd",
      "ftp://127.0.0.1/",
      "data:text/plain,hi",
      "javascript:alert(1)",
      "not a url",
      `http://user:secret@127.0.0.1:${main.port}/hello`,
    ]) {
      await assert.rejects(safeFetch(allowed.ctx, url), DestinationRefused, url);
    }
  });

  test("checks every redirect again: an allowed host cannot send the fetch somewhere forbidden", async () => {
    const before = totalHits(other) + totalHits(v6);
    for (const target of [
      `${other.origin}/hello`,
      `${v6.origin}/hello`,
      "http://169.254.169.254/",
      "file:///etc/passwd",
    ]) {
      const url = `${main.origin}/to?url=${encodeURIComponent(target)}`;
      await assert.rejects(safeFetch(allowed.ctx, url, { timeoutMs: 2000 }), DestinationRefused, target);
    }
    assert.equal(totalHits(other) + totalHits(v6), before, "the forbidden hosts were never contacted");
    // Where the destination is allowed, the same redirect is followed.
    const res = await safeFetch(loopback, `${main.origin}/to?url=${encodeURIComponent(`${other.origin}/hello`)}`);
    assert.equal(res.body.toString(), "hello from other");
    assert.equal(res.url, `${other.origin}/hello`);
  });

  test("follows at most three redirects and reports the final URL", async () => {
    const res = await safeFetch(allowed.ctx, `${main.origin}/chain?n=3`);
    assert.equal(res.body.toString(), "arrived");
    assert.equal(res.url, `${main.origin}/chain?n=0`);
    await assert.rejects(safeFetch(allowed.ctx, `${main.origin}/chain?n=4`), TooManyRedirects);
    await assert.rejects(safeFetch(allowed.ctx, `${main.origin}/chain?n=1`, { maxRedirects: 0 }), TooManyRedirects);
  });

  test("a 303 turns a POST into a GET; credentials do not follow a redirect to another origin", async () => {
    const seeOther = `${main.origin}/to?status=303&url=${encodeURIComponent("/echo")}`;
    const echoed = JSON.parse(
      (
        await safeFetch(allowed.ctx, seeOther, {
          method: "POST",
          body: "payload",
          headers: { "Content-Type": "text/plain" },
        })
      ).body.toString(),
    );
    assert.equal(echoed.method, "GET");
    assert.equal(echoed.body, "");
    assert.equal(echoed.headers["content-type"], undefined);

    const sameOrigin = JSON.parse(
      (
        await safeFetch(allowed.ctx, `${main.origin}/to?url=/echo`, { headers: { Authorization: "Bearer x" } })
      ).body.toString(),
    );
    assert.equal(sameOrigin.headers.authorization, "Bearer x");
    const crossOrigin = JSON.parse(
      (
        await safeFetch(loopback, `${main.origin}/to?url=${encodeURIComponent(`${other.origin}/echo`)}`, {
          headers: { Authorization: "Bearer x" },
        })
      ).body.toString(),
    );
    assert.equal(crossOrigin.label, "other");
    assert.equal(crossOrigin.headers.authorization, undefined);
  });

  test("beforeRequest sees every hop and sets its headers (how federation signs each URL)", async () => {
    const seen: string[] = [];
    const options: SafeFetchOptions = {
      beforeRequest: ({ url, headers }) => {
        seen.push(url.href);
        return { ...headers, "x-signed-for": url.href };
      },
    };
    const res = await safeFetch(allowed.ctx, `${main.origin}/to?url=/echo`, options);
    assert.deepEqual(seen, [`${main.origin}/to?url=/echo`, `${main.origin}/echo`]);
    assert.equal(JSON.parse(res.body.toString()).headers["x-signed-for"], `${main.origin}/echo`);
  });

  test("limits the body size: by Content-Length, while streaming, and after decompression", async () => {
    await assert.rejects(safeFetch(allowed.ctx, `${main.origin}/big-declared`), ResponseTooLarge);
    await assert.rejects(safeFetch(allowed.ctx, `${main.origin}/big-streamed`), ResponseTooLarge);
    await assert.rejects(
      safeFetch(allowed.ctx, `${main.origin}/big-streamed`, { maxBytes: 3 * MIB }),
      ResponseTooLarge,
    );
    assert.equal(
      (await safeFetch(allowed.ctx, `${main.origin}/big-streamed`, { maxBytes: 4 * MIB })).body.length,
      4 * MIB,
    );
    await assert.rejects(safeFetch(allowed.ctx, `${main.origin}/gzip-bomb`), ResponseTooLarge);
    assert.equal(
      (await safeFetch(allowed.ctx, `${main.origin}/hello`, { maxBytes: "hello from main".length })).body.toString(),
      "hello from main",
    );
    await assert.rejects(
      safeFetch(allowed.ctx, `${main.origin}/hello`, { maxBytes: "hello from main".length - 1 }),
      ResponseTooLarge,
    );
  });

  test("decompresses gzip answers", async () => {
    const res = await safeFetch(allowed.ctx, `${main.origin}/gzip`);
    assert.equal(res.body.toString(), "compressed hello");
    assert.equal(res.headers["content-encoding"], undefined);
  });

  test("gives up after the timeout, whether the headers or the body stall", async () => {
    for (const path of ["/stall-headers", "/stall-body"]) {
      const started = Date.now();
      await assert.rejects(safeFetch(allowed.ctx, `${main.origin}${path}`, { timeoutMs: 300 }), (error: unknown) => {
        assert.ok(error instanceof FetchTimedOut, `${path}: ${String(error)}`);
        assert.equal(error.transient, true);
        return true;
      });
      assert.ok(Date.now() - started < 3000, `${path} took ${Date.now() - started} ms`);
    }
  });

  test("connects to the address it checked, once resolved (no DNS rebinding)", async () => {
    const answers = [[{ address: "127.0.0.1", family: 4 }], [{ address: "10.0.0.1", family: 4 }]];
    let lookups = 0;
    const resolve = async () => answers[Math.min(lookups++, 1)];
    const url = `http://rebind.example:${main.port}/echo`;
    const res = await safeFetch(allowed.ctx, url, { resolve, timeoutMs: 2000 });
    assert.equal(lookups, 1);
    const echoed = JSON.parse(res.body.toString());
    assert.equal(echoed.label, "main");
    assert.equal(echoed.headers.host, `rebind.example:${main.port}`);
    // A second fetch resolves again and is refused.
    await assert.rejects(safeFetch(allowed.ctx, url, { resolve, timeoutMs: 2000 }), DestinationRefused);
  });

  test("refuses a name when any of its addresses is forbidden", async () => {
    const resolve = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "127.0.0.2", family: 4 },
    ];
    await assert.rejects(
      safeFetch(allowed.ctx, "http://mixed.example/", { resolve, timeoutMs: 2000 }),
      DestinationRefused,
    );
  });

  test("a refused connection is a transient FetchFailed", async () => {
    const closed = await startSite("127.0.0.1", "closed");
    await closed.close();
    await assert.rejects(safeFetch(allowed.ctx, `${closed.origin}/hello`), (error: unknown) => {
      assert.ok(error instanceof FetchFailed, String(error));
      assert.equal(error.code, "ECONNREFUSED");
      assert.equal(error.transient, true);
      return true;
    });
  });
});
