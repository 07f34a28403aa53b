/**
 * Grouped notifications (`/api/v2/notifications`): groups by type, status and hour bucket (a group
 * spans at most 12 hours), `grouped_types[]`, paging by representative notification, the group
 * endpoints, unread_count in groups, `expand_accounts`, the v2 policy with `drop`, and the shapes
 * against Mastodon's OpenAPI description.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../../src/db/ids.ts";
import { notify } from "../../../src/services/notifications/notify.ts";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";

interface Group {
  group_key: string;
  notifications_count: number;
  type: string;
  most_recent_notification_id: string;
  page_min_id?: string;
  page_max_id?: string;
  latest_page_notification_at: string;
  sample_account_ids: string[];
  status_id?: string;
}
interface Results {
  accounts: Array<{ id: string }>;
  partial_accounts?: Array<{ id: string; avatar: string }>;
  statuses: Array<{ id: string }>;
  notification_groups: Group[];
}

describe("grouped notifications", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const call = async (viewer: TestUser, method: "POST" | "GET" | "PATCH", path: string, json?: object) => {
    await server.ctx.jobs.drain();
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const grouped = (viewer: TestUser, query = "") =>
    call(viewer, "GET", `/api/v2/notifications${query}`) as Promise<Results>;

  /** A receiver whose post three fans favourited, who was mentioned and followed twice. */
  async function scene() {
    const [receiver, f1, f2, f3] = await Promise.all([user("gr"), user("fan"), user("fan"), user("fan")]);
    const status = await postStatus(server, receiver, { status: "popular" });
    for (const fan of [f1, f2, f3]) await call(fan, "POST", `/api/v1/statuses/${status.id}/favourite`);
    const mention = await postStatus(server, f1, { status: `@${receiver.username} hi` });
    for (const fan of [f2, f3]) await call(fan, "POST", `/api/v1/accounts/${receiver.account.id}/follow`);
    await server.ctx.jobs.drain();
    return { receiver, fans: [f1, f2, f3], status, mention };
  }

  test("favourites of one status fold into one group, follows into another; mentions stay alone", async () => {
    const { receiver, fans, status, mention } = await scene();
    const results = await grouped(receiver);
    const groups = results.notification_groups;
    assert.deepEqual(
      groups.map((g) => [g.type, g.notifications_count]),
      [
        ["follow", 2],
        ["mention", 1],
        ["favourite", 3],
      ],
    );
    const [follows, mentioned, favourites] = groups;
    assert.deepEqual(follows!.sample_account_ids, [fans[2]!.account.id, fans[1]!.account.id]);
    assert.match(follows!.group_key, /^follow-\d+$/);
    assert.equal(follows!.status_id, undefined);
    assert.match(mentioned!.group_key, /^ungrouped-\d+$/);
    assert.equal(mentioned!.status_id, mention.id);
    assert.match(favourites!.group_key, new RegExp(`^favourite-${status.id}-\\d+$`));
    assert.deepEqual(favourites!.sample_account_ids, fans.map((f) => f.account.id).reverse());
    assert.equal(favourites!.status_id, status.id);
    assert.equal(typeof favourites!.most_recent_notification_id, "string");
    // The page spans its groups' newest notifications: the follows both lie within it, only the
    // newest favourite does (its group is still counted whole).
    assert.equal(favourites!.page_max_id, favourites!.most_recent_notification_id);
    assert.equal(favourites!.page_min_id, favourites!.page_max_id);
    assert.ok(BigInt(follows!.page_min_id!) < BigInt(follows!.page_max_id!));
    // Accounts and statuses once each.
    assert.deepEqual(results.accounts.map((a) => a.id).sort(), fans.map((f) => f.account.id).sort());
    assert.deepEqual(results.statuses.map((s) => s.id).sort(), [status.id, mention.id].sort());
  });

  test("grouped_types[] chooses what folds; types[] and exclude_types[] filter", async () => {
    const { receiver } = await scene();
    const only = await grouped(receiver, "?grouped_types[]=follow");
    assert.deepEqual(
      only.notification_groups.map((g) => [g.type, g.notifications_count]),
      [
        ["follow", 2],
        ["mention", 1],
        ["favourite", 1],
        ["favourite", 1],
        ["favourite", 1],
      ],
    );
    const favouritesOnly = await grouped(receiver, "?types[]=favourite");
    assert.deepEqual(
      favouritesOnly.notification_groups.map((g) => g.type),
      ["favourite"],
    );
    const noFollows = await grouped(receiver, "?exclude_types[]=follow&exclude_types[]=mention");
    assert.deepEqual(
      noFollows.notification_groups.map((g) => g.type),
      ["favourite"],
    );
  });

  test("pages of groups, with a Link header whose cursors are notification IDs", async () => {
    const { receiver } = await scene();
    await server.ctx.jobs.drain();
    const res = await get(server.app, "/api/v2/notifications?limit=2&grouped_types[]=favourite", receiver.token);
    const first = res.json() as Results;
    assert.deepEqual(
      first.notification_groups.map((g) => g.type),
      ["follow", "follow"],
    );
    const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link))?.[1];
    assert.ok(next);
    assert.match(next, /grouped_types%5B%5D=favourite/);
    assert.match(next, new RegExp(`max_id=${first.notification_groups[1]!.most_recent_notification_id}`));
    const rest = (
      await get(server.app, `/api/v2/notifications${new URL(next).search}`, receiver.token)
    ).json() as Results;
    assert.deepEqual(
      rest.notification_groups.map((g) => [g.type, g.notifications_count]),
      [
        ["mention", 1],
        ["favourite", 3],
      ],
    );
    // Newer than a notification (min_id): the groups just above it, newest first.
    const prev = (await grouped(receiver, `?min_id=${rest.notification_groups[0]!.most_recent_notification_id}`))
      .notification_groups;
    assert.deepEqual(
      prev.map((g) => g.type),
      ["follow"],
    );
  });

  test("a group spans at most 12 hours from its first bucket", async () => {
    const [receiver, status] = await (async () => {
      const r = await user("buckets");
      return [r, await postStatus(server, r, { status: "old post" })] as const;
    })();
    const hour = 3600 * 1000;
    const now = Date.now();
    const favourite = async (at: number) => {
      const fan = await user("bucketfan");
      await notify(server.ctx, {
        type: "favourite",
        receiverId: receiver.account.id,
        fromId: fan.account.id,
        activityType: "Favourite",
        activityId: newId(),
        statusId: status.id,
        at: new Date(at),
      });
    };
    await favourite(now - 20 * hour);
    await favourite(now - 14 * hour); // within 12 h of the first bucket: same group
    await favourite(now - 2 * hour); // 18 h after the first bucket: a new group
    await favourite(now);
    const groups = (await grouped(receiver)).notification_groups;
    assert.deepEqual(
      groups.map((g) => g.notifications_count),
      [2, 2],
    );
    const buckets = groups.map((g) => Number(g.group_key.split("-").pop()));
    assert.equal(buckets[0]! - buckets[1]!, 18);
  });

  test("GET, accounts and dismiss of one group; unknown groups are 404", async () => {
    const { receiver, fans, status } = await scene();
    const favourites = (await grouped(receiver)).notification_groups.find((g) => g.type === "favourite")!;
    const one = (await call(receiver, "GET", `/api/v2/notifications/${favourites.group_key}`)) as Results;
    assert.equal(one.notification_groups.length, 1);
    assert.equal(one.notification_groups[0]!.notifications_count, 3);
    assert.equal(one.notification_groups[0]!.page_min_id, undefined);
    assert.deepEqual(
      one.statuses.map((s) => s.id),
      [status.id],
    );
    const accounts = (await call(receiver, "GET", `/api/v2/notifications/${favourites.group_key}/accounts`)) as Array<{
      id: string;
    }>;
    assert.deepEqual(
      accounts.map((a) => a.id),
      fans.map((f) => f.account.id).reverse(),
    );
    // Someone else's group, or none: 404.
    const other = await user("grother");
    assert.equal(errorOf(await get(server.app, `/api/v2/notifications/${favourites.group_key}`, other.token))[0], 404);
    assert.equal(errorOf(await get(server.app, "/api/v2/notifications/ungrouped-1", receiver.token))[0], 404);
    // An ID past 64 bits names nothing (and must not reach the database as a number).
    for (const key of ["ungrouped-99999999999999999999", "ungrouped-9999999999999999999"])
      assert.equal(errorOf(await get(server.app, `/api/v2/notifications/${key}`, receiver.token))[0], 404, key);
    assert.equal(errorOf(await get(server.app, "/api/v2/notifications/nonsense/accounts", receiver.token))[0], 404);

    assert.deepEqual(await call(receiver, "POST", `/api/v2/notifications/${favourites.group_key}/dismiss`), {});
    assert.deepEqual(
      (await grouped(receiver)).notification_groups.map((g) => g.type),
      ["follow", "mention"],
    );
    const mention = (await grouped(receiver)).notification_groups[1]!;
    await call(receiver, "POST", `/api/v2/notifications/${mention.group_key}/dismiss`);
    assert.deepEqual(
      (await grouped(receiver)).notification_groups.map((g) => g.type),
      ["follow"],
    );
    await call(receiver, "POST", "/api/v2/notifications/clear");
    assert.deepEqual((await grouped(receiver)).notification_groups, []);
  });

  test("unread_count counts groups newer than the marker", async () => {
    const { receiver } = await scene();
    const count = async (query = "") =>
      ((await call(receiver, "GET", `/api/v2/notifications/unread_count${query}`)) as { count: number }).count;
    assert.equal(await count(), 3);
    assert.equal(await count("?grouped_types[]=follow"), 5);
    assert.equal(await count("?limit=2"), 2);
    const groups = (await grouped(receiver)).notification_groups;
    await call(receiver, "POST", "/api/v1/markers", {
      notifications: { last_read_id: groups[1]!.most_recent_notification_id },
    });
    assert.equal(await count(), 1);
  });

  test("expand_accounts=partial_avatars names only each group's latest sender in full; other values are 400", async () => {
    const { receiver, fans } = await scene();
    const results = await grouped(receiver, "?expand_accounts=partial_avatars");
    const full = results.accounts.map((a) => a.id).sort();
    const partial = (results.partial_accounts ?? []).map((a) => a.id).sort();
    assert.deepEqual(full, [fans[0]!.account.id, fans[2]!.account.id].sort());
    assert.deepEqual(partial, [fans[1]!.account.id]);
    assert.ok(results.partial_accounts![0]!.avatar);
    const bad = await get(server.app, "/api/v2/notifications?expand_accounts=everything", receiver.token);
    assert.equal(errorOf(bad)[0], 400);
  });

  test("v2 policy: accept, filter or drop per criterion; filtered ones are never grouped", async () => {
    const [receiver, stranger, other] = await Promise.all([user("pv2"), user("pv2stranger"), user("pv2other")]);
    const initial = (await call(receiver, "GET", "/api/v2/notifications/policy")) as Record<string, unknown>;
    assert.deepEqual(initial, {
      for_not_following: "accept",
      for_not_followers: "accept",
      for_new_accounts: "accept",
      for_private_mentions: "filter",
      for_limited_accounts: "filter",
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    const bad = await request(server.app, "PATCH", "/api/v2/notifications/policy", {
      token: receiver.token,
      json: { for_not_following: "ignore" },
    });
    assert.deepEqual(errorOf(bad), [422, "Validation failed: For not following is not included in the list"]);

    const status = await postStatus(server, receiver, { status: "policy" });
    await call(receiver, "PATCH", "/api/v2/notifications/policy", { for_not_following: "filter" });
    await call(stranger, "POST", `/api/v1/statuses/${status.id}/favourite`);
    await call(other, "POST", `/api/v1/statuses/${status.id}/favourite`);
    assert.deepEqual((await grouped(receiver)).notification_groups, []);
    const withFiltered = (await grouped(receiver, "?include_filtered=true")).notification_groups;
    assert.deepEqual(
      withFiltered.map((g) => [g.type, g.notifications_count, g.group_key.startsWith("ungrouped-")]),
      [
        ["favourite", 1, true],
        ["favourite", 1, true],
      ],
    );

    const changed = (await call(receiver, "PATCH", "/api/v2/notifications/policy", {
      for_not_following: "drop",
    })) as Record<string, unknown>;
    assert.equal(changed.for_not_following, "drop");
    const dropper = await user("pv2dropped");
    await postStatus(server, dropper, { status: `@${receiver.username} gone` });
    await server.ctx.jobs.drain();
    const stored = await server.ctx.db.kysely
      .selectFrom("notifications")
      .select("id")
      .where("account_id", "=", receiver.account.id)
      .where("from_account_id", "=", dropper.account.id)
      .execute();
    assert.deepEqual(stored, []);
    // The v1 view of the same policy: anything but accept filters.
    const v1 = (await call(receiver, "GET", "/api/v1/notifications/policy")) as Record<string, unknown>;
    assert.equal(v1.filter_not_following, true);
  });

  test(
    "the grouped results, v1 notifications, requests and policies match Mastodon's OpenAPI schemas",
    {
      skip: openApiSkip,
    },
    async () => {
      const { receiver } = await scene();
      const results = await grouped(receiver, "?expand_accounts=partial_avatars");
      // Rookery sends most_recent_notification_id as a string (docs/compatibility.md); the schema says integer.
      const asMastodon = {
        ...results,
        notification_groups: results.notification_groups.map((g) => ({
          ...g,
          most_recent_notification_id: Number(g.most_recent_notification_id),
        })),
      };
      assert.deepEqual(validateSchema("GroupedNotificationsResults", asMastodon), []);
      for (const note of (await call(receiver, "GET", "/api/v1/notifications")) as unknown[])
        assert.deepEqual(validateSchema("Notification", note), []);
      assert.deepEqual(
        validateSchema("NotificationPolicy", await call(receiver, "GET", "/api/v2/notifications/policy")),
        [],
      );
      assert.deepEqual(
        validateSchema("V1NotificationPolicy", await call(receiver, "GET", "/api/v1/notifications/policy")),
        [],
      );
      const stranger = await user("schemastranger");
      await postStatus(server, stranger, { status: `@${receiver.username} psst`, visibility: "direct" });
      const requests = (await call(receiver, "GET", "/api/v1/notifications/requests")) as unknown[];
      assert.equal(requests.length, 1);
      assert.deepEqual(validateSchema("NotificationRequest", requests[0]), []);
    },
  );

  const server_ = () => server;
  for (const path of ["/api/v2/notifications", "/api/v2/notifications/unread_count", "/api/v2/notifications/policy"])
    describeAuth(`GET ${path}`, server_, {
      scope: "read:notifications",
      send: (s, token) => request(s.app, "GET", path, { token }),
    });
  describeAuth("PATCH /api/v2/notifications/policy", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "PATCH", "/api/v2/notifications/policy", { token, json: {} }),
  });
  describeAuth("POST /api/v2/notifications/clear", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "POST", "/api/v2/notifications/clear", { token }),
  });
  describeAuth("POST /api/v2/notifications/:group_key/dismiss", server_, {
    scope: "write:notifications",
    send: (s, token) => request(s.app, "POST", "/api/v2/notifications/follow-1/dismiss", { token }),
  });
});
