import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, beforeEach, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import type { Ctx } from "../../src/context.ts";
import { newId } from "../../src/db/ids.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  appToken,
  createCustomEmoji,
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  request,
  standardAccounts,
  tokenFor,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import { openApiSkip, validateResponse, validateSchema } from "../openapi.ts";

const PACKAGE_VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;
const DAY_MS = 86_400_000;
const WEEK_S = 7 * 86_400;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Every public instance endpoint (and custom emoji), for the header and access-mode tests. */
const PUBLIC_INSTANCE_PATHS = [
  "/api/v2/instance",
  "/api/v1/instance",
  "/api/v1/instance/rules",
  "/api/v1/instance/extended_description",
  "/api/v1/instance/translation_languages",
  "/api/v1/instance/languages",
  "/api/v1/custom_emojis",
];

interface StatusOptions {
  local?: boolean;
  deleted?: boolean;
  createdAt?: Date;
  visibility?: "public" | "unlisted" | "private" | "direct";
}

/** Stores a status row directly (the statuses API is not what these tests are about). */
async function insertStatus(ctx: Ctx, accountId: string, options: StatusOptions = {}): Promise<string> {
  const created = options.createdAt ?? new Date();
  const id = newId(created.getTime());
  const local = options.local ?? true;
  await ctx.db.kysely
    .insertInto("statuses")
    .values({
      id,
      uri: local ? `https://rookery.test/users/x/statuses/${id}` : `https://remote.example/statuses/${id}`,
      account_id: accountId,
      text: "hello",
      content: "<p>hello</p>",
      visibility: options.visibility ?? "public",
      local,
      deleted_at: options.deleted ? new Date().toISOString() : null,
      created_at: created.toISOString(),
      updated_at: created.toISOString(),
    })
    .execute();
  return id;
}

async function resetSettings(ctx: Ctx): Promise<void> {
  await ctx.db.kysely.deleteFrom("instance_settings").execute();
}

/** A user-activity row (what a token use records), dated `daysAgo` days back. */
async function recordActivity(ctx: Ctx, userId: string, daysAgo: number): Promise<void> {
  const day = new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);
  await ctx.db.kysely
    .insertInto("user_activity_days")
    .values({ user_id: userId, day })
    .onConflict((oc) => oc.columns(["user_id", "day"]).doNothing())
    .execute();
}

interface Week {
  week: string;
  statuses: string;
  logins: string;
  registrations: string;
}

/** The activity entry whose week holds `at`. */
function weekHolding(weeks: Week[], at: Date): Week {
  const seconds = at.getTime() / 1000;
  const found = weeks.find((w) => Number(w.week) <= seconds && seconds < Number(w.week) + WEEK_S);
  assert.ok(found, `no activity week holds ${at.toISOString()}`);
  return found;
}

function assertPng(res: LightMyRequestResponse, width: number, height: number): void {
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers["content-type"], "image/png");
  const body = res.rawPayload;
  assert.deepEqual(body.subarray(0, 8), PNG_SIGNATURE);
  assert.equal(body.subarray(12, 16).toString("ascii"), "IHDR");
  assert.deepEqual([body.readUInt32BE(16), body.readUInt32BE(20)], [width, height]);
  assert.equal(body.subarray(-8, -4).toString("ascii"), "IEND");
}

