/**
 * The regression behind job workers' heartbeats, with real processes: a server killed with SIGKILL
 * while it holds a new post's fan-out; a second server started on the same database delivers the
 * post to its followers' home feeds within seconds, not when the 5-minute lease runs out.
 */
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { after, describe, test } from "node:test";
import { pino } from "pino";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { followAccount } from "../src/services/accounts/follow.ts";
import { postStatus } from "../src/services/statuses/post.ts";
import { createUser, eventually, TEST_ENGINE } from "./kit.ts";
import { ServerProcesses, WAIT_MS } from "./server_process.ts";
const RELEASED = "released the jobs of job workers that are gone";

describe(`a job held by a server killed with SIGKILL (${TEST_ENGINE})`, () => {
  const processes = new ServerProcesses();
  const environment = () => processes.environment();
  const start = (env: Record<string, string>) => processes.start(env);
  after(() => processes.cleanUp());

  test(
    "a second server on the same database delivers the post within seconds, not after the 5-minute lease",
    { timeout: 60_000 },
    async () => {
      const env = await environment();
      // The test's own view of the database: it sets the scene and watches the feeds.
      const ctx = await boot(loadConfig(env), { log: pino({ level: "silent" }), outboundAgent: false });
      try {
        const reader = await createUser(ctx, "reader");
        const author = await createUser(ctx, "author");
        await followAccount(ctx, reader.account, author.account, {});
        await ctx.jobs.drain();
        const posted = await postStatus(
          ctx,
          { account: author.account, user: author.user, applicationId: null },
          { text: "is this in my followers' home feeds?", mediaIds: [], spoilerText: "", visibility: "public" },
        );
        assert.equal(posted.kind, "status");
        const statusId = posted.kind === "status" ? posted.status.id : "";
        const fanout = await ctx.db.kysely
          .selectFrom("jobs")
          .select("id")
          .where("name", "=", "status.created:feeds")
          .executeTakeFirstOrThrow();
        const lease = { locked_until: new Date(Date.now() + 5 * 60_000).toISOString(), attempts: 1 };
        // Held from the start, so that the first server cannot run it before it is handed over.
        await ctx.db.kysely
          .updateTable("jobs")
          .set({ ...lease, locked_by: "the first server" })
          .where("id", "=", fanout.id)
          .execute();
        const inHome = async () =>
          (await ctx.db.kysely
            .selectFrom("home_feed_entries")
            .select("status_id")
            .where("account_id", "=", reader.account.id)
            .where("status_id", "=", statusId)
            .executeTakeFirst()) !== undefined;

        const first = start(env);
        await first.waitForLine((l) => l.msg === "job workers started", "the first server's job workers");
        const worker = await ctx.db.kysely
          .selectFrom("job_workers")
          .selectAll()
          .where("pid", "=", first.child.pid!)
          .executeTakeFirstOrThrow();
        assert.equal(worker.host, hostname());
        // The first server holds the fan-out, as if it had claimed it and was running it.
        await ctx.db.kysely.updateTable("jobs").set({ locked_by: worker.id }).where("id", "=", fanout.id).execute();

        first.child.kill("SIGKILL");
        assert.deepEqual(await first.exited, { code: null, signal: "SIGKILL" });
        assert.equal(await inHome(), false, "the fan-out did not run before the kill");
        const killedAt = Date.now();

        const second = start(env);
        await eventually(inHome, "the post to reach the follower's home feed", WAIT_MS);
        const elapsed = Date.now() - killedAt;
        assert.ok(elapsed < 10_000, `delivered ${elapsed} ms after the kill`);
        const released = await second.waitForLine((l) => l.msg === RELEASED, "the release");
        assert.deepEqual(released.workers, [{ id: worker.id, host: hostname(), pid: first.child.pid }]);
        // The fan-out, and whatever recurring maintenance the first server was running when it was killed.
        assert.ok(Number(released.jobs) >= 1, JSON.stringify(released));
        // The job finishes (notifications and streaming come after the feeds) and is deleted.
        await eventually(
          async () =>
            (await ctx.db.kysely.selectFrom("jobs").select("id").where("id", "=", fanout.id).executeTakeFirst()) ===
            undefined,
          "the fan-out job to finish",
          WAIT_MS,
        );
        const serving = await second.waitForLine((l) => typeof l.port === "number", "the listening line");
        const home = await fetch(`http://127.0.0.1:${serving.port as number}/api/v1/timelines/home`, {
          headers: { authorization: `Bearer ${reader.token}` },
        });
        assert.equal(home.status, 200);
        assert.deepEqual(
          ((await home.json()) as Array<{ id: string }>).map((s) => s.id),
          [statusId],
        );

        // A clean shutdown leaves no worker row behind (the killed server's went with the release).
        second.child.kill("SIGTERM");
        assert.deepEqual(await second.exited, { code: 0, signal: null }, second.output());
        assert.deepEqual(await ctx.db.kysely.selectFrom("job_workers").select("id").execute(), []);
      } finally {
        await ctx.events.close();
        await ctx.db.close();
      }
    },
  );
});
