/**
 * Changes made outside the process a streaming client is connected to, without Redis: the CLI
 * disabling, suspending, re-passwording or re-roling a user, another web process revoking a token,
 * the CLI publishing an announcement. Each reaches the server's open WebSocket and SSE streams
 * within seconds through the database (src/realtime/signals.ts), on SQLite files and PostgreSQL.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import type { Db } from "../src/db/connect.ts";
import { idForTime, newId } from "../src/db/ids.ts";
import { pruneExpiredRecords } from "../src/services/maintenance.ts";
import { LocalBus, type BusMessage } from "../src/realtime/bus.ts";
import { SignalRelay } from "../src/realtime/signals.ts";
import { createTestServer, createUser, testApplication, TEST_ENGINE, type TestServer, type TestUser } from "./kit.ts";
import { ROOT, ServerProcesses, type ServerProcess } from "./server_process.ts";
import { SseClient, WsClient } from "./streaming_clients.ts";

/** "Within seconds": the relay polls every second; this leaves room for a busy CI machine. */
const WITHIN_MS = 8_000;

/** Runs `rookery ARGS…` as its own process, as an admin would; its exit code and output. */
function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin", "rookery.js"), ...args], { cwd: ROOT, env });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.on("close", (code) => resolve({ code, out }));
  });
}

/** Resolves with how long `closed` took, or fails after WITHIN_MS. */
async function closesWithin(closed: Promise<unknown>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still open after ${WITHIN_MS} ms`)), WITHIN_MS);
  });
  try {
    await Promise.race([closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe(`signals across processes without Redis (${TEST_ENGINE})`, () => {
  const processes = new ServerProcesses();
  let env: Record<string, string>;
  let server: ServerProcess;
  let host: string;
  let ctx: Ctx;

  before(async () => {
    env = await processes.environment();
    server = processes.start(env);
    const port = (await server.waitForLine((l) => typeof l.port === "number", "listening")).port as number;
    host = `127.0.0.1:${port}`;
    // The test's own context is one more process on the same database (migrated by the server).
    ctx = await boot(loadConfig(env), {
      migrate: false,
      jobHandlers: false,
      log: pino({ level: "silent" }),
      outboundAgent: false,
    });
  });

  after(async () => {
    await ctx?.events.close();
    await ctx?.db.close();
    await processes.cleanUp();
  });

  /** A user with a WebSocket and an SSE stream open on the server. */
  async function streamingUser(name: string): Promise<{ user: TestUser; ws: WsClient; sse: SseClient }> {
    const user = await createUser(ctx, name);
    const ws = await WsClient.connect(host, user.token, { query: "stream=user" });
    const sse = await SseClient.open(host, "/api/v1/streaming/user", user.token);
    if (!(sse instanceof SseClient)) assert.fail(`SSE refused: ${JSON.stringify(sse)}`);
    // The server answers an unknown stream once the subscription above is in place.
    ws.send({ type: "unsubscribe", stream: "round-trip" });
    await ws.frames.next((f) => f.error === "Unknown stream type", 5000, "the subscription");
    return { user, ws, sse };
  }

  const sseClosed = (sse: SseClient) =>
    new Promise<void>((resolve) => {
      if (sse.response.readableEnded || sse.response.destroyed) resolve();
      sse.response.once("end", resolve);
      sse.response.once("close", resolve);
    });

  for (const [flag, what] of [
    ["--disable", "disabled"],
    ["--suspend", "suspended"],
    ["--reset-password", "given a new password"],
    ["--role=Moderator", "given a new role"],
  ] as const) {
    test(`a user ${what} by the CLI loses their open streams within seconds`, { timeout: 60_000 }, async () => {
      const name = `u${flag.replace(/\W/g, "")}`.slice(0, 20);
      const { user, ws, sse } = await streamingUser(name);
      const [option, value] = flag.split("=");
      const result = await cli(env, "accounts", "modify", user.username, option!, ...(value ? [value] : []));
      assert.equal(result.code, 0, result.out);
      await closesWithin(ws.closed, "the WebSocket");
      await closesWithin(sseClosed(sse), "the SSE stream");
    });
  }

  test("a token revoked through another web process ends its streams on this one", { timeout: 60_000 }, async () => {
    const other = processes.start({ ...env, ROOKERY_ROLE: "web" });
    try {
      const otherPort = (await other.waitForLine((l) => typeof l.port === "number", "B listening")).port as number;
      const { user, ws, sse } = await streamingUser("revoked");
      const application = await testApplication(ctx);
      const revoked = await fetch(`http://127.0.0.1:${otherPort}/oauth/revoke`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_id: application.client_id,
          client_secret: application.client_secret,
          token: user.token,
        }),
      });
      assert.equal(revoked.status, 200);
      await closesWithin(ws.closed, "the WebSocket");
      await closesWithin(sseClosed(sse), "the SSE stream");
    } finally {
      other.child.kill("SIGTERM");
      await other.exit();
    }
  });

  test("an announcement published by the CLI reaches open user streams", { timeout: 60_000 }, async () => {
    const { ws } = await streamingUser("reader");
    const result = await cli(env, "announcements", "create", "Maintenance tonight");
    assert.equal(result.code, 0, result.out);
    const frame = await ws.event("announcement", (p) => p!.includes("Maintenance tonight"), WITHIN_MS);
    assert.ok(frame.payload);
    ws.close();
  });

  test("a user left alone keeps their streams", { timeout: 60_000 }, async () => {
    const { ws, sse } = await streamingUser("untouched");
    const result = await cli(env, "accounts", "modify", "udisable", "--enable");
    assert.equal(result.code, 0, result.out);
    const closed = await Promise.race([
      ws.closed.then(() => "ws"),
      sseClosed(sse).then(() => "sse"),
      new Promise((resolve) => setTimeout(() => resolve("open"), 3000)),
    ]);
    assert.equal(closed, "open");
    ws.close();
    sse.close();
  });
});

