/**
 * A local actor's collections and objects as other servers fetch them (ActivityPub JSON): the
 * outbox pages public and unlisted posts and boosts as Create and Announce, never private or
 * direct ones; followers and following list actor ids, or only their size when hidden; featured
 * holds the pinned posts, featured tags the hashtags; a status's id serves its Note only when the
 * public may see it. Both engines.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createRemoteAccount,
  createUser,
  follow,
  postStatus,
  request,
  type TestServer,
  type TestUser,
  createTestServer,
} from "../kit.ts";

const AP = { accept: "application/activity+json" };

describe("collections and objects of local actors", () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  const get = async (path: string) => {
    const res = await request(server.app, "GET", path, { headers: AP });
    return { status: res.statusCode, json: res.statusCode === 200 ? (res.json() as Record<string, any>) : undefined };
  };
  const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;

  before(async () => {
    server = await createTestServer();
    alice = await createUser(server.ctx, "alice");
    bob = await createUser(server.ctx, "bob");
  });
  after(() => server.close());

  test("the outbox pages public and unlisted posts and boosts, never private or direct ones", async () => {
    const posted: string[] = [];
    for (let i = 0; i < 22; i++) posted.push((await postStatus(server, alice, { status: `post ${i}` })).uri);
    const unlisted = await postStatus(server, alice, { status: "quiet", visibility: "unlisted" });
    const hidden = await postStatus(server, alice, { status: "followers only", visibility: "private" });
    const direct = await postStatus(server, alice, { status: "@bob hi", visibility: "direct" });
    const bobs = await postStatus(server, bob, { status: "boost me" });
    await request(server.app, "POST", `/api/v1/statuses/${bobs.id}/reblog`, { token: alice.token });

    const outbox = await get("/users/alice/outbox");
    assert.equal(outbox.status, 200);
    assert.equal(outbox.json!.type, "OrderedCollection");
    assert.equal(typeof outbox.json!.totalItems, "number");
    const first = await get(pathOf(outbox.json!.first));
    assert.equal(first.json!.type, "OrderedCollectionPage");
    const items = first.json!.orderedItems as Array<Record<string, any>>;
    assert.equal(items.length, 20);
    assert.equal(items[0]!.type, "Announce");
    assert.equal(items[0]!.object, bobs.uri);
    assert.equal(items[1]!.type, "Create");
    assert.equal(items[1]!.object.id, unlisted.uri);
    const second = await get(pathOf(first.json!.next));
    const all = [...items, ...(second.json!.orderedItems as Array<Record<string, any>>)];
    const ids = all.map((item) => (item.type === "Create" ? item.object.id : item.id));
    for (const uri of posted) assert.ok(ids.includes(uri), `${uri} in the outbox`);
    assert.ok(!ids.includes(hidden.uri) && !ids.includes(direct.uri), "no private or direct post");
    assert.equal((await get("/users/nobody/outbox")).status, 404);
    assert.equal((await get("/users/nobody/followers")).status, 404);
  });

  test("followers and following list actor ids; a hidden collection shows only its size", async () => {
    const remote = await createRemoteAccount(server.ctx, "carol", "remote.example");
    await follow(server, bob, alice);
    await follow(server, remote, alice);
    const followers = await get("/users/alice/followers");
    assert.equal(followers.json!.totalItems, 2);
    const page = await get(pathOf(followers.json!.first));
    assert.deepEqual(new Set(page.json!.orderedItems), new Set([bob.account.uri, remote.uri]));
    const following = await get("/users/bob/following");
    assert.equal(following.json!.totalItems, 1);
    assert.deepEqual((await get(pathOf(following.json!.first))).json!.orderedItems, [alice.account.uri]);

    await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: alice.token,
      json: { hide_collections: true },
    });
    const hidden = await get("/users/alice/followers");
    assert.equal(hidden.json!.totalItems, 2);
    assert.equal(hidden.json!.first, undefined);
    assert.equal(hidden.json!.orderedItems, undefined);
  });

  test("featured holds the pinned public posts; featured tags the hashtags", async () => {
    const pinned = await postStatus(server, bob, { status: "pin me #rookery" });
    assert.equal(
      (await request(server.app, "POST", `/api/v1/statuses/${pinned.id}/pin`, { token: bob.token })).statusCode,
      200,
    );
    const featured = await get("/users/bob/collections/featured");
    assert.deepEqual(
      (featured.json!.orderedItems as Array<{ id: string }>).map((note) => note.id),
      [pinned.uri],
    );
    const tag = await request(server.app, "POST", "/api/v1/featured_tags", {
      token: bob.token,
      json: { name: "rookery" },
    });
    assert.equal(tag.statusCode, 200, tag.body);
    const tags = await get("/users/bob/collections/tags");
    assert.deepEqual(
      (tags.json!.orderedItems ?? tags.json!.items).map((t: { name: string }) => t.name),
      ["#rookery"],
    );
  });

  test("a status's id serves its Note to everyone only when the public may see it", async () => {
    const open = await postStatus(server, bob, { status: "open", spoiler_text: "cw", language: "en" });
    const note = await get(pathOf(open.uri));
    assert.equal(note.status, 200);
    assert.equal(note.json!.type, "Note");
    assert.equal(note.json!.summary, "cw");
    assert.equal(note.json!.sensitive, true);
    assert.deepEqual(Object.keys(note.json!.contentMap ?? {}), ["en"]);
    assert.equal(note.json!.attributedTo, bob.account.uri);
    const closed = await postStatus(server, bob, { status: "closed", visibility: "private" });
    assert.equal((await get(pathOf(closed.uri))).status, 404);
    const other = await get(`/users/alice/statuses/${open.id}`);
    assert.equal(other.status, 404, "the path must name the author");
    const poll = await postStatus(server, bob, {
      status: "Which?",
      poll: { options: ["this", "that"], expires_in: 600 },
    });
    const question = await get(pathOf(poll.uri));
    assert.equal(question.json!.type, "Question");
    assert.deepEqual(
      question.json!.oneOf.map((o: { name: string; replies: { totalItems: number } }) => [
        o.name,
        o.replies.totalItems,
      ]),
      [
        ["this", 0],
        ["that", 0],
      ],
    );
    assert.ok(question.json!.endTime);
    const html = await request(server.app, "GET", pathOf(open.uri), { headers: { accept: "text/html" } });
    assert.equal(html.statusCode, 301, "browsers are sent to the post's page");
    assert.equal(html.headers.location, new URL(open.url!).pathname);
    assert.match(String(html.headers.vary), /Accept/);
  });
});
