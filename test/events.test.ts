/**
 * The event dispatcher's subscriber filter: a job subscriber with `when` gets a job only for the
 * events it concerns — a post published here is delivered to other servers, a post that came from
 * another server writes no delivery job (its feeds and notifications still get theirs).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
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

  test("a local post gets a delivery job; a remote one only its feeds and notifications", async () => {
    const alice = await createUser(server.ctx, "alice");
    const local = await postStatus(server, alice, { status: "from here" });
    assert.deepEqual(await jobsFor(local.id), [
      "status.created:deliver",
      "status.created:feeds",
      "status.created:notifications",
    ]);
    const author = await createRemoteAccount(server.ctx, "far", "far.example");
    const remote = await storeRemoteStatus(server.ctx, author, {
      uri: "https://far.example/users/far/statuses/1",
      url: null,
      content: "<p>from afar</p>",
      spoilerText: "",
      sensitive: false,
      language: null,
      visibility: "public",
      parent: null,
      mentioned: [],
      tags: [],
      media: [],
      published: new Date(),
      editedAt: null,
      poll: null,
    });
    assert.deepEqual(await jobsFor(remote.id), ["status.created:feeds", "status.created:notifications"]);
  });
});