describe("instance metadata", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());
  beforeEach(() => resetSettings(server.ctx));

  describe("GET /api/v2/instance", () => {
    test("describes the server with its defaults", async () => {
      const res = await get(server.app, "/api/v2/instance");
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      const body = res.json();
      assert.equal(body.domain, "rookery.test");
      assert.equal(body.title, "Rookery");
      assert.equal(body.description, "");
      assert.equal(body.source_url, "https://github.com/rookery-social/rookery");
      assert.deepEqual(body.languages, ["en"]);
      assert.deepEqual(body.thumbnail, { url: "https://rookery.test/preview.png" });
      assert.deepEqual(body.icon, []);
      assert.deepEqual(body.contact, { email: "", account: null });
      assert.deepEqual(body.rules, []);
      assert.deepEqual(body.configuration.translation, { enabled: false });
      assert.equal(body.configuration.limited_federation, false);
      const everyonePublic = { local: "public", remote: "public" };
      assert.deepEqual(body.configuration.timelines_access, {
        live_feeds: everyonePublic,
        hashtag_feeds: everyonePublic,
        trending_link_feeds: everyonePublic,
      });
    });

    test("reports a Mastodon-compatible version and api_versions", async () => {
      const body = (await get(server.app, "/api/v2/instance")).json();
      const match = /^(\d+)\.(\d+)\.(\d+) \(compatible; Rookery (\S+)\)$/.exec(body.version);
      assert.ok(match, `version ${JSON.stringify(body.version)} is not "X.Y.Z (compatible; Rookery a.b.c)"`);
      assert.equal(match[4], PACKAGE_VERSION);
      // Clients read the version's leading semver (Ice Cubes parses its first three characters as a number).
      assert.ok(Number(match[1]) >= 4, "the v2 instance API exists since Mastodon 4.0");
      assert.ok(Number.parseFloat(body.version.slice(0, 3)) >= 4);
      // Level 1 until grouped notifications (level 2) are implemented: clients gate features on it.
      assert.deepEqual(body.api_versions, { mastodon: 2 });
      assert.equal((await get(server.app, "/api/v1/instance")).json().version, body.version);
    });

    test("advertises the limits the server enforces", async () => {
      const { configuration } = (await get(server.app, "/api/v2/instance")).json();
      assert.deepEqual(configuration.urls, { streaming: "wss://rookery.test", status: null });
      assert.deepEqual(configuration.statuses, {
        max_characters: 500,
        max_media_attachments: 4,
        characters_reserved_per_url: 23,
      });
      assert.deepEqual(configuration.polls, {
        max_options: 4,
        max_characters_per_option: 50,
        min_expiration: 300,
        max_expiration: 2_629_746,
      });
      assert.deepEqual(configuration.accounts, {
        max_display_name_length: 30,
        max_note_length: 500,
        max_avatar_description_length: 150,
        max_header_description_length: 150,
        max_featured_tags: 10,
        max_pinned_statuses: 5,
        max_profile_fields: 4,
        profile_field_name_limit: 255,
        profile_field_value_limit: 255,
      });
      const media = configuration.media_attachments;
      assert.equal(media.description_limit, 1500);
      assert.equal(media.image_size_limit, 16 * 1024 * 1024);
      assert.equal(media.image_matrix_limit, 7680 * 4320);
      assert.equal(media.video_size_limit, 99 * 1024 * 1024);
      assert.equal(media.video_matrix_limit, 3840 * 2160);
      assert.equal(media.video_frame_rate_limit, 120);
      for (const type of ["image/jpeg", "image/png", "image/gif", "image/webp"])
        assert.ok(media.supported_mime_types.includes(type), type);
      assert.ok(
        media.supported_mime_types.every((t: unknown) => typeof t === "string" && /^[a-z]+\/[\w.+-]+$/.test(t)),
      );
    });

    test("matches the OpenAPI Instance schema", { skip: openApiSkip }, async () => {
      // The schema wants a well-formed e-mail address; Mastodon itself sends "" when none is set.
      await saveSetting(server.ctx.db.kysely, "site_contact_email", "admin@rookery.test");
      await saveSetting(server.ctx.db.kysely, "site_contact_username", "alice");
      await saveSetting(server.ctx.db.kysely, "rules", [{ text: "Be kind", hint: "" }]);
      const body = (await get(server.app, "/api/v2/instance")).json();
      assert.deepEqual(validateSchema("Instance", body), []);
      for (const rule of body.rules) assert.deepEqual(validateSchema("Rule", rule), []);
      assert.deepEqual(validateSchema("Account", body.contact.account), []);
    });

    test("registrations follow registrations_mode", async () => {
      const cases = [
        ["open", { enabled: true, approval_required: false, reason_required: false }],
        ["approved", { enabled: true, approval_required: true, reason_required: false }],
        ["none", { enabled: false, approval_required: false, reason_required: false }],
      ] as const;
      for (const [mode, expected] of cases) {
        await saveSetting(server.ctx.db.kysely, "registrations_mode", mode);
        const { registrations } = (await get(server.app, "/api/v2/instance")).json();
        assert.deepEqual(registrations, { ...expected, message: null, min_age: null, url: null }, mode);
        const v1 = (await get(server.app, "/api/v1/instance")).json();
        assert.equal(v1.registrations, expected.enabled, mode);
        assert.equal(v1.approval_required, expected.approval_required, mode);
        assert.equal(v1.invites_enabled, false, mode);
      }
    });

    test("approved registrations ask for a reason when require_invite_text is set", async () => {
      await saveSetting(server.ctx.db.kysely, "require_invite_text", true);
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "open");
      assert.equal((await get(server.app, "/api/v2/instance")).json().registrations.reason_required, false);
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "approved");
      assert.equal((await get(server.app, "/api/v2/instance")).json().registrations.reason_required, true);
    });

    test("closed registrations show the closed-registrations message as HTML", async () => {
      await saveSetting(
        server.ctx.db.kysely,
        "closed_registrations_message",
        "Closed for now.\n\nAsk <admin> & friends.",
      );
      assert.equal(
        (await get(server.app, "/api/v2/instance")).json().registrations.message,
        null,
        "open registrations carry no message",
      );
      await saveSetting(server.ctx.db.kysely, "registrations_mode", "none");
      assert.equal(
        (await get(server.app, "/api/v2/instance")).json().registrations.message,
        "<p>Closed for now.</p><p>Ask &lt;admin&gt; &amp; friends.</p>",
      );
    });

    test("shows the title, description, contact e-mail and contact account", async () => {
      await saveSetting(server.ctx.db.kysely, "site_title", "Birds of a Feather");
      await saveSetting(server.ctx.db.kysely, "site_short_description", "A server for birders.");
      await saveSetting(server.ctx.db.kysely, "site_contact_email", "admin@rookery.test");
      await saveSetting(server.ctx.db.kysely, "site_contact_username", "Alice");
      const body = (await get(server.app, "/api/v2/instance")).json();
      assert.equal(body.title, "Birds of a Feather");
      assert.equal(body.description, "A server for birders.");
      assert.equal(body.contact.email, "admin@rookery.test");
      assert.equal(body.contact.account.id, accounts.alice.account.id);
      assert.equal(body.contact.account.acct, "alice");
      assert.equal(body.contact.account.url, "https://rookery.test/@alice");
      const v1 = (await get(server.app, "/api/v1/instance")).json();
      assert.equal(v1.title, "Birds of a Feather");
      assert.equal(v1.short_description, "A server for birders.");
      assert.equal(v1.email, "admin@rookery.test");
      assert.equal(v1.contact_account.id, accounts.alice.account.id);
    });

    test("the contact account is local only: a remote username does not match", async () => {
      await saveSetting(server.ctx.db.kysely, "site_contact_username", "rita");
      assert.equal((await get(server.app, "/api/v2/instance")).json().contact.account, null);
      assert.equal((await get(server.app, "/api/v1/instance")).json().contact_account, null);
      await saveSetting(server.ctx.db.kysely, "site_contact_username", "nobody_here");
      assert.equal((await get(server.app, "/api/v2/instance")).json().contact.account, null);
    });

    test("lists the rules with string ids", async () => {
      await saveSetting(server.ctx.db.kysely, "rules", [
        { text: "Be kind", hint: "No harassment of any kind." },
        { text: "No spam", hint: "" },
      ]);
      const expected = [
        { id: "1", text: "Be kind", hint: "No harassment of any kind.", translations: {} },
        { id: "2", text: "No spam", hint: "", translations: {} },
      ];
      assert.deepEqual((await get(server.app, "/api/v2/instance")).json().rules, expected);
      assert.deepEqual((await get(server.app, "/api/v1/instance")).json().rules, expected);
    });

    test("timeline_preview off makes every feed authenticated-only", async () => {
      await saveSetting(server.ctx.db.kysely, "timeline_preview", false);
      const { timelines_access } = (await get(server.app, "/api/v2/instance")).json().configuration;
      const authenticated = { local: "authenticated", remote: "authenticated" };
      assert.deepEqual(timelines_access, {
        live_feeds: authenticated,
        hashtag_feeds: authenticated,
        trending_link_feeds: authenticated,
      });
    });

    test("a stored value that no longer parses falls back to the default", async () => {
      await server.ctx.db.kysely
        .insertInto("instance_settings")
        .values({ key: "site_title", value: "{not json", updated_at: new Date().toISOString() })
        .execute();
      assert.equal((await get(server.app, "/api/v2/instance")).json().title, "Rookery");
    });

    test("is public: no token, an unknown token, an app token and a user token all get it", async () => {
      for (const token of [undefined, "not-a-known-token", await appToken(server.ctx, "read"), accounts.bob.token]) {
        const res = await get(server.app, "/api/v2/instance", token);
        assert.equal(res.statusCode, 200, String(token));
        assert.equal(res.json().domain, "rookery.test");
      }
    });

    test("a revoked token is refused with 401", async () => {
      const token = await tokenFor(server.ctx, accounts.carol, "read:statuses");
      await server.ctx.db.kysely
        .updateTable("oauth_access_tokens")
        .set({ revoked_at: new Date().toISOString() })
        .where("user_id", "=", accounts.carol.user.id)
        .where("scopes", "=", "read:statuses")
        .execute();
      assert.deepEqual(errorOf(await get(server.app, "/api/v2/instance", token)), [
        401,
        "The access token was revoked",
      ]);
    });
  });

  describe("GET /api/v1/instance", () => {
    test("has the V1::Instance shape", async () => {
      const res = await get(server.app, "/api/v1/instance");
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.uri, "rookery.test");
      assert.equal(body.title, "Rookery");
      assert.equal(body.email, "");
      assert.deepEqual(body.urls, { streaming_api: "wss://rookery.test" });
      assert.equal(body.thumbnail, "https://rookery.test/preview.png");
      assert.deepEqual(body.languages, ["en"]);
      assert.equal(body.contact_account, null);
      assert.deepEqual(body.rules, []);
      for (const key of ["user_count", "status_count", "domain_count"])
        assert.ok(Number.isInteger(body.stats[key]), key);
    });

    test("its configuration repeats the v2 limits", async () => {
      const v1 = (await get(server.app, "/api/v1/instance")).json().configuration;
      const v2 = (await get(server.app, "/api/v2/instance")).json().configuration;
      assert.deepEqual(v1.accounts, { max_featured_tags: v2.accounts.max_featured_tags });
      assert.deepEqual(v1.statuses, v2.statuses);
      assert.deepEqual(v1.polls, v2.polls);
      const { description_limit: _, ...v2Media } = v2.media_attachments;
      assert.deepEqual(v1.media_attachments, v2Media);
    });

    test("matches the OpenAPI V1Instance schema", { skip: openApiSkip }, async () => {
      await saveSetting(server.ctx.db.kysely, "site_contact_email", "admin@rookery.test");
      await saveSetting(server.ctx.db.kysely, "site_contact_username", "alice");
      const body = (await get(server.app, "/api/v1/instance")).json();
      assert.equal(body.contact_account.id, accounts.alice.account.id);
      assert.deepEqual(validateSchema("V1Instance", body), []);
    });
  });

  describe("GET /api/v1/instance/rules", () => {
    test("is empty by default", async () => {
      const res = await get(server.app, "/api/v1/instance/rules");
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), []);
    });

    test("lists each rule with its id, text and hint", async () => {
      await saveSetting(server.ctx.db.kysely, "rules", [
        { text: "No hate speech", hint: "Includes slurs." },
        { text: "Mark sensitive media", hint: "" },
      ]);
      assert.deepEqual((await get(server.app, "/api/v1/instance/rules")).json(), [
        { id: "1", text: "No hate speech", hint: "Includes slurs.", translations: {} },
        { id: "2", text: "Mark sensitive media", hint: "", translations: {} },
      ]);
    });

    test("matches the OpenAPI response schema", { skip: openApiSkip }, async () => {
      await saveSetting(server.ctx.db.kysely, "rules", [{ text: "No hate speech", hint: "Includes slurs." }]);
      const body = (await get(server.app, "/api/v1/instance/rules")).json();
      assert.equal(body.length, 1);
      assert.deepEqual(validateResponse("get", "/api/v1/instance/rules", body), []);
      assert.deepEqual(validateSchema("Rule", body[0]), []);
    });
  });

  describe("GET /api/v1/instance/extended_description", () => {
    test("is null and empty when unset", async () => {
      const res = await get(server.app, "/api/v1/instance/extended_description");
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { updated_at: null, content: "" });
    });

    test("renders the text as HTML paragraphs, dated by its last change", async () => {
      const start = Date.now();
      await saveSetting(
        server.ctx.db.kysely,
        "site_extended_description",
        'Welcome to the rookery.\nMind the nests.\n\n<script>no</script> & "quotes"\r\n\r\n\r\nLast.',
      );
      const end = Date.now();
      const body = (await get(server.app, "/api/v1/instance/extended_description")).json();
      assert.equal(
        body.content,
        "<p>Welcome to the rookery.<br />Mind the nests.</p><p>&lt;script&gt;no&lt;/script&gt; &amp; &quot;quotes&quot;</p><p>Last.</p>",
      );
      const updated = Date.parse(body.updated_at);
      assert.ok(
        updated >= start - 1 && updated <= end + 1,
        `updated_at ${body.updated_at} is not the time of the change`,
      );
    });

    test("matches the OpenAPI ExtendedDescription schema once set", { skip: openApiSkip }, async () => {
      await saveSetting(server.ctx.db.kysely, "site_extended_description", "About us.");
      const body = (await get(server.app, "/api/v1/instance/extended_description")).json();
      assert.equal(body.content, "<p>About us.</p>");
      assert.deepEqual(validateSchema("ExtendedDescription", body), []);
    });
  });

  describe("other instance lists", () => {
    test("translation_languages is {} while translation is not configured", async () => {
      const res = await get(server.app, "/api/v1/instance/translation_languages");
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
    });

    test("custom_emojis is [] on a server without emoji", async () => {
      const res = await get(server.app, "/api/v1/custom_emojis");
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), []);
    });

    test("languages lists {code, name} pairs including English", async () => {
      const res = await get(server.app, "/api/v1/instance/languages");
      assert.equal(res.statusCode, 200);
      const body = res.json() as Array<{ code: string; name: string }>;
      assert.ok(body.length > 100, `only ${body.length} languages`);
      assert.deepEqual(
        body.find((l) => l.code === "en"),
        { code: "en", name: "English" },
      );
      assert.deepEqual(
        body.find((l) => l.code === "de"),
        { code: "de", name: "German" },
      );
      for (const language of body) {
        assert.deepEqual(Object.keys(language).sort(), ["code", "name"]);
        assert.match(language.code, /^[a-z]{2,3}$/);
        assert.ok(language.name.length > 0, language.code);
      }
      assert.equal(new Set(body.map((l) => l.code)).size, body.length, "codes are unique");
    });
  });

  describe("headers", () => {
    test("instance endpoints are publicly cacheable for 5 minutes, even when authenticated", async () => {
      for (const path of PUBLIC_INSTANCE_PATHS) {
        for (const token of [undefined, accounts.alice.token]) {
          const res = await get(server.app, path, token);
          assert.equal(res.statusCode, 200, path);
          const cacheControl = String(res.headers["cache-control"]);
          assert.match(cacheControl, /(^|, )public(,|$)/, `${path}: ${cacheControl}`);
          assert.match(cacheControl, /(^|, )max-age=300(,|$)/, `${path}: ${cacheControl}`);
        }
      }
    });

    test("CORS: any origin may read /api/v2/instance", async () => {
      const res = await request(server.app, "GET", "/api/v2/instance", { headers: { origin: "https://elk.example" } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.equal(res.headers["access-control-allow-credentials"], undefined);
      assert.match(String(res.headers["access-control-expose-headers"]), /\bLink\b/);
    });

    test("CORS: a preflight is answered with the allowed methods and headers", async () => {
      const res = await request(server.app, "OPTIONS", "/api/v2/instance", {
        headers: {
          origin: "https://elk.example",
          "access-control-request-method": "GET",
          "access-control-request-headers": "authorization, x-custom",
        },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers["access-control-allow-origin"], "*");
      const methods = String(res.headers["access-control-allow-methods"]).split(/,\s*/);
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        assert.ok(methods.includes(method), method);
      assert.equal(res.headers["access-control-allow-headers"], "authorization, x-custom");
    });
  });
});

describe("instance statistics", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("v1 stats count confirmed unsuspended local users, live local statuses and known domains", async () => {
    const initial = (await get(server.app, "/api/v1/instance")).json().stats;
    assert.deepEqual(initial, { user_count: 5, status_count: 0, domain_count: 1 });

    await createUser(server.ctx, "unconfirmed_user", { confirmed: false });
    const suspended = await createUser(server.ctx, "suspended_user");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.account.id)
      .execute();
    await createUser(server.ctx, "dave");

    for (let i = 0; i < 3; i++) await insertStatus(server.ctx, accounts.alice.account.id);
    await insertStatus(server.ctx, accounts.bob.account.id, { visibility: "unlisted" });
    await insertStatus(server.ctx, accounts.bob.account.id, { deleted: true });
    await insertStatus(server.ctx, accounts.rita.id, { local: false });

    await createRemoteAccount(server.ctx, "sam", "other.example");
    await createRemoteAccount(server.ctx, "tom", "other.example");
    await createRemoteAccount(server.ctx, "uma", "third.example");

    const final = (await get(server.app, "/api/v1/instance")).json().stats;
    assert.deepEqual(final, { user_count: 6, status_count: 4, domain_count: 3 });
  });

  describe("GET /api/v1/instance/peers", () => {
    test("is 404 when the admin turned it off", async () => {
      await saveSetting(server.ctx.db.kysely, "peers_api_enabled", false);
      try {
        assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/peers")), [404, "Not Found"]);
        assert.equal((await get(server.app, "/api/v1/instance/peers", accounts.alice.token)).statusCode, 404);
      } finally {
        await saveSetting(server.ctx.db.kysely, "peers_api_enabled", true);
      }
      assert.ok((await get(server.app, "/api/v1/instance/peers")).json().includes("remote.example"));
    });
  });

  describe("GET /api/v1/instance/activity", () => {
    test("has twelve weeks of string counters, newest first", async () => {
      const res = await get(server.app, "/api/v1/instance/activity");
      assert.equal(res.statusCode, 200);
      const weeks = res.json() as Week[];
      assert.equal(weeks.length, 12);
      for (const week of weeks) {
        assert.deepEqual(Object.keys(week).sort(), ["logins", "registrations", "statuses", "week"]);
        for (const value of Object.values(week)) assert.match(value, /^\d+$/, JSON.stringify(week));
      }
      const now = Date.now() / 1000;
      const first = Number(weeks[0].week);
      assert.ok(first <= now && now - first < WEEK_S, `the first week (${first}) does not hold now (${now})`);
      assert.equal(first % 86_400, 0, "weeks start at midnight UTC");
      for (let i = 1; i < weeks.length; i++) assert.equal(Number(weeks[i - 1].week) - Number(weeks[i].week), WEEK_S);
    });

    test("matches the OpenAPI response schema", { skip: openApiSkip }, async () => {
      const weeks = (await get(server.app, "/api/v1/instance/activity")).json();
      assert.equal(weeks.length, 12);
      assert.deepEqual(validateResponse("get", "/api/v1/instance/activity", weeks), []);
    });

    test("is 404 when the admin turned it off", async () => {
      await saveSetting(server.ctx.db.kysely, "activity_api_enabled", false);
      try {
        assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/activity")), [404, "Not Found"]);
        assert.equal((await get(server.app, "/api/v1/instance/activity", accounts.alice.token)).statusCode, 404);
      } finally {
        await saveSetting(server.ctx.db.kysely, "activity_api_enabled", true);
      }
      assert.equal((await get(server.app, "/api/v1/instance/activity")).json().length, 12);
    });
  });
});

