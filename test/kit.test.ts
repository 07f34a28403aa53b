/**
 * The test kit's own promises: the social graph helpers keep counters as the app would, the
 * standard data set holds what the top of kit.ts says, and describeAuth checks what it claims.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountJson,
  block,
  createTestServer,
  describeAuth,
  follow,
  mute,
  requestFollow,
  get,
  postStatus,
  request,
  standardAccounts,
  standardData,
  statusJson,
  unblock,
  unfollow,
  unmute,
  uploadImage,
  type StandardData,
  type TestServer,
} from "./kit.ts";
import type { MediaAttachment, Status } from "./types.ts";

describe("the social graph helpers", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const counts = async (id: Parameters<typeof accountJson>[1]) => {
    const account = await accountJson(server, id);
    return [account.followers_count, account.following_count];
  };
  const rows = async (table: "follows" | "blocks" | "follow_requests" | "mutes", from: string, to: string) => {
    const found = await server.ctx.db.kysely
      .selectFrom(table)
      .select("id")
      .where("account_id", "=", from)
      .where("target_account_id", "=", to)
      .execute();
    return found.length;
  };
  const follows = (from: string, to: string) => rows("follows", from, to);
  const blocks = (from: string, to: string) => rows("blocks", from, to);
  const requests = (from: string, to: string) => rows("follow_requests", from, to);

  test("standardAccounts is made once per server", async () => {
    const first = await standardAccounts(server.ctx);
    const second = await standardAccounts(server.ctx);
    assert.equal(second, first);
  });

  test("follow moves both counters once, also when repeated; unfollow moves them back", async () => {
    const { alice, bob } = await standardAccounts(server.ctx);
    await follow(server, bob, alice);
    await follow(server, bob, alice);
    assert.equal(await follows(bob.account.id, alice.account.id), 1);
    assert.deepEqual(await counts(alice), [1, 0]);
    assert.deepEqual(await counts(bob), [0, 1]);
    await unfollow(server, bob, alice);
    await unfollow(server, bob, alice);
    assert.equal(await follows(bob.account.id, alice.account.id), 0);
    assert.deepEqual(await counts(alice), [0, 0]);
    assert.deepEqual(await counts(bob), [0, 0]);
  });

  test("a follow gives access to private statuses", async () => {
    const { carol, lucy } = await standardAccounts(server.ctx);
    const secret = await postStatus(server, lucy, { status: "locked away", visibility: "private" });
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}`, carol.token)).statusCode, 404);
    await follow(server, carol, lucy);
    assert.equal((await get(server.app, `/api/v1/statuses/${secret.id}`, carol.token)).statusCode, 200);
    await unfollow(server, carol, lucy);
  });

  test("a remote account can follow a local one", async () => {
    const { admin, rita } = await standardAccounts(server.ctx);
    await follow(server, rita, admin);
    assert.deepEqual(await counts(admin), [1, 0]);
    await unfollow(server, rita, admin);
  });

  test("block ends follows both ways with their counters; unblock leaves them ended", async () => {
    const { alice, carol } = await standardAccounts(server.ctx);
    await follow(server, alice, carol);
    await follow(server, carol, alice);
    await block(server, alice, carol);
    await block(server, alice, carol);
    assert.equal(await blocks(alice.account.id, carol.account.id), 1);
    assert.equal(await follows(alice.account.id, carol.account.id), 0);
    assert.equal(await follows(carol.account.id, alice.account.id), 0);
    assert.deepEqual(await counts(alice), [0, 0]);
    assert.deepEqual(await counts(carol), [0, 0]);
    const post = await postStatus(server, alice, { status: "not for carol" });
    assert.equal((await get(server.app, `/api/v1/statuses/${post.id}`, carol.token)).statusCode, 404);
    await unblock(server, alice, carol);
    assert.equal(await blocks(alice.account.id, carol.account.id), 0);
    assert.equal((await get(server.app, `/api/v1/statuses/${post.id}`, carol.token)).statusCode, 200);
    assert.deepEqual(await counts(carol), [0, 0]);
  });

  test("requestFollow waits: no follow, no counters; follow accepts it, unfollow withdraws it", async () => {
    const { bob, lucy } = await standardAccounts(server.ctx);
    await requestFollow(server, bob, lucy);
    await requestFollow(server, bob, lucy, { showReblogs: false });
    assert.equal(await requests(bob.account.id, lucy.account.id), 1);
    assert.equal(await follows(bob.account.id, lucy.account.id), 0);
    assert.deepEqual(await counts(lucy), [0, 0]);
    const request = await server.ctx.db.kysely
      .selectFrom("follow_requests")
      .selectAll()
      .where("account_id", "=", bob.account.id)
      .executeTakeFirstOrThrow();
    assert.equal(request.show_reblogs, false);
    await follow(server, bob, lucy);
    assert.equal(await requests(bob.account.id, lucy.account.id), 0);
    assert.deepEqual(await counts(lucy), [1, 0]);
    await unfollow(server, bob, lucy);
    await requestFollow(server, bob, lucy);
    await unfollow(server, bob, lucy);
    assert.equal(await requests(bob.account.id, lucy.account.id), 0);
    assert.deepEqual(await counts(lucy), [0, 0]);
  });

  test("a block withdraws follow requests both ways", async () => {
    const { admin, carol } = await standardAccounts(server.ctx);
    await requestFollow(server, admin, carol);
    await requestFollow(server, carol, admin);
    await block(server, carol, admin);
    assert.equal(await requests(admin.account.id, carol.account.id), 0);
    assert.equal(await requests(carol.account.id, admin.account.id), 0);
    await unblock(server, carol, admin);
  });

  test("mute stores notifications and expiry, muting again replaces them; unmute lifts it", async () => {
    const { alice, rita } = await standardAccounts(server.ctx);
    const mutes = server.ctx.db.kysely.selectFrom("mutes").selectAll();
    const row = () => mutes.where("account_id", "=", alice.account.id).executeTakeFirst();
    await mute(server, alice, rita);
    const forever = await row();
    assert.equal(forever?.hide_notifications, true);
    assert.equal(forever?.expires_at, null);
    const before = Date.now();
    await mute(server, alice, rita, { notifications: false, duration: 3600 });
    const timed = await row();
    assert.equal(timed?.hide_notifications, false);
    const expires = Date.parse(String(timed?.expires_at));
    assert.ok(expires >= before + 3_600_000 && expires <= Date.now() + 3_600_000, String(timed?.expires_at));
    assert.equal(await rows("mutes", alice.account.id, rita.id), 1);
    await unmute(server, alice, rita);
    assert.equal(await row(), undefined);
  });

  test("uploadImage stores an unattached image with its description and focus", async () => {
    const { alice } = await standardAccounts(server.ctx);
    const options = { width: 40, height: 20, format: "jpeg", description: "wide", focus: "0.5,-0.5" } as const;
    const media = await uploadImage(server, alice, options);
    assert.equal(media.type, "image");
    assert.equal(media.description, "wide");
    assert.deepEqual(media.meta.focus, { x: 0.5, y: -0.5 });
    assert.equal(media.meta.original?.width, 40);
    const draft = await get(server.app, `/api/v1/media/${media.id}`, alice.token);
    assert.equal(draft.statusCode, 200);
  });

  test("postStatus takes form pairs as well as JSON", async () => {
    const { alice } = await standardAccounts(server.ctx);
    const status = await postStatus(server, alice, [
      ["status", "from a form"],
      ["poll[options][]", "yes"],
      ["poll[options][]", "no"],
      ["poll[expires_in]", "600"],
    ]);
    assert.equal(status.content, "<p>from a form</p>");
    assert.deepEqual(
      status.poll?.options.map((o) => o.title),
      ["yes", "no"],
    );
  });
});

describe("the standard data set", () => {
  let server: TestServer;
  let data: StandardData;
  before(async () => {
    server = await createTestServer();
    data = await standardData(server);
  });
  after(() => server.close());

  const sees = async (status: Status, token?: string) =>
    (await get(server.app, `/api/v1/statuses/${status.id}`, token)).statusCode === 200;

  test("is built once per server, on the standard accounts", async () => {
    assert.equal(await standardData(server), data);
    assert.equal(data.alice, (await standardAccounts(server.ctx)).alice);
  });

  test("bob's request to follow lucy waits, and bob mutes carol", async () => {
    const pending = await server.ctx.db.kysely.selectFrom("follow_requests").selectAll().execute();
    assert.deepEqual(
      pending.map((r) => [r.account_id, r.target_account_id]),
      [[data.bob.account.id, data.lucy.account.id]],
    );
    const mutes = await server.ctx.db.kysely.selectFrom("mutes").selectAll().execute();
    assert.deepEqual(
      mutes.map((m) => [m.account_id, m.target_account_id, m.expires_at]),
      [[data.bob.account.id, data.carol.account.id, null]],
    );
  });

  test("follows and blocks, with their counters", async () => {
    const alice = await accountJson(server, data.alice);
    assert.deepEqual([alice.followers_count, alice.following_count], [2, 0]);
    assert.equal((await accountJson(server, data.bob)).following_count, 1);
    assert.equal((await accountJson(server, data.carol)).following_count, 1);
    assert.equal((await accountJson(server, data.lucy)).followers_count, 1);
    const blocked = await server.ctx.db.kysely
      .selectFrom("blocks")
      .select("target_account_id")
      .where("account_id", "=", data.carol.account.id)
      .execute();
    assert.deepEqual(
      blocked.map((b) => b.target_account_id),
      [data.rita.id],
    );
  });

  test("one status of each visibility by alice, seen by whom the comment says", async () => {
    const { alicePublic, aliceUnlisted, alicePrivate, aliceDirect } = data.statuses;
    const all = [alicePublic, aliceUnlisted, alicePrivate, aliceDirect];
    assert.deepEqual(
      all.map((s) => s.visibility),
      ["public", "unlisted", "private", "direct"],
    );
    assert.deepEqual(
      all.map((s) => s.account.id),
      Array(4).fill(data.alice.account.id),
    );
    assert.equal(await sees(alicePublic), true);
    assert.equal(await sees(aliceUnlisted), true);
    assert.equal(await sees(alicePrivate, data.bob.token), true);
    assert.equal(await sees(alicePrivate, data.carol.token), false);
    assert.equal(await sees(aliceDirect, data.bob.token), true);
    assert.equal(await sees(aliceDirect, data.carol.token), false);
    assert.deepEqual(
      aliceDirect.mentions.map((m) => m.acct),
      ["bob"],
    );
  });

  test("bob's reply counts on alice's public status", async () => {
    assert.equal(data.statuses.bobReply.in_reply_to_id, data.statuses.alicePublic.id);
    assert.equal((await statusJson(server, data.statuses.alicePublic.id)).replies_count, 1);
  });

  test("alice's unattached media is hers to attach", async () => {
    const path = `/api/v1/media/${data.media.aliceUnattached.id}`;
    const draft = (await get(server.app, path, data.alice.token)).json<MediaAttachment>();
    assert.equal(draft.description, "A teal rectangle");
    assert.equal((await get(server.app, path, data.bob.token)).statusCode, 404);
  });

  test("the blobcat emoji is rendered in posts", async () => {
    const status = await postStatus(server, data.carol, { status: "hi :blobcat:" });
    assert.deepEqual(
      status.emojis.map((e) => e.shortcode),
      [data.emoji.blobcat.shortcode],
    );
  });
});

describe("describeAuth", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  describeAuth("POST /api/v1/statuses", () => server, {
    scope: "write:statuses",
    send: (s, token) => request(s.app, "POST", "/api/v1/statuses", { token, json: { status: "checking scopes" } }),
  });

  describeAuth("GET /api/v1/statuses/:id", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: async (s, token, owner) => {
      const status = await postStatus(s, owner, { status: "public" });
      return get(s.app, `/api/v1/statuses/${status.id}`, token);
    },
  });
});
