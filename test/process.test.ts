import assert from "node:assert/strict";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { pino } from "pino";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { createUser, TEST_ENGINE } from "./kit.ts";
import { ServerProcesses } from "./server_process.ts";
import { WsClient } from "./streaming_clients.ts";

describe(`the server process (${TEST_ENGINE})`, () => {
  const processes = new ServerProcesses();
  const environment = (extra?: Record<string, string>, options?: { database: boolean }) =>
    processes.environment(extra, options);
  const start = (env: Record<string, string>) => processes.start(env);
  after(() => processes.cleanUp());

  test("starts on a free port, answers HTTP, and stops on SIGTERM with exit 0", { timeout: 60_000 }, async () => {
    const env = await environment();
    const server = start(env);
    const serving = await server.waitForLine((l) => typeof l.port === "number", "the listening line");
    const port = serving.port as number;
    assert.ok(port > 0 && port !== 3000, `a free port was chosen: ${port}`);
    assert.match(
      serving.msg ?? "",
      new RegExp(
        `^Rookery is serving http://localhost:3000 \\(listening on 127\\.0\\.0\\.1:${port}, database ${TEST_ENGINE}\\)$`,
      ),
    );
    await server.waitForLine((l) => l.msg === "job workers started", "the job workers");
    if (TEST_ENGINE === "sqlite") {
      assert.ok(
        existsSync(join(env.ROOKERY_DATA_DIR, "rookery.sqlite")),
        "the default database file is under ROOKERY_DATA_DIR",
      );
    }

    const instance = await fetch(`http://127.0.0.1:${port}/api/v2/instance`);
    assert.equal(instance.status, 200);
    const body = (await instance.json()) as { domain: string; title: string };
    assert.equal(body.domain, "localhost:3000");
    assert.equal(body.title, "Rookery");

    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), "OK");
    assert.equal(health.headers.get("cache-control"), "no-store");

    assert.ok(server.child.kill("SIGTERM"));
    const { code, signal } = await server.exit();
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, JSON.stringify(server.lines));
    // It really stopped listening.
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
  });

  test("a second start on the same database migrates nothing and still serves", { timeout: 60_000 }, async () => {
    const env = await environment();
    const first = start(env);
    const firstServing = await first.waitForLine((l) => typeof l.port === "number", "the first listening line");
    await first.waitForLine((l) => l.msg === "job workers started", "the first start's job workers");
    // A request answered means start-up has finished.
    assert.equal((await fetch(`http://127.0.0.1:${firstServing.port as number}/health`)).status, 200);
    first.child.kill("SIGTERM");
    assert.deepEqual(await first.exit(), { code: 0, signal: null }, `${JSON.stringify(first.lines)} ${first.stderr}`);
    if (TEST_ENGINE === "sqlite")
      assert.ok(
        first.lines.some((l) => l.msg === "database migrated"),
        "the first start migrates a fresh database",
      );

    const second = start(env);
    const serving = await second.waitForLine((l) => typeof l.port === "number", "the second listening line");
    await second.waitForLine((l) => l.msg === "job workers started", "the second start's job workers");
    assert.equal(
      second.lines.some((l) => l.msg === "database migrated"),
      false,
    );
    assert.equal((await fetch(`http://127.0.0.1:${serving.port as number}/health`)).status, 200);
    second.child.kill("SIGINT");
    assert.deepEqual(
      await second.exit(),
      { code: 0, signal: null },
      `${JSON.stringify(second.lines)} ${second.stderr}`,
    );
  });

  test("SIGTERM right after the listening line still shuts down gracefully", { timeout: 60_000 }, async () => {
    const server = start(await environment());
    await server.waitForLine((l) => typeof l.port === "number", "the listening line");
    server.child.kill("SIGTERM");
    const { code, signal } = await server.exit();
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });

  test(
    'the shutdown is logged: "shutting down" with the signal, then "stopped" last',
    { timeout: 60_000 },
    async () => {
      const servers = await Promise.all(Array.from({ length: 3 }, async () => start(await environment())));
      await Promise.all(
        servers.map(async (server) => {
          const serving = await server.waitForLine((l) => typeof l.port === "number", "the listening line");
          await server.waitForLine((l) => l.msg === "job workers started", "the job workers");
          assert.equal((await fetch(`http://127.0.0.1:${serving.port as number}/health`)).status, 200);
          server.child.kill("SIGTERM");
          assert.equal((await server.exit()).code, 0);
        }),
      );
      for (const server of servers) {
        const messages = server.lines.map((l) => l.msg);
        assert.ok(
          server.lines.some((l) => l.signal === "SIGTERM" && (l.msg ?? "").startsWith("shutting down")),
          JSON.stringify(messages),
        );
        assert.equal(messages.at(-1), "stopped", JSON.stringify(messages));
      }
    },
  );

  test(
    "ROOKERY_ROLE=worker runs the job workers without listening, and stops on SIGTERM",
    { timeout: 60_000 },
    async () => {
      const worker = start(await environment({ ROOKERY_ROLE: "worker" }));
      await worker.waitForLine((l) => l.msg === "job workers started", "the job workers");
      // The workers really run jobs: the recurring maintenance job is due at start.
      await worker.waitForLine((l) => l.msg === "pruned expired records", "the maintenance job");
      assert.equal(
        worker.lines.some((l) => "port" in l),
        false,
        "a worker does not listen",
      );
      assert.equal(
        worker.lines.some((l) => /Rookery is serving|Server listening/.test(l.msg ?? "")),
        false,
      );
      worker.child.kill("SIGTERM");
      assert.deepEqual(await worker.exit(), { code: 0, signal: null });
    },
  );

  test("ROOKERY_ROLE=web listens without job workers", { timeout: 60_000 }, async () => {
    const web = start(await environment({ ROOKERY_ROLE: "web" }));
    const serving = await web.waitForLine((l) => typeof l.port === "number", "the listening line");
    assert.equal((await fetch(`http://127.0.0.1:${serving.port as number}/health`)).status, 200);
    // Split roles without Redis cannot stream events across processes: the admin is told.
    await web.waitForLine((l) => /ROOKERY_ROLE=web without REDIS_URL/.test(l.msg ?? ""), "the REDIS_URL warning");
    web.child.kill("SIGTERM");
    assert.deepEqual(await web.exit(), { code: 0, signal: null });
    assert.equal(
      web.lines.some((l) => l.msg === "job workers started"),
      false,
    );
    assert.equal(
      web.lines.some((l) => l.msg === "pruned expired records"),
      false,
    );
  });

  test("bad configuration exits 1 with one line on stderr naming the variable", { timeout: 60_000 }, async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: "abc" }, 'rookery: configuration error: PORT must be a whole number, got "abc"'],
      [
        { DATABASE_URL: "mysql://x" },
        'rookery: configuration error: DATABASE_URL must start with sqlite: or postgres://, got "mysql://x"',
      ],
      [
        { LIMITED_FEDERATION_MODE: "maybe" },
        'rookery: configuration error: LIMITED_FEDERATION_MODE must be true or false, got "maybe"',
      ],
      [
        { ROOKERY_ROLE: "sidekiq" },
        'rookery: configuration error: ROOKERY_ROLE must be one of all, web, worker, got "sidekiq"',
      ],
    ];
    await Promise.all(
      cases.map(async ([extra, line]) => {
        const child = start(await environment(extra, { database: false }));
        const { code } = await child.exit();
        const label = JSON.stringify(extra);
        assert.equal(code, 1, label);
        assert.equal(child.stderr, `${line}\n`, label);
        assert.deepEqual(child.lines, [], label);
      }),
    );
  });

  test(
    "an FFMPEG_BINARY that is no program, or one that does not run, exits 1 naming it",
    { timeout: 60_000 },
    async () => {
      const dir = processes.tempDir("rookery-ffmpeg-");
      const broken = join(dir, "ffmpeg");
      writeFileSync(broken, "#!/bin/sh\necho 'cannot execute binary file' >&2\nexit 126\n");
      chmodSync(broken, 0o755);
      writeFileSync(join(dir, "ffprobe"), "#!/bin/sh\nexit 126\n");
      chmodSync(join(dir, "ffprobe"), 0o755);

      const missing = start(await environment({ FFMPEG_BINARY: join(dir, "nothing") }, { database: false }));
      assert.equal((await missing.exit()).code, 1);
      assert.equal(
        missing.stderr,
        `rookery: configuration error: FFMPEG_BINARY must name an executable program, got "${join(dir, "nothing")}"\n`,
      );

      const failing = start(await environment({ FFMPEG_BINARY: broken }));
      assert.equal((await failing.exit()).code, 1);
      assert.match(
        failing.stderr,
        /^rookery: configuration error: FFMPEG_BINARY\/FFPROBE_BINARY: .*ffmpeg does not run/,
      );
    },
  );

  test("the start log says which ffmpeg converts video and audio", { timeout: 60_000 }, async () => {
    const server = start(await environment());
    const line = await server.waitForLine(
      (l) => /video, audio and animated GIFs are accepted|only images are accepted/.test(l.msg ?? ""),
      "the ffmpeg line",
    );
    assert.match(String(line.msg), /accepted/);
    server.child.kill("SIGTERM");
    await server.exit();
  });

  test(
    "an unreachable PostgreSQL exits 1 with one line naming DATABASE_URL (without the password)",
    { timeout: 60_000 },
    async () => {
      const child = start(
        await environment({ DATABASE_URL: "postgres://postgres:hunter2@127.0.0.1:1/x" }, { database: false }),
      );
      const { code } = await child.exit();
      assert.equal(code, 1);
      const lines = child.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, child.stderr);
      assert.match(
        lines[0],
        /^rookery: Cannot use the database at postgres:\/\/\*\*\*@127\.0\.0\.1:1\/x \(DATABASE_URL\): .*ECONNREFUSED/,
      );
      assert.doesNotMatch(child.stderr, /hunter2/);
      assert.equal(
        child.lines.some((l) => "port" in l),
        false,
      );
    },
  );

  test("a port in use exits 1 naming BIND/PORT", { timeout: 60_000 }, async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const child = start(await environment({ PORT: String(port) }));
      const { code } = await child.exit();
      assert.equal(code, 1);
      assert.match(
        child.stderr,
        new RegExp(`^rookery: cannot listen on 127\\.0\\.0\\.1:${port} \\(BIND/PORT\\): .*EADDRINUSE`, "m"),
      );
      assert.equal(
        child.lines.some((l) => "port" in l),
        false,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test(
    "streaming across processes: an event caused through process A reaches a client of process B (PostgreSQL and Redis)",
    {
      timeout: 60_000,
      skip:
        !(TEST_ENGINE === "postgres" && process.env.TEST_REDIS_URL) &&
        "needs PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL)",
    },
    async () => {
      const env = await environment({ REDIS_URL: process.env.TEST_REDIS_URL! });
      const a = start(env);
      const portA = (await a.waitForLine((l) => typeof l.port === "number", "A listening")).port as number;
      // B only serves HTTP: every job, and so every event, is A's.
      const b = start({ ...env, ROOKERY_ROLE: "web" });
      const portB = (await b.waitForLine((l) => typeof l.port === "number", "B listening")).port as number;
      const ctx = await boot(loadConfig(env), {
        migrate: false,
        jobHandlers: false,
        log: pino({ level: "silent" }),
        outboundAgent: false,
      });
      try {
        const [reader, author] = [await createUser(ctx, "reader"), await createUser(ctx, "author")];
        const followed = await fetch(`http://127.0.0.1:${portA}/api/v1/accounts/${author.account.id}/follow`, {
          method: "POST",
          headers: { authorization: `Bearer ${reader.token}` },
        });
        assert.equal(followed.status, 200);
        const client = await WsClient.connect(`127.0.0.1:${portB}`, reader.token, { query: "stream=user" });
        try {
          client.subscribe("public:local");
          client.send({ type: "unsubscribe", stream: "round-trip" });
          await client.frames.next((f) => f.error === "Unknown stream type", 5000, "the subscriptions");
          const posted = await fetch(`http://127.0.0.1:${portA}/api/v1/statuses`, {
            method: "POST",
            headers: { authorization: `Bearer ${author.token}`, "content-type": "application/json" },
            body: JSON.stringify({ status: `hello @${reader.username} across processes` }),
          });
          assert.equal(posted.status, 200);
          const id = ((await posted.json()) as { id: string }).id;
          const onHome = await client.event("update", (p, f) => f.stream?.[0] === "user" && p!.includes(id), 15_000);
          assert.equal((JSON.parse(onHome.payload!) as { id: string }).id, id);
          await client.event("update", (p, f) => f.stream?.[0] === "public:local" && p!.includes(id), 15_000);
          const note = await client.event("notification", undefined, 15_000);
          assert.equal((JSON.parse(note.payload!) as { type: string }).type, "mention");
        } finally {
          client.close();
        }
      } finally {
        await ctx.events.close();
        await ctx.db.close();
      }
    },
  );
});
