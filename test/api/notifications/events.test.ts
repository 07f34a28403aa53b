/**
 * Notification events: each type is created where its cause happens, undone with it, and dropped
 * by Mastodon's rules (notifying yourself, blocks, mutes that hide notifications, blocked domains,
 * muted conversations, mentions in posts involving someone the receiver hides; staff mentions
 * pass mutes). Read back through GET /api/v1/notifications.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../../src/db/ids.ts";
import { notify } from "../../../src/services/notifications/notify.ts";
import { closePoll } from "../../../src/services/polls/vote.ts";
import {
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  follow,
  get,
  mute,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";

interface Note {
  id: string;
  type: string;
  group_key: string;
  account: { id: string; username: string };
  status?: { id: string; content: string };
  filtered?: boolean;
}

describe("notification events", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user", options = {}) => createUser(server.ctx, `${name}${++users}`, options);
  const drain = () => server.ctx.jobs.drain();
  const notifications = async (viewer: TestUser, query = "") => {
    await drain();
    const res = await get(server.app, `/api/v1/notifications${query}`, viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Note[];
  };
  /** The viewer's notifications as `type:sender`, newest first. */
  const summary = async (viewer: TestUser, query = "") =>
    (await notifications(viewer, query)).map((n) => `${n.type}:${n.account.username}`);
  const call = async (viewer: TestUser, method: "POST" | "PUT" | "DELETE", path: string, json?: object) => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  test("mention: each local account mentioned, with the status; not the author", async () => {
    const [author, first, second] = await Promise.all([user("author"), user("first"), user("second")]);
    const status = await postStatus(server, author, { status: `hi @${first.username} and @${second.username}` });
    for (const receiver of [first, second]) {
      const [note] = await notifications(receiver);
      assert.equal(note?.type, "mention");
      assert.equal(note.account.id, author.account.id);
      assert.equal(note.status?.id, status.id);
      assert.equal(note.group_key, `ungrouped-${note.id}`);
      assert.equal(note.filtered, undefined);
    }
    assert.deepEqual(await summary(author), []);
  });

  test("status: followers who asked to be notified, for posts but not replies to others or direct posts", async () => {
    const [author, subscriber, plainFollower, other] = await Promise.all([
      user("poster"),
      user("subscriber"),
      user("plain"),
      user("other"),
    ]);
    await call(subscriber, "POST", `/api/v1/accounts/${author.account.id}/follow`, { notify: true });
    await follow(server, plainFollower, author);
    const own = await postStatus(server, author, { status: "news" });
    await postStatus(server, author, { status: "self reply", in_reply_to_id: own.id });
    const others = await postStatus(server, other, { status: "a post" });
    await postStatus(server, author, { status: `@${other.username} reply`, in_reply_to_id: others.id });
    await postStatus(server, author, { status: "secret", visibility: "direct" });
    const notes = await notifications(subscriber);
    assert.deepEqual(
      notes.map((n) => [n.type, n.status?.content.replace(/<[^>]+>/g, "")]),
      [
        ["status", "self reply"],
        ["status", "news"],
      ],
    );
    assert.deepEqual(await summary(plainFollower), []);
    assert.deepEqual(await summary(author), [`follow:${subscriber.username}`]);
  });

  test("status notifications keep to the languages the follow asks for", async () => {
    const [author, subscriber] = await Promise.all([user("polyglot"), user("germanreader")]);
    await call(subscriber, "POST", `/api/v1/accounts/${author.account.id}/follow`, {
      notify: true,
      languages: ["de"],
    });
    await postStatus(server, author, { status: "hello", language: "en" });
    await postStatus(server, author, { status: "hallo", language: "de" });
    assert.deepEqual(
      (await notifications(subscriber)).map((n) => n.status?.content),
      ["<p>hallo</p>"],
    );
  });

  test("favourite and reblog: the author hears of them; undoing removes the notification", async () => {
    const [author, fan] = await Promise.all([user("favauthor"), user("fan")]);
    const status = await postStatus(server, author, { status: "like me" });
    await call(fan, "POST", `/api/v1/statuses/${status.id}/favourite`);
    await call(fan, "POST", `/api/v1/statuses/${status.id}/reblog`);
    const notes = await notifications(author);
    assert.deepEqual(
      notes.map((n) => [n.type, n.account.username, n.status?.id]),
      [
        ["reblog", fan.username, status.id],
        ["favourite", fan.username, status.id],
      ],
    );
    // Favouriting or boosting again adds nothing.
    await call(fan, "POST", `/api/v1/statuses/${status.id}/favourite`);
    await call(fan, "POST", `/api/v1/statuses/${status.id}/reblog`);
    assert.equal((await notifications(author)).length, 2);

    await call(fan, "POST", `/api/v1/statuses/${status.id}/unfavourite`);
    assert.deepEqual(await summary(author), [`reblog:${fan.username}`]);
    await call(fan, "POST", `/api/v1/statuses/${status.id}/unreblog`);
    assert.deepEqual(await summary(author), []);
    // Your own favourite and boost notify nobody.
    await call(author, "POST", `/api/v1/statuses/${status.id}/favourite`);
    await call(author, "POST", `/api/v1/statuses/${status.id}/reblog`);
    assert.deepEqual(await summary(author), []);
  });

  test("a deleted status takes its notifications with it", async () => {
    const [author, fan] = await Promise.all([user("deleter"), user("deletefan")]);
    const status = await postStatus(server, author, { status: `for @${fan.username}` });
    await call(fan, "POST", `/api/v1/statuses/${status.id}/favourite`);
    assert.equal((await notifications(author)).length, 1);
    assert.equal((await notifications(fan)).length, 1);
    await call(author, "DELETE", `/api/v1/statuses/${status.id}`);
    assert.deepEqual(await summary(author), []);
    assert.deepEqual(await summary(fan), []);
  });

  test("follow and follow_request; authorizing turns the request into a follow, unfollowing removes it", async () => {
    const [open, locked, follower, asker, declined] = await Promise.all([
      user("open"),
      user("locked", { locked: true }),
      user("follower"),
      user("asker"),
      user("declined"),
    ]);
    await call(follower, "POST", `/api/v1/accounts/${open.account.id}/follow`);
    assert.deepEqual(await summary(open), [`follow:${follower.username}`]);
    await call(follower, "POST", `/api/v1/accounts/${open.account.id}/unfollow`);
    assert.deepEqual(await summary(open), []);

    await call(asker, "POST", `/api/v1/accounts/${locked.account.id}/follow`);
    await call(declined, "POST", `/api/v1/accounts/${locked.account.id}/follow`);
    assert.deepEqual(await summary(locked), [
      `follow_request:${declined.username}`,
      `follow_request:${asker.username}`,
    ]);
    await call(locked, "POST", `/api/v1/follow_requests/${asker.account.id}/authorize`);
    await call(locked, "POST", `/api/v1/follow_requests/${declined.account.id}/reject`);
    assert.deepEqual(await summary(locked), [`follow:${asker.username}`]);
  });

  test("poll: the author and every voter when the poll ends, once", async () => {
    const [author, voter, bystander] = await Promise.all([user("pollster"), user("voter"), user("bystander")]);
    const status = await postStatus(server, author, { status: "pick", poll: { options: ["a", "b"], expires_in: 300 } });
    await call(voter, "POST", `/api/v1/polls/${status.poll!.id}/votes`, { choices: [0] });
    const later = Date.now() + 600_000;
    assert.equal(await closePoll(server.ctx, status.poll!.id, later), true);
    assert.equal(await closePoll(server.ctx, status.poll!.id, later), false);
    assert.deepEqual(await summary(author), [`poll:${author.username}`]);
    const [note] = await notifications(voter);
    assert.equal(note?.type, "poll");
    assert.equal(note.status?.id, status.id);
    assert.equal((await notifications(voter)).length, 1);
    assert.deepEqual(await summary(bystander), []);
  });

  test("update: accounts that boosted an edited status, one notification for the newest edit", async () => {
    const [author, booster, mentioned] = await Promise.all([user("editor"), user("booster"), user("newmention")]);
    const status = await postStatus(server, author, { status: "first" });
    await call(booster, "POST", `/api/v1/statuses/${status.id}/reblog`);
    await call(author, "PUT", `/api/v1/statuses/${status.id}`, { status: "second" });
    const first = await notifications(booster);
    assert.deepEqual(
      first.map((n) => n.type),
      ["update"],
    );
    await call(author, "PUT", `/api/v1/statuses/${status.id}`, { status: `third @${mentioned.username}` });
    const second = await notifications(booster);
    assert.equal(second.length, 1);
    assert.ok(BigInt(second[0]!.id) > BigInt(first[0]!.id), "the newest edit's notification replaces the older");
    // An edit that adds a mention notifies the newly mentioned account, once.
    assert.deepEqual(await summary(mentioned), [`mention:${author.username}`]);
    await call(author, "PUT", `/api/v1/statuses/${status.id}`, { status: `fourth @${mentioned.username}` });
    assert.deepEqual(await summary(mentioned), [`mention:${author.username}`]);
  });

  describe("what is dropped", () => {
    test("a receiver who blocks the sender hears nothing from them", async () => {
      const [receiver, blocked] = await Promise.all([user("blocker"), user("blocked")]);
      await block(server, receiver, blocked);
      await postStatus(server, blocked, { status: `@${receiver.username} hey` });
      assert.deepEqual(await summary(receiver), []);
    });

    test("a mute hides notifications unless it was made with notifications: false", async () => {
      const [receiver, hidden, quiet] = await Promise.all([user("muter"), user("mutedfull"), user("mutedquiet")]);
      await mute(server, receiver, hidden);
      await mute(server, receiver, quiet, { notifications: false });
      await postStatus(server, hidden, { status: `@${receiver.username} one` });
      await postStatus(server, quiet, { status: `@${receiver.username} two` });
      assert.deepEqual(await summary(receiver), [`mention:${quiet.username}`]);
    });

    test("an expired mute no longer hides anything", async () => {
      const [receiver, sender] = await Promise.all([user("expmuter"), user("expmuted")]);
      await mute(server, receiver, sender);
      await server.ctx.db.kysely
        .updateTable("mutes")
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where("account_id", "=", receiver.account.id)
        .execute();
      await postStatus(server, sender, { status: `@${receiver.username} back` });
      assert.deepEqual(await summary(receiver), [`mention:${sender.username}`]);
    });

    test("a muted conversation notifies of nothing in it", async () => {
      const [author, replier] = await Promise.all([user("threadowner"), user("replier")]);
      const root = await postStatus(server, author, { status: "thread" });
      await call(author, "POST", `/api/v1/statuses/${root.id}/mute`);
      await postStatus(server, replier, { status: `@${author.username} reply`, in_reply_to_id: root.id });
      await call(replier, "POST", `/api/v1/statuses/${root.id}/favourite`);
      assert.deepEqual(await summary(author), []);
      await call(author, "POST", `/api/v1/statuses/${root.id}/unmute`);
      await call(replier, "POST", `/api/v1/statuses/${root.id}/unfavourite`);
      await call(replier, "POST", `/api/v1/statuses/${root.id}/favourite`);
      assert.deepEqual(await summary(author), [`favourite:${replier.username}`]);
    });

    test("a mention in a post that also mentions, or replies to, someone the receiver blocks or mutes", async () => {
      const [receiver, sender, blocked, muted] = await Promise.all([
        user("mrecv"),
        user("msender"),
        user("mblocked"),
        user("mmuted"),
      ]);
      await block(server, receiver, blocked);
      await mute(server, receiver, muted);
      await postStatus(server, sender, { status: `@${receiver.username} @${blocked.username} both` });
      const mutedPost = await postStatus(server, muted, { status: "muted speaks" });
      await postStatus(server, sender, { status: `@${receiver.username} replying`, in_reply_to_id: mutedPost.id });
      assert.deepEqual(await summary(receiver), []);
      await postStatus(server, sender, { status: `@${receiver.username} alone` });
      assert.deepEqual(await summary(receiver), [`mention:${sender.username}`]);
    });

    test("a blocked domain: dropped unless the receiver follows the sender", async () => {
      const receiver = await user("domainblocker");
      const [stranger, friend] = await Promise.all([
        createRemoteAccount(server.ctx, "stranger", "blocked.example"),
        createRemoteAccount(server.ctx, "friend", "blocked.example"),
      ]);
      await server.ctx.db.kysely
        .insertInto("account_domain_blocks")
        .values({
          id: newId(),
          account_id: receiver.account.id,
          domain: "blocked.example",
          created_at: new Date().toISOString(),
        })
        .execute();
      await follow(server, receiver, friend);
      for (const sender of [stranger, friend])
        await notify(server.ctx, {
          type: "follow",
          receiverId: receiver.account.id,
          fromId: sender.id,
          activityType: "Follow",
          activityId: newId(),
        });
      assert.deepEqual(await summary(receiver), ["follow:friend"]);
    });

    test("staff mentions pass the receiver's mutes", async () => {
      const [receiver, moderator] = await Promise.all([user("modreceiver"), user("moderator", { role: "Moderator" })]);
      await mute(server, receiver, moderator);
      await postStatus(server, moderator, { status: `@${receiver.username} please read the rules` });
      assert.deepEqual(await summary(receiver), [`mention:${moderator.username}`]);
    });

    test("suspended receivers and senders get and cause nothing", async () => {
      const [receiver, sender] = await Promise.all([user("suspreceiver"), user("suspsender")]);
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ suspended_at: new Date().toISOString() })
        .where("id", "=", sender.account.id)
        .execute();
      const row = await notify(server.ctx, {
        type: "follow",
        receiverId: receiver.account.id,
        fromId: sender.account.id,
        activityType: "Follow",
        activityId: newId(),
      });
      assert.equal(row, undefined);
    });
  });
});
