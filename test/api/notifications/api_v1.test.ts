/**
 * The v1 notifications API: the list with its type, sender and filtered parameters and Link
 * paging, one notification, dismiss, clear, unread_count against the marker, and who may call
 * each route. Other users' notifications are 404.
 */
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

interface Note {
  id: string;
  type: string;
  account: { id: string; username: string };
}

describe("GET/POST /api/v1/notifications", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const list = async (viewer: TestUser, query = "") => {
    await server.ctx.jobs.drain();
    const res = await get(server.app, `/api/v1/notifications${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return { notes: res.json() as Note[], link: res.headers.link as string | undefined };
  };
  const call = async (viewer: TestUser, method: "POST" | "GET", path: string, json?: object) => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  /** A receiver with a mention, a favourite and a follow, from two senders. */
  async function busyReceiver() {
    const [receiver, a, b] = await Promise.all([user("receiver"), user("sendera"), user("senderb")]);
    const own = await postStatus(server, receiver, { status: "mine" });
    await postStatus(server, a, { status: `@${receiver.username} hello` });
    await call(b, "POST", `/api/v1/statuses/${own.id}/favourite`);
    await call(a, "POST", `/api/v1/accounts/${receiver.account.id}/follow`);
    await server.ctx.jobs.drain();
    return { receiver, a, b };
  }

  test("types[], exclude_types[] and account_id narrow the list; unknown types match nothing", async () => {
    const { receiver, a, b } = await busyReceiver();
    const types = async (query: string) => (await list(receiver, query)).notes.map((n) => n.type);
    assert.deepEqual(await types(""), ["follow", "favourite", "mention"]);
    assert.deepEqual(await types("?types[]=mention&types[]=follow"), ["follow", "mention"]);
    assert.deepEqual(await types("?exclude_types[]=follow"), ["favourite", "mention"]);
    assert.deepEqual(await types(`?account_id=${a.account.id}`), ["follow", "mention"]);
    assert.deepEqual(await types(`?account_id=${b.account.id}`), ["favourite"]);
    assert.deepEqual(await types("?types[]=nonsense"), []);
    assert.deepEqual(await types("?account_id=nonsense"), []);
    assert.deepEqual(await types("?exclude_types[]=nonsense"), ["follow", "favourite", "mention"]);
  });

  test("pages by ID with a Link header carrying the filters; limit is clamped to 80", async () => {
    const { receiver } = await busyReceiver();
    const first = await list(receiver, "?limit=2&exclude_types[]=update");
    assert.equal(first.notes.length, 2);
    const next = /<([^>]+)>; rel="next"/.exec(first.link ?? "")?.[1];
    const prev = /<([^>]+)>; rel="prev"/.exec(first.link ?? "")?.[1];
    assert.ok(next && prev, first.link);
    assert.match(next, new RegExp(`max_id=${first.notes[1]!.id}`));
    assert.match(next, /exclude_types%5B%5D=update/);
    assert.match(prev, new RegExp(`min_id=${first.notes[0]!.id}`));
    const rest = await list(receiver, new URL(next).search);
    assert.deepEqual(
      rest.notes.map((n) => n.type),
      ["mention"],
    );
    const newer = await list(receiver, `?min_id=${rest.notes[0]!.id}`);
    assert.deepEqual(
      newer.notes.map((n) => n.type),
      ["follow", "favourite"],
    );
    assert.equal((await list(receiver, "?limit=500")).notes.length, 3);
  });

  test("GET /:id shows one notification; someone else's or an unknown ID is 404", async () => {
    const { receiver, a } = await busyReceiver();
    const [note] = (await list(receiver)).notes;
    const res = await get(server.app, `/api/v1/notifications/${note!.id}`, receiver.token);
    assert.equal(res.statusCode, 200);
    assert.equal((res.json() as Note).id, note!.id);
    assert.equal(errorOf(await get(server.app, `/api/v1/notifications/${note!.id}`, a.token))[0], 404);
    assert.equal(errorOf(await get(server.app, "/api/v1/notifications/123456789", receiver.token))[0], 404);
    assert.equal(errorOf(await get(server.app, "/api/v1/notifications/not-an-id", receiver.token))[0], 404);
  });

  test("dismiss removes one (404 for others'), clear removes all", async () => {
    const { receiver, a } = await busyReceiver();
    const [first, second] = (await list(receiver)).notes;
    const foreign = await request(server.app, "POST", `/api/v1/notifications/${first!.id}/dismiss`, { token: a.token });
    assert.equal(errorOf(foreign)[0], 404);
    assert.deepEqual(await call(receiver, "POST", `/api/v1/notifications/${first!.id}/dismiss`), {});
    assert.deepEqual((await list(receiver)).notes.map((n) => n.id)[0], second!.id);
    assert.equal(errorOf(await get(server.app, `/api/v1/notifications/${first!.id}`, receiver.token))[0], 404);
    await postStatus(server, receiver, { status: `@${a.username} thanks` });
    const othersBefore = (await list(a)).notes.length;
    assert.ok(othersBefore > 0);
    assert.deepEqual(await call(receiver, "POST", "/api/v1/notifications/clear"), {});
    assert.deepEqual((await list(receiver)).notes, []);
    assert.equal((await list(a)).notes.length, othersBefore, "someone else's stay");
  });

  test("unread_count counts what is newer than the notifications marker, up to limit", async () => {
    const { receiver } = await busyReceiver();
    const count = async (query = "") =>
      ((await call(receiver, "GET", `/api/v1/notifications/unread_count${query}`)) as { count: number }).count;
    assert.equal(await count(), 3);
    assert.equal(await count("?limit=2"), 2);
    assert.equal(await count("?types[]=mention"), 1);
    const notes = (await list(receiver)).notes;
    await call(receiver, "POST", "/api/v1/markers", { notifications: { last_read_id: notes[1]!.id } });
    assert.equal(await count(), 1);
    await call(receiver, "POST", "/api/v1/markers", { notifications: { last_read_id: notes[0]!.id } });
    assert.equal(await count(), 0);
  });

  test("the removed POST /api/v1/notifications/dismiss does not exist", async () => {
    const { receiver } = await busyReceiver();
    const [note] = (await list(receiver)).notes;
    const res = await request(server.app, "POST", "/api/v1/notifications/dismiss", {
      token: receiver.token,
      json: { id: note!.id },
    });
    assert.equal(res.statusCode, 404);
  });

  const server_ = () => server;
  describeAuth("GET /api/v1/notifications", server_, {
    scope: "read:notifications",
    send: (s, token) => request(s.app, "GET", "/api/v1/notifications", { token }),
  });
  describeAuth("GET /api/v1/notifications/:id", server_, {
    scope: "read:notifications",
    insufficient: ["write", "push", "read:statuses"],
    send: async (s, token, owner) => {
      const sender = await createUser(s.ctx, `authsender${++users}`);
      await postStatus(s, sender, { status: `@${owner.username} hi` });
      await s.ctx.jobs.drain();
      const [note] = (await get(s.app, "/api/v1/notifications", owner.token)).json() as Note[];
      return request(s.app, "GET", `/api/v1/notifications/${note!.id}`, { token });
    },
  });
  describeAuth("GET /api/v1/notifications/unread_count", server_, {
    scope: "read:notifications",
    send: (s, token) => request(s.app, "GET", "/api/v1/notifications/unread_count", { token }),
  });
  describeAuth("POST /api/v1/notifications/clear", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "POST", "/api/v1/notifications/clear", { token }),
  });
  describeAuth("POST /api/v1/notifications/:id/dismiss", server_, {
    scope: "write:notifications",
    send: async (s, token, owner) => {
      const sender = await createUser(s.ctx, `authdismiss${++users}`);
      await postStatus(s, sender, { status: `@${owner.username} hi` });
      await s.ctx.jobs.drain();
      const [note] = (await get(s.app, "/api/v1/notifications", owner.token)).json() as Note[];
      return request(s.app, "POST", `/api/v1/notifications/${note!.id}/dismiss`, { token });
    },
  });
});