describe("the signal relay", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  /** A process's bus on the test database, and what its listener heard. */
  async function processBus(channel: string) {
    const relay = new SignalRelay(new LocalBus(server.ctx.log), server.ctx.db, server.ctx.log, { pollMs: 3_600_000 });
    const heard: BusMessage[] = [];
    await relay.subscribe(channel, (message) => heard.push(message));
    return { relay, heard };
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  test("a signal reaches another process once, and its own listeners once", async () => {
    const channel = "timeline:system:1";
    const a = await processBus(channel);
    const b = await processBus(channel);
    await a.relay.publish(channel, { event: "kill" });
    await tick();
    assert.deepEqual(a.heard, [{ event: "kill" }]);
    assert.deepEqual(b.heard, []);
    for (let i = 0; i < 3; i++) {
      await Promise.all([a.relay.poll(), b.relay.poll()]);
      await tick();
    }
    assert.deepEqual(a.heard, [{ event: "kill" }]);
    assert.deepEqual(b.heard, [{ event: "kill" }]);
    await Promise.all([a.relay.close(), b.relay.close()]);
  });

  test("a row committed late (an ID seconds old) is still delivered; one from before listening is not", async () => {
    const channel = "timeline:access_token:7";
    const listening = Date.now();
    const b = await processBus(channel);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await b.relay.poll();
    const write = (id: string) =>
      server.ctx.db.kysely
        .insertInto("stream_signals")
        .values({ id, channel, message: JSON.stringify({ event: "kill" }), origin: "elsewhere" })
        .execute();
    await write(idForTime(new Date(listening - 5_000)));
    // Made after the process began listening but before its last poll, committed only now.
    await write(idForTime(new Date(listening + 50)));
    await b.relay.poll();
    await tick();
    assert.deepEqual(b.heard, [{ event: "kill" }]);
    await b.relay.close();
  });

  test("other channels stay in their process; signal channels count as present everywhere", async () => {
    const a = await processBus("timeline:public");
    const before = await server.ctx.db.kysely.selectFrom("stream_signals").select("id").execute();
    await a.relay.publish("timeline:public", { event: "update", payload: "1" });
    const afterwards = await server.ctx.db.kysely.selectFrom("stream_signals").select("id").execute();
    assert.equal(afterwards.length, before.length);
    assert.deepEqual(
      [...(await a.relay.present(["timeline:public", "timeline:system:9", "timeline:hashtag:x"]))].sort(),
      ["timeline:public", "timeline:system:9"],
    );
    await a.relay.close();
  });

  test("this process's listeners hear a signal even when its row cannot be written", async () => {
    const broken = {
      engine: server.ctx.db.engine,
      kysely: {
        insertInto() {
          throw new Error("database is locked");
        },
      },
    } as unknown as Db;
    const relay = new SignalRelay(new LocalBus(server.ctx.log), broken, server.ctx.log, { pollMs: 3_600_000 });
    const heard: BusMessage[] = [];
    await relay.subscribe("timeline:system:5", (message) => heard.push(message));
    await relay.publish("timeline:system:5", { event: "kill" });
    await tick();
    assert.deepEqual(heard, [{ event: "kill" }]);
    await relay.close();
  });

  test("maintenance.prune deletes old signals on a server nobody streams from", async () => {
    const old = idForTime(new Date(Date.now() - 30 * 60_000));
    await server.ctx.db.kysely
      .insertInto("stream_signals")
      .values({ id: old, channel: "timeline:system:8", message: "{}", origin: "elsewhere" })
      .execute();
    const pruned = await pruneExpiredRecords(server.ctx.db);
    assert.ok(pruned.signals >= 1);
    const left = await server.ctx.db.kysely.selectFrom("stream_signals").select("id").where("id", "=", old).execute();
    assert.deepEqual(left, []);
  });

  test("listening processes delete signals older than ten minutes", async () => {
    const old = idForTime(new Date(Date.now() - 11 * 60_000));
    const recent = newId();
    for (const id of [old, recent])
      await server.ctx.db.kysely
        .insertInto("stream_signals")
        .values({ id, channel: "timeline:system:3", message: "{}", origin: "elsewhere" })
        .execute();
    const b = await processBus("timeline:system:3");
    await b.relay.poll();
    const ids = (await server.ctx.db.kysely.selectFrom("stream_signals").select("id").execute()).map((r) => r.id);
    assert.ok(!ids.includes(old));
    assert.ok(ids.includes(recent));
    await b.relay.close();
  });
});