describe("usage.users.active_month", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("counts users who used a token in the last 30 days", async () => {
    // Users created by the kit have not used their tokens yet.
    const activeMonth = async () => (await get(server.app, "/api/v2/instance")).json().usage.users.active_month;
    assert.equal(await activeMonth(), 0);
    // A token used on any request counts its user (this very request included).
    assert.equal((await get(server.app, "/api/v2/instance", accounts.alice.token)).json().usage.users.active_month, 1);
    await get(server.app, "/api/v1/accounts/verify_credentials", accounts.bob.token);
    await get(server.app, "/api/v1/accounts/verify_credentials", accounts.alice.token);
    assert.equal(await activeMonth(), 2);
    // App tokens have no user.
    await get(server.app, "/api/v1/instance", await appToken(server.ctx));
    assert.equal(await activeMonth(), 2);
    // Activity 20 days ago counts; 40 days ago does not.
    await recordActivity(server.ctx, accounts.carol.user.id, 20);
    await recordActivity(server.ctx, accounts.lucy.user.id, 40);
    assert.equal(await activeMonth(), 3);
  });
});

describe("GET /api/v1/instance/peers on a fresh server", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("lists the domains of known remote accounts, sorted and without duplicates", async () => {
    assert.deepEqual((await get(server.app, "/api/v1/instance/peers")).json(), []);
    await createUser(server.ctx, "local_only");
    for (const [username, domain] of [
      ["z", "zulu.example"],
      ["a", "alpha.example"],
      ["m", "mike.example"],
      ["a2", "alpha.example"],
      ["b", "bravo.example"],
    ]) {
      await createRemoteAccount(server.ctx, username, domain);
    }
    const res = await get(server.app, "/api/v1/instance/peers");
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), ["alpha.example", "bravo.example", "mike.example", "zulu.example"]);
    assert.match(String(res.headers["cache-control"]), /public/);
  });

  test("matches the OpenAPI response schema", { skip: openApiSkip }, async () => {
    const body = (await get(server.app, "/api/v1/instance/peers")).json();
    assert.ok(body.length > 0);
    assert.deepEqual(validateResponse("get", "/api/v1/instance/peers", body), []);
  });
});

