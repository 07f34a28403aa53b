/**
 * The thread a post from another server joins, by the URIs it names its thread with
 * (`conversation`, `context`): services/statuses/threads.ts conversationForUris.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { storeRemoteStatus } from "../src/services/statuses/remote.ts";
import { THREAD_URIS_MAX } from "../src/services/statuses/threads.ts";
import {
  createRemoteAccount,
  createTestServer,
  postStatus,
  createUser,
  remoteStatusData,
  type TestServer,
} from "./kit.ts";

describe("the thread of a remote post", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let n = 0;
  const post = async (conversationUris: string[]) => {
    const author = await createRemoteAccount(server.ctx, `far${++n}`, "threads.example");
    return storeRemoteStatus(server.ctx, author, remoteStatusData(`${author.uri}/statuses/${n}`, { conversationUris }));
  };

  test("posts naming a thread by the same URI, first or later among others, share its conversation", async () => {
    const first = await post(["https://threads.example/contexts/a"]);
    const second = await post(["https://threads.example/unknown/1", "https://threads.example/contexts/a"]);
    const third = await post(["https://threads.example/contexts/a", "https://threads.example/unknown/2"]);
    assert.ok(first.conversation_id);
    assert.equal(second.conversation_id, first.conversation_id);
    assert.equal(third.conversation_id, first.conversation_id);
    const other = await post(["https://threads.example/contexts/b"]);
    assert.notEqual(other.conversation_id, first.conversation_id);
  });

  test("our own name of a thread joins it; a post naming none gets a thread of its own", async () => {
    const alice = await createUser(server.ctx, "alice");
    const local = await postStatus(server, alice, { status: "a thread of ours" });
    const row = await server.ctx.db.kysely
      .selectFrom("statuses")
      .select("conversation_id")
      .where("id", "=", local.id)
      .executeTakeFirstOrThrow();
    const ours = `${server.ctx.config.baseUrl}/contexts/${row.conversation_id}`;
    const reply = await post(["not a URL", ours]);
    assert.equal(reply.conversation_id, row.conversation_id);
    const alone = await post([]);
    const alsoAlone = await post([]);
    assert.ok(alone.conversation_id);
    assert.notEqual(alone.conversation_id, alsoAlone.conversation_id);
  });

  test(`only the first ${THREAD_URIS_MAX} URIs are looked at, however many a post names`, async () => {
    const known = await post(["https://threads.example/contexts/c"]);
    const many = Array.from({ length: 500 }, (_, i) => `https://threads.example/noise/${i}`);
    const late = await post([...many.slice(0, THREAD_URIS_MAX), "https://threads.example/contexts/c", ...many]);
    assert.notEqual(late.conversation_id, known.conversation_id);
    const early = await post([many[THREAD_URIS_MAX + 1]!, "https://threads.example/contexts/c", ...many]);
    assert.equal(early.conversation_id, known.conversation_id);
  });
});
