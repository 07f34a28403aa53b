/** DELETE /api/v1/statuses/:id: the redraft answer, media set free, counters, boosts, 404s and the rate limit. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountJson,
  createTestServer,
  describeAuth,
  createUser,
  errorOf,
  get,
  postStatus,
  request,
  standardAccounts,
  statusJson,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import type { Status } from "../../types.ts";

describe("DELETE /api/v1/statuses/:id", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const del = (id: string, token?: string) => request(server.app, "DELETE", `/api/v1/statuses/${id}`, { token });

  test("returns the deleted status with its source text instead of content, with media and poll", async () => {
    const media = (await uploadImage(server, a.alice)).id;
    const withMedia = await postStatus(server, a.alice, {
      status: "Source *text* with #tag",
      media_ids: [media],
      spoiler_text: "cw",
    });
    const res = await del(withMedia.id, a.alice.token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<Status>();
    assert.equal(body.id, withMedia.id);
    assert.equal(body.text, "Source *text* with #tag");
    assert.equal("content" in body, false);
    assert.equal(body.spoiler_text, "cw");
    assert.deepEqual(
      body.media_attachments.map((m) => m.id),
      [media],
    );
    assert.equal((await get(server.app, `/api/v1/statuses/${withMedia.id}`, a.alice.token)).statusCode, 404);

    const withPoll = await postStatus(server, a.alice, {
      status: "poll",
      poll: { options: ["a", "b"], expires_in: 600, multiple: true },
    });
    const deleted = (await del(withPoll.id, a.alice.token)).json<Status>();
    assert.equal(deleted.text, "poll");
    assert.deepEqual(
      deleted.poll?.options.map((o) => o.title),
      ["a", "b"],
    );
    assert.equal(deleted.poll?.multiple, true);
    assert.equal((await get(server.app, `/api/v1/polls/${withPoll.poll?.id}`, a.bob.token)).statusCode, 404);
  });

  test("the media are detached and can be reused to redraft", async () => {
    const media = (await uploadImage(server, a.alice)).id;
    const original = await postStatus(server, a.alice, { status: "draft 1", media_ids: [media] });
    const deleted = (await del(original.id, a.alice.token)).json<Status>();
    assert.equal((await get(server.app, `/api/v1/media/${media}`, a.alice.token)).statusCode, 200);
    const redraft = await postStatus(server, a.alice, {
      status: deleted.text,
      media_ids: deleted.media_attachments.map((m) => m.id),
    });
    assert.deepEqual(
      redraft.media_attachments.map((m) => m.id),
      [media],
    );
  });

  test("counters go back: statuses_count, the parent's replies_count; boosts of it are deleted", async () => {
    const user = await createUser(server.ctx, "deleter");
    const parent = await postStatus(server, a.carol, { status: "parent" });
    const reply = await postStatus(server, user, { status: "reply", in_reply_to_id: parent.id });
    assert.equal((await statusJson(server, parent.id)).replies_count, 1);
    const boost = (
      await request(server.app, "POST", `/api/v1/statuses/${reply.id}/reblog`, { token: a.bob.token })
    ).json();
    const bobCount = (await accountJson(server, a.bob)).statuses_count;
    assert.equal((await accountJson(server, user)).statuses_count, 1);
    assert.equal((await del(reply.id, user.token)).statusCode, 200);
    assert.equal((await accountJson(server, user)).statuses_count, 0);
    assert.equal((await statusJson(server, parent.id)).replies_count, 0);
    assert.equal((await get(server.app, `/api/v1/statuses/${boost.id}`, a.bob.token)).statusCode, 404);
    assert.equal((await accountJson(server, a.bob)).statuses_count, bobCount - 1);
  });

  test("deleting one's own boost removes the boost only", async () => {
    const status = await postStatus(server, a.carol, { status: "boosted then unboosted" });
    const boost = (
      await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: a.bob.token })
    ).json();
    const count = (await accountJson(server, a.bob)).statuses_count;
    const res = await del(boost.id, a.bob.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().id, boost.id);
    assert.equal(res.json().reblog.id, status.id);
    const original = await statusJson(server, status.id, a.bob.token);
    assert.equal(original.reblogs_count, 0);
    assert.equal(original.reblogged, false);
    assert.equal((await accountJson(server, a.bob)).statuses_count, count - 1);
    assert.equal((await del(status.id, a.bob.token)).statusCode, 404, "the boosted status is not the booster's");
  });

  test("deleting a direct message leaves statuses_count alone", async () => {
    const user = await createUser(server.ctx, "dm_deleter");
    await postStatus(server, user, { status: "public" });
    const dm = await postStatus(server, user, { status: "@bob dm", visibility: "direct" });
    assert.equal((await del(dm.id, user.token)).statusCode, 200);
    assert.equal((await accountJson(server, user)).statuses_count, 1);
  });

  test("someone else's status, an unknown one and a second delete are 404; nothing is removed", async () => {
    const status = await postStatus(server, a.alice, { status: "mine" });
    assert.equal((await del(status.id, a.bob.token)).statusCode, 404);
    assert.equal((await del("1234", a.alice.token)).statusCode, 404);
    assert.equal((await statusJson(server, status.id)).id, status.id);
    assert.equal((await del(status.id, a.alice.token)).statusCode, 200);
    assert.equal((await del(status.id, a.alice.token)).statusCode, 404);
  });

  describeAuth("DELETE /api/v1/statuses/:id", () => server, {
    scope: "write:statuses",
    send: async (s, token, owner) => del((await postStatus(s, owner, { status: "to be deleted" })).id, token),
  });

  test("deletions are rate limited (30 per 30 minutes) for clients that are not on this machine", async () => {
    const user = await createUser(server.ctx, "rate_limited");
    const ids: string[] = [];
    for (let i = 0; i < 31; i++) ids.push((await postStatus(server, user, { status: `s${i}` })).id);
    const remote = (id: string) =>
      server.app.inject({
        method: "DELETE",
        url: `/api/v1/statuses/${id}`,
        headers: { authorization: `Bearer ${user.token}` },
        remoteAddress: "203.0.113.7",
      });
    const first = await remote(ids[0]);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers["x-ratelimit-limit"], "30");
    assert.equal(first.headers["x-ratelimit-remaining"], "29");
    assert.match(String(first.headers["x-ratelimit-reset"]), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    for (let i = 1; i < 30; i++) assert.equal((await remote(ids[i])).statusCode, 200);
    const refused = await remote(ids[30]);
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-remaining"], "0");
    // The refused status still exists; loopback clients are not throttled.
    assert.equal((await del(ids[30], user.token)).statusCode, 200);
  });
});
