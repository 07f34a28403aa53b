/**
 * GET and POST /api/v1/markers: reading positions in the home and notifications timelines, their
 * version, and the 409 of an update that another one overtook.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  request,
  TEST_ENGINE,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Marker {
  last_read_id: string;
  version: number;
  updated_at: string;
}
type Markers = Record<string, Marker>;

describe("/api/v1/markers", () => {
  let server: TestServer;
  let users = 0;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());
  const user = () => createUser(server.ctx, `reader${++users}`);
  const save = (u: TestUser, json: unknown) => request(server.app, "POST", "/api/v1/markers", { token: u.token, json });
  const read = async (u: TestUser, query = "timeline[]=home&timeline[]=notifications") => {
    const res = await get(server.app, `/api/v1/markers?${query}`, u.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Markers;
  };

  test("a new user has no markers; without timeline[] the answer is an empty object", async () => {
    const u = await user();
    assert.deepEqual(await read(u), {});
    assert.deepEqual(await read(u, ""), {});
  });

  test("saving creates a marker at version 0 and each update advances it", async () => {
    const u = await user();
    const first = await save(u, { home: { last_read_id: "103194548672408537" } });
    assert.equal(first.statusCode, 200, first.body);
    const created = (first.json() as Markers).home!;
    assert.deepEqual(Object.keys(first.json() as Markers), ["home"]);
    assert.equal(created.last_read_id, "103194548672408537");
    assert.equal(created.version, 0);
    assert.ok(Date.parse(created.updated_at) <= Date.now());

    const second = await save(u, { home: { last_read_id: "103194548672408600" } });
    assert.equal((second.json() as Markers).home!.version, 1);
    const both = await read(u);
    assert.deepEqual(Object.keys(both), ["home"]);
    assert.equal(both.home!.last_read_id, "103194548672408600");
    assert.equal(both.home!.version, 1);
  });

  test("a Marker matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const u = await user();
    const res = await save(u, { home: { last_read_id: "103194548672408537" } });
    assert.deepEqual(validateSchema("Marker", (res.json() as Markers).home), []);
    assert.deepEqual(validateSchema("Marker", (await read(u)).home), []);
  });

  test("form fields, JSON numbers and both timelines at once; only the timelines asked for are read", async () => {
    const u = await user();
    const form = await request(server.app, "POST", "/api/v1/markers", {
      token: u.token,
      form: { "home[last_read_id]": "1000", "notifications[last_read_id]": "2000" },
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual(Object.keys(form.json() as Markers).sort(), ["home", "notifications"]);
    const numeric = await save(u, { notifications: { last_read_id: 2001 } });
    assert.equal((numeric.json() as Markers).notifications!.last_read_id, "2001");
    const onlyNotifications = await read(u, "timeline[]=notifications");
    assert.deepEqual(Object.keys(onlyNotifications), ["notifications"]);
    assert.equal(onlyNotifications.notifications!.version, 1);
    // A single value without [] and unknown timelines are read leniently.
    assert.deepEqual(Object.keys(await read(u, "timeline=home")), ["home"]);
    assert.deepEqual(Object.keys(await read(u, "timeline[]=public&timeline[]=home")), ["home"]);
  });

  test("markers are the user's own", async () => {
    const [u, other] = [await user(), await user()];
    await save(u, { home: { last_read_id: "5000" } });
    assert.deepEqual(await read(other), {});
  });

  test("nothing to save answers an empty object; unknown timelines and bare values are ignored", async () => {
    const u = await user();
    for (const json of [{}, { public: { last_read_id: "1" } }, { home: "12" }]) {
      const res = await save(u, json);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
    }
    assert.deepEqual(await read(u), {});
  });

  test("a blank or malformed last_read_id is 422 and saves nothing, not even the other timeline", async () => {
    const u = await user();
    await save(u, { home: { last_read_id: "700" } });
    const cases: Array<[unknown, string]> = [
      [{ home: {} }, "Validation failed: Last read can't be blank"],
      [{ home: { last_read_id: "" } }, "Validation failed: Last read can't be blank"],
      [{ home: { last_read_id: null } }, "Validation failed: Last read can't be blank"],
      [
        { notifications: { last_read_id: "9" }, home: { last_read_id: "abc" } },
        "Validation failed: Last read is invalid",
      ],
      [{ home: { last_read_id: { nested: 1 } } }, "Validation failed: Last read can't be blank"],
    ];
    for (const [json, message] of cases)
      assert.deepEqual(errorOf(await save(u, json)), [422, message], JSON.stringify(json));
    const after = await read(u);
    assert.deepEqual(Object.keys(after), ["home"]);
    assert.equal(after.home!.last_read_id, "700");
    assert.equal(after.home!.version, 0);
  });

  test("concurrent writers: each answer is 200 or 409, and the version counts exactly the saved ones", async () => {
    const u = await user();
    await save(u, { home: { last_read_id: "100" } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => save(u, { home: { last_read_id: String(200 + i) } })),
    );
    const saved = answers.filter((r) => r.statusCode === 200).map((r) => (r.json() as Markers).home!);
    for (const res of answers)
      if (res.statusCode !== 200) assert.deepEqual(errorOf(res), [409, "Conflict during update, please try again"]);
    assert.ok(saved.length >= 1);
    // Every saved update has its own version; the stored marker is the one with the highest.
    assert.equal(new Set(saved.map((m) => m.version)).size, saved.length);
    const last = saved.reduce((a, b) => (a.version > b.version ? a : b));
    const stored = (await read(u)).home!;
    assert.equal(stored.version, saved.length);
    assert.equal(stored.last_read_id, last.last_read_id);
  });

  test(
    "an update overtaken by another writer between its read and its write is 409 and changes nothing",
    {
      skip:
        TEST_ENGINE === "sqlite"
          ? "SQLite runs write transactions one at a time (BEGIN IMMEDIATE): no overtaking"
          : false,
    },
    async () => {
      const u = await user();
      await save(u, { home: { last_read_id: "300" } });
      const db = server.ctx.db.kysely;
      let answer: Awaited<ReturnType<typeof save>> | undefined;
      await db.transaction().execute(async (tx) => {
        // Another writer moves the marker and holds its row until it commits.
        await tx
          .updateTable("markers")
          .set({ last_read_id: "301", version: sql`version + 1` })
          .where("user_id", "=", u.user.id)
          .execute();
        const pending = save(u, { home: { last_read_id: "999" } }).then((r) => (answer = r));
        // Wait until the request has read version 0 and waits for this transaction's row lock.
        const { rows: own } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
        for (let i = 0; i < 500; i++) {
          const { rows } = await sql<{ waiting: string }>`SELECT count(*) AS waiting FROM pg_stat_activity
            WHERE ${own[0]!.pid} = ANY(pg_blocking_pids(pid))`.execute(db);
          if (Number(rows[0]!.waiting) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(answer, undefined);
        void pending;
      });
      for (let i = 0; i < 200 && !answer; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(errorOf(answer!), [409, "Conflict during update, please try again"]);
      const stored = (await read(u)).home!;
      assert.equal(stored.last_read_id, "301");
      assert.equal(stored.version, 1);
    },
  );

  describeAuth("GET /api/v1/markers", () => server, {
    scope: "read:statuses",
    send: (s, token) => get(s.app, "/api/v1/markers?timeline[]=home", token),
  });
  describeAuth("POST /api/v1/markers", () => server, {
    scope: "write:statuses",
    send: (s, token) => request(s.app, "POST", "/api/v1/markers", { token, json: { home: { last_read_id: "42" } } }),
  });
});
