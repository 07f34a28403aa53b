/**
 * PUT and PATCH: every update route Mastodon declares as a Rails resource answers both methods
 * (masto.js PUTs the notification policy, other clients PATCH lists and filters), read from the
 * route tree so a new update route cannot forget one; `update_credentials` stays PATCH only.
 * Each pair is then exercised with the method the route did not answer before.
 */
import assert from "node:assert/strict";
import { createECDH, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createAnnouncement } from "../../src/services/announcements/announcements.ts";
import {
  createTestServer,
  createUser,
  errorOf,
  get,
  postStatus,
  request,
  routesOf,
  tokenFor,
  uploadImage,
  type TestServer,
} from "../kit.ts";

/** The update routes of Mastodon's resources, each answering PUT and PATCH. */
const UPDATE_ROUTES = [
  "/api/v1/statuses/:id",
  "/api/v1/scheduled_statuses/:id",
  "/api/v1/media/:id",
  "/api/v1/lists/:id",
  "/api/v1/filters/:id",
  "/api/v2/filters/:id",
  "/api/v2/filters/keywords/:id",
  "/api/v1/notifications/policy",
  "/api/v2/notifications/policy",
  "/api/v1/push/subscription",
  "/api/v1/announcements/:id/reactions/:name",
  "/api/v1/admin/domain_blocks/:id",
];
/** Not a resource in Mastodon's routes: PATCH only. */
const PATCH_ONLY = ["/api/v1/accounts/update_credentials"];

