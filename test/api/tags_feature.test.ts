/**
 * Featuring a hashtag from its page (Mastodon 4.4): `POST /api/v1/tags/:name/feature` and
 * `/unfeature`, which answer the Tag with `featuring`, and share the featured tags (and their limit
 * of ten) with `POST /api/v1/featured_tags`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  appToken,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateResponse, validateSchema } from "../openapi.ts";

interface Tag {
  id: string;
  name: string;
  url: string;
  history: Array<{ day: string; accounts: string; uses: string }>;
  following?: boolean;
  featuring?: boolean;
}

interface FeaturedTag {
  id: string;
  name: string;
  statuses_count: number;
}

const LIMIT_REACHED = "Validation failed: You have already featured the maximum number of hashtags";
/** What Rookery answers for a name that cannot be a hashtag, on every tag route. */
const NOT_A_TAG = "Record not found";

describe("featuring hashtags from their page", () => {
  let server: TestServer;
  let owner: TestUser;
  let other: TestUser;
  before(async () => {
    server = await createTestServer();
    [owner, other] = await Promise.all([createUser(server.ctx, "featurer"), createUser(server.ctx, "onlooker")]);
    await postStatus(server, owner, { status: "about #Birds" });
  });
  after(() => server.close());

  const act = (user: TestUser, name: string, action: "feature" | "unfeature") =>
    request(server.app, "POST", `/api/v1/tags/${encodeURIComponent(name)}/${action}`, { token: user.token });
  const tagOf = async (user: TestUser, name: string, action: "feature" | "unfeature") => {
    const res = await act(user, name, action);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Tag;
  };
  const featuredNames = async (user: TestUser) =>
    ((await get(server.app, "/api/v1/featured_tags", user.token)).json() as FeaturedTag[]).map((f) => f.name);

  test("feature: the Tag with featuring true, listed in the featured tags; unfeature takes it off", async () => {
    const featured = await tagOf(owner, "Birds", "feature");
    assert.equal(featured.name, "birds");
    assert.notEqual(featured.id, "");
    assert.equal(featured.featuring, true);
    assert.equal(featured.following, false);
    assert.equal(featured.history.length, 7);
    assert.deepEqual(await featuredNames(owner), ["birds"]);
    const facts = ((await get(server.app, "/api/v1/featured_tags", owner.token)).json() as FeaturedTag[])[0];
    assert.equal(facts.statuses_count, 1);

    const unfeatured = await tagOf(owner, "birds", "unfeature");
    assert.equal(unfeatured.id, featured.id);
    assert.equal(unfeatured.featuring, false);
    assert.deepEqual(await featuredNames(owner), []);
  });

  test("both are idempotent; featuring a tag never used creates it", async () => {
    const first = await tagOf(owner, "brandnew", "feature");
    assert.notEqual(first.id, "");
    assert.equal((await tagOf(owner, "BrandNew", "feature")).featuring, true);
    assert.deepEqual(await featuredNames(owner), ["brandnew"]);
    assert.equal((await tagOf(owner, "brandnew", "unfeature")).featuring, false);
    assert.equal((await tagOf(owner, "brandnew", "unfeature")).featuring, false);
    assert.deepEqual(await featuredNames(owner), []);
  });

  test("unfeaturing a valid name never used answers the unsaved tag, as Mastodon does", async () => {
    const tag = await tagOf(owner, "nosuchtagyet", "unfeature");
    assert.equal(tag.id, "");
    assert.equal(tag.name, "nosuchtagyet");
    assert.equal(tag.featuring, false);
    assert.equal((await get(server.app, "/api/v1/tags/nosuchtagyet")).json().id, "");
  });

  test("a name that cannot be a hashtag is 404", async () => {
    for (const bad of ["12345", "a-b", "not a tag"]) {
      assert.deepEqual(errorOf(await act(owner, bad, "feature")), [404, NOT_A_TAG], bad);
      assert.deepEqual(errorOf(await act(owner, bad, "unfeature")), [404, NOT_A_TAG], bad);
    }
  });

  test("featuring shows on the tag's page and in other Tag lists for the owner only", async () => {
    await tagOf(owner, "birds", "feature");
    await request(server.app, "POST", "/api/v1/tags/birds/follow", { token: owner.token });
    assert.equal(((await get(server.app, "/api/v1/tags/birds", owner.token)).json() as Tag).featuring, true);
    assert.equal(((await get(server.app, "/api/v1/tags/birds", other.token)).json() as Tag).featuring, false);
    const anonymous = (await get(server.app, "/api/v1/tags/birds")).json() as Tag;
    assert.equal("featuring" in anonymous, false);
    const app = (await get(server.app, "/api/v1/tags/birds", await appToken(server.ctx, "read"))).json() as Tag;
    assert.equal("featuring" in app, false);
    const followed = (await get(server.app, "/api/v1/followed_tags", owner.token)).json() as Tag[];
    assert.deepEqual(
      followed.map((t) => [t.name, t.following, t.featuring]),
      [["birds", true, true]],
    );
    await tagOf(owner, "birds", "unfeature");
  });

  test("the same featured tags as /api/v1/featured_tags: either route adds, either removes", async () => {
    const created = await request(server.app, "POST", "/api/v1/featured_tags", {
      token: owner.token,
      json: { name: "viaList" },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(((await get(server.app, "/api/v1/tags/vialist", owner.token)).json() as Tag).featuring, true);
    // Featuring it again from its page is no error (the list's own POST would say it is taken).
    assert.equal((await tagOf(owner, "vialist", "feature")).featuring, true);
    assert.equal((await tagOf(owner, "vialist", "unfeature")).featuring, false);

    await tagOf(owner, "viapage", "feature");
    const [listed] = (await get(server.app, "/api/v1/featured_tags", owner.token)).json() as FeaturedTag[];
    assert.equal(listed.name, "viapage");
    const removed = await request(server.app, "DELETE", `/api/v1/featured_tags/${listed.id}`, { token: owner.token });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(((await get(server.app, "/api/v1/tags/viapage", owner.token)).json() as Tag).featuring, false);
  });

  test("at most ten featured tags: the eleventh is 422 from either route; a featured one can still be featured again", async () => {
    const collector = await createUser(server.ctx, "collector");
    for (let i = 1; i <= 10; i++) assert.equal((await tagOf(collector, `topic${i}`, "feature")).featuring, true);
    assert.deepEqual(errorOf(await act(collector, "topic11", "feature")), [422, LIMIT_REACHED]);
    const viaList = await request(server.app, "POST", "/api/v1/featured_tags", {
      token: collector.token,
      json: { name: "topic11" },
    });
    assert.deepEqual(errorOf(viaList), [422, LIMIT_REACHED]);
    assert.equal((await tagOf(collector, "topic3", "feature")).featuring, true);
    assert.equal((await featuredNames(collector)).length, 10);
    await tagOf(collector, "topic3", "unfeature");
    assert.equal((await tagOf(collector, "topic11", "feature")).featuring, true);
    assert.equal((await featuredNames(collector)).length, 10);
  });

  test("the Tag matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const featured = await tagOf(owner, "schemas", "feature");
    assert.deepEqual(validateResponse("post", "/api/v1/tags/{id}/feature", featured), []);
    const unfeatured = await tagOf(owner, "schemas", "unfeature");
    assert.deepEqual(validateResponse("post", "/api/v1/tags/{id}/unfeature", unfeatured), []);
    assert.deepEqual(validateSchema("Tag", await tagOf(owner, "neverseen", "unfeature")), []);
  });

  describeAuth("POST /api/v1/tags/:name/feature", () => server, {
    scope: "write:accounts",
    send: (s, token) => request(s.app, "POST", "/api/v1/tags/scopes/feature", { token }),
  });
  describeAuth("POST /api/v1/tags/:name/unfeature", () => server, {
    scope: "write:accounts",
    send: (s, token) => request(s.app, "POST", "/api/v1/tags/scopes/unfeature", { token }),
  });
});