describe("GET /api/v1/instance/activity counts", () => {
  let server: TestServer;
  let users: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    users = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("counts each week's local statuses, registrations and logins", async () => {
    const now = new Date();
    const tenDaysAgo = new Date(now.getTime() - 10 * DAY_MS);
    const fiftyDaysAgo = new Date(now.getTime() - 50 * DAY_MS);
    // Statuses: two local now, one remote, two local ten days ago, one older than the 12 weeks shown.
    await insertStatus(server.ctx, users.alice.account.id, { createdAt: now });
    await insertStatus(server.ctx, users.bob.account.id, { createdAt: now, visibility: "private" });
    await insertStatus(server.ctx, users.rita.id, { createdAt: now, local: false });
    await insertStatus(server.ctx, users.alice.account.id, { createdAt: tenDaysAgo });
    await insertStatus(server.ctx, users.carol.account.id, { createdAt: tenDaysAgo });
    await insertStatus(server.ctx, users.carol.account.id, { createdAt: new Date(now.getTime() - 100 * DAY_MS) });
    // Registrations: carol registered fifty days ago, the other four now.
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ created_at: fiftyDaysAgo.toISOString() })
      .where("id", "=", users.carol.user.id)
      .execute();
    // Logins: alice and bob use their tokens now (alice twice).
    await get(server.app, "/api/v1/accounts/verify_credentials", users.alice.token);
    await get(server.app, "/api/v1/accounts/verify_credentials", users.bob.token);
    await get(server.app, "/api/v1/accounts/verify_credentials", users.alice.token);

    let weeks = (await get(server.app, "/api/v1/instance/activity")).json() as Week[];
    const thisWeek = weekHolding(weeks, now);
    assert.equal(thisWeek, weeks[0], "the current week comes first");
    assert.deepEqual(
      { statuses: thisWeek.statuses, registrations: thisWeek.registrations, logins: thisWeek.logins },
      { statuses: "2", registrations: "4", logins: "2" },
    );
    const earlier = weekHolding(weeks, tenDaysAgo);
    assert.notEqual(earlier, thisWeek);
    assert.deepEqual(
      { statuses: earlier.statuses, registrations: earlier.registrations, logins: earlier.logins },
      { statuses: "2", registrations: "0", logins: "0" },
    );
    assert.equal(weekHolding(weeks, fiftyDaysAgo).registrations, "1");

    // Lucy was active on the first two days of that earlier week: one login for the week.
    const earlierStart = Number(earlier.week) * 1000;
    for (const offset of [0, 1]) {
      const day = new Date(earlierStart + offset * DAY_MS).toISOString().slice(0, 10);
      await server.ctx.db.kysely
        .insertInto("user_activity_days")
        .values({ user_id: users.lucy.user.id, day })
        .execute();
    }
    weeks = (await get(server.app, "/api/v1/instance/activity")).json() as Week[];
    assert.equal(weekHolding(weeks, tenDaysAgo).logins, "1", "a user active on two days of a week is one login");
    assert.equal(weeks[0].logins, "2");
    const total = (key: "statuses" | "registrations") => weeks.reduce((sum, w) => sum + Number(w[key]), 0);
    assert.equal(total("statuses"), 4, "remote statuses and statuses older than 12 weeks are not counted");
    assert.equal(total("registrations"), 5);
  });
});

