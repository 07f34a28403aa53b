/**
 * GET /api/v1/timelines/home: what the stored home feed takes (Mastodon's home feed rules), what
 * takes effect on the next page (unfollow, block, mute, hidden boosts), paging across the feed's
 * retention, and rebuilding a feed.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  mute,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Status } from "../../types.ts";
import { FEED_RETENTION_DAYS, rebuildHome, trimFeeds } from "../../../src/services/timelines/feeds.ts";

describe("the home timeline", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const drain = () => server.ctx.jobs.drain();
  const home = async (viewer: TestUser, query = "") => {
    const res = await get(server.app, `/api/v1/timelines/home${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status[];
  };
  /** The page as "text" for posts and "boost:text" for boosts, newest first. */
  const texts = async (viewer: TestUser, query = "") =>
    (await home(viewer, query)).map((s) => (s.reblog ? `boost:${plain(s.reblog.content)}` : plain(s.content)));
  const plain = (html: string) => html.replace(/<[^>]+>/g, "");
  const api = async (viewer: TestUser, method: "POST" | "DELETE", path: string, json?: object) => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  test("your own posts appear at once; a follower's home after the fan-out, a stranger's never", async () => {
    const [author, follower, stranger] = await Promise.all([user("author"), user("follower"), user("stranger")]);
    await follow(server, follower, author);
    await postStatus(server, author, { status: "hello followers" });
    assert.deepEqual(await texts(author), ["hello followers"]);
    await drain();
    assert.deepEqual(await texts(follower), ["hello followers"]);
    assert.deepEqual(await texts(stranger), []);
  });

  test("visibility: followers get public, unlisted and private posts; direct ones only mentioned followers", async () => {
    const [author, follower, mentionedFollower, mentionedStranger] = await Promise.all([
      user("vauthor"),
      user("vfollower"),
      user("vmentioned"),
      user("vstranger"),
    ]);
    await follow(server, follower, author);
    await follow(server, mentionedFollower, author);
    for (const visibility of ["public", "unlisted", "private"] as const)
      await postStatus(server, author, { status: visibility, visibility });
    await postStatus(server, author, {
      status: `@${mentionedFollower.username} @${mentionedStranger.username} direct`,
      visibility: "direct",
    });
    await drain();
    assert.deepEqual(await texts(follower), ["private", "unlisted", "public"]);
    const mentioned = await texts(mentionedFollower);
    assert.equal(mentioned.length, 4);
    assert.match(mentioned[0]!, /direct$/);
    assert.deepEqual(await texts(mentionedStranger), []);
    assert.equal((await texts(author)).length, 4);
  });

  test("replies: to someone you follow, to you and to oneself are shown; to a stranger not", async () => {
    const [viewer, friend, other, stranger] = await Promise.all([user("rv"), user("rf"), user("ro"), user("rs")]);
    await follow(server, viewer, friend);
    await follow(server, viewer, other);
    const strangerPost = await postStatus(server, stranger, { status: "stranger post" });
    const otherPost = await postStatus(server, other, { status: "other post" });
    const viewerPost = await postStatus(server, viewer, { status: "viewer post" });
    const friendPost = await postStatus(server, friend, { status: "friend post" });
    await postStatus(server, friend, { status: "to stranger", in_reply_to_id: strangerPost.id });
    await postStatus(server, friend, { status: "to other", in_reply_to_id: otherPost.id });
    await postStatus(server, friend, { status: "to viewer", in_reply_to_id: viewerPost.id });
    await postStatus(server, friend, { status: "thread", in_reply_to_id: friendPost.id });
    await drain();
    assert.deepEqual(await texts(viewer), [
      "thread",
      "to viewer",
      "to other",
      "friend post",
      "viewer post",
      "other post",
    ]);
  });

  test("boosts: shown once, not when the original is near the top already, and hidden with reblogs=false", async () => {
    const [viewer, booster, author] = await Promise.all([user("bv"), user("bb"), user("ba")]);
    await follow(server, viewer, booster);
    const stranger = await postStatus(server, author, { status: "boosted post" });
    await api(booster, "POST", `/api/v1/statuses/${stranger.id}/reblog`);
    await drain();
    assert.deepEqual(await texts(viewer), ["boost:boosted post"]);

    // The viewer follows the author too: the author's post merges in, and a second boost of it is left out.
    await api(viewer, "POST", `/api/v1/accounts/${author.account.id}/follow`);
    const second = await user("bsecond");
    await follow(server, viewer, second);
    await api(second, "POST", `/api/v1/statuses/${stranger.id}/reblog`);
    await drain();
    assert.deepEqual(await texts(viewer), ["boost:boosted post", "boosted post"]);

    // reblogs=false takes the booster's boosts out at once, and keeps new ones out.
    await api(viewer, "POST", `/api/v1/accounts/${booster.account.id}/follow`, { reblogs: false });
    assert.deepEqual(await texts(viewer), ["boosted post"]);
    const another = await postStatus(server, author, { status: "another" });
    await drain();
    await api(booster, "POST", `/api/v1/statuses/${another.id}/reblog`);
    await drain();
    const after = await home(viewer);
    assert.ok(
      after.every((s) => s.account.id !== booster.account.id),
      "no boost by the booster",
    );
  });

  test("a boost of your own post by someone you follow does not repeat it", async () => {
    const [viewer, booster] = await Promise.all([user("ov"), user("ob")]);
    await follow(server, viewer, booster);
    const own = await postStatus(server, viewer, { status: "my post" });
    await api(booster, "POST", `/api/v1/statuses/${own.id}/reblog`);
    await drain();
    assert.deepEqual(await texts(viewer), ["my post"]);
  });

  test("languages: a follow limited to some languages leaves out posts in others", async () => {
    const [viewer, author] = await Promise.all([user("lv"), user("la")]);
    await api(viewer, "POST", `/api/v1/accounts/${author.account.id}/follow`, { languages: ["de"] });
    await postStatus(server, author, { status: "english", language: "en" });
    await postStatus(server, author, { status: "deutsch", language: "de" });
    await drain();
    assert.deepEqual(await texts(viewer), ["deutsch"]);
  });

  test("unfollow, block and mute take effect on the next page; unmute brings posts back", async () => {
    const [viewer, a, b, c] = await Promise.all([user("xv"), user("xa"), user("xb"), user("xc")]);
    for (const target of [a, b, c]) await follow(server, viewer, target);
    await postStatus(server, a, { status: "from a" });
    await postStatus(server, b, { status: "from b" });
    await postStatus(server, c, { status: "from c" });
    await drain();
    assert.deepEqual(await texts(viewer), ["from c", "from b", "from a"]);
    await api(viewer, "POST", `/api/v1/accounts/${a.account.id}/unfollow`);
    assert.deepEqual(await texts(viewer), ["from c", "from b"]);
    await api(viewer, "POST", `/api/v1/accounts/${b.account.id}/mute`);
    assert.deepEqual(await texts(viewer), ["from c"]);
    await api(viewer, "POST", `/api/v1/accounts/${b.account.id}/unmute`);
    assert.deepEqual(await texts(viewer), ["from c", "from b"]);
    // Blocked by the author: their follow ends, and their posts leave.
    await api(c, "POST", `/api/v1/accounts/${viewer.account.id}/block`);
    assert.deepEqual(await texts(viewer), ["from b"]);
  });

  test("a muted account's posts stay out while muted; posts mentioning a blocked account never enter", async () => {
    const [viewer, friend, blocked] = await Promise.all([user("mv"), user("mf"), user("mb")]);
    await follow(server, viewer, friend);
    await api(viewer, "POST", `/api/v1/accounts/${blocked.account.id}/block`);
    await postStatus(server, friend, { status: `hi @${blocked.username}` });
    await postStatus(server, friend, { status: "plain" });
    await drain();
    assert.deepEqual(await texts(viewer), ["plain"]);
    await mute(server, viewer, friend);
    assert.deepEqual(await texts(viewer), []);
  });

  test("a suspended author's posts and boosts of them leave home", async () => {
    const [viewer, author, booster] = await Promise.all([user("sv"), user("sa"), user("sb")]);
    await follow(server, viewer, author);
    await follow(server, viewer, booster);
    const post = await postStatus(server, author, { status: "soon gone" });
    await postStatus(server, booster, { status: "stays" });
    await drain();
    await server.ctx.db.kysely.deleteFrom("home_feed_entries").where("status_id", "=", post.id).execute();
    await api(booster, "POST", `/api/v1/statuses/${post.id}/reblog`);
    await drain();
    assert.deepEqual(await texts(viewer), ["boost:soon gone", "stays"]);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", author.account.id)
      .execute();
    assert.deepEqual(await texts(viewer), ["stays"]);
  });

  test("followed hashtags bring public posts of anyone; unlisted and boosts do not come that way", async () => {
    const [viewer, poster] = await Promise.all([user("tv"), user("tp")]);
    await api(viewer, "POST", "/api/v1/tags/homefeedtag/follow");
    await postStatus(server, poster, { status: "public #HomeFeedTag" });
    await postStatus(server, poster, { status: "unlisted #homefeedtag", visibility: "unlisted" });
    await postStatus(server, poster, { status: "no tag" });
    await drain();
    assert.deepEqual(await texts(viewer), ["public #HomeFeedTag"]);
  });

  test("following merges the account's recent posts; a deleted post leaves every feed", async () => {
    const [viewer, author] = await Promise.all([user("fv"), user("fa")]);
    await postStatus(server, author, { status: "older" });
    const newer = await postStatus(server, author, { status: "newer" });
    await api(viewer, "POST", `/api/v1/accounts/${author.account.id}/follow`);
    await drain();
    assert.deepEqual(await texts(viewer), ["newer", "older"]);
    await api(author, "DELETE", `/api/v1/statuses/${newer.id}`);
    assert.deepEqual(await texts(viewer), ["older"]);
  });

  test("members of an exclusive list stay out of home", async () => {
    const [viewer, member, other] = await Promise.all([user("ev"), user("em"), user("eo")]);
    await follow(server, viewer, member);
    await follow(server, viewer, other);
    const list = (await api(viewer, "POST", "/api/v1/lists", { title: "exclusive", exclusive: true })) as {
      id: string;
    };
    await api(viewer, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: [member.account.id] });
    await postStatus(server, member, { status: "member post" });
    await postStatus(server, other, { status: "other post" });
    await drain();
    assert.deepEqual(await texts(viewer), ["other post"]);
  });

  test("paging: max_id, since_id, min_id and Link headers, also past the feed's retention", async () => {
    const [viewer, author] = await Promise.all([user("pv"), user("pa")]);
    await follow(server, viewer, author);
    const posted: Status[] = [];
    for (let i = 1; i <= 6; i++) posted.push(await postStatus(server, author, { status: `post ${i}` }));
    await drain();
    const ids = posted.map((s) => s.id).reverse();
    const check = async () => {
      assert.deepEqual(
        (await home(viewer, "?limit=2")).map((s) => s.id),
        ids.slice(0, 2),
      );
      assert.deepEqual(
        (await home(viewer, `?limit=3&max_id=${ids[1]}`)).map((s) => s.id),
        ids.slice(2, 5),
      );
      assert.deepEqual(
        (await home(viewer, `?limit=2&since_id=${ids[4]}`)).map((s) => s.id),
        ids.slice(0, 2),
      );
      assert.deepEqual(
        (await home(viewer, `?limit=2&min_id=${ids[4]}`)).map((s) => s.id),
        ids.slice(2, 4),
      );
      assert.deepEqual(
        (await home(viewer, `?min_id=${ids[5]}&max_id=${ids[0]}`)).map((s) => s.id),
        ids.slice(1, 5),
      );
      const res = await get(server.app, "/api/v1/timelines/home?limit=2", viewer.token);
      assert.match(res.headers.link as string, new RegExp(`max_id=${ids[1]}>; rel="next"`));
      assert.match(res.headers.link as string, new RegExp(`min_id=${ids[0]}>; rel="prev"`));
    };
    await check();
    // Past the retention the stored entries go; the same pages come from the statuses themselves.
    const later = Date.now() + (FEED_RETENTION_DAYS + 1) * 24 * 60 * 60 * 1000;
    assert.ok((await trimFeeds(server.ctx, later)) > 0);
    const entries = await server.ctx.db.kysely
      .selectFrom("home_feed_entries")
      .select("status_id")
      .where("account_id", "=", viewer.account.id)
      .execute();
    assert.deepEqual(entries, []);
    const realNow = Date.now;
    Date.now = () => later;
    try {
      await check();
    } finally {
      Date.now = realNow;
    }
  });

  test("a feed rebuilt from scratch shows the same page", async () => {
    const [viewer, a, b] = await Promise.all([user("rbv"), user("rba"), user("rbb")]);
    await follow(server, viewer, a);
    await follow(server, viewer, b);
    await postStatus(server, viewer, { status: "mine" });
    await postStatus(server, a, { status: "from a" });
    await postStatus(server, b, { status: "from b" });
    await drain();
    const before = await texts(viewer);
    await server.ctx.db.kysely.deleteFrom("home_feed_entries").where("account_id", "=", viewer.account.id).execute();
    assert.deepEqual(await texts(viewer), []);
    await rebuildHome(server.ctx, viewer.account.id);
    assert.deepEqual(await texts(viewer), before);
    assert.deepEqual(before, ["from b", "from a", "mine"]);
  });

  test("a malformed limit falls back to the default; an out-of-range ID is never a 500", async () => {
    const viewer = await user("bad");
    const res = await get(server.app, "/api/v1/timelines/home?limit=abc", viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    const unknown = await get(server.app, "/api/v1/timelines/home?max_id=999999999999999999999999", viewer.token);
    assert.ok([200, 400].includes(unknown.statusCode), unknown.body);
    assert.notEqual(errorOf(unknown)[0], 500);
  });

  describeAuth("GET /api/v1/timelines/home", () => server, {
    scope: "read:statuses",
    send: (s, token) => get(s.app, "/api/v1/timelines/home", token),
  });
});
