/**
 * The dashboard's numbers: POST /api/v1/admin/measures, /dimensions and /retention. Each key from
 * real rows (users, activity days, favourites, replies, reports, hashtags, a remote server's
 * accounts, posts, follows and media), one value per day of the window, unknown keys left out, the
 * parameters some keys need (IDs also as JSON numbers), 400 without a window or a needed
 * parameter, 404 for an unknown hashtag, 422 for a window too long, and the refusals: no token, a
 * user without View Dashboard, a token outside `admin:read`. Shapes as the OpenAPI description.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  OUTSIDE_SCOPES,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

const NOT_ALLOWED = "This action is not allowed";
const NOT_FOUND = "Record not found";
const missing = (name: string) => `param is missing or the value is empty or invalid: ${name}`;
const DAY = 86_400_000;

interface MeasureJson {
  key: string;
  unit: string | null;
  total: string;
  human_value?: string;
  previous_total?: string;
  data: Array<{ date: string; value: string }>;
}
interface DimensionJson {
  key: string;
  data: Array<{ key: string; human_key: string; value: string; unit?: string; human_value?: string }>;
}
interface CohortJson {
  period: string;
  frequency: string;
  data: Array<{ date: string; rate: number; value: string }>;
}

const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);

describe("admin measures, dimensions and retention", () => {
  let server: TestServer;
  let moderator: TestUser;
  let token: string;
  let alice: TestUser;
  let bob: TestUser;
  let tagId: string;
  const today = dayOf(Date.now());
  const weekAgo = dayOf(Date.now() - 6 * DAY);

  before(async () => {
    server = await createTestServer();
    moderator = await createUser(server.ctx, "dashmod", { role: "Moderator" });
    token = await tokenFor(server.ctx, moderator, "admin:read");
    alice = await createUser(server.ctx, "dashalice");
    bob = await createUser(server.ctx, "dashbob");
    const db = server.ctx.db.kysely;
    await db.updateTable("users").set({ locale: "en" }).where("id", "in", [alice.user.id, bob.user.id]).execute();
    // Users seen today (alice, bob and the moderator as it asks), alice also yesterday.
    await get(server.app, "/api/v1/accounts/verify_credentials", alice.token);
    await get(server.app, "/api/v1/accounts/verify_credentials", bob.token);
    await db
      .insertInto("user_activity_days")
      .values({ user_id: alice.user.id, day: dayOf(Date.now() - DAY) })
      .onConflict((oc) => oc.doNothing())
      .execute();
    // Interactions: a favourite and a reply by local accounts; a hashtag used by both.
    const post = await postStatus(server, alice, { status: "#DashTag hello", language: "en" });
    await postStatus(server, bob, { status: "#dashtag reply", in_reply_to_id: post.id, language: "de" });
    await request(server.app, "POST", `/api/v1/statuses/${post.id}/favourite`, { token: bob.token });
    tagId = (await db.selectFrom("tags").select("id").where("name", "=", "DashTag").executeTakeFirstOrThrow()).id;
    // Reports: two opened today, one of them resolved.
    const rita = await createRemoteAccount(server.ctx, "rita", "remote.example");
    const now = new Date().toISOString();
    for (const resolved of [false, true])
      await db
        .insertInto("reports")
        .values({
          id: newId(),
          account_id: alice.account.id,
          target_account_id: rita.id,
          action_taken_at: resolved ? now : null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    // remote.example: an account with a post, a follower here, and a 1500-byte image.
    await db
      .insertInto("statuses")
      .values({
        id: newId(),
        uri: "https://remote.example/s/1",
        account_id: rita.id,
        text: "",
        content: "<p>hallo</p>",
        visibility: "public",
        language: "de",
        local: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto("follows")
      .values({
        id: newId(),
        account_id: alice.account.id,
        target_account_id: rita.id,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto("media_attachments")
      .values({ id: newId(), account_id: rita.id, type: "image", file_size: 1500, created_at: now, updated_at: now })
      .execute();
  });
  after(() => server.close());

  const call = (path: string, json: unknown, auth: string | undefined = token) =>
    request(server.app, "POST", `/api/v1/admin/${path}`, { token: auth, json });
  const measuresOf = async (json: Record<string, unknown>) => {
    const res = await call("measures", { start_at: weekAgo, end_at: today, ...json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as MeasureJson[];
  };
  const one = async (key: string, extra: Record<string, unknown> = {}) => {
    const [measure] = await measuresOf({ keys: [key], ...extra });
    assert.equal(measure?.key, key);
    return measure!;
  };
  const todays = (measure: MeasureJson) => measure.data[measure.data.length - 1]!.value;
  const seenToday = async () =>
    (await server.ctx.db.kysely.selectFrom("user_activity_days").select("user_id").where("day", "=", today).execute())
      .length;
  /** A body with the hashtag's ID as a bare JSON number (64 bits: JSON.stringify would round it). */
  const withNumericId = (key: string, path = "measures") =>
    request(server.app, "POST", `/api/v1/admin/${path}`, {
      token,
      headers: { "content-type": "application/json" },
      body: `{"keys":["${key}"],"start_at":"${weekAgo}","end_at":"${today}","${key}":{"id":${tagId}}}`,
    });
  const dimensionOf = async (key: string, extra: Record<string, unknown> = {}) => {
    const res = await call("dimensions", { keys: [key], start_at: weekAgo, end_at: today, ...extra });
    assert.equal(res.statusCode, 200, res.body);
    const [dimension] = res.json() as DimensionJson[];
    assert.equal(dimension?.key, key);
    return dimension!;
  };

  test("a measure has one value a day of the window, with totals", async () => {
    const measure = await one("new_users");
    assert.equal(measure.data.length, 7);
    assert.equal(measure.data[0]!.date, `${weekAgo}T00:00:00.000Z`);
    assert.equal(measure.data[6]!.date, `${today}T00:00:00.000Z`);
    const users = await server.ctx.db.kysely.selectFrom("users").select("id").execute();
    assert.equal(todays(measure), String(users.length));
    assert.equal(measure.total, String(users.length));
    assert.equal(measure.previous_total, "0");
    assert.equal(measure.unit, null);
  });

  test("active_users counts users seen each day, and each once in the total", async () => {
    const measure = await one("active_users");
    const seen = await seenToday();
    assert.ok(seen >= 2);
    assert.equal(todays(measure), String(seen));
    assert.equal(measure.data[5]!.value, "1");
    assert.equal(measure.total, String(seen));
  });

  test("interactions, opened and resolved reports", async () => {
    assert.equal(todays(await one("interactions")), "2");
    assert.equal((await one("opened_reports")).total, "2");
    assert.equal((await one("resolved_reports")).total, "1");
  });

  test("hashtag measures take the hashtag's ID, as a string or a JSON number", async () => {
    const uses = await one("tag_uses", { tag_uses: { id: tagId } });
    assert.deepEqual([uses.total, todays(uses)], ["2", "2"]);
    const res = await withNumericId("tag_accounts");
    assert.equal(res.statusCode, 200, res.body);
    const [accounts] = res.json() as MeasureJson[];
    assert.deepEqual([accounts!.total, todays(accounts!)], ["2", "2"]);
    // Only other servers count: both posts are local.
    assert.equal((await one("tag_servers", { tag_servers: { id: tagId } })).total, "0");
    assert.deepEqual(errorOf(await call("measures", { keys: ["tag_uses"], start_at: today, end_at: today })), [
      400,
      missing("tag_uses"),
    ]);
    assert.deepEqual(
      errorOf(
        await call("measures", { keys: ["tag_uses"], start_at: today, end_at: today, tag_uses: { id: newId() } }),
      ),
      [404, NOT_FOUND],
    );
  });

  test("a server's measures: all-time totals, no previous total", async () => {
    const domain = { domain: "remote.example" };
    const expected: Record<string, string> = {
      instance_accounts: "1",
      instance_statuses: "1",
      instance_reports: "2",
      instance_follows: "1",
      instance_followers: "0",
      instance_media_attachments: "1500",
    };
    for (const [key, total] of Object.entries(expected)) {
      const measure = await one(key, { [key]: domain });
      assert.equal(measure.total, total, key);
      assert.equal(measure.previous_total, undefined, key);
      assert.equal(todays(measure), total, key);
    }
    const media = await one("instance_media_attachments", { instance_media_attachments: domain });
    assert.deepEqual([media.unit, media.human_value], ["bytes", "1.46 KB"]);
    assert.equal((await one("instance_accounts", { instance_accounts: { domain: "nowhere.example" } })).total, "0");
    assert.deepEqual(errorOf(await call("measures", { keys: ["instance_accounts"], start_at: today, end_at: today })), [
      400,
      missing("instance_accounts"),
    ]);
  });

  test("several keys at once, in the order asked; unknown keys are left out", async () => {
    const rows = await measuresOf({ keys: ["opened_reports", "bogus", "new_users"] });
    assert.deepEqual(
      rows.map((m) => m.key),
      ["opened_reports", "new_users"],
    );
    assert.deepEqual(await measuresOf({}), []);
    // Form-encoded, as Mastodon's web dashboard sends it.
    const res = await request(server.app, "POST", "/api/v1/admin/measures", {
      token,
      form: [
        ["keys[]", "new_users"],
        ["start_at", today],
        ["end_at", today],
      ],
    });
    assert.equal((res.json() as MeasureJson[])[0]!.data.length, 1);
  });

  test("the window: required, readable, at most 400 days; an inverted one is empty", async () => {
    assert.deepEqual(errorOf(await call("measures", { keys: ["new_users"], end_at: today })), [
      400,
      missing("start_at"),
    ]);
    assert.deepEqual(errorOf(await call("measures", { keys: ["new_users"], start_at: today })), [
      400,
      missing("end_at"),
    ]);
    assert.deepEqual(errorOf(await call("dimensions", { start_at: "yesterday", end_at: today })), [
      400,
      missing("start_at"),
    ]);
    assert.deepEqual(errorOf(await call("retention", { start_at: "2000-01-01", end_at: today })), [
      422,
      "Validation failed: The period is too long (maximum is 400 days)",
    ]);
    const inverted = (await (
      await call("measures", { keys: ["new_users"], start_at: today, end_at: weekAgo })
    ).json()) as MeasureJson[];
    assert.deepEqual(inverted[0]!.data, []);
  });

  test("dimensions from real rows", async () => {
    assert.deepEqual((await dimensionOf("languages")).data, [{ key: "en", human_key: "English", value: "2" }]);
    const sources = await dimensionOf("sources");
    assert.equal(
      sources.data.reduce((n, d) => n + Number(d.value), 0),
      3,
    );
    const servers = await dimensionOf("servers");
    assert.deepEqual(
      servers.data.map((d) => [d.key, d.value]),
      [
        [server.ctx.config.localDomain, "2"],
        ["remote.example", "1"],
      ],
    );
    assert.deepEqual(
      (await dimensionOf("servers", { limit: 1 })).data.map((d) => d.key),
      [server.ctx.config.localDomain],
    );
    const space = await dimensionOf("space_usage");
    assert.deepEqual(
      space.data.map((d) => [d.key, d.unit]),
      [
        [server.ctx.db.engine === "postgres" ? "postgresql" : "sqlite", "bytes"],
        ["media", "bytes"],
      ],
    );
    assert.equal(space.data[1]!.value, "1500");
    assert.ok(Number(space.data[0]!.value) > 0);
    const versions = await dimensionOf("software_versions");
    assert.deepEqual(
      versions.data.map((d) => d.key),
      ["mastodon", "rookery", "nodejs", server.ctx.db.engine === "postgres" ? "postgresql" : "sqlite"],
    );
    const languages = await withNumericId("tag_languages", "dimensions");
    assert.equal(languages.statusCode, 200, languages.body);
    assert.deepEqual((languages.json() as DimensionJson[])[0]!.data.map((d) => [d.key, d.value]).sort(), [
      ["de", "1"],
      ["en", "1"],
    ]);
    assert.deepEqual(
      (await dimensionOf("tag_servers", { tag_servers: { id: tagId } })).data.map((d) => [d.key, d.value]),
      [[server.ctx.config.localDomain, "2"]],
    );
    assert.deepEqual(
      (await dimensionOf("instance_accounts", { instance_accounts: { domain: "remote.example" } })).data,
      [{ key: "rita", human_key: "rita", value: "1" }],
    );
    assert.deepEqual(
      (await dimensionOf("instance_languages", { instance_languages: { domain: "remote.example" } })).data,
      [{ key: "de", human_key: "German", value: "1" }],
    );
    assert.deepEqual(errorOf(await call("dimensions", { keys: ["tag_servers"], start_at: today, end_at: today })), [
      400,
      missing("tag_servers"),
    ]);
    assert.deepEqual(
      errorOf(
        await call("dimensions", {
          keys: ["tag_languages"],
          start_at: today,
          end_at: today,
          tag_languages: { id: "x" },
        }),
      ),
      [404, NOT_FOUND],
    );
  });

  test("retention: cohorts of sign-ups by day or by month", async () => {
    const res = await call("retention", { start_at: weekAgo, end_at: today, frequency: "day" });
    assert.equal(res.statusCode, 200, res.body);
    const cohorts = res.json() as CohortJson[];
    assert.equal(cohorts.length, 7);
    assert.deepEqual(
      cohorts.map((c) => c.data.length),
      [7, 6, 5, 4, 3, 2, 1],
    );
    const last = cohorts[6]!;
    const users = await server.ctx.db.kysely.selectFrom("users").select("id").execute();
    assert.equal(last.period, `${today}T00:00:00.000Z`);
    // Everyone signed up today; the users seen today are retained.
    const seen = await seenToday();
    assert.deepEqual(last.data, [{ date: `${today}T00:00:00.000Z`, rate: seen / users.length, value: String(seen) }]);
    assert.equal(cohorts[0]!.data[0]!.value, "0");
    assert.equal(cohorts[0]!.data[0]!.rate, 0);
    const months = (await (
      await call("retention", { start_at: today, end_at: today, frequency: "month" })
    ).json()) as CohortJson[];
    assert.equal(months.length, 1);
    assert.equal(months[0]!.frequency, "month");
    assert.equal(months[0]!.period, `${today.slice(0, 7)}-01T00:00:00.000Z`);
    const fallback = (await (
      await call("retention", { start_at: today, end_at: today, frequency: "year" })
    ).json()) as CohortJson[];
    assert.equal(fallback[0]!.frequency, "day");
  });

  test("shapes match the OpenAPI description", { skip: openApiSkip }, async () => {
    const all = await measuresOf({
      keys: ["active_users", "new_users", "instance_media_attachments"],
      instance_media_attachments: { domain: "remote.example" },
    });
    for (const measure of all) assert.deepEqual(validateSchema("AdminMeasure", measure), []);
    for (const key of ["languages", "sources", "servers", "space_usage", "software_versions"])
      assert.deepEqual(validateSchema("AdminDimension", await dimensionOf(key)), []);
    const cohorts = (await (await call("retention", { start_at: weekAgo, end_at: today })).json()) as CohortJson[];
    for (const cohort of cohorts) assert.deepEqual(validateSchema("AdminCohort", cohort), []);
  });

  test("refusals: no token, no View Dashboard, outside admin:read", async () => {
    const body = { keys: ["new_users"], start_at: today, end_at: today };
    const noRole = await tokenFor(server.ctx, alice, "admin:read");
    const wrongScope = await tokenFor(server.ctx, moderator, "admin:write admin:read:accounts");
    for (const path of ["measures", "dimensions", "retention"]) {
      assert.deepEqual(errorOf(await call(path, body, "")), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await call(path, body, noRole)), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await call(path, body, wrongScope)), [403, OUTSIDE_SCOPES]);
    }
  });
});