describe("GET /api/v1/custom_emojis", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
    await createCustomEmoji(server, "blobcat", {
      imageFile: "custom_emojis/images/blobcat.png",
      imageStaticFile: "custom_emojis/static/blobcat.png",
      category: "Blobs",
    });
    await createCustomEmoji(server, "aaa_hidden", {
      imageFile: "custom_emojis/images/aaa_hidden.gif",
      visibleInPicker: false,
    });
    await createCustomEmoji(server, "gone", { imageFile: "custom_emojis/images/gone.png", disabled: true });
    await createCustomEmoji(server, "blobcat", {
      domain: "remote.example",
      imageRemoteUrl: "https://remote.example/emoji/blobcat.png",
    });
    await createCustomEmoji(server, "remote_only", {
      domain: "remote.example",
      imageRemoteUrl: "https://remote.example/emoji/remote_only.png",
    });
  });
  after(() => server.close());

  test("lists the enabled local emoji only", async () => {
    const res = await get(server.app, "/api/v1/custom_emojis");
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(body, [
      {
        shortcode: "aaa_hidden",
        url: "https://rookery.test/system/custom_emojis/images/aaa_hidden.gif",
        static_url: "https://rookery.test/system/custom_emojis/images/aaa_hidden.gif",
        visible_in_picker: false,
      },
      {
        shortcode: "blobcat",
        url: "https://rookery.test/system/custom_emojis/images/blobcat.png",
        static_url: "https://rookery.test/system/custom_emojis/static/blobcat.png",
        visible_in_picker: true,
        category: "Blobs",
      },
    ]);
    assert.ok(!("category" in body[0]), "category is absent, not null, when unset");
    assert.match(String(res.headers["cache-control"]), /public/);
  });

  test("matches the OpenAPI CustomEmoji schema", { skip: openApiSkip }, async () => {
    const body = (await get(server.app, "/api/v1/custom_emojis")).json();
    assert.equal(body.length, 2);
    for (const emoji of body) assert.deepEqual(validateSchema("CustomEmoji", emoji), [], emoji.shortcode);
    assert.deepEqual(validateResponse("get", "/api/v1/custom_emojis", body), []);
  });
});

