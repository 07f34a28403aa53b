/** /api/v1/conversations: direct-message threads per participant, kept as statuses come and go. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Status } from "../../types.ts";

interface Conversation {
  id: string;
  unread: boolean;
  accounts: Array<{ id: string; username: string }>;
  last_status: Status | null;
}

describe("conversations", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name: string) => createUser(server.ctx, `${name}${++users}`);
  const conversations = async (viewer: TestUser, query = "") => {
    const res = await get(server.app, `/api/v1/conversations${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Conversation[];
  };
  const dm = (author: TestUser, to: TestUser[], text: string, inReplyTo?: Status) =>
    postStatus(server, author, {
      status: `${to.map((u) => `@${u.username}`).join(" ")} ${text}`,
      visibility: "direct",
      ...(inReplyTo ? { in_reply_to_id: inReplyTo.id } : {}),
    });
  const names = (c: Conversation) => c.accounts.map((a) => a.username).sort();
  const send = async (viewer: TestUser, method: "POST" | "DELETE", path: string) => {
    const res = await request(server.app, method, path, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  test("a direct status starts a conversation for each participant, unread for the recipients", async () => {
    const [alice, bob, carol] = await Promise.all([user("alice"), user("bob"), user("carol")]);
    const status = await dm(alice, [bob, carol], "hi both");
    const [mine] = await conversations(alice);
    assert.deepEqual(names(mine!), [bob.username, carol.username].sort());
    assert.equal(mine!.unread, false);
    assert.equal(mine!.last_status!.id, status.id);
    for (const [viewer, other] of [
      [bob, carol],
      [carol, bob],
    ] as const) {
      const [theirs] = await conversations(viewer);
      assert.deepEqual(names(theirs!), [alice.username, other.username].sort());
      assert.equal(theirs!.unread, true);
      assert.equal(theirs!.last_status!.id, status.id);
    }
  });

  test("replies move the thread's last status and unread flag; another set of participants is another conversation", async () => {
    const [alice, bob, carol] = await Promise.all([user("ra"), user("rb"), user("rc")]);
    const first = await dm(alice, [bob], "first");
    const reply = await dm(bob, [alice], "reply", first);
    const [forAlice] = await conversations(alice);
    assert.equal(forAlice!.last_status!.id, reply.id);
    assert.equal(forAlice!.unread, true);
    const [forBob] = await conversations(bob);
    assert.equal(forBob!.unread, false);
    assert.equal((await conversations(bob)).length, 1);
    await dm(alice, [bob, carol], "carol joins", reply);
    const aliceNow = await conversations(alice);
    assert.equal(aliceNow.length, 2);
    assert.deepEqual(names(aliceNow[0]!), [bob.username, carol.username].sort());
  });

  test("public, unlisted and private posts make no conversation; a note to oneself lists oneself", async () => {
    const [alice, bob] = await Promise.all([user("na"), user("nb")]);
    for (const visibility of ["public", "unlisted", "private"] as const)
      await postStatus(server, alice, { status: `@${bob.username} ${visibility}`, visibility });
    assert.deepEqual(await conversations(bob), []);
    await postStatus(server, alice, { status: "note to self", visibility: "direct" });
    const [note] = await conversations(alice);
    assert.deepEqual(names(note!), [alice.username]);
  });

  test("a recipient who blocks or mutes the author gets no conversation", async () => {
    const [alice, blocker, muter] = await Promise.all([user("ba"), user("bb"), user("bm")]);
    await send(blocker, "POST", `/api/v1/accounts/${alice.account.id}/block`);
    await send(muter, "POST", `/api/v1/accounts/${alice.account.id}/mute`);
    await dm(alice, [blocker, muter], "hello?");
    assert.deepEqual(await conversations(blocker), []);
    assert.deepEqual(await conversations(muter), []);
    assert.equal((await conversations(alice)).length, 1);
  });

  test("read and unread; removing one only takes it off your list; a new status brings it back", async () => {
    const [alice, bob] = await Promise.all([user("ua"), user("ub")]);
    const first = await dm(alice, [bob], "read me");
    const [conversation] = await conversations(bob);
    const read = (await send(bob, "POST", `/api/v1/conversations/${conversation!.id}/read`)) as Conversation;
    assert.equal(read.unread, false);
    assert.equal(read.last_status!.id, first.id);
    assert.equal((await conversations(bob))[0]!.unread, false);
    const unread = (await send(bob, "POST", `/api/v1/conversations/${conversation!.id}/unread`)) as Conversation;
    assert.equal(unread.unread, true);
    assert.deepEqual(await send(bob, "DELETE", `/api/v1/conversations/${conversation!.id}`), {});
    assert.deepEqual(await conversations(bob), []);
    assert.equal((await conversations(alice)).length, 1);
    await dm(alice, [bob], "again", first);
    assert.equal((await conversations(bob)).length, 1);
  });

  test("deleting statuses: the last status falls back to the previous one; none left, no conversation", async () => {
    const [alice, bob] = await Promise.all([user("da"), user("db")]);
    const first = await dm(alice, [bob], "one");
    const second = await dm(alice, [bob], "two", first);
    await send(alice, "DELETE", `/api/v1/statuses/${second.id}`);
    assert.equal((await conversations(bob))[0]!.last_status!.id, first.id);
    await send(alice, "DELETE", `/api/v1/statuses/${first.id}`);
    assert.deepEqual(await conversations(bob), []);
    assert.deepEqual(await conversations(alice), []);
  });

  test("paging by each conversation's newest status, with Link headers", async () => {
    const [owner, ...others] = await Promise.all([user("po"), user("p1"), user("p2"), user("p3")]);
    const sent: Status[] = [];
    for (const other of others) sent.push(await dm(owner, [other], "page"));
    const newest = sent.map((s) => s.id).reverse();
    const lastIds = async (query: string) => (await conversations(owner, query)).map((c) => c.last_status!.id);
    assert.deepEqual(await lastIds("?limit=2"), newest.slice(0, 2));
    assert.deepEqual(await lastIds(`?max_id=${newest[0]}`), newest.slice(1));
    assert.deepEqual(await lastIds(`?min_id=${newest[2]}&limit=1`), [newest[1]]);
    assert.deepEqual(await lastIds(`?since_id=${newest[1]}`), [newest[0]]);
    const res = await get(server.app, "/api/v1/conversations?limit=2", owner.token);
    assert.match(res.headers.link as string, new RegExp(`max_id=${newest[1]}>; rel="next"`));
    assert.match(res.headers.link as string, new RegExp(`min_id=${newest[0]}>; rel="prev"`));
  });

  test("someone else's conversation and unknown IDs are 404", async () => {
    const [alice, bob, eve] = await Promise.all([user("xa"), user("xb"), user("xe")]);
    await dm(alice, [bob], "private talk");
    const [conversation] = await conversations(bob);
    for (const [method, path] of [
      ["POST", `/api/v1/conversations/${conversation!.id}/read`],
      ["POST", `/api/v1/conversations/${conversation!.id}/unread`],
      ["DELETE", `/api/v1/conversations/${conversation!.id}`],
      ["POST", "/api/v1/conversations/123456/read"],
      ["DELETE", "/api/v1/conversations/not-an-id"],
    ] as const) {
      assert.deepEqual(errorOf(await request(server.app, method, path, { token: eve.token })), [
        404,
        "Record not found",
      ]);
    }
    assert.equal((await conversations(bob)).length, 1);
  });

  test("a Conversation matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const [alice, bob] = await Promise.all([user("sa"), user("sb")]);
    await dm(alice, [bob], "schema");
    const [conversation] = await conversations(bob);
    assert.deepEqual(validateSchema("Conversation", conversation), []);
  });

  describeAuth("GET /api/v1/conversations", () => server, {
    scope: "read:statuses",
    send: (s, token) => get(s.app, "/api/v1/conversations", token),
  });
  describeAuth("POST /api/v1/conversations/:id/read", () => server, {
    scope: "write:conversations",
    send: async (s, token, owner) => {
      await postStatus(s, owner, { status: "self note", visibility: "direct" });
      const [c] = (await get(s.app, "/api/v1/conversations", owner.token)).json() as Conversation[];
      return request(s.app, "POST", `/api/v1/conversations/${c!.id}/read`, { token });
    },
  });
  describeAuth("DELETE /api/v1/conversations/:id", () => server, {
    scope: "write:conversations",
    send: async (s, token, owner) => {
      await postStatus(s, owner, { status: "self note", visibility: "direct" });
      const [c] = (await get(s.app, "/api/v1/conversations", owner.token)).json() as Conversation[];
      return request(s.app, "DELETE", `/api/v1/conversations/${c!.id}`, { token });
    },
  });
});
