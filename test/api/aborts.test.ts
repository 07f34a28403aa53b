/**
 * Clients that hang up: a storm of aborted timeline requests stops its database work early, logs
 * no errors, and leaves the server answering; a reset connection does not trip the rate limiter.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { createTestServer, createUser, postStatus, type TestServer } from "../kit.ts";

const STORM = 64;

describe("clients that hang up", () => {
  let server: TestServer;
  let port: number;
  const logged: Array<{ level: number; msg: string }> = [];
  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(line));
        callback();
      },
    });
    server = await createTestServer({ log: pino({ level: "info" }, sink) });
    const author = await createUser(server.ctx, "prolific");
    for (let i = 0; i < 60; i++) await postStatus(server, author, { status: `post ${i} #storm @prolific` });
    await server.app.listen({ port: 0, host: "127.0.0.1" });
    port = (server.app.server.address() as AddressInfo).port;
  });
  after(() => server.close());

  /** Sends a request and destroys the socket as soon as it is written (a reset, not a clean close). */
  const hangUp = (path: string) =>
    new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: rookery.test\r\nAccept: application/json\r\n\r\n`, () => {
          socket.resetAndDestroy();
          resolve();
        });
      });
      socket.on("error", () => resolve());
    });

  const fetchPage = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/timelines/public?limit=40`);
    assert.equal(res.status, 200);
    return (await res.json()) as unknown[];
  };

  const settle = async () => {
    // Wait until the server's query count stops moving: every aborted request has ended.
    let last = -1;
    while (server.ctx.db.queryCount !== last) {
      last = server.ctx.db.queryCount;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  test("an abort storm of 64 timeline requests runs a fraction of their queries and logs no error", async () => {
    await settle();
    const before = server.ctx.db.queryCount;
    assert.equal((await fetchPage()).length, 40);
    const perPage = server.ctx.db.queryCount - before;
    assert.ok(perPage >= 5, `a page costs ${perPage} queries`);

    const stormStart = server.ctx.db.queryCount;
    await Promise.all(Array.from({ length: STORM }, () => hangUp("/api/v1/timelines/public?limit=40")));
    await settle();
    const stormQueries = server.ctx.db.queryCount - stormStart;
    // Served in full, the storm would cost STORM × perPage queries; stopped, far fewer.
    assert.ok(
      stormQueries < (STORM * perPage) / 2,
      `the storm ran ${stormQueries} queries; served in full it would be ${STORM * perPage}`,
    );

    const errors = logged.filter((entry) => entry.level >= 50);
    assert.deepEqual(errors, []);
    assert.equal((await fetchPage()).length, 40);
  });

  test("anonymous requests reset mid-flight do not make the rate limiter throw", async () => {
    logged.length = 0;
    await Promise.all(Array.from({ length: 32 }, () => hangUp("/api/v1/statuses?id[]=1")));
    await Promise.all(Array.from({ length: 32 }, () => hangUp("/api/v1/accounts/lookup?acct=prolific")));
    await settle();
    assert.deepEqual(
      logged.filter((entry) => entry.level >= 50),
      [],
    );
    assert.equal((await fetchPage()).length, 40);
  });
});