describe("NodeInfo, health and default images", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());
  beforeEach(() => resetSettings(server.ctx));

  test("/.well-known/nodeinfo links the 2.0 and 2.1 documents", async () => {
    const res = await get(server.app, "/.well-known/nodeinfo");
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    assert.equal(res.headers["access-control-allow-origin"], "*");
    assert.deepEqual(res.json(), {
      links: [
        { rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: "https://rookery.test/nodeinfo/2.0" },
        { rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: "https://rookery.test/nodeinfo/2.1" },
      ],
    });
  });

  test("/nodeinfo/2.0 describes the software and its usage", async () => {
    await insertStatus(server.ctx, accounts.alice.account.id);
    await insertStatus(server.ctx, accounts.bob.account.id);
    await insertStatus(server.ctx, accounts.bob.account.id, { deleted: true });
    await insertStatus(server.ctx, accounts.rita.id, { local: false });
    await get(server.app, "/api/v1/accounts/verify_credentials", accounts.alice.token);
    await recordActivity(server.ctx, accounts.bob.user.id, 100);
    await saveSetting(server.ctx.db.kysely, "site_title", "Birds");
    await saveSetting(server.ctx.db.kysely, "site_short_description", "For birders.");

    const res = await get(server.app, "/nodeinfo/2.0");
    assert.equal(res.statusCode, 200);
    assert.equal(
      res.headers["content-type"],
      'application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.0#"; charset=utf-8',
    );
    assert.equal(res.headers["access-control-allow-origin"], "*");
    assert.deepEqual(res.json(), {
      version: "2.0",
      // 2.0's software object allows only name and version.
      software: { name: "rookery", version: PACKAGE_VERSION },
      protocols: ["activitypub"],
      services: { outbound: [], inbound: [] },
      usage: { users: { total: 5, activeMonth: 1, activeHalfyear: 2 }, localPosts: 2 },
      openRegistrations: true,
      metadata: { nodeName: "Birds", nodeDescription: "For birders." },
    });
  });

  test("/nodeinfo/2.1 adds the repository and homepage", async () => {
    const res = await get(server.app, "/nodeinfo/2.1");
    assert.equal(res.statusCode, 200);
    assert.equal(
      res.headers["content-type"],
      'application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"; charset=utf-8',
    );
    const body = res.json();
    assert.equal(body.version, "2.1");
    assert.deepEqual(body.software, {
      name: "rookery",
      version: PACKAGE_VERSION,
      repository: "https://github.com/rookery-social/rookery",
      homepage: "https://github.com/rookery-social/rookery",
    });
    assert.match(body.software.name, /^[a-z0-9-]+$/, "NodeInfo software names are lower-case");
    assert.equal(body.usage.users.total, 5);
  });

  test("openRegistrations follows registrations_mode", async () => {
    for (const [mode, open] of [
      ["open", true],
      ["approved", true],
      ["none", false],
    ] as const) {
      await saveSetting(server.ctx.db.kysely, "registrations_mode", mode);
      for (const version of ["2.0", "2.1"]) {
        assert.equal(
          (await get(server.app, `/nodeinfo/${version}`)).json().openRegistrations,
          open,
          `${mode} ${version}`,
        );
      }
    }
  });

  test("/health answers OK while the database does", async () => {
    const res = await get(server.app, "/health");
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, "OK");
    assert.match(String(res.headers["content-type"]), /^text\/plain/);
    assert.equal(res.headers["cache-control"], "no-store");
  });

  test("the default avatar, header and thumbnail are PNG images", async () => {
    assertPng(await get(server.app, "/avatars/original/missing.png"), 400, 400);
    assertPng(await get(server.app, "/headers/original/missing.png"), 1500, 500);
    assertPng(await get(server.app, "/preview.png"), 1200, 630);
    // The thumbnail the instance advertises is that image.
    const thumbnail = new URL((await get(server.app, "/api/v2/instance")).json().thumbnail.url);
    assertPng(await get(server.app, thumbnail.pathname), 1200, 630);
  });

  test("default images are served identically on repeated requests", async () => {
    const first = await get(server.app, "/avatars/original/missing.png");
    const second = await get(server.app, "/avatars/original/missing.png");
    assert.ok(first.rawPayload.equals(second.rawPayload));
    assert.match(String(second.headers["cache-control"]), /max-age=\d+/);
  });
});

