/**
 * The notification policy (v1 booleans) and notification requests: each criterion, the defaults,
 * the exceptions (accounts the receiver follows, private mentions answering the receiver), and the
 * request lifecycle — filtered mentions collect in a request and stay out of the main list,
 * accepting merges them back and lets later ones through, dismissing hides the request.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  follow,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";

interface Note {
  id: string;
  type: string;
  account: { username: string };
  filtered?: boolean;
}
interface RequestJson {
  id: string;
  notifications_count: string;
  account: { id: string; username: string };
  last_status: { id: string } | null;
}
interface PolicyJson {
  filter_not_following: boolean;
  filter_not_followers: boolean;
  filter_new_accounts: boolean;
  filter_private_mentions: boolean;
  summary: { pending_requests_count: number; pending_notifications_count: number };
}

describe("notification policy and requests", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const call = async (viewer: TestUser, method: "POST" | "GET" | "PATCH", path: string, json?: object) => {
    await server.ctx.jobs.drain();
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const summary = async (viewer: TestUser, query = "") =>
    ((await call(viewer, "GET", `/api/v1/notifications${query}`)) as Note[]).map(
      (n) => `${n.type}:${n.account.username}${n.filtered ? ":filtered" : ""}`,
    );
  const policy = (viewer: TestUser) => call(viewer, "GET", "/api/v1/notifications/policy") as Promise<PolicyJson>;
  const setPolicy = (viewer: TestUser, changes: object) =>
    call(viewer, "PATCH", "/api/v1/notifications/policy", changes) as Promise<PolicyJson>;
  const requests = (viewer: TestUser, query = "") =>
    call(viewer, "GET", `/api/v1/notifications/requests${query}`) as Promise<RequestJson[]>;

  test("the defaults filter private mentions only; PATCH changes the criteria given", async () => {
    const receiver = await user("defaults");
    assert.deepEqual(await policy(receiver), {
      filter_not_following: false,
      filter_not_followers: false,
      filter_new_accounts: false,
      filter_private_mentions: true,
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    const changed = await setPolicy(receiver, { filter_not_following: true, filter_private_mentions: "false" });
    assert.equal(changed.filter_not_following, true);
    assert.equal(changed.filter_private_mentions, false);
    assert.equal(changed.filter_new_accounts, false);
    assert.deepEqual(await policy(receiver), changed);
    // Booleans cast as Rails casts them: anything but a false value is true, an empty value false.
    const cast = await setPolicy(receiver, { filter_not_followers: "perhaps", filter_not_following: "" });
    assert.equal(cast.filter_not_followers, true);
    assert.equal(cast.filter_not_following, false);
  });

  test("filter_not_following: strangers' mentions become a request; accounts the receiver follows pass", async () => {
    const [receiver, stranger, friend] = await Promise.all([user("nf"), user("nfstranger"), user("nffriend")]);
    await setPolicy(receiver, { filter_not_following: true });
    await follow(server, receiver, friend);
    const first = await postStatus(server, stranger, { status: `@${receiver.username} one` });
    const second = await postStatus(server, stranger, { status: `@${receiver.username} two` });
    await postStatus(server, friend, { status: `@${receiver.username} hi` });
    assert.deepEqual(await summary(receiver), [`mention:${friend.username}`]);
    assert.deepEqual(await summary(receiver, "?include_filtered=true"), [
      `mention:${friend.username}`,
      `mention:${stranger.username}:filtered`,
      `mention:${stranger.username}:filtered`,
    ]);
    // One sender's list includes the filtered ones.
    assert.equal((await summary(receiver, `?account_id=${stranger.account.id}`)).length, 2);

    const [pending] = await requests(receiver);
    assert.equal(pending?.account.id, stranger.account.id);
    assert.equal(pending.notifications_count, "2");
    assert.equal(pending.last_status?.id, second.id);
    assert.notEqual(first.id, second.id);
    assert.deepEqual((await policy(receiver)).summary, { pending_requests_count: 1, pending_notifications_count: 2 });
    const one = await call(receiver, "GET", `/api/v1/notifications/requests/${pending.id}`);
    assert.deepEqual(one, pending);

    assert.deepEqual(await call(receiver, "POST", `/api/v1/notifications/requests/${pending.id}/accept`), {});
    assert.deepEqual(await call(receiver, "GET", "/api/v1/notifications/requests/merged"), { merged: true });
    assert.deepEqual(await requests(receiver), []);
    assert.deepEqual(await summary(receiver), [
      `mention:${friend.username}`,
      `mention:${stranger.username}`,
      `mention:${stranger.username}`,
    ]);
    // Accepted senders are never filtered again.
    await postStatus(server, stranger, { status: `@${receiver.username} three` });
    assert.equal((await summary(receiver))[0], `mention:${stranger.username}`);
    assert.deepEqual((await policy(receiver)).summary, { pending_requests_count: 0, pending_notifications_count: 0 });
  });

  test("filtered non-mentions are held back without a request", async () => {
    const [receiver, stranger] = await Promise.all([user("nr"), user("nrstranger")]);
    await setPolicy(receiver, { filter_not_following: true });
    const status = await postStatus(server, receiver, { status: "mine" });
    await call(stranger, "POST", `/api/v1/statuses/${status.id}/favourite`);
    assert.deepEqual(await summary(receiver), []);
    assert.deepEqual(await summary(receiver, "?include_filtered=true"), [`favourite:${stranger.username}:filtered`]);
    assert.deepEqual(await requests(receiver), []);
  });

  test("filter_not_followers: only followers of three days or more pass", async () => {
    const [receiver, recent, old, stranger] = await Promise.all([
      user("nfo"),
      user("nforecent"),
      user("nfoold"),
      user("nfostranger"),
    ]);
    await setPolicy(receiver, { filter_not_followers: true });
    await follow(server, recent, receiver);
    await follow(server, old, receiver);
    await server.ctx.db.kysely
      .updateTable("follows")
      .set({ created_at: new Date(Date.now() - 4 * 24 * 3600 * 1000).toISOString() })
      .where("account_id", "=", old.account.id)
      .execute();
    for (const sender of [recent, old, stranger])
      await postStatus(server, sender, { status: `@${receiver.username} x` });
    assert.deepEqual(await summary(receiver), [`mention:${old.username}`]);
  });

  test("filter_new_accounts: accounts younger than 30 days that the receiver does not follow", async () => {
    const [receiver, young, aged, followedYoung] = await Promise.all([
      user("na"),
      user("nayoung"),
      user("naaged"),
      user("nafollowed"),
    ]);
    await setPolicy(receiver, { filter_new_accounts: true });
    await follow(server, receiver, followedYoung);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ created_at: new Date(Date.now() - 40 * 24 * 3600 * 1000).toISOString() })
      .where("id", "=", aged.account.id)
      .execute();
    for (const sender of [young, aged, followedYoung])
      await postStatus(server, sender, { status: `@${receiver.username} x` });
    assert.deepEqual(await summary(receiver), [`mention:${followedYoung.username}`, `mention:${aged.username}`]);
  });

  test("private mentions are filtered by default, unless they answer the receiver's own, or come from someone followed", async () => {
    const [receiver, stranger, answerer, friend] = await Promise.all([
      user("pm"),
      user("pmstranger"),
      user("pmanswerer"),
      user("pmfriend"),
    ]);
    await follow(server, receiver, friend);
    await postStatus(server, stranger, { status: `@${receiver.username} psst`, visibility: "direct" });
    const asked = await postStatus(server, receiver, {
      status: `@${answerer.username} question?`,
      visibility: "direct",
    });
    await postStatus(server, answerer, {
      status: `@${receiver.username} answer`,
      visibility: "direct",
      in_reply_to_id: asked.id,
    });
    await postStatus(server, friend, { status: `@${receiver.username} hey`, visibility: "direct" });
    await postStatus(server, stranger, { status: `@${receiver.username} public` });
    assert.deepEqual(await summary(receiver), [
      `mention:${stranger.username}`,
      `mention:${friend.username}`,
      `mention:${answerer.username}`,
    ]);
    assert.deepEqual(
      (await requests(receiver)).map((r) => r.account.username),
      [stranger.username],
    );
    // With the filter off, they arrive.
    await setPolicy(receiver, { filter_private_mentions: false });
    const other = await user("pmother");
    await postStatus(server, other, { status: `@${receiver.username} now`, visibility: "direct" });
    assert.equal((await summary(receiver))[0], `mention:${other.username}`);
  });

  test("dismissing hides a request from the pending list and its counts; batches ignore others' IDs", async () => {
    const [receiver, s1, s2, s3, other] = await Promise.all([
      user("dm"),
      user("dms1"),
      user("dms2"),
      user("dms3"),
      user("dmother"),
    ]);
    for (const sender of [s1, s2, s3])
      await postStatus(server, sender, { status: `@${receiver.username} hi`, visibility: "direct" });
    await postStatus(server, s1, { status: `@${other.username} hi`, visibility: "direct" });
    const pending = await requests(receiver);
    assert.equal(pending.length, 3);
    const [othersRequest] = await requests(other);
    const byName = new Map(pending.map((r) => [r.account.username, r]));

    assert.deepEqual(
      await call(receiver, "POST", `/api/v1/notifications/requests/${byName.get(s1.username)!.id}/dismiss`),
      {},
    );
    assert.deepEqual(
      (await requests(receiver)).map((r) => r.account.username).sort(),
      [s2.username, s3.username].sort(),
    );
    assert.deepEqual(
      (await requests(receiver, "?dismissed=true")).map((r) => r.account.username),
      [s1.username],
    );
    assert.equal((await policy(receiver)).summary.pending_requests_count, 2);

    // Batch accept: the foreign ID is ignored.
    await call(receiver, "POST", "/api/v1/notifications/requests/accept", {
      id: [byName.get(s2.username)!.id, othersRequest!.id],
    });
    await call(receiver, "POST", "/api/v1/notifications/requests/dismiss", { id: [byName.get(s3.username)!.id] });
    assert.deepEqual(await requests(receiver), []);
    assert.equal((await requests(other)).length, 1);
    assert.deepEqual(await summary(receiver), [`mention:${s2.username}`]);

    // Someone else's request is 404 on each single route.
    for (const path of ["", "/accept", "/dismiss"]) {
      const res = await request(
        server.app,
        path ? "POST" : "GET",
        `/api/v1/notifications/requests/${othersRequest!.id}${path}`,
        {
          token: receiver.token,
        },
      );
      assert.equal(res.statusCode, 404, path);
    }
  });

  test("requests page with a Link header", async () => {
    const receiver = await user("rp");
    for (let i = 0; i < 3; i++) {
      const sender = await user("rpsender");
      await postStatus(server, sender, { status: `@${receiver.username} hi`, visibility: "direct" });
    }
    await server.ctx.jobs.drain();
    const res = await get(server.app, "/api/v1/notifications/requests?limit=2", receiver.token);
    assert.equal((res.json() as RequestJson[]).length, 2);
    const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link))?.[1];
    assert.ok(next);
    const rest = await get(server.app, `/api/v1/notifications/requests${new URL(next).search}`, receiver.token);
    assert.equal((rest.json() as RequestJson[]).length, 1);
  });

  const server_ = () => server;
  describeAuth("GET /api/v1/notifications/policy", server_, {
    scope: "read:notifications",
    send: (s, token) => request(s.app, "GET", "/api/v1/notifications/policy", { token }),
  });
  describeAuth("PATCH /api/v1/notifications/policy", server_, {
    scope: "write:notifications",
    send: (s, token) =>
      request(s.app, "PATCH", "/api/v1/notifications/policy", { token, json: { filter_not_following: false } }),
  });
  describeAuth("GET /api/v1/notifications/requests", server_, {
    scope: "read:notifications",
    send: (s, token) => request(s.app, "GET", "/api/v1/notifications/requests", { token }),
  });
  describeAuth("GET /api/v1/notifications/requests/merged", server_, {
    scope: "read:notifications",
    send: (s, token) => request(s.app, "GET", "/api/v1/notifications/requests/merged", { token }),
  });
  describeAuth("POST /api/v1/notifications/requests/accept", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "POST", "/api/v1/notifications/requests/accept", { token, json: { id: [] } }),
  });
  describeAuth("POST /api/v1/notifications/requests/dismiss", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "POST", "/api/v1/notifications/requests/dismiss", { token, json: { id: [] } }),
  });
});
