/**
 * Announcements: made with `rookery announcements` (now or scheduled, with event times), read by
 * users through GET /api/v1/announcements with `read` and reactions, dismissed, reacted to (Unicode
 * and custom emoji, at most eight kinds), removed; streamed as announcement events on `user` streams.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runCli } from "../../src/cli/main.ts";
import { publishAnnouncement } from "../../src/services/announcements/announcements.ts";
import {
  createCustomEmoji,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import { listen, WsClient } from "../streaming_clients.ts";

interface Announcement {
  id: string;
  content: string;
  starts_at: string | null;
  ends_at: string | null;
  all_day: boolean;
  read?: boolean;
  mentions: Array<{ id: string; acct: string }>;
  statuses: Array<{ id: string }>;
  tags: Array<{ name: string }>;
  reactions: Array<{ name: string; count: number; me?: boolean; url?: string }>;
}

describe("announcements", () => {
  let server: TestServer;
  let host: string;
  let reader: TestUser;
  const out: string[] = [];
  const err: string[] = [];
  before(async () => {
    server = await createTestServer();
    host = await listen(server);
    reader = await createUser(server.ctx, "announcereader");
  });
  after(() => server.close());

  const cli = (...argv: string[]) => {
    out.length = 0;
    err.length = 0;
    return runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, async () => ({
      ctx: server.ctx,
      release: async () => {},
    }));
  };
  const list = async (viewer: TestUser = reader) => {
    const res = await get(server.app, "/api/v1/announcements", viewer.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Announcement[];
  };
  const create = async (...args: string[]) => {
    assert.equal(await cli("announcements", "create", ...args), 0, err.join("\n"));
    return /(\d{6,})/.exec(out.join("\n"))![1]!;
  };
  const api = (viewer: TestUser, method: "POST" | "PUT" | "DELETE", path: string) =>
    request(server.app, method, path, { token: viewer.token });

  test("create now and with event times; mentions, hashtags and linked statuses are rendered", async () => {
    const author = await createUser(server.ctx, "announceauthor");
    const status = await postStatus(server, author, { status: "linked post" });
    const id = await create(
      `Maintenance tonight @${author.username} #ops ${server.config.baseUrl}/@${author.username}/${status.id}`,
      "--starts-at",
      "2026-12-01T20:00:00Z",
      "--ends-at",
      "2026-12-01T22:00:00Z",
    );
    const found = (await list()).find((a) => a.id === id);
    assert.ok(found);
    assert.match(found.content, /Maintenance tonight/);
    assert.equal(found.starts_at, "2026-12-01T20:00:00.000Z");
    assert.equal(found.ends_at, "2026-12-01T22:00:00.000Z");
    assert.equal(found.all_day, false);
    assert.equal(found.read, false);
    assert.deepEqual(
      found.mentions.map((m) => m.acct),
      [author.username],
    );
    assert.deepEqual(
      found.tags.map((t) => t.name),
      ["ops"],
    );
    assert.deepEqual(
      found.statuses.map((s) => s.id),
      [status.id],
    );
    assert.notEqual(await cli("announcements", "create", "bad", "--starts-at", "2026-12-01T20:00:00Z"), 0);
    assert.notEqual(await cli("announcements", "create", "  "), 0);
    assert.notEqual(await cli("announcements", "create", "x", "--publish-at", "someday"), 0);
  });

  test("a scheduled announcement appears once published", async () => {
    const id = await create("Later news", "--publish-at", new Date(Date.now() + 3600_000).toISOString());
    assert.ok(!(await list()).some((a) => a.id === id));
    assert.match(out.join("\n"), /will be published at/);
    await publishAnnouncement(server.ctx, id);
    assert.ok((await list()).some((a) => a.id === id));
    assert.equal(await cli("announcements", "list"), 0);
    assert.ok(out.some((l) => l.startsWith(id) && l.includes("published")));
  });

  test("dismiss marks read for that user only; unknown IDs are 404", async () => {
    const id = await create("Read me");
    const other = await createUser(server.ctx, "otherreader");
    assert.equal((await api(reader, "POST", `/api/v1/announcements/${id}/dismiss`)).statusCode, 200);
    assert.equal((await list()).find((a) => a.id === id)?.read, true);
    assert.equal((await list(other)).find((a) => a.id === id)?.read, false);
    assert.equal(errorOf(await api(reader, "POST", "/api/v1/announcements/123/dismiss"))[0], 404);
  });

  test("reactions: Unicode and custom emoji, counted with me; unknown names 422, more than eight kinds 422; removing", async () => {
    await createCustomEmoji(server, "party");
    const id = await create("React!");
    const other = await createUser(server.ctx, "reactor");
    const react = (viewer: TestUser, name: string, method: "PUT" | "DELETE" = "PUT") =>
      api(viewer, method, `/api/v1/announcements/${id}/reactions/${encodeURIComponent(name)}`);
    assert.equal((await react(reader, "👍")).statusCode, 200);
    assert.equal((await react(other, "👍")).statusCode, 200);
    assert.equal((await react(reader, "👍")).statusCode, 200, "again: no change");
    assert.equal((await react(other, "party")).statusCode, 200);
    assert.deepEqual(errorOf(await react(reader, "notanemoji")), [
      422,
      "Validation failed: Name is not a recognized emoji",
    ]);
    const reactions = (await list()).find((a) => a.id === id)!.reactions;
    const thumbs = reactions.find((r) => r.name === "👍")!;
    assert.deepEqual([thumbs.count, thumbs.me], [2, true]);
    const party = reactions.find((r) => r.name === "party")!;
    assert.deepEqual([party.count, party.me], [1, false]);
    assert.match(party.url ?? "", /^https:\/\//);
    for (const emoji of ["😀", "😃", "😄", "😁", "😆", "😅"])
      assert.equal((await react(reader, emoji)).statusCode, 200);
    assert.deepEqual(errorOf(await react(reader, "🤣")), [
      422,
      "Validation failed: Limit of different reactions reached",
    ]);
    assert.equal((await react(reader, "👍", "DELETE")).statusCode, 200);
    assert.equal(errorOf(await react(reader, "👍", "DELETE"))[0], 404);
    assert.equal((await list()).find((a) => a.id === id)!.reactions.find((r) => r.name === "👍")!.count, 1);
  });

  test("streamed: announcement, announcement.reaction and announcement.delete on user streams", async () => {
    const client = await WsClient.connect(host, reader.token, { query: "stream=user" });
    try {
      client.send({ type: "unsubscribe", stream: "round-trip" });
      await client.frames.next((f) => f.error === "Unknown stream type");
      const id = await create("Live news");
      const announced = await client.event("announcement");
      assert.deepEqual(announced.stream, ["user"]);
      assert.equal((JSON.parse(announced.payload!) as Announcement).id, id);
      await api(reader, "PUT", `/api/v1/announcements/${id}/reactions/${encodeURIComponent("🎉")}`);
      const reaction = await client.event("announcement.reaction");
      assert.deepEqual(JSON.parse(reaction.payload!), { name: "🎉", count: 1, announcement_id: id });
      assert.equal(await cli("announcements", "remove", id), 0);
      const removed = await client.event("announcement.delete");
      assert.equal(removed.payload, id);
      assert.ok(!(await list()).some((a) => a.id === id));
      assert.equal(await cli("announcements", "remove", id), 1);
    } finally {
      client.close();
    }
  });

  test("the Announcement matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const id = await create("Schema #check", "--starts-at", "2026-12-01", "--ends-at", "2026-12-02", "--all-day");
    await api(reader, "PUT", `/api/v1/announcements/${id}/reactions/${encodeURIComponent("👍")}`);
    const found = (await list()).find((a) => a.id === id);
    assert.deepEqual(validateSchema("Announcement", found), []);
  });

  describeAuth("GET /api/v1/announcements", () => server, {
    scope: "read",
    insufficient: [],
    send: (s, token) => request(s.app, "GET", "/api/v1/announcements", { token }),
  });
});
