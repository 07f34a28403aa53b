/**
 * The event dispatcher: a job subscriber with `when` gets a job only for the events it concerns —
 * a post published here is delivered to other servers, a post that came from another server
 * writes no delivery job; and a job subscriber's `inline` work — another server's post written to
 * the feeds here in its own transaction, no job — commits with the change or not at all, and
 * falls back to the job when the work is too big.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../src/db/schema.ts";
import { EventDispatcher, type SubscriberTable } from "../src/events/dispatcher.ts";
import { homeChannel } from "../src/services/streaming/publish.ts";
import { storeRemoteStatus } from "../src/services/statuses/remote.ts";
import { FANOUT_BATCH } from "../src/services/timelines/feeds.ts";
import { subscriberTable } from "../src/subscribers.ts";
import { newId } from "../src/db/ids.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  postStatus,
  remoteStatusData,
  type TestServer,
} from "./kit.ts";

describe("the event dispatcher", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const jobsFor = async (statusId: string) =>
    (
      await server.ctx.db.kysely
        .selectFrom("jobs")
        .select(["name", "payload"])
        .where("name", "like", "status.created:%")
        .execute()
    )
      .filter((job) => String(job.payload).includes(statusId))
      .map((job) => job.name)
      .sort();

  test("a local post gets a delivery job; a remote one no feeds job, and a notifications job only when it mentions someone here", async () => {
    const alice = await createUser(server.ctx, "alice");
    const local = await postStatus(server, alice, { status: "from here" });
    assert.deepEqual(await jobsFor(local.id), [
      "status.created:deliver",
      "status.created:feeds",
      "status.created:notifications",
    ]);
    const author = await createRemoteAccount(server.ctx, "far", "far.example");
    const aside = await remotePost(author, 1, []);
    assert.deepEqual(await jobsFor(aside.id), []);
    const toAlice = await remotePost(author, 2, [alice.account]);
    assert.deepEqual(await jobsFor(toAlice.id), ["status.created:notifications"]);
  });

  const remotePost = (author: AccountRow, n: number, mentioned: AccountRow[] = []) =>
    storeRemoteStatus(server.ctx, author, remoteStatusData(`${author.uri}/statuses/${n}`, { mentioned }));

  const follow = (accountId: string, targetAccountId: string) => {
    const now = new Date().toISOString();
    return server.ctx.db.kysely
      .insertInto("follows")
      .values({
        id: newId(),
        account_id: accountId,
        target_account_id: targetAccountId,
        created_at: now,
        updated_at: now,
      })
      .execute();
  };

  const homesOf = async (statusId: string) =>
    (
      await server.ctx.db.kysely
        .selectFrom("home_feed_entries")
        .select("account_id")
        .where("status_id", "=", statusId)
        .execute()
    )
      .map((entry) => entry.account_id)
      .sort();

  test("another server's post is in its followers' homes when it is stored, and their streams hear of it", async () => {
    const reader = await createUser(server.ctx, "reader");
    const author = await createRemoteAccount(server.ctx, "near", "near.example");
    await follow(reader.account.id, author.id);
    const heard: unknown[] = [];
    const stop = await server.ctx.events.subscribe(homeChannel(reader.account.id), (message) => heard.push(message));
    try {
      const post = await remotePost(author, 1);
      assert.deepEqual(await homesOf(post.id), [reader.account.id]);
      assert.deepEqual(await jobsFor(post.id), []);
      assert.deepEqual(heard, [{ event: "update", payload: { statusId: post.id } }]);
    } finally {
      stop();
    }
  });

  test("an author with a full batch of followers here gets the fan-out job", async () => {
    const author = await createRemoteAccount(server.ctx, "famous", "famous.example");
    const now = new Date().toISOString();
    const followers = Array.from({ length: FANOUT_BATCH }, (_, i) => ({
      id: newId(),
      username: `fan${i}`,
      domain: "fans.example",
      uri: `https://fans.example/users/fan${i}`,
      public_key: "",
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < followers.length; i += 200)
      await server.ctx.db.kysely
        .insertInto("accounts")
        .values(followers.slice(i, i + 200))
        .execute();
    for (let i = 0; i < followers.length; i += 200)
      await server.ctx.db.kysely
        .insertInto("follows")
        .values(
          followers.slice(i, i + 200).map((f) => ({
            id: newId(),
            account_id: f.id,
            target_account_id: author.id,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    const post = await remotePost(author, 1);
    assert.deepEqual(await jobsFor(post.id), ["status.created:feeds"]);
  });

  describe("inline work", () => {
    const marker = (statusId: string) => `inline:${statusId}`;
    /** A dispatcher whose status.created has one subscriber, inline when `inline` says so. */
    const dispatcherWith = (inline: (statusId: string) => boolean, done: string[]) => {
      const dispatcher = new EventDispatcher(server.ctx.db, server.ctx.jobs, server.ctx.log);
      const table: SubscriberTable = {
        ...subscriberTable(server.ctx),
        "status.created": [
          {
            name: "probe",
            mode: "job",
            run: async () => {},
            inline: async (tx, { statusId }) => {
              if (!inline(statusId)) return false;
              await tx
                .insertInto("federation_kv")
                .values({ key: marker(statusId), value: "1", expires_at: null })
                .execute();
              return async () => void done.push(statusId);
            },
          },
        ],
      };
      dispatcher.use(table);
      return dispatcher;
    };
    const markerOf = (statusId: string) =>
      server.ctx.db.kysely
        .selectFrom("federation_kv")
        .select("key")
        .where("key", "=", marker(statusId))
        .executeTakeFirst();
    const probeJobs = async (statusId: string) =>
      (
        await server.ctx.db.kysely
          .selectFrom("jobs")
          .select("payload")
          .where("name", "=", "status.created:probe")
          .execute()
      ).filter((job) => String(job.payload).includes(statusId)).length;

    test("commits with the change, and what is left runs after the commit", async () => {
      const done: string[] = [];
      const dispatcher = dispatcherWith(() => true, done);
      const statusId = newId();
      await dispatcher.transaction(async (tx) => {
        await dispatcher.emit(tx, { type: "status.created", statusId, local: false });
        assert.deepEqual(done, [], "not before the commit");
      });
      assert.deepEqual(done, [statusId]);
      assert.ok(await markerOf(statusId));
      assert.equal(await probeJobs(statusId), 0);
    });

    test("is rolled back with the change, and nothing runs after", async () => {
      const done: string[] = [];
      const dispatcher = dispatcherWith(() => true, done);
      const statusId = newId();
      await assert.rejects(
        dispatcher.transaction(async (tx) => {
          await dispatcher.emit(tx, { type: "status.created", statusId, local: false });
          throw new Error("the change fails");
        }),
        /the change fails/,
      );
      assert.deepEqual(done, []);
      assert.equal(await markerOf(statusId), undefined);
      assert.equal(await probeJobs(statusId), 0);
    });

    test("too big for it: the job is written instead", async () => {
      const done: string[] = [];
      const dispatcher = dispatcherWith(() => false, done);
      const statusId = newId();
      await dispatcher.transaction((tx) => dispatcher.emit(tx, { type: "status.created", statusId, local: false }));
      assert.deepEqual(done, []);
      assert.equal(await probeJobs(statusId), 1);
    });

    test("a failure after the commit is logged, and the change stays", async () => {
      const dispatcher = new EventDispatcher(server.ctx.db, server.ctx.jobs, server.ctx.log);
      const statusId = newId();
      dispatcher.use({
        ...subscriberTable(server.ctx),
        "status.created": [
          {
            name: "probe",
            mode: "job",
            run: async () => {},
            inline: async (tx) => {
              await tx
                .insertInto("federation_kv")
                .values({ key: marker(statusId), value: "1", expires_at: null })
                .execute();
              return () => Promise.reject(new Error("streams are down"));
            },
          },
        ],
      });
      await dispatcher.transaction((tx) => dispatcher.emit(tx, { type: "status.created", statusId, local: false }));
      assert.ok(await markerOf(statusId));
    });
  });
});
