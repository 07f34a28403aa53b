/** GET /api/v1/timelines/list/:id: a list's members' posts, by its replies policy; owners only. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Status } from "../../types.ts";
import { FEED_RETENTION_DAYS, trimFeeds } from "../../../src/services/timelines/feeds.ts";

describe("the list timeline", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const drain = () => server.ctx.jobs.drain();
  const api = async (viewer: TestUser, method: "POST" | "DELETE" | "PUT", path: string, json?: object) => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { id: string };
  };
  const plain = (html: string) => html.replace(/<[^>]+>/g, "");
  const texts = async (viewer: TestUser, listId: string, query = "") => {
    const res = await get(server.app, `/api/v1/timelines/list/${listId}${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Status[]).map((s) => (s.reblog ? `boost:${plain(s.reblog.content)}` : plain(s.content)));
  };
  const listWith = async (owner: TestUser, members: TestUser[], settings: object = {}) => {
    for (const member of members) await follow(server, owner, member);
    const list = await api(owner, "POST", "/api/v1/lists", { title: "list", ...settings });
    if (members.length > 0)
      await api(owner, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: members.map((m) => m.account.id) });
    return list.id;
  };

  test("members' posts and boosts, not others'; direct posts never", async () => {
    const [owner, member, outsider] = await Promise.all([user("o"), user("m"), user("x")]);
    await follow(server, owner, outsider);
    const list = await listWith(owner, [member]);
    const outside = await postStatus(server, outsider, { status: "outsider post" });
    await postStatus(server, member, { status: "member post" });
    await postStatus(server, member, { status: `@${owner.username} secret`, visibility: "direct" });
    await api(member, "POST", `/api/v1/statuses/${outside.id}/reblog`);
    await drain();
    assert.deepEqual(await texts(owner, list), ["boost:outsider post", "member post"]);
  });

  test("replies_policy: list, followed and none", async () => {
    const [owner, member, otherMember, followed, stranger] = await Promise.all([
      user("ro"),
      user("rm"),
      user("rm2"),
      user("rf"),
      user("rs"),
    ]);
    await follow(server, owner, followed);
    const lists = {
      list: await listWith(owner, [member, otherMember], { replies_policy: "list" }),
      followed: await listWith(owner, [member, otherMember], { replies_policy: "followed" }),
      none: await listWith(owner, [member, otherMember], { replies_policy: "none" }),
    };
    const toMember = await postStatus(server, otherMember, { status: "by other member" });
    const toFollowed = await postStatus(server, followed, { status: "by followed" });
    const toStranger = await postStatus(server, stranger, { status: "by stranger" });
    const toOwner = await postStatus(server, owner, { status: "by owner" });
    for (const [parent, text] of [
      [toMember, "reply to member"],
      [toFollowed, "reply to followed"],
      [toStranger, "reply to stranger"],
      [toOwner, "reply to owner"],
    ] as const)
      await postStatus(server, member, { status: text, in_reply_to_id: parent.id });
    await drain();
    assert.deepEqual(await texts(owner, lists.list), ["reply to owner", "reply to member", "by other member"]);
    assert.deepEqual(await texts(owner, lists.followed), [
      "reply to owner",
      "reply to followed",
      "reply to member",
      "by other member",
    ]);
    assert.deepEqual(await texts(owner, lists.none), ["reply to owner", "by other member"]);
  });

  test("removing a member or unfollowing them empties the list of their posts at once; adding merges", async () => {
    const [owner, member, later] = await Promise.all([user("uo"), user("um"), user("ul")]);
    const list = await listWith(owner, [member]);
    await postStatus(server, member, { status: "member post" });
    await postStatus(server, later, { status: "earlier post of a later member" });
    await drain();
    assert.deepEqual(await texts(owner, list), ["member post"]);
    await follow(server, owner, later);
    await api(owner, "POST", `/api/v1/lists/${list}/accounts`, { account_ids: [later.account.id] });
    await drain();
    assert.deepEqual(await texts(owner, list), ["earlier post of a later member", "member post"]);
    const removed = await request(server.app, "DELETE", `/api/v1/lists/${list}/accounts`, {
      token: owner.token,
      json: { account_ids: [member.account.id] },
    });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(await texts(owner, list), ["earlier post of a later member"]);
    await api(owner, "POST", `/api/v1/accounts/${later.account.id}/unfollow`);
    assert.deepEqual(await texts(owner, list), []);
  });

  test("past the retention, pages come from the members' statuses with the same rules", async () => {
    const [owner, member, stranger] = await Promise.all([user("po"), user("pm"), user("ps")]);
    const list = await listWith(owner, [member], { replies_policy: "none" });
    const strangerPost = await postStatus(server, stranger, { status: "stranger" });
    await postStatus(server, member, { status: "one" });
    await postStatus(server, member, { status: "reply", in_reply_to_id: strangerPost.id });
    await postStatus(server, member, { status: "two" });
    await drain();
    const stored = await texts(owner, list);
    assert.deepEqual(stored, ["two", "one"]);
    const later = Date.now() + (FEED_RETENTION_DAYS + 1) * 24 * 60 * 60 * 1000;
    await trimFeeds(server.ctx, later);
    const realNow = Date.now;
    Date.now = () => later;
    try {
      assert.deepEqual(await texts(owner, list), stored);
      assert.deepEqual(await texts(owner, list, "?limit=1"), ["two"]);
    } finally {
      Date.now = realNow;
    }
  });

  test("someone else's list and an unknown ID are 404", async () => {
    const [owner, other] = await Promise.all([user("no"), user("nx")]);
    const list = await listWith(owner, []);
    assert.deepEqual(errorOf(await get(server.app, `/api/v1/timelines/list/${list}`, other.token)), [
      404,
      "Record not found",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/list/12345", owner.token)), [
      404,
      "Record not found",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/list/abc", owner.token)), [
      404,
      "Record not found",
    ]);
  });

  describeAuth("GET /api/v1/timelines/list/:id", () => server, {
    scope: "read:lists",
    send: async (s, token, owner) => {
      const list = await request(s.app, "POST", "/api/v1/lists", { token: owner.token, json: { title: "auth" } });
      return get(s.app, `/api/v1/timelines/list/${(list.json() as { id: string }).id}`, token);
    },
  });
});
