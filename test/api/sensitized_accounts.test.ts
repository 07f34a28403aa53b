/**
 * An account a moderator marked sensitive (the `sensitive` account action): as Mastodon shows
 * them, its posts are sensitive (media behind a warning) for everyone but the author, in every
 * place a status is read (other servers too), until the mark is lifted.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Status } from "../../src/entities/status.ts";
import { createTestServer, createUser, postStatus, request, tokenFor, type TestServer, type TestUser } from "../kit.ts";

describe("a sensitized account's posts", () => {
  let server: TestServer;
  let admin: TestUser;
  let author: TestUser;
  let reader: TestUser;
  let adminToken: string;

  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "sensitizer", { role: "Admin" });
    author = await createUser(server.ctx, "spicy");
    reader = await createUser(server.ctx, "looker");
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  const statusAs = async (id: string, user?: TestUser) => {
    const res = await request(server.app, "GET", `/api/v1/statuses/${id}`, { token: user?.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status;
  };

  async function act(path: string, json?: object) {
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${author.account.id}${path}`, {
      token: adminToken,
      json,
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  test("are sensitive for readers (signed in or not, boosts too), not for the author; lifted with unsensitive", async () => {
    const post = await postStatus(server, author, { status: "a plain post", visibility: "public" });
    assert.equal(post.sensitive, false);
    const boost = await request(server.app, "POST", `/api/v1/statuses/${post.id}/reblog`, { token: reader.token });
    assert.equal(boost.statusCode, 200, boost.body);

    await act("/action", { type: "sensitive", text: "Mark your media" });
    assert.equal((await statusAs(post.id, reader)).sensitive, true);
    assert.equal((await statusAs(post.id)).sensitive, true, "anonymous");
    assert.equal((await statusAs(post.id, author)).sensitive, false, "the author sees their own flag");
    const timeline = await request(server.app, "GET", "/api/v1/timelines/public", { token: reader.token });
    const listed = (timeline.json() as Status[]).find((s) => s.id === post.id);
    assert.equal(listed?.sensitive, true);
    const boosted = await statusAs((boost.json() as Status).id, reader);
    assert.equal(boosted.reblog?.sensitive, true, "the boosted post inside a boost");
    assert.equal(boosted.sensitive, false, "the boost itself is the reader's");

    const note = await server.app.inject({
      method: "GET",
      url: new URL(post.uri).pathname,
      headers: { accept: "application/activity+json" },
    });
    assert.equal(note.statusCode, 200, note.body);
    assert.equal((note.json() as { sensitive?: boolean }).sensitive, true, "the Note other servers read");

    await act("/unsensitive");
    assert.equal((await statusAs(post.id, reader)).sensitive, false);
  });

  test("a post the author marked sensitive stays sensitive for everyone", async () => {
    const post = await postStatus(server, author, { status: "marked", sensitive: true, spoiler_text: "cw" });
    assert.equal((await statusAs(post.id, reader)).sensitive, true);
    assert.equal((await statusAs(post.id, author)).sensitive, true);
  });
});
