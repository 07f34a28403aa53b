/**
 * Batching: a page of notifications (v1), of notification groups (v2) and of notification requests
 * costs the same number of queries for 5 entries as for 40.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { createTestServer, createUser, get, postStatus, request, type TestServer, type TestUser } from "../../kit.ts";

const MAX_QUERIES = 40;

describe("queries per page of notifications", () => {
  let server: TestServer;
  let receiver: TestUser;

  before(async () => {
    server = await createTestServer();
    receiver = await createUser(server.ctx, "busyreceiver");
    const posts = [];
    for (let i = 0; i < 6; i++) posts.push(await postStatus(server, receiver, { status: `post ${i}` }));
    for (let i = 0; i < 45; i++) {
      const sender = await createUser(server.ctx, `sender${i}`);
      const act = (path: string) => request(server.app, "POST", path, { token: sender.token });
      await act(`/api/v1/statuses/${posts[i % posts.length]!.id}/favourite`);
      if (i % 2 === 0) await act(`/api/v1/statuses/${posts[(i + 1) % posts.length]!.id}/reblog`);
      if (i % 3 === 0) await act(`/api/v1/accounts/${receiver.account.id}/follow`);
      await postStatus(server, sender, { status: `@${receiver.username} hello ${i}` });
      // Private mentions from strangers are filtered into requests.
      await postStatus(server, sender, { status: `@${receiver.username} psst ${i}`, visibility: "direct" });
    }
    await server.ctx.jobs.drain();
  });
  after(() => server.close());

  /** Runs a request once to warm the token's bookkeeping, then counts the queries of a second run. */
  const queries = async (url: string): Promise<[number, LightMyRequestResponse]> => {
    await get(server.app, url, receiver.token);
    const start = server.ctx.db.queryCount;
    const res = await get(server.app, url, receiver.token);
    assert.equal(res.statusCode, 200, res.body);
    return [server.ctx.db.queryCount - start, res];
  };

  for (const [label, path, count] of [
    [
      "GET /api/v1/notifications",
      "/api/v1/notifications",
      (res: LightMyRequestResponse) => res.json<unknown[]>().length,
    ],
    [
      "GET /api/v2/notifications",
      "/api/v2/notifications",
      (res: LightMyRequestResponse) => res.json<{ notification_groups: unknown[] }>().notification_groups.length,
    ],
    [
      "GET /api/v1/notifications/requests",
      "/api/v1/notifications/requests",
      (res: LightMyRequestResponse) => res.json<unknown[]>().length,
    ],
  ] as const) {
    test(`${label}: a page of 5 and a page of 40 cost the same`, async (t) => {
      const [small, smallRes] = await queries(`${path}?limit=5`);
      const [large, largeRes] = await queries(`${path}?limit=40`);
      assert.equal(count(smallRes), 5);
      assert.equal(count(largeRes), 40);
      assert.ok(large < MAX_QUERIES, `${large} queries for a page of 40`);
      assert.equal(large, small, `5: ${small} queries, 40: ${large}`);
      t.diagnostic(`queries: ${small} for 5, ${large} for 40`);
    });
  }
});
