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

describe("featured hashtags", () => {
  let server: TestServer;
  let owner: TestUser;
  before(async () => {
    server = await createTestServer();
    owner = await createUser(server.ctx, "featurer");
    await postStatus(server, owner, { status: "one #Cats" });
    await postStatus(server, owner, { status: "two #cats #dogs" });
    await postStatus(server, owner, { status: "hidden #cats", visibility: "private" });
  });
  after(() => server.close());

  interface FeaturedTag {
    id: string;
    name: string;
    url: string;
    statuses_count: number;
    last_status_at: string | null;
  }
  const feature = (name: unknown) =>
    request(server.app, "POST", "/api/v1/featured_tags", { token: owner.token, json: { name } });

  test("feature a tag: the account's public use of it, listed for the owner and on the profile, then removed", async () => {
    const res = await feature("#Cats");
    assert.equal(res.statusCode, 200, res.body);
    const featured = res.json() as FeaturedTag;
    assert.equal(featured.name, "cats");
    assert.equal(featured.url, "https://rookery.test/@featurer/tagged/cats");
    assert.equal(featured.statuses_count, 2);
    assert.ok(featured.last_status_at);
    assert.deepEqual((await get(server.app, "/api/v1/featured_tags", owner.token)).json(), [featured]);
    assert.deepEqual((await get(server.app, `/api/v1/accounts/${owner.account.id}/featured_tags`)).json(), [featured]);
    const suggestions = (await get(server.app, "/api/v1/featured_tags/suggestions", owner.token)).json() as Tag[];
    assert.deepEqual(
      suggestions.map((t) => t.name),
      ["dogs"],
    );
    const removed = await request(server.app, "DELETE", `/api/v1/featured_tags/${featured.id}`, { token: owner.token });
    assert.deepEqual(removed.json(), {});
    assert.deepEqual(
      errorOf(await request(server.app, "DELETE", `/api/v1/featured_tags/${featured.id}`, { token: owner.token })),
      [404, "Record not found"],
    );
  });

  test("blank, invalid and repeated names are 422; at most ten", async () => {
    assert.deepEqual(errorOf(await feature("")), [422, "Validation failed: Name can't be blank"]);
    assert.deepEqual(errorOf(await feature("no spaces")), [422, "Validation failed: Name is invalid"]);
    assert.equal((await feature("once")).statusCode, 200);
    assert.deepEqual(errorOf(await feature("ONCE")), [422, "Validation failed: Tag has already been taken"]);
    for (let i = 1; i < 10; i++) assert.equal((await feature(`extra${i}`)).statusCode, 200);
    assert.deepEqual(errorOf(await feature("eleventh")), [
      422,
      "Validation failed: You have already featured the maximum number of hashtags",
    ]);
  });

  test("someone else's featured tag cannot be removed", async () => {
    const other = await createUser(server.ctx, "notowner");
    const mine = ((await get(server.app, "/api/v1/featured_tags", owner.token)).json() as FeaturedTag[])[0];
    const res = await request(server.app, "DELETE", `/api/v1/featured_tags/${mine.id}`, { token: other.token });
    assert.deepEqual(errorOf(res), [404, "Record not found"]);
  });

  describeAuth("POST /api/v1/featured_tags", () => server, {
    scope: "write:accounts",
    send: (s, token) =>
      request(s.app, "POST", "/api/v1/featured_tags", {
        token,
        json: { name: `scope${Date.now()}${Math.random().toString(36).slice(2, 6)}` },
      }),
  });
  describeAuth("GET /api/v1/featured_tags", () => server, {
    scope: "read:accounts",
    send: (s, token) => get(s.app, "/api/v1/featured_tags", token),
  });
});