describe("instance endpoints with DISALLOW_UNAUTHENTICATED_API_ACCESS", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer({
      env: { DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" },
      // An ordinary optional-token endpoint, to show the mode is in force.
      routes: (app) => {
        app.get("/api/v1/test_optional", { preHandler: app.auth({ optional: true }) }, async () => ({ ok: true }));
      },
    });
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("other optional-token endpoints refuse anonymous callers", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/test_optional")), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.equal((await get(server.app, "/api/v1/test_optional", accounts.alice.token)).statusCode, 200);
  });

  test("instance metadata and custom emoji stay public", async () => {
    for (const path of [
      ...PUBLIC_INSTANCE_PATHS,
      "/api/v1/instance/peers",
      "/api/v1/instance/activity",
      "/nodeinfo/2.0",
    ]) {
      const res = await get(server.app, path);
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    }
    const body = (await get(server.app, "/api/v2/instance")).json();
    assert.equal(body.domain, "rookery.test");
    assert.equal(body.configuration.limited_federation, false);
    assert.deepEqual((await get(server.app, "/api/v1/instance/peers")).json(), ["remote.example"]);
  });
});

describe("instance endpoints in limited federation mode", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer({ env: { LIMITED_FEDERATION_MODE: "true" } });
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("the instance stays public, says so, and hides its active users", async () => {
    await get(server.app, "/api/v1/accounts/verify_credentials", accounts.alice.token);
    const res = await get(server.app, "/api/v2/instance");
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.configuration.limited_federation, true);
    assert.equal(body.usage.users.active_month, 0);
    assert.equal((await get(server.app, "/api/v1/instance")).statusCode, 200);
  });

  test("peers: 401 for anonymous callers and app tokens, 404 for users", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/peers")), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/peers", await appToken(server.ctx, "read"))), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/peers", accounts.alice.token)), [
      404,
      "Not Found",
    ]);
  });

  test("activity: 401 for anonymous callers, 404 for users", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/activity")), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/instance/activity", accounts.alice.token)), [
      404,
      "Not Found",
    ]);
  });
});

describe("instance URLs without HTTPS", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer({
      env: { LOCAL_DOMAIN: "rookery.test", WEB_DOMAIN: "social.rookery.test", LOCAL_HTTPS: "false" },
    });
  });
  after(() => server.close());

  test("streaming is ws:// on the web domain; the handle domain stays LOCAL_DOMAIN", async () => {
    const v2 = (await get(server.app, "/api/v2/instance")).json();
    assert.equal(v2.domain, "rookery.test");
    assert.equal(v2.configuration.urls.streaming, "ws://social.rookery.test");
    assert.equal(v2.thumbnail.url, "http://social.rookery.test/preview.png");
    const v1 = (await get(server.app, "/api/v1/instance")).json();
    assert.equal(v1.uri, "rookery.test");
    assert.deepEqual(v1.urls, { streaming_api: "ws://social.rookery.test" });
  });
});
