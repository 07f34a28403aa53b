/** GET /api/v1/statuses/:id and the batch GET /api/v1/statuses?id[]=. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  describeAuth,
  get,
  postStatus,
  standardAccounts,
  statusJson,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import type { Status } from "../../types.ts";

describe("GET /api/v1/statuses/:id and GET /api/v1/statuses?id[]=", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let s1: Status;
  let s2: Status;
  let hidden: Status;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
    s1 = await postStatus(server, a.alice, { status: "first" });
    s2 = await postStatus(server, a.bob, { status: "second", visibility: "unlisted" });
    hidden = await postStatus(server, a.bob, { status: "private", visibility: "private" });
  });
  after(() => server.close());

  test("a public status is readable without a token; viewer fields appear only with one", async () => {
    const anon = await statusJson(server, s1.id);
    assert.equal(anon.content, "<p>first</p>");
    for (const key of ["favourited", "reblogged", "muted", "bookmarked", "pinned", "filtered"])
      assert.equal(key in anon, false, key);
    const signed = await statusJson(server, s1.id, a.bob.token);
    assert.equal(signed.favourited, false);
    assert.equal("pinned" in signed, false, "pinned is shown only to the author");
    assert.equal((await statusJson(server, s1.id, a.alice.token)).pinned, false);
  });

  test("unknown and malformed IDs are 404", async () => {
    for (const id of ["1", "99999999999999999", "abc", "1.5"]) {
      assert.equal((await get(server.app, `/api/v1/statuses/${id}`, a.alice.token)).statusCode, 404, id);
    }
  });

  test("the batch returns the visible statuses in the order asked, each once", async () => {
    const res = await get(
      server.app,
      `/api/v1/statuses?id[]=${s2.id}&id[]=${s1.id}&id[]=${hidden.id}&id[]=123&id[]=junk&id[]=${s2.id}`,
      a.carol.token,
    );
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json<Status[]>().map((s) => s.id),
      [s2.id, s1.id],
    );
    const owner = await get(server.app, `/api/v1/statuses?id[]=${hidden.id}&id[]=${s1.id}`, a.bob.token);
    assert.deepEqual(
      owner.json<Status[]>().map((s) => s.id),
      [hidden.id, s1.id],
    );
    const anon = await get(server.app, `/api/v1/statuses?id[]=${hidden.id}&id[]=${s1.id}`);
    assert.deepEqual(
      anon.json<Status[]>().map((s) => s.id),
      [s1.id],
    );
  });

  test("more than 20 IDs are refused, as Mastodon's check_statuses_limit does", {}, async () => {
    const distinct = Array.from({ length: 21 }, (_, i) => `id[]=${BigInt(s1.id) + BigInt(i + 1)}`).join("&");
    assert.equal((await get(server.app, `/api/v1/statuses?${distinct}`)).statusCode, 422);
  });

  test("a bare id= and an empty request are accepted", async () => {
    assert.deepEqual(
      (await get(server.app, `/api/v1/statuses?id=${s1.id}`)).json<Status[]>().map((s) => s.id),
      [s1.id],
    );
    assert.deepEqual((await get(server.app, "/api/v1/statuses")).json(), []);
  });

  describeAuth("GET /api/v1/statuses/:id", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, `/api/v1/statuses/${s1.id}`, token),
  });

  describeAuth("GET /api/v1/statuses?id[]=", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, `/api/v1/statuses?id[]=${s1.id}`, token),
  });
});
