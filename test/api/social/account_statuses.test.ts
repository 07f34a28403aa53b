/** GET /api/v1/accounts/:id/statuses: who sees what of an account's posts, and every filter. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Status } from "../../types.ts";

describe("an account's statuses", () => {
  let server: TestServer;
  let author: TestUser;
  let follower: TestUser;
  let mentioned: TestUser;
  let stranger: TestUser;
  let blocked: TestUser;
  const posts: Record<string, Status> = {};
  before(async () => {
    server = await createTestServer();
    [author, follower, mentioned, stranger, blocked] = await Promise.all(
      ["author", "follower", "mentioned", "stranger", "blocked"].map((name) => createUser(server.ctx, name)),
    );
    await follow(server, follower, author);
    await follow(server, blocked, author);
    await block(server, author, blocked);
    posts.public = await postStatus(server, author, { status: "public #news" });
    posts.unlisted = await postStatus(server, author, { status: "unlisted", visibility: "unlisted" });
    posts.private = await postStatus(server, author, { status: "private", visibility: "private" });
    posts.direct = await postStatus(server, author, { status: "@mentioned direct", visibility: "direct" });
    posts.privateMention = await postStatus(server, author, {
      status: "@mentioned private mention",
      visibility: "private",
    });
  });
  after(() => server.close());

  const texts = async (path: string, user?: TestUser) => {
    const res = await get(server.app, path, user?.token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Status[]).map((s) => (s.reblog ? `boost of ${s.reblog.content}` : s.content));
  };
  const statusesOf = (user: TestUser, query = "") => `/api/v1/accounts/${user.account.id}/statuses${query}`;

  test("the visibility matrix: author, follower, mentioned, stranger, blocked, anonymous", async () => {
    const p = (text: string) => `<p>${text}</p>`;
    const all = await texts(statusesOf(author), author);
    assert.equal(all.length, 5);
    assert.deepEqual(await texts(statusesOf(author), follower), [
      p(
        '<span class="h-card" translate="no"><a href="https://rookery.test/@mentioned" class="u-url mention">@<span>mentioned</span></a></span> private mention',
      ),
      p("private"),
      p("unlisted"),
      p('public <a href="https://rookery.test/tags/news" class="mention hashtag" rel="tag">#<span>news</span></a>'),
    ]);
    const seenByMentioned = await texts(statusesOf(author), mentioned);
    assert.equal(seenByMentioned.length, 4);
    assert.ok(seenByMentioned.every((t) => !t.includes(">private<") && t !== p("private")));
    assert.equal((await texts(statusesOf(author), stranger)).length, 2);
    assert.equal((await texts(statusesOf(author))).length, 2);
    assert.deepEqual(await texts(statusesOf(author), blocked), []);
  });

  test("filters: pinned, tagged, only_media, exclude_replies (self-replies stay), exclude_reblogs", async () => {
    const poster = await createUser(server.ctx, "poster");
    const first = await postStatus(server, poster, { status: "first" });
    await postStatus(server, poster, { status: "thread", in_reply_to_id: first.id });
    await postStatus(server, poster, { status: "reply to author", in_reply_to_id: posts.public.id });
    const media = await uploadImage(server, poster);
    await postStatus(server, poster, { status: "with media #Art", media_ids: [media.id] });
    assert.equal(
      (await request(server.app, "POST", `/api/v1/statuses/${posts.public.id}/reblog`, { token: poster.token }))
        .statusCode,
      200,
    );
    assert.equal(
      (await request(server.app, "POST", `/api/v1/statuses/${first.id}/pin`, { token: poster.token })).statusCode,
      200,
    );

    assert.equal((await texts(statusesOf(poster))).length, 5);
    assert.deepEqual(await texts(statusesOf(poster, "?pinned=true")), ["<p>first</p>"]);
    assert.equal((await texts(statusesOf(poster, "?only_media=true"))).length, 1);
    assert.equal((await texts(statusesOf(poster, "?tagged=art"))).length, 1);
    assert.equal((await texts(statusesOf(poster, "?tagged=%23ART"))).length, 1);
    const noReplies = await texts(statusesOf(poster, "?exclude_replies=true"));
    assert.equal(noReplies.length, 4);
    assert.ok(!noReplies.includes("<p>reply to author</p>"));
    assert.ok(noReplies.includes("<p>thread</p>"));
    const noBoosts = await texts(statusesOf(poster, "?exclude_reblogs=true"));
    assert.ok(noBoosts.every((t) => !t.startsWith("boost of")));
    assert.equal(noBoosts.length, 4);
  });

  test("paging with max_id, min_id and a Link header that keeps the filters", async () => {
    const res = await get(server.app, statusesOf(author, "?limit=2&exclude_replies=true"), author.token);
    const page = res.json() as Status[];
    assert.equal(page.length, 2);
    const link = String(res.headers.link);
    assert.match(link, /exclude_replies=true&limit=2&max_id=\d+>; rel="next"/);
    assert.match(link, /min_id=\d+>; rel="prev"/);
    const older = (await get(server.app, statusesOf(author, `?max_id=${page[1].id}`), author.token)).json() as Status[];
    assert.equal(older.length, 3);
    const newer = (await get(server.app, statusesOf(author, `?min_id=${page[1].id}`), author.token)).json() as Status[];
    assert.deepEqual(
      newer.map((s) => s.id),
      [page[0].id],
    );
  });

  test("unknown accounts are 404; a suspended account shows nothing", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/accounts/12345/statuses")), [404, "Record not found"]);
    const gone = await createUser(server.ctx, "gone");
    await postStatus(server, gone, { status: "before" });
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", gone.account.id)
      .execute();
    assert.deepEqual(await texts(statusesOf(gone)), []);
  });

  describeAuth("GET /api/v1/accounts/:id/statuses", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, `/api/v1/accounts/${author.account.id}/statuses`, token),
  });
});
