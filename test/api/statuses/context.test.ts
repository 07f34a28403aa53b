/** GET /api/v1/statuses/:id/context: order, the anonymous limits, and hidden replies. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../../src/db/ids.ts";
import {
  createTestServer,
  describeAuth,
  createUser,
  follow,
  get,
  postStatus,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Context, Status } from "../../types.ts";

describe("GET /api/v1/statuses/:id/context", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const context = async (id: string, token?: string) => {
    const res = await get(server.app, `/api/v1/statuses/${id}/context`, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Context;
  };
  const ids = (list: Status[]) => list.map((s) => s.id);

  /** Inserts statuses in one batch: `parents[i]` is the index (or existing ID) the i-th replies to. */
  async function insertThread(
    rootId: string,
    count: number,
    parentOf: (i: number, made: string[]) => string,
  ): Promise<string[]> {
    const now = new Date().toISOString();
    const made: string[] = [];
    const rows = [];
    for (let i = 0; i < count; i++) {
      const id = newId();
      const parent = parentOf(i, made);
      made.push(id);
      rows.push({
        id,
        uri: `https://rookery.test/users/bob/statuses/${id}`,
        url: `https://rookery.test/@bob/${id}`,
        account_id: a.bob.account.id,
        text: `t${i}`,
        content: `<p>t${i}</p>`,
        visibility: "public" as const,
        in_reply_to_id: parent,
        in_reply_to_account_id: a.bob.account.id,
        conversation_id: rootId,
        local: true,
        created_at: now,
        updated_at: now,
      });
    }
    await server.ctx.db.kysely.insertInto("statuses").values(rows).execute();
    return made;
  }

  test("ancestors oldest first, descendants depth-first with siblings oldest first", async () => {
    const root = await postStatus(server, a.alice, { status: "root" });
    const b = await postStatus(server, a.bob, { status: "b", in_reply_to_id: root.id });
    const c = await postStatus(server, a.carol, { status: "c", in_reply_to_id: b.id });
    const d = await postStatus(server, a.carol, { status: "d", in_reply_to_id: root.id });
    const e = await postStatus(server, a.alice, { status: "e", in_reply_to_id: c.id });
    const f = await postStatus(server, a.bob, { status: "f", in_reply_to_id: b.id });
    const ofC = await context(c.id);
    assert.deepEqual(ids(ofC.ancestors), [root.id, b.id]);
    assert.deepEqual(ids(ofC.descendants), [e.id]);
    const ofRoot = await context(root.id, a.carol.token);
    assert.deepEqual(ofRoot.ancestors, []);
    assert.deepEqual(ids(ofRoot.descendants), [b.id, c.id, e.id, f.id, d.id]);
    assert.equal(ofRoot.descendants[0].content, "<p>b</p>");
    assert.equal(ofRoot.descendants[0].favourited, false);
  });

  test("the context matches the OpenAPI schema", { skip: openApiSkip }, async () => {
    const root = await postStatus(server, a.alice, { status: "schema root" });
    await postStatus(server, a.bob, { status: "schema reply", in_reply_to_id: root.id });
    assert.deepEqual(validateSchema("Context", await context(root.id)), []);
    assert.deepEqual(validateSchema("Context", await context(root.id, a.carol.token)), []);
  });

  test("anonymous readers get at most the 40 nearest ancestors; signed-in users all", async () => {
    const root = await postStatus(server, a.bob, { status: "top" });
    const chain = await insertThread(root.id, 50, (i, made) => (i === 0 ? root.id : made[i - 1]));
    const leaf = chain.at(-1)!;
    const anon = await context(leaf);
    assert.equal(anon.ancestors.length, 40);
    assert.deepEqual(ids(anon.ancestors), chain.slice(9, 49));
    const signed = await context(leaf, a.carol.token);
    assert.deepEqual(ids(signed.ancestors), [root.id, ...chain.slice(0, 49)]);
  });

  test("anonymous readers get at most 60 descendants; signed-in users all", async () => {
    const root = await postStatus(server, a.bob, { status: "wide" });
    const replies = await insertThread(root.id, 70, () => root.id);
    const anon = await context(root.id);
    assert.deepEqual(ids(anon.descendants), replies.slice(0, 60));
    const signed = await context(root.id, a.alice.token);
    assert.deepEqual(ids(signed.descendants), replies);
  });

  test("anonymous readers get descendants at most 20 levels deep; signed-in users all", async () => {
    const root = await postStatus(server, a.bob, { status: "deep" });
    const chain = await insertThread(root.id, 45, (i, made) => (i === 0 ? root.id : made[i - 1]));
    const anon = await context(root.id);
    assert.deepEqual(ids(anon.descendants), chain.slice(0, 20));
    const signed = await context(root.id, a.alice.token);
    assert.deepEqual(ids(signed.descendants), chain);
  });

  test("private replies are hidden from strangers and anonymous readers", async () => {
    const root = await postStatus(server, a.alice, { status: "open thread" });
    const open = await postStatus(server, a.carol, { status: "public reply", in_reply_to_id: root.id });
    const secret = await postStatus(server, a.bob, {
      status: "@alice private reply",
      in_reply_to_id: root.id,
      visibility: "private",
    });
    const dm = await postStatus(server, a.bob, {
      status: "@lucy direct reply",
      in_reply_to_id: root.id,
      visibility: "direct",
    });
    const follower = await createUser(server.ctx, "bob_fan");
    await follow(server, follower, a.bob);
    assert.deepEqual(ids((await context(root.id)).descendants), [open.id]);
    assert.deepEqual(ids((await context(root.id, a.carol.token)).descendants), [open.id]);
    assert.deepEqual(
      ids((await context(root.id, a.alice.token)).descendants),
      [open.id, secret.id],
      "alice is mentioned in the private reply",
    );
    assert.deepEqual(ids((await context(root.id, follower.token)).descendants), [open.id, secret.id]);
    assert.deepEqual(ids((await context(root.id, a.lucy.token)).descendants), [open.id, dm.id]);
    assert.deepEqual(ids((await context(root.id, a.bob.token)).descendants), [open.id, secret.id, dm.id]);
    // And a hidden ancestor is left out of the chain of a visible reply.
    const under = await postStatus(server, a.bob, { status: "reply to the private one", in_reply_to_id: secret.id });
    assert.deepEqual(ids((await context(under.id, a.carol.token)).ancestors), [root.id]);
    assert.deepEqual(ids((await context(under.id, follower.token)).ancestors), [root.id, secret.id]);
  });

  test("the context of a status the reader cannot see is 404", async () => {
    const secret = await postStatus(server, a.bob, { status: "hidden", visibility: "private" });
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}/context`)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}/context`, a.carol.token)).statusCode, 404);
    assert.equal((await get(server.app, "/api/v1/statuses/42/context")).statusCode, 404);
  });

  describeAuth("GET /api/v1/statuses/:id/context", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: async (s, token, owner) =>
      get(s.app, `/api/v1/statuses/${(await postStatus(s, owner, { status: "thread" })).id}/context`, token),
  });
});
