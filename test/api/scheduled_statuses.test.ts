/**
 * Scheduled statuses: POST /api/v1/statuses with scheduled_at (scheduled, refused or posted now),
 * the scheduled_statuses endpoints, media reserved while scheduled, the limits, and the publish job
 * that posts each one exactly once at its time.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { newId } from "../../src/db/ids.ts";
import { publishScheduledStatus } from "../../src/services/statuses/schedule.ts";
import {
  accountJson,
  appToken,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  request,
  standardAccounts,
  tokenFor,
  uploadImage,
  type StandardAccounts,
  later,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import type { ScheduledStatus, Status } from "../types.ts";

const MINUTE = 60_000;
const TOO_SOON = "Validation failed: Scheduled at The scheduled date must be in the future";
const RESCHEDULE_TOO_SOON = "Validation failed: Scheduled at The scheduled date must be in the future";
const NOT_A_DATE = "Validation failed: Scheduled at is not a valid date";

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * MINUTE).toISOString();

function links(res: LightMyRequestResponse): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of String(res.headers.link ?? "")
    .split(", ")
    .filter(Boolean)) {
    const match = /^<https:\/\/rookery\.test([^>]+)>; rel="(next|prev)"$/.exec(part);
    assert.ok(match, `malformed link ${part}`);
    result[match[2]] = match[1];
  }
  return result;
}

describe("scheduled statuses", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const post = (user: TestUser, json: Record<string, unknown>, headers?: Record<string, string>) =>
    request(server.app, "POST", "/api/v1/statuses", { token: user.token, json, headers });
  const schedule = async (
    user: TestUser,
    json: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<ScheduledStatus> => {
    const res = await post(user, { scheduled_at: inMinutes(60), ...json }, headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal("content" in res.json(), false, "a ScheduledStatus, not a Status");
    return res.json<ScheduledStatus>();
  };
  const upload = async (user: TestUser) => (await uploadImage(server, user)).id;
  const statusRows = (user: TestUser) =>
    server.ctx.db.kysely.selectFrom("statuses").selectAll().where("account_id", "=", user.account.id).execute();
  const statusesCount = async (user: TestUser) => (await accountJson(server, user)).statuses_count;

  describe("POST /api/v1/statuses with scheduled_at", () => {
    test("at least 5 minutes ahead: a ScheduledStatus, and no status yet", async () => {
      const user = await createUser(server.ctx, "scheduler");
      const at = inMinutes(90);
      const res = await post(user, {
        status: "Good morning",
        scheduled_at: at,
        visibility: "unlisted",
        sensitive: true,
        spoiler_text: "cw",
        language: "en",
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<ScheduledStatus>();
      assert.deepEqual(Object.keys(body).sort(), ["id", "media_attachments", "params", "scheduled_at"]);
      assert.match(body.id, /^\d+$/);
      assert.equal(body.scheduled_at, at);
      assert.deepEqual(body.media_attachments, []);
      for (const key of [
        "text",
        "media_ids",
        "sensitive",
        "spoiler_text",
        "visibility",
        "scheduled_at",
        "poll",
        "idempotency",
        "in_reply_to_id",
        "application_id",
      ]) {
        assert.ok(key in body.params, `params.${key}`);
      }
      assert.equal(body.params.text, "Good morning");
      assert.equal(body.params.visibility, "unlisted");
      assert.equal(body.params.sensitive, true);
      assert.equal(body.params.spoiler_text, "cw");
      assert.equal(body.params.scheduled_at, null);
      assert.equal(body.params.poll, null);
      assert.equal(body.params.media_ids, null);
      assert.equal(body.params.in_reply_to_id, null);
      assert.equal(typeof body.params.application_id, "number");
      assert.deepEqual(await statusRows(user), []);
      assert.equal(await statusesCount(user), 0);
    });

    test("the ScheduledStatus matches the OpenAPI schema", { skip: openApiSkip }, async () => {
      const body = await schedule(a.alice, { status: "schema", poll: { options: ["a", "b"], expires_in: 600 } });
      assert.deepEqual(validateSchema("ScheduledStatus", body), []);
      assert.deepEqual(body.params.poll, { options: ["a", "b"], expires_in: 600, multiple: false, hide_totals: false });
    });

    test("less than 5 minutes ahead is refused", async () => {
      const user = await createUser(server.ctx, "too_soon");
      for (const minutes of [0.5, 2, 4.5]) {
        assert.deepEqual(
          errorOf(await post(user, { status: "soon", scheduled_at: inMinutes(minutes) })),
          [422, TOO_SOON],
          String(minutes),
        );
      }
      assert.equal((await post(user, { status: "just enough", scheduled_at: inMinutes(5.5) })).statusCode, 200);
      assert.deepEqual(await statusRows(user), []);
    });

    test("a time in the past posts the status now", async () => {
      const user = await createUser(server.ctx, "past");
      const res = await post(user, {
        status: "already due",
        scheduled_at: new Date(Date.now() - 3600_000).toISOString(),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json<Status>().content, "<p>already due</p>");
      assert.equal((await statusRows(user)).length, 1);
      assert.deepEqual((await get(server.app, "/api/v1/scheduled_statuses", user.token)).json(), []);
    });

    test("an unreadable scheduled_at is refused", async () => {
      const [code] = errorOf(await post(a.alice, { status: "when?", scheduled_at: "next tuesday" }));
      assert.equal(code, 422);
    });

    test("the whole post is validated when it is scheduled", async () => {
      assert.deepEqual(errorOf(await post(a.alice, { status: "", scheduled_at: inMinutes(60) })), [
        422,
        "Validation failed: Text can't be blank",
      ]);
      assert.deepEqual(errorOf(await post(a.alice, { status: "x".repeat(501), scheduled_at: inMinutes(60) })), [
        422,
        "Validation failed: Text character limit of 500 exceeded",
      ]);
      assert.equal(
        (await post(a.alice, { status: "p", poll: { options: ["one"], expires_in: 600 }, scheduled_at: inMinutes(60) }))
          .statusCode,
        422,
      );
      assert.equal(
        (await post(a.alice, { status: "v", visibility: "nobody", scheduled_at: inMinutes(60) })).statusCode,
        422,
      );
      const secret = await post(a.lucy, { status: "hidden", visibility: "private" });
      assert.deepEqual(
        errorOf(
          await post(a.alice, { status: "r", in_reply_to_id: secret.json<Status>().id, scheduled_at: inMinutes(60) }),
        ),
        [404, "The post you are trying to reply to does not appear to exist."],
      );
    });

    test("a post with only a content warning can be scheduled, as it can be posted", {}, async () => {
      const res = await post(a.alice, { status: "", spoiler_text: "CW only", scheduled_at: inMinutes(60) });
      assert.equal(res.statusCode, 200, res.body);
    });

    test("Idempotency-Key returns the same scheduled status", async () => {
      const user = await createUser(server.ctx, "idem_scheduler");
      const first = await schedule(user, { status: "once" }, { "Idempotency-Key": "sched-1" });
      const second = await schedule(user, { status: "twice" }, { "Idempotency-Key": "sched-1" });
      assert.equal(second.id, first.id);
      assert.equal(second.params.text, "once");
      assert.equal(
        (await get(server.app, "/api/v1/scheduled_statuses", user.token)).json<ScheduledStatus[]>().length,
        1,
      );
    });

    test("params.idempotency is null, as Mastodon stores it", {}, async () => {
      const body = await schedule(a.alice, { status: "key" }, { "Idempotency-Key": "sched-echo" });
      assert.equal(body.params.idempotency, null);
    });
  });

  describe("the scheduled_statuses endpoints", () => {
    test("GET lists the user's scheduled statuses, newest first, with Link pagination", async () => {
      const user = await createUser(server.ctx, "lister");
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await schedule(user, { status: `s${i}`, scheduled_at: inMinutes(60 + i) }));
      await schedule(a.alice, { status: "someone else's" });
      const all = await get(server.app, "/api/v1/scheduled_statuses", user.token);
      assert.equal(all.statusCode, 200);
      assert.deepEqual(
        all.json<ScheduledStatus[]>().map((s) => s.id),
        made.map((s) => s.id).reverse(),
      );
      const page1 = await get(server.app, "/api/v1/scheduled_statuses?limit=2", user.token);
      assert.deepEqual(
        page1.json<ScheduledStatus[]>().map((s) => s.params.text),
        ["s2", "s1"],
      );
      const l1 = links(page1);
      assert.equal(l1.next, `/api/v1/scheduled_statuses?limit=2&max_id=${made[1].id}`);
      assert.equal(l1.prev, `/api/v1/scheduled_statuses?limit=2&min_id=${made[2].id}`);
      const page2 = await get(server.app, l1.next, user.token);
      assert.deepEqual(
        page2.json<ScheduledStatus[]>().map((s) => s.params.text),
        ["s0"],
      );
      assert.equal(links(page2).next, undefined);
      assert.deepEqual(
        (await get(server.app, links(page2).prev, user.token)).json<ScheduledStatus[]>().map((s) => s.params.text),
        ["s2", "s1"],
      );
    });

    test("GET one; another user's or an unknown one is 404", async () => {
      const body = await schedule(a.alice, { status: "mine" });
      const res = await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, a.alice.token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), body);
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, a.bob.token)).statusCode, 404);
      assert.equal((await get(server.app, "/api/v1/scheduled_statuses/123", a.alice.token)).statusCode, 404);
    });

    test("PUT moves it to a new time at least 5 minutes ahead", async () => {
      const body = await schedule(a.alice, { status: "moving" });
      const at = inMinutes(180);
      const res = await request(server.app, "PUT", `/api/v1/scheduled_statuses/${body.id}`, {
        token: a.alice.token,
        form: { scheduled_at: at },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json<ScheduledStatus>().scheduled_at, at);
      assert.equal(res.json<ScheduledStatus>().params.text, "moving");
      for (const value of [inMinutes(2), inMinutes(-60)]) {
        assert.deepEqual(
          errorOf(
            await request(server.app, "PUT", `/api/v1/scheduled_statuses/${body.id}`, {
              token: a.alice.token,
              json: { scheduled_at: value },
            }),
          ),
          [422, RESCHEDULE_TOO_SOON],
          value,
        );
      }
      assert.equal(
        (await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, a.alice.token)).json<ScheduledStatus>()
          .scheduled_at,
        at,
      );
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/scheduled_statuses/${body.id}`, {
            token: a.bob.token,
            json: { scheduled_at: inMinutes(300) },
          })
        ).statusCode,
        404,
      );
    });

    test("PUT with an unreadable or out-of-range date answers what POST answers", async () => {
      const body = await schedule(a.alice, { status: "when exactly?" });
      for (const value of ["garbage", "next tuesday", "20000-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "1e308"]) {
        for (const method of ["PUT", "PATCH"] as const)
          assert.deepEqual(
            errorOf(
              await request(server.app, method, `/api/v1/scheduled_statuses/${body.id}`, {
                token: a.alice.token,
                form: { scheduled_at: value },
              }),
            ),
            [422, NOT_A_DATE],
            value,
          );
        assert.deepEqual(errorOf(await post(a.alice, { status: "when?", scheduled_at: value })), [422, NOT_A_DATE]);
      }
      assert.equal(
        (await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, a.alice.token)).json<ScheduledStatus>()
          .scheduled_at,
        body.scheduled_at,
      );
    });

    test("DELETE cancels it and answers {}", async () => {
      const body = await schedule(a.alice, { status: "cancel me" });
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/scheduled_statuses/${body.id}`, { token: a.bob.token }))
          .statusCode,
        404,
      );
      const res = await request(server.app, "DELETE", `/api/v1/scheduled_statuses/${body.id}`, {
        token: a.alice.token,
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, a.alice.token)).statusCode, 404);
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/scheduled_statuses/${body.id}`, { token: a.alice.token }))
          .statusCode,
        404,
      );
      // Its job later finds nothing to publish.
      const before = (await statusRows(a.alice)).length;
      assert.equal(await publishScheduledStatus(server.ctx, body.id, Date.now() + 2 * 3600_000), "gone");
      assert.equal((await statusRows(a.alice)).length, before);
    });

    test("scopes: read:statuses to read, write:statuses to change; a user token is needed", async () => {
      const body = await schedule(a.alice, { status: "scoped" });
      assert.equal((await get(server.app, "/api/v1/scheduled_statuses")).statusCode, 401);
      assert.equal(
        (await get(server.app, "/api/v1/scheduled_statuses", await tokenFor(server.ctx, a.alice, "write"))).statusCode,
        403,
      );
      assert.equal(
        (await get(server.app, "/api/v1/scheduled_statuses", await tokenFor(server.ctx, a.alice, "read:statuses")))
          .statusCode,
        200,
      );
      assert.equal(
        (await get(server.app, "/api/v1/scheduled_statuses", await appToken(server.ctx, "read"))).statusCode,
        422,
      );
      const readOnly = await tokenFor(server.ctx, a.alice, "read");
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/scheduled_statuses/${body.id}`, {
            token: readOnly,
            json: { scheduled_at: inMinutes(200) },
          })
        ).statusCode,
        403,
      );
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/scheduled_statuses/${body.id}`, { token: readOnly })).statusCode,
        403,
      );
    });

    describeAuth("GET /api/v1/scheduled_statuses", () => server, {
      scope: "read:statuses",
      send: (_, token) => get(server.app, "/api/v1/scheduled_statuses", token),
    });
    describeAuth("GET /api/v1/scheduled_statuses/:id", () => server, {
      scope: "read:statuses",
      send: async (_, token, owner) => {
        const { id } = await schedule(owner, { status: "to read" });
        return get(server.app, `/api/v1/scheduled_statuses/${id}`, token);
      },
    });
    describeAuth("PUT /api/v1/scheduled_statuses/:id", () => server, {
      scope: "write:statuses",
      send: async (_, token, owner) => {
        const { id } = await schedule(owner, { status: "to move" });
        const json = { scheduled_at: inMinutes(300) };
        return request(server.app, "PUT", `/api/v1/scheduled_statuses/${id}`, { token, json });
      },
    });
    describeAuth("DELETE /api/v1/scheduled_statuses/:id", () => server, {
      scope: "write:statuses",
      send: async (_, token, owner) => {
        const { id } = await schedule(owner, { status: "to cancel" });
        return request(server.app, "DELETE", `/api/v1/scheduled_statuses/${id}`, { token });
      },
    });
  });

  describe("media while scheduled", () => {
    test("are reserved for the scheduled status and released when it is cancelled", async () => {
      const m1 = await upload(a.carol);
      const m2 = await upload(a.carol);
      const body = await schedule(a.carol, { status: "with media", media_ids: [m2, m1] });
      assert.deepEqual(body.params.media_ids, [m2, m1]);
      assert.deepEqual(
        body.media_attachments.map((m) => m.id),
        [m2, m1],
      );
      assert.equal((await get(server.app, `/api/v1/media/${m1}`, a.carol.token)).statusCode, 404);
      assert.equal((await post(a.carol, { status: "steal", media_ids: [m1] })).statusCode, 422);
      assert.equal(
        (await post(a.carol, { status: "steal later", media_ids: [m1], scheduled_at: inMinutes(120) })).statusCode,
        422,
      );
      assert.deepEqual(errorOf(await request(server.app, "DELETE", `/api/v1/media/${m1}`, { token: a.carol.token })), [
        422,
        "Media attachment is currently used by a status",
      ]);
      await request(server.app, "DELETE", `/api/v1/scheduled_statuses/${body.id}`, { token: a.carol.token });
      assert.equal((await get(server.app, `/api/v1/media/${m1}`, a.carol.token)).statusCode, 200);
      assert.equal((await post(a.carol, { status: "now free", media_ids: [m1, m2] })).statusCode, 200);
    });
  });

  describe("publishing", () => {
    test("the job posts it once, at its time, with its media, poll and settings", async () => {
      const user = await createUser(server.ctx, "publisher");
      const media = await upload(user);
      const at = inMinutes(10);
      const body = await schedule(user, {
        status: "Scheduled #hello @bob",
        scheduled_at: at,
        media_ids: [media],
        visibility: "unlisted",
        spoiler_text: "later",
        language: "de",
      });
      const polled = await schedule(user, {
        status: "Scheduled poll",
        scheduled_at: at,
        poll: { options: ["yes", "no"], expires_in: 3600, multiple: true },
      });
      const jobs = await server.ctx.db.kysely
        .selectFrom("jobs")
        .selectAll()
        .where("name", "=", "scheduled_statuses.publish")
        .where("payload", "like", `%${body.id}%`)
        .execute();
      assert.equal(jobs.length, 1);
      assert.equal(jobs[0].run_at, at);

      await server.ctx.jobs.drain();
      assert.deepEqual(await statusRows(user), [], "not before its time");
      await later(4 * MINUTE, () => server.ctx.jobs.drain());
      assert.deepEqual(await statusRows(user), [], "not four minutes later either");

      await later(11 * MINUTE, () => server.ctx.jobs.drain());
      const rows = await statusRows(user);
      assert.equal(rows.length, 2);
      const published = rows.find((r) => r.text === "Scheduled #hello @bob")!;
      const status = (await get(server.app, `/api/v1/statuses/${published.id}`, user.token)).json<Status>();
      assert.equal(status.visibility, "unlisted");
      assert.equal(status.spoiler_text, "later");
      assert.equal(status.sensitive, true);
      assert.equal(status.language, "de");
      assert.deepEqual(
        status.media_attachments.map((m) => m.id),
        [media],
      );
      assert.deepEqual(
        status.mentions.map((m) => m.acct),
        ["bob"],
      );
      assert.deepEqual(
        status.tags.map((t) => t.name),
        ["hello"],
      );
      assert.deepEqual(status.application, { name: "Test Client", website: "https://client.example" });
      const withPoll = rows.find((r) => r.text === "Scheduled poll")!;
      const pollStatus = (await get(server.app, `/api/v1/statuses/${withPoll.id}`)).json<Status>();
      assert.deepEqual(
        pollStatus.poll?.options.map((o) => o.title),
        ["yes", "no"],
      );
      assert.equal(pollStatus.poll?.multiple, true);
      assert.ok(
        Date.parse(String(pollStatus.poll?.expires_at)) > Date.parse(at) + 3600_000 - MINUTE,
        "the poll runs from the publication",
      );

      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, user.token)).statusCode, 404);
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${polled.id}`, user.token)).statusCode, 404);
      assert.equal(await statusesCount(user), 2);
      // Running the queue again publishes nothing more.
      await later(20 * MINUTE, () => server.ctx.jobs.drain());
      assert.equal((await statusRows(user)).length, 2);
    });

    test("two workers publishing at once make one status", async () => {
      const user = await createUser(server.ctx, "two_workers");
      const media = await upload(user);
      const body = await schedule(user, { status: "exactly once", media_ids: [media], scheduled_at: inMinutes(10) });
      const due = Date.now() + 11 * MINUTE;
      const outcomes = await Promise.all([
        publishScheduledStatus(server.ctx, body.id, due),
        publishScheduledStatus(server.ctx, body.id, due),
      ]);
      // The loser finds the row gone, or (PostgreSQL, when the winner committed first) its media taken and reports "dropped".
      assert.equal(outcomes.filter((o) => o === "published").length, 1, outcomes.join());
      assert.ok(
        outcomes.every((o) => o === "published" || o === "gone" || o === "dropped"),
        outcomes.join(),
      );
      const rows = await statusRows(user);
      assert.equal(rows.length, 1);
      assert.deepEqual(JSON.parse(rows[0].ordered_media_attachment_ids!), [media]);
      assert.equal(await publishScheduledStatus(server.ctx, body.id, due), "gone");
      assert.equal((await statusRows(user)).length, 1);
    });

    test("publishScheduledStatus does nothing before the time", async () => {
      const user = await createUser(server.ctx, "early");
      const body = await schedule(user, { status: "not yet", scheduled_at: inMinutes(30) });
      assert.equal(await publishScheduledStatus(server.ctx, body.id), "not-due");
      assert.deepEqual(await statusRows(user), []);
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, user.token)).statusCode, 200);
    });

    test("a rescheduled status is published at its new time only", async () => {
      const user = await createUser(server.ctx, "rescheduled");
      const body = await schedule(user, { status: "moved", scheduled_at: inMinutes(10) });
      const res = await request(server.app, "PUT", `/api/v1/scheduled_statuses/${body.id}`, {
        token: user.token,
        json: { scheduled_at: inMinutes(60) },
      });
      assert.equal(res.statusCode, 200);
      await later(15 * MINUTE, () => server.ctx.jobs.drain());
      assert.deepEqual(await statusRows(user), [], "the old time has no effect");
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, user.token)).statusCode, 200);
      await later(61 * MINUTE, () => server.ctx.jobs.drain());
      assert.equal((await statusRows(user)).length, 1);
    });

    test("a post whose reply target vanished is dropped and its media released", async () => {
      const user = await createUser(server.ctx, "dropped");
      const parent = (await post(a.alice, { status: "parent" })).json<Status>();
      const media = await upload(user);
      const body = await schedule(user, {
        status: "reply",
        in_reply_to_id: parent.id,
        media_ids: [media],
        scheduled_at: inMinutes(10),
      });
      assert.equal(body.params.in_reply_to_id, parent.id);
      await request(server.app, "DELETE", `/api/v1/statuses/${parent.id}`, { token: a.alice.token });
      assert.equal(await publishScheduledStatus(server.ctx, body.id, Date.now() + 11 * MINUTE), "dropped");
      assert.deepEqual(await statusRows(user), []);
      assert.equal((await get(server.app, `/api/v1/scheduled_statuses/${body.id}`, user.token)).statusCode, 404);
      assert.equal((await get(server.app, `/api/v1/media/${media}`, user.token)).statusCode, 200);
    });
  });

  describe("limits", () => {
    const insertScheduled = async (user: TestUser, times: string[]) => {
      const now = new Date().toISOString();
      const rows = times.map((at) => ({
        id: newId(),
        account_id: user.account.id,
        scheduled_at: at,
        params: JSON.stringify({ text: "filler" }),
        created_at: now,
      }));
      await server.ctx.db.kysely.insertInto("scheduled_statuses").values(rows).execute();
    };
    const day = (daysAhead: number, hour: number) => {
      const d = new Date(Date.now() + daysAhead * 86_400_000);
      d.setUTCHours(hour, 0, 0, 0);
      return d;
    };

    test("25 per day", async () => {
      const user = await createUser(server.ctx, "daily_limit");
      await insertScheduled(
        user,
        Array.from({ length: 24 }, (_, i) => new Date(day(3, 1).getTime() + i * MINUTE).toISOString()),
      );
      assert.equal((await post(user, { status: "25th", scheduled_at: day(3, 12).toISOString() })).statusCode, 200);
      assert.deepEqual(errorOf(await post(user, { status: "26th", scheduled_at: day(3, 18).toISOString() })), [
        422,
        "Validation failed: You have exceeded the limit of 25 scheduled posts for today",
      ]);
      assert.equal((await post(user, { status: "next day", scheduled_at: day(4, 12).toISOString() })).statusCode, 200);
    });

    test("300 in all", async () => {
      const user = await createUser(server.ctx, "total_limit");
      await insertScheduled(
        user,
        Array.from({ length: 300 }, (_, i) =>
          new Date(day(10 + Math.floor(i / 20), 1).getTime() + (i % 20) * MINUTE).toISOString(),
        ),
      );
      assert.deepEqual(errorOf(await post(user, { status: "301st", scheduled_at: day(2, 12).toISOString() })), [
        422,
        "Validation failed: You have exceeded the limit of 300 scheduled posts",
      ]);
    });
  });
});
