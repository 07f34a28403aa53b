/**
 * What blocks, mutes and domain blocks hide from a signed-in viewer in what exists beside the
 * timelines: the thread around a status and the lists of who boosted and favourited it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  get,
  mute,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Account, Context } from "../../types.ts";

describe("blocks, mutes and domain blocks hide accounts from the viewer", () => {
  let server: TestServer;
  let viewer: TestUser;
  let author: TestUser;
  let blocked: TestUser;
  let blocker: TestUser;
  let muted: TestUser;
  let friend: TestUser;
  before(async () => {
    server = await createTestServer();
    [viewer, author, blocked, blocker, muted, friend] = await Promise.all(
      ["viewer", "author", "blocked", "blocker", "muted", "friend"].map((name) => createUser(server.ctx, name)),
    );
    await block(server, viewer, blocked);
    await block(server, blocker, viewer);
    await mute(server, viewer, muted);
  });
  after(() => server.close());

  const usernames = (accounts: Account[]) => accounts.map((x) => x.username).sort();

  test("the thread leaves out replies of blocked, blocking and muted accounts for the viewer only", async () => {
    const root = await postStatus(server, author, { status: "root" });
    for (const who of [blocked, blocker, muted, friend])
      await postStatus(server, who, { status: `reply by ${who.username}`, in_reply_to_id: root.id });
    const mine = (await get(server.app, `/api/v1/statuses/${root.id}/context`, viewer.token)).json() as Context;
    assert.deepEqual(
      mine.descendants.map((s) => s.account.username),
      ["friend"],
    );
    const anonymous = (await get(server.app, `/api/v1/statuses/${root.id}/context`)).json() as Context;
    assert.equal(anonymous.descendants.length, 4);
  });

  test("a muted author's post opened directly still shows, with its thread", async () => {
    const own = await postStatus(server, muted, { status: "muted root" });
    const reply = await postStatus(server, friend, { status: "friendly reply", in_reply_to_id: own.id });
    assert.equal((await get(server.app, `/api/v1/statuses/${own.id}`, viewer.token)).statusCode, 200);
    const thread = (await get(server.app, `/api/v1/statuses/${reply.id}/context`, viewer.token)).json() as Context;
    assert.deepEqual(thread.ancestors, []);
  });

  test("favourited_by and reblogged_by leave out hidden accounts, and accounts of a blocked domain", async () => {
    const status = await postStatus(server, author, { status: "popular" });
    const remote = await createRemoteAccount(server.ctx, "faraway", "hidden.example");
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("favourites")
      .values({ id: "1", account_id: remote.id, status_id: status.id, created_at: now })
      .execute();
    for (const who of [blocker, muted, friend]) {
      assert.equal(
        (await request(server.app, "POST", `/api/v1/statuses/${status.id}/favourite`, { token: who.token })).statusCode,
        200,
      );
      assert.equal(
        (await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: who.token })).statusCode,
        200,
      );
    }
    await request(server.app, "POST", "/api/v1/domain_blocks", {
      token: viewer.token,
      json: { domain: "hidden.example" },
    });
    const favourited = (
      await get(server.app, `/api/v1/statuses/${status.id}/favourited_by`, viewer.token)
    ).json() as Account[];
    assert.deepEqual(usernames(favourited), ["friend"]);
    const reblogged = (
      await get(server.app, `/api/v1/statuses/${status.id}/reblogged_by`, viewer.token)
    ).json() as Account[];
    assert.deepEqual(usernames(reblogged), ["friend"]);
    const everyone = (await get(server.app, `/api/v1/statuses/${status.id}/favourited_by`)).json() as Account[];
    assert.deepEqual(usernames(everyone), ["blocker", "faraway", "friend", "muted"]);
  });
});
