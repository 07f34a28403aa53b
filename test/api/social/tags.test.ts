/** Hashtags: a tag's page with a week of use, following and unfollowing, the followed tags list. */
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

interface Tag {
  id: string;
  name: string;
  url: string;
  history: Array<{ day: string; accounts: string; uses: string }>;
  following?: boolean;
}

describe("hashtags", () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => {
    server = await createTestServer();
    [alice, bob] = await Promise.all([createUser(server.ctx, "taggera"), createUser(server.ctx, "taggerb")]);
    await postStatus(server, alice, { status: "first #Rookery" });
    await postStatus(server, alice, { status: "second #rookery" });
    await postStatus(server, bob, { status: "third #ROOKERY" });
  });
  after(() => server.close());

  const tagOf = async (path: string, user?: TestUser) => {
    const res = await get(server.app, path, user?.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Tag;
  };
  const act = (user: TestUser, name: string, action: string) =>
    request(server.app, "POST", `/api/v1/tags/${encodeURIComponent(name)}/${action}`, { token: user.token });

  test("a tag's page: lowercase name, URL, a week of use as strings (today first), following for a viewer", async () => {
    const tag = await tagOf("/api/v1/tags/Rookery");
    assert.equal(tag.name, "rookery");
    assert.equal(tag.url, "https://rookery.test/tags/rookery");
    assert.equal(tag.history.length, 7);
    assert.deepEqual({ ...tag.history[0], day: "" }, { day: "", accounts: "2", uses: "3" });
    assert.equal(Number(tag.history[0].day) % 86_400, 0);
    assert.equal(Number(tag.history[0].day) - Number(tag.history[1].day), 86_400);
    assert.equal("following" in tag, false);
    assert.equal((await tagOf("/api/v1/tags/rookery", bob)).following, false);
  });

  test("a valid name never used answers with an empty week; a name that cannot be a tag is 404", async () => {
    const unused = await tagOf("/api/v1/tags/neverused");
    assert.equal(unused.id, "");
    assert.ok(unused.history.every((d) => d.uses === "0" && d.accounts === "0"));
    for (const bad of ["12345", "a-b", "%20"])
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/tags/${bad}`)), [404, "Record not found"], bad);
  });

  test("follow (creating the tag), list, unfollow; both idempotent", async () => {
    const followed = await act(bob, "Birds", "follow");
    assert.equal(followed.statusCode, 200, followed.body);
    assert.equal((followed.json() as Tag).following, true);
    assert.equal(((await act(bob, "birds", "follow")).json() as Tag).following, true);
    await act(bob, "rookery", "follow");
    const list = await get(server.app, "/api/v1/followed_tags", bob.token);
    assert.deepEqual(
      (list.json() as Tag[]).map((t) => t.name),
      ["rookery", "birds"],
    );
    assert.ok((list.json() as Tag[]).every((t) => t.following === true));
    assert.equal((await tagOf("/api/v1/tags/birds", bob)).following, true);
    const unfollowed = await act(bob, "birds", "unfollow");
    assert.equal((unfollowed.json() as Tag).following, false);
    assert.equal(((await act(bob, "birds", "unfollow")).json() as Tag).following, false);
    assert.deepEqual(
      ((await get(server.app, "/api/v1/followed_tags", bob.token)).json() as Tag[]).map((t) => t.name),
      ["rookery"],
    );
    assert.deepEqual(errorOf(await act(bob, "nosuchtagyet", "unfollow")), [404, "Record not found"]);
    assert.deepEqual(errorOf(await act(bob, "not a tag", "follow")), [404, "Record not found"]);
  });

  test("followed_tags pages with a Link header (since_id back, next when full)", async () => {
    const carol = await createUser(server.ctx, "taggerc");
    for (const name of ["one", "two", "three"]) await act(carol, name, "follow");
    const page = await get(server.app, "/api/v1/followed_tags?limit=2", carol.token);
    assert.deepEqual(
      (page.json() as Tag[]).map((t) => t.name),
      ["three", "two"],
    );
    assert.match(String(page.headers.link), /rel="next".*since_id=\d+>; rel="prev"/);
  });

  test("a Tag matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    assert.deepEqual(validateSchema("Tag", await tagOf("/api/v1/tags/rookery", bob)), []);
  });

  describeAuth("POST /api/v1/tags/:name/follow", () => server, {
    scope: "write:follows",
    send: (s, token) => request(s.app, "POST", "/api/v1/tags/scopes/follow", { token }),
  });
  describeAuth("GET /api/v1/followed_tags", () => server, {
    scope: "read:follows",
    send: (s, token) => get(s.app, "/api/v1/followed_tags", token),
  });
});
