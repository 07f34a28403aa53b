/**
 * The event dispatcher's subscriber filter: a job subscriber with `when` gets a job only for the
 * events it concerns — a post published here is delivered to other servers, a post that came from
 * another server writes no delivery job (its feeds and notifications still get theirs).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../src/db/schema.ts";
import { storeRemoteStatus } from "../src/services/statuses/remote.ts";
import { createRemoteAccount, createTestServer, createUser, postStatus, type TestServer } from "./kit.ts";

describe("event subscribers' filter", () => {
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

  test("a local post gets a delivery job; a remote one its feeds, and notifications only when it mentions someone here", async () => {
    const alice = await createUser(server.ctx, "alice");
    const local = await postStatus(server, alice, { status: "from here" });
    assert.deepEqual(await jobsFor(local.id), [
      "status.created:deliver",
      "status.created:feeds",
      "status.created:notifications",
    ]);
    const author = await createRemoteAccount(server.ctx, "far", "far.example");
    const remotePost = (n: number, mentioned: AccountRow[]) =>
      storeRemoteStatus(server.ctx, author, {
        uri: `https://far.example/users/far/statuses/${n}`,
        url: null,
        content: "<p>from afar</p>",
        spoilerText: "",
        sensitive: false,
        language: null,
        visibility: "public",
        parent: null,
        mentioned,
        tags: [],
        media: [],
        published: new Date(),
        editedAt: null,
        poll: null,
      });
    const aside = await remotePost(1, []);
    assert.deepEqual(await jobsFor(aside.id), ["status.created:feeds"]);
    const toAlice = await remotePost(2, [alice.account]);
    assert.deepEqual(await jobsFor(toAlice.id), ["status.created:feeds", "status.created:notifications"]);
  });
});
