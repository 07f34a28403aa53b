/**
 * Serving stored media: the right Content-Type, immutable caching, and byte ranges (206, suffix
 * and open ranges, 416 for ranges past the end, the whole file for headers it cannot honour), so
 * browsers can seek in video and audio.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseRange } from "../../src/web/media_files.ts";
import { createTestServer, createUser, uploadImage, type TestServer } from "../kit.ts";

describe("GET /system/*", () => {
  let server: TestServer;
  let path: string;
  let whole: Buffer;
  before(async () => {
    server = await createTestServer();
    const owner = await createUser(server.ctx, "mediaowner");
    const media = await uploadImage(server, owner);
    path = new URL(media.url!).pathname;
    const res = await server.app.inject({ method: "GET", url: path });
    assert.equal(res.statusCode, 200);
    whole = res.rawPayload;
  });
  after(() => server.close());

  const get = (range?: string) => server.app.inject({ method: "GET", url: path, headers: range ? { range } : {} });

  test("the whole file: type, caching, Accept-Ranges", async () => {
    const res = await get();
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^image\//);
    assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(res.headers["accept-ranges"], "bytes");
    assert.ok(whole.length > 100);
  });

  test("ranges: first bytes, an open range, a suffix, a range past the end clipped", async () => {
    const size = whole.length;
    for (const [header, start, end] of [
      ["bytes=0-9", 0, 9],
      [`bytes=10-`, 10, size - 1],
      ["bytes=-20", size - 20, size - 1],
      [`bytes=5-${size + 100}`, 5, size - 1],
    ] as const) {
      const res = await get(header);
      assert.equal(res.statusCode, 206, header);
      assert.equal(res.headers["content-range"], `bytes ${start}-${end}/${size}`, header);
      assert.deepEqual(res.rawPayload, whole.subarray(start, end + 1), header);
    }
  });

  test("416 for a range that starts past the end; unusable headers get the whole file", async () => {
    const res = await get(`bytes=${whole.length}-`);
    assert.equal(res.statusCode, 416);
    assert.equal(res.headers["content-range"], `bytes */${whole.length}`);
    for (const header of ["bytes=0-1,5-6", "items=0-5", "bytes=abc", "bytes=-"]) {
      const full = await get(header);
      assert.equal(full.statusCode, 200, header);
      assert.equal(full.rawPayload.length, whole.length, header);
    }
  });

  test("parseRange edge cases", () => {
    assert.equal(parseRange(undefined, 10), undefined);
    assert.equal(parseRange("bytes=-0", 10), "unsatisfiable");
    assert.equal(parseRange("bytes=5-2", 10), "unsatisfiable");
    assert.deepEqual(parseRange("bytes=-50", 10), { start: 0, end: 9 });
    assert.equal(parseRange("bytes=0-", 0), "unsatisfiable");
  });

  test("unknown files and types are 404", async () => {
    assert.equal((await server.app.inject({ method: "GET", url: "/system/media/nothing.png" })).statusCode, 404);
    assert.equal((await server.app.inject({ method: "GET", url: `${path}.exe` })).statusCode, 404);
  });
});
