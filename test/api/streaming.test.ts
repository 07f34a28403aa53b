/**
 * Streaming with real clients on a listening server: the WebSocket (token as subprotocol, query or
 * header; multiplexed subscribe/unsubscribe; errors; close codes) and SSE, and every event: update,
 * status.update, delete, notification, conversation, filters_changed, notifications_merged — each
 * honouring the subscriber's visibility, blocks, mutes and filters. A revoked token's connections end.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { revokeToken } from "../../src/services/auth/oauth.ts";
import {
  block,
  createTestServer,
  createUser,
  follow,
  mute,
  postStatus,
  request,
  testApplication,
  tokenFor,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { listen, SseClient, UpgradeRefused, WsClient } from "../streaming_clients.ts";
import type { Status } from "../types.ts";

describe("streaming", () => {
  let server: TestServer;
  let host: string;
  const clients: Array<{ close(): void }> = [];
  before(async () => {
    server = await createTestServer();
    host = await listen(server);
    // Jobs run as they are enqueued, as in production (fan-out publishes the events).
    server.ctx.jobs.start();
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const ws = async (viewer: TestUser | string, options?: Parameters<typeof WsClient.connect>[2]) => {
    const client = await WsClient.connect(host, typeof viewer === "string" ? viewer : viewer.token, options);
    clients.push(client);
    return client;
  };
  const sse = async (path: string, token?: string) => {
    const opened = await SseClient.open(host, path, token);
    if (opened instanceof SseClient) clients.push(opened);
    return opened;
  };
  const call = async (viewer: TestUser, method: "POST" | "PUT" | "DELETE", path: string, json?: object) => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const content = (payload: string | undefined) => (JSON.parse(payload!) as Status).content.replace(/<[^>]+>/g, "");
  /** Subscribes and waits until the subscription is in place (a round trip on the socket). */
  const subscribed = async (client: WsClient, stream: string, extra: Record<string, string> = {}) => {
    client.subscribe(stream, extra);
    // Frames are handled in order: the answer to a bad request after it means the subscription is in place.
    client.send({ type: "unsubscribe", stream: "round-trip" });
    await client.frames.next((f) => f.error === "Unknown stream type", 2000, "the round trip");
  };
  /** Polls `read` until it returns something truthy (jobs run in the background here). */
  const eventually = async <T>(read: () => Promise<T | undefined>, ms = 5000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (value) return value;
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  test("GET /api/v1/streaming/health answers OK", async () => {
    const res = await fetch(`http://${host}/api/v1/streaming/health`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "OK");
  });

  describe("WebSocket", () => {
    test("the token as subprotocol (echoed), query parameter or header; none or a bad one is 401", async () => {
      const viewer = await user("wsauth");
      const byProtocol = await ws(viewer);
      assert.equal(byProtocol.ws.protocol, viewer.token);
      await ws(viewer, { tokenIn: "query" });
      await ws(viewer, { tokenIn: "header" });
      for (const [token, reason] of [
        ["", "Missing access token"],
        ["not-a-token", "Invalid access token"],
      ]) {
        await assert.rejects(
          WsClient.connect(host, token, { tokenIn: "query" }),
          (error: unknown) => error instanceof UpgradeRefused && error.status === 401 && error.reason === reason,
        );
      }
    });

    test("user stream: home updates rendered for the viewer, and notifications", async () => {
      const [reader, author] = await Promise.all([user("reader"), user("author")]);
      await follow(server, reader, author);
      const client = await ws(reader, { query: "stream=user" });
      await subscribed(client, "user");
      await postStatus(server, author, { status: "hello stream" });
      const update = await client.event("update");
      assert.deepEqual(update.stream, ["user"]);
      assert.equal(typeof update.payload, "string");
      const status = JSON.parse(update.payload!) as Status;
      assert.equal(content(update.payload), "hello stream");
      assert.equal(status.favourited, false, "rendered for the viewer");
      await postStatus(server, author, { status: `@${reader.username} hi` });
      const note = await client.event("notification");
      assert.equal((JSON.parse(note.payload!) as { type: string }).type, "mention");
      // The reader's home filters apply: hide drops the event, warn marks it.
      await call(reader, "POST", "/api/v2/filters", {
        title: "gone",
        context: ["home"],
        filter_action: "hide",
        keywords_attributes: [{ keyword: "secretword" }],
      });
      await call(reader, "POST", "/api/v2/filters", {
        title: "careful",
        context: ["home"],
        keywords_attributes: [{ keyword: "spoilers" }],
      });
      await client.event("filters_changed");
      await postStatus(server, author, { status: "the secretword" });
      await postStatus(server, author, { status: "spoilers ahead" });
      const warned = await client.event("update", (p) => content(p) === "spoilers ahead");
      assert.deepEqual(
        (JSON.parse(warned.payload!) as { filtered: Array<{ filter: { title: string } }> }).filtered.map(
          (r) => r.filter.title,
        ),
        ["careful"],
      );
      await client.frames.none((f) => f.event === "update" && content(f.payload) === "the secretword");
    });

    test("public streams: public posts only, not the ones the subscriber hides; filters applied", async () => {
      const [viewer, author, blocked, muted] = await Promise.all([
        user("pubviewer"),
        user("pubauthor"),
        user("pubblocked"),
        user("pubmuted"),
      ]);
      await block(server, viewer, blocked);
      await mute(server, viewer, muted);
      await call(viewer, "POST", "/api/v2/filters", {
        title: "no spoilers",
        context: ["public"],
        filter_action: "hide",
        keywords_attributes: [{ keyword: "spoiler" }],
      });
      await call(viewer, "POST", "/api/v2/filters", {
        title: "careful",
        context: ["public"],
        keywords_attributes: [{ keyword: "politics" }],
      });
      const client = await ws(viewer);
      await subscribed(client, "public:local");
      await subscribed(client, "public");
      await postStatus(server, author, { status: "private post", visibility: "private" });
      await postStatus(server, author, { status: "unlisted post", visibility: "unlisted" });
      await postStatus(server, author, { status: "direct post", visibility: "direct" });
      await postStatus(server, blocked, { status: "from blocked" });
      await postStatus(server, muted, { status: "from muted" });
      await postStatus(server, author, { status: "a spoiler" });
      await postStatus(server, author, { status: "politics today" });
      await postStatus(server, author, { status: "public post" });
      const local = await client.event(
        "update",
        (p, f) => f.stream?.[0] === "public:local" && content(p) === "public post",
      );
      assert.equal(local.stream?.[0], "public:local");
      await client.event("update", (p, f) => f.stream?.[0] === "public" && content(p) === "public post");
      const warned = await client.event("update", (p) => content(p) === "politics today");
      assert.deepEqual(
        (JSON.parse(warned.payload!) as { filtered: Array<{ filter: { title: string } }> }).filtered.map(
          (r) => r.filter.title,
        ),
        ["careful"],
      );
      await client.frames.none(
        (f) =>
          f.event === "update" &&
          ["private post", "unlisted post", "direct post", "from blocked", "from muted", "a spoiler"].includes(
            content(f.payload),
          ),
      );
    });

    test("hashtag and list streams, with their labels; errors for missing or foreign ones", async () => {
      const [owner, member, stranger] = await Promise.all([user("lowner"), user("lmember"), user("lstranger")]);
      await follow(server, owner, member);
      const list = (await call(owner, "POST", "/api/v1/lists", { title: "friends" })) as { id: string };
      await call(owner, "POST", `/api/v1/lists/${list.id}/accounts`, { account_ids: [member.account.id] });
      const client = await ws(owner);
      await subscribed(client, "hashtag", { tag: "Rookery" });
      await subscribed(client, "hashtag:local", { tag: "rookery" });
      await subscribed(client, "list", { list: list.id });
      await postStatus(server, member, { status: "about #rookery" });
      const tagged = await client.event("update", (_p, f) => f.stream?.[0] === "hashtag");
      assert.deepEqual(tagged.stream, ["hashtag", "Rookery"]);
      await client.event("update", (_p, f) => f.stream?.[0] === "hashtag:local");
      const listed = await client.event("update", (_p, f) => f.stream?.[0] === "list");
      assert.deepEqual(listed.stream, ["list", list.id]);

      const other = await ws(stranger);
      other.subscribe("list", { list: list.id });
      assert.deepEqual(await other.frames.next((f) => f.error !== undefined), {
        error: "Not authorized to stream this list",
        status: 401,
      });
      other.subscribe("list", { list: "99999999999999999999" });
      assert.deepEqual(await other.frames.next((f) => f.error !== undefined), {
        error: "Not authorized to stream this list",
        status: 401,
      });
      other.subscribe("list");
      assert.deepEqual(await other.frames.next((f) => f.error !== undefined), {
        error: "Missing list name parameter",
        status: 400,
      });
      other.subscribe("hashtag");
      assert.deepEqual(await other.frames.next((f) => f.error !== undefined), {
        error: "Missing tag name parameter",
        status: 400,
      });
      other.subscribe("everything");
      assert.deepEqual(await other.frames.next((f) => f.error !== undefined), {
        error: "Unknown stream type",
        status: 400,
      });
    });

    test("status.update on edit and delete on deletion; unsubscribe stops events", async () => {
      const [reader, author] = await Promise.all([user("edreader"), user("edauthor")]);
      await follow(server, reader, author);
      const client = await ws(reader);
      await subscribed(client, "user");
      const status = await postStatus(server, author, { status: "first" });
      await client.event("update", (p) => content(p) === "first");
      await call(author, "PUT", `/api/v1/statuses/${status.id}`, { status: "second" });
      const edited = await client.event("status.update");
      assert.equal(content(edited.payload), "second");
      await call(author, "DELETE", `/api/v1/statuses/${status.id}`);
      const deleted = await client.event("delete");
      assert.equal(deleted.payload, status.id);
      client.send({ type: "unsubscribe", stream: "user" });
      await postStatus(server, author, { status: "after unsubscribe" });
      await client.frames.none((f) => f.event === "update");
    });

    test("direct: a conversation event for the recipient, nothing public", async () => {
      const [sender, recipient, outsider] = await Promise.all([user("dmsender"), user("dmrecipient"), user("dmout")]);
      const client = await ws(recipient);
      await subscribed(client, "direct");
      const spy = await ws(outsider);
      await subscribed(spy, "public");
      await subscribed(spy, "direct");
      await postStatus(server, sender, { status: `@${recipient.username} secret`, visibility: "direct" });
      const conversation = await client.event("conversation");
      assert.deepEqual(conversation.stream, ["direct"]);
      const body = JSON.parse(conversation.payload!) as { accounts: Array<{ id: string }>; last_status: Status };
      assert.deepEqual(
        body.accounts.map((a) => a.id),
        [sender.account.id],
      );
      await spy.frames.none((f) => f.event !== undefined);
    });

    test("filters_changed and notifications_merged reach the user", async () => {
      const [viewer, stranger] = await Promise.all([user("fcviewer"), user("fcstranger")]);
      const client = await ws(viewer);
      await subscribed(client, "user");
      await call(viewer, "POST", "/api/v2/filters", { title: "x", context: ["home"] });
      const changed = await client.event("filters_changed");
      assert.equal(changed.payload, undefined);
      await postStatus(server, stranger, { status: `@${viewer.username} psst`, visibility: "direct" });
      const pending = await eventually(async () => {
        const res = await fetch(`http://${host}/api/v1/notifications/requests`, {
          headers: { authorization: `Bearer ${viewer.token}` },
        });
        return ((await res.json()) as Array<{ id: string }>)[0];
      });
      await call(viewer, "POST", `/api/v1/notifications/requests/${pending.id}/accept`);
      const merged = await client.event("notifications_merged");
      assert.equal(merged.payload, "1");
    });

    test("scopes: a token without read:statuses may not open public streams; user:notification needs read:notifications", async () => {
      const viewer = await user("scoped");
      const notificationsOnly = await tokenFor(server.ctx, viewer, "read:notifications");
      const client = await ws(notificationsOnly);
      client.subscribe("public");
      assert.deepEqual(await client.frames.next((f) => f.error !== undefined), {
        error: "Access token does not have the required scopes",
        status: 401,
      });
      await subscribed(client, "user:notification");
      const statusesOnly = await ws(await tokenFor(server.ctx, viewer, "read:statuses"));
      statusesOnly.subscribe("user:notification");
      assert.deepEqual(await statusesOnly.frames.next((f) => f.error !== undefined), {
        error: "Access token does not have the required scopes",
        status: 401,
      });
    });

    test("a binary frame closes with 1003; a revoked token's connection ends", async () => {
      const viewer = await user("closer");
      const binary = await ws(viewer);
      binary.ws.send(Buffer.from([1, 2, 3]));
      assert.equal(await binary.closed, 1003);

      const token = await tokenFor(server.ctx, viewer, "read");
      const client = await ws(token);
      await subscribed(client, "user");
      await revokeToken(server.ctx, await testApplication(server.ctx), token);
      assert.equal(typeof (await client.closed), "number");
    });
  });

  describe("SSE", () => {
    test("public/local: the greeting, then events as event/data lines", async () => {
      const [viewer, author] = await Promise.all([user("sseviewer"), user("sseauthor")]);
      const client = await sse("/api/v1/streaming/public/local", viewer.token);
      assert.ok(client instanceof SseClient);
      assert.equal(client.response.headers["content-type"], "text/event-stream");
      assert.equal(client.response.headers["cache-control"], "private, no-store");
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(client.text.startsWith(":)"), client.text);
      await postStatus(server, author, { status: "over sse" });
      const event = await client.event("update", (data) => content(data) === "over sse");
      assert.equal((JSON.parse(event.data) as Status).account.id, author.account.id);
    });

    test("public?only_media=true: only posts with media", async () => {
      const [viewer, author] = await Promise.all([user("ssemedia"), user("ssemediaauthor")]);
      const client = await sse("/api/v1/streaming/public?only_media=true", viewer.token);
      assert.ok(client instanceof SseClient);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await postStatus(server, author, { status: "words only" });
      const picture = await uploadImage(server, author);
      await postStatus(server, author, { status: "with a picture", media_ids: [picture.id] });
      await client.event("update", (data) => content(data) === "with a picture");
      await client.events.none((e) => e.event === "update" && content(e.data) === "words only");
    });

    test("user stream over SSE, with the token as a query parameter", async () => {
      const [viewer, author] = await Promise.all([user("sseuser"), user("sseuserauthor")]);
      await follow(server, viewer, author);
      const client = await sse(`/api/v1/streaming/user?access_token=${viewer.token}`);
      assert.ok(client instanceof SseClient);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await postStatus(server, author, { status: "home over sse" });
      await client.event("update", (data) => content(data) === "home over sse");
    });

    test("errors: missing or bad token 401, unknown channel and missing tag 400, a foreign list 401", async () => {
      const [viewer, other] = await Promise.all([user("sseerr"), user("sseother")]);
      const list = (await call(other, "POST", "/api/v1/lists", { title: "theirs" })) as { id: string };
      const cases: Array<[string, string | undefined, number, string]> = [
        ["/api/v1/streaming/public", undefined, 401, "Missing access token"],
        ["/api/v1/streaming/public", "nope", 401, "Invalid access token"],
        ["/api/v1/streaming/everything", viewer.token, 400, "Unknown channel requested"],
        ["/api/v1/streaming/hashtag", viewer.token, 400, "Missing tag name parameter"],
        ["/api/v1/streaming/list", viewer.token, 400, "Missing list name parameter"],
        [`/api/v1/streaming/list?list=${list.id}`, viewer.token, 401, "Not authorized to stream this list"],
      ];
      for (const [path, token, status, error] of cases) {
        const res = await sse(path, token);
        assert.ok(!(res instanceof SseClient), path);
        assert.equal(res.status, status, path);
        assert.deepEqual(JSON.parse(res.body), { error }, path);
      }
    });
  });
});