describe("PUT and PATCH", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("every update route answers both methods; update_credentials only PATCH", () => {
    const methods = new Map<string, Set<string>>();
    for (const [method, path] of routesOf(server.app)) {
      if (method !== "PUT" && method !== "PATCH") continue;
      methods.set(path, (methods.get(path) ?? new Set()).add(method));
    }
    for (const path of UPDATE_ROUTES) assert.deepEqual(methods.get(path), new Set(["PUT", "PATCH"]), path);
    for (const path of PATCH_ONLY) assert.deepEqual(methods.get(path), new Set(["PATCH"]), path);
    const unpaired = [...methods]
      .filter(([path, set]) => set.size !== 2 && !PATCH_ONLY.includes(path))
      .map(([path, set]) => `${[...set].join("/")} ${path}`);
    assert.deepEqual(unpaired, []);
  });

  test("PUT update_credentials is 404, as in Mastodon", async () => {
    const user = await createUser(server.ctx, "credentials");
    const res = await request(server.app, "PUT", "/api/v1/accounts/update_credentials", {
      token: user.token,
      form: { display_name: "Changed" },
    });
    assert.equal(res.statusCode, 404);
    assert.equal(
      ((await get(server.app, "/api/v1/accounts/verify_credentials", user.token)).json() as { display_name: string })
        .display_name,
      "",
    );
  });

  test("PUT changes the notification policy (v1 and v2)", async () => {
    const user = await createUser(server.ctx, "policy");
    const v1 = await request(server.app, "PUT", "/api/v1/notifications/policy", {
      token: user.token,
      json: { filter_not_following: true },
    });
    assert.equal(v1.statusCode, 200, v1.body);
    assert.equal((v1.json() as { filter_not_following: boolean }).filter_not_following, true);
    const v2 = await request(server.app, "PUT", "/api/v2/notifications/policy", {
      token: user.token,
      form: { for_new_accounts: "drop" },
    });
    assert.equal(v2.statusCode, 200, v2.body);
    assert.equal((v2.json() as { for_new_accounts: string }).for_new_accounts, "drop");
    const read = (await get(server.app, "/api/v2/notifications/policy", user.token)).json() as Record<string, string>;
    assert.equal(read.for_not_following, "filter");
    assert.equal(read.for_new_accounts, "drop");
  });

  test("PATCH edits statuses, scheduled statuses, media and lists", async () => {
    const user = await createUser(server.ctx, "patcher");
    const status = await postStatus(server, user, { status: "before" });
    const edited = await request(server.app, "PATCH", `/api/v1/statuses/${status.id}`, {
      token: user.token,
      json: { status: "after" },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal((edited.json() as { content: string }).content, "<p>after</p>");

    const scheduled = await request(server.app, "POST", "/api/v1/statuses", {
      token: user.token,
      json: { status: "later", scheduled_at: new Date(Date.now() + 3600_000).toISOString() },
    });
    const when = new Date(Date.now() + 7200_000).toISOString();
    const moved = await request(server.app, "PATCH", `/api/v1/scheduled_statuses/${scheduled.json().id}`, {
      token: user.token,
      form: { scheduled_at: when },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(new Date((moved.json() as { scheduled_at: string }).scheduled_at).getTime(), new Date(when).getTime());

    const media = await uploadImage(server, user);
    const described = await request(server.app, "PATCH", `/api/v1/media/${media.id}`, {
      token: user.token,
      form: { description: "A described picture" },
    });
    assert.equal(described.statusCode, 200, described.body);
    assert.equal((described.json() as { description: string }).description, "A described picture");

    const list = await request(server.app, "POST", "/api/v1/lists", { token: user.token, form: { title: "Old" } });
    const renamed = await request(server.app, "PATCH", `/api/v1/lists/${list.json().id}`, {
      token: user.token,
      form: { title: "New" },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((renamed.json() as { title: string }).title, "New");
  });

  test("PATCH changes v1 and v2 filters and keywords", async () => {
    const user = await createUser(server.ctx, "filterer");
    const v1 = await request(server.app, "POST", "/api/v1/filters", {
      token: user.token,
      form: { phrase: "spoilers", "context[]": "home" },
    });
    const v1Changed = await request(server.app, "PATCH", `/api/v1/filters/${v1.json().id}`, {
      token: user.token,
      form: { phrase: "leaks", "context[]": "home" },
    });
    assert.equal(v1Changed.statusCode, 200, v1Changed.body);
    assert.equal((v1Changed.json() as { phrase: string }).phrase, "leaks");

    const v2 = await request(server.app, "POST", "/api/v2/filters", {
      token: user.token,
      json: { title: "Sports", context: ["home"], keywords_attributes: [{ keyword: "goal" }] },
    });
    const filter = v2.json() as { id: string; keywords: Array<{ id: string }> };
    const v2Changed = await request(server.app, "PATCH", `/api/v2/filters/${filter.id}`, {
      token: user.token,
      form: { title: "Football" },
    });
    assert.equal(v2Changed.statusCode, 200, v2Changed.body);
    assert.equal((v2Changed.json() as { title: string }).title, "Football");
    const keyword = await request(server.app, "PATCH", `/api/v2/filters/keywords/${filter.keywords[0]!.id}`, {
      token: user.token,
      form: { keyword: "offside" },
    });
    assert.equal(keyword.statusCode, 200, keyword.body);
    assert.equal((keyword.json() as { keyword: string }).keyword, "offside");
  });

  test("PATCH changes a push subscription, reacts to an announcement and updates a domain block", async () => {
    const user = await createUser(server.ctx, "pusher");
    const token = await tokenFor(server.ctx, user, "push");
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const created = await request(server.app, "POST", "/api/v1/push/subscription", {
      token,
      json: {
        subscription: {
          endpoint: "https://push.example/endpoint",
          keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: randomBytes(16).toString("base64url") },
        },
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const changed = await request(server.app, "PATCH", "/api/v1/push/subscription", {
      token,
      json: { data: { alerts: { mention: true }, policy: "followed" } },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal((changed.json() as { policy: string }).policy, "followed");

    const announcement = await createAnnouncement(server.ctx, { text: "News" });
    const reacted = await request(server.app, "PATCH", `/api/v1/announcements/${announcement.id}/reactions/👍`, {
      token: user.token,
    });
    assert.equal(reacted.statusCode, 200, reacted.body);
    const [read] = (await get(server.app, "/api/v1/announcements", user.token)).json() as Array<{
      reactions: Array<{ name: string; me: boolean }>;
    }>;
    assert.deepEqual(
      read!.reactions.map((r) => [r.name, r.me]),
      [["👍", true]],
    );

    const admin = await createUser(server.ctx, "blocker", { role: "Admin" });
    const adminToken = await tokenFor(server.ctx, admin, "admin:write");
    const block = await request(server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      form: { domain: "patched.example" },
    });
    const updated = await request(server.app, "PATCH", `/api/v1/admin/domain_blocks/${block.json().id}`, {
      token: adminToken,
      form: { severity: "suspend" },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal((updated.json() as { severity: string }).severity, "suspend");
  });

  test("a PATCH keeps the route's errors: another user's list is 404", async () => {
    const owner = await createUser(server.ctx, "listowner");
    const other = await createUser(server.ctx, "listother");
    const list = await request(server.app, "POST", "/api/v1/lists", { token: owner.token, form: { title: "Mine" } });
    assert.deepEqual(
      errorOf(
        await request(server.app, "PATCH", `/api/v1/lists/${list.json().id}`, {
          token: other.token,
          form: { title: "Stolen" },
        }),
      ),
      [404, "Record not found"],
    );
  });
});
