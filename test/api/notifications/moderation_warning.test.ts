/**
 * The `moderation_warning` notification (Mastodon 4.3): a moderator's action on a local user —
 * a bare warning included — notifies the user, "from" themselves, with the strike as an
 * AccountWarning (its action, text, reported posts, target and appeal), in v1 and in the grouped
 * API, unless the moderator chose not to notify (`send_email_notification: false`). A suspended
 * user is not notified (nobody is notified on a suspended account, as in Mastodon).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { appealStrike } from "../../../src/services/moderation/appeals.ts";
import {
  createTestServer,
  createUser,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";

interface AccountWarning {
  id: string;
  action: string;
  text: string;
  status_ids: string[] | null;
  target_account: { id: string };
  appeal: { text: string; state: string } | null;
  created_at: string;
}
interface Note {
  id: string;
  type: string;
  group_key: string;
  account: { id: string };
  moderation_warning?: AccountWarning;
}
interface Grouped {
  accounts: Array<{ id: string }>;
  notification_groups: Array<{
    type: string;
    group_key: string;
    most_recent_notification_id: string;
    sample_account_ids: string[];
    moderation_warning?: AccountWarning;
  }>;
}

describe("the moderation_warning notification", () => {
  let server: TestServer;
  let adminToken: string;
  let names = 0;
  const user = (prefix = "warned") => createUser(server.ctx, `${prefix}${++names}`);

  before(async () => {
    server = await createTestServer();
    const admin = await createUser(server.ctx, "boss", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  const act = async (target: TestUser, json: object) => {
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, {
      token: adminToken,
      json,
    });
    assert.equal(res.statusCode, 200, res.body);
    await server.ctx.jobs.drain();
  };
  const notes = async (viewer: TestUser, query = "") => {
    const res = await request(server.app, "GET", `/api/v1/notifications${query}`, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Note[];
  };
  const warningIdOf = async (target: TestUser) =>
    (
      await server.ctx.db.kysely
        .selectFrom("account_warnings")
        .select("id")
        .where("target_account_id", "=", target.account.id)
        .orderBy("id", "desc")
        .executeTakeFirstOrThrow()
    ).id;

  test("a warning notifies its user, from themselves, with the strike", async () => {
    const alice = await user();
    await act(alice, { type: "none", text: "Please keep it civil." });
    const [note, ...rest] = await notes(alice);
    assert.deepEqual(rest, []);
    assert.equal(note.type, "moderation_warning");
    assert.equal(note.account.id, alice.account.id);
    assert.equal(note.group_key, `ungrouped-${note.id}`);
    const warning = note.moderation_warning!;
    assert.equal(warning.id, await warningIdOf(alice));
    assert.equal(warning.action, "none");
    assert.equal(warning.text, "Please keep it civil.");
    assert.equal(warning.status_ids, null);
    assert.equal(warning.target_account.id, alice.account.id);
    assert.equal(warning.appeal, null);
    assert.match(warning.created_at, /^\d{4}-\d\d-\d\dT/);
  });

  test("a limit that answers a report names the reported posts", async () => {
    const bob = await user();
    const reporter = await user("reporter");
    const post = await postStatus(server, bob, { status: "loud" });
    const report = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: bob.account.id, status_ids: [post.id], category: "spam" },
    });
    assert.equal(report.statusCode, 200, report.body);
    await act(bob, { type: "silence", report_id: (report.json() as { id: string }).id });
    const [note] = await notes(bob, "?types[]=moderation_warning");
    assert.equal(note.moderation_warning!.action, "silence");
    assert.deepEqual(note.moderation_warning!.status_ids, [post.id]);
  });

  test("its appeal shows once made", async () => {
    const carol = await user();
    await act(carol, { type: "sensitive" });
    await appealStrike(server.ctx, carol.account, await warningIdOf(carol), "My pictures are of cats.");
    const [note] = await notes(carol);
    assert.deepEqual(note.moderation_warning!.appeal, { text: "My pictures are of cats.", state: "pending" });
  });

  test("types[] and exclude_types[] know the type", async () => {
    const dave = await user();
    await act(dave, { type: "none", text: "One." });
    assert.equal((await notes(dave, "?types[]=moderation_warning")).length, 1);
    assert.deepEqual(await notes(dave, "?exclude_types[]=moderation_warning"), []);
  });

  test("no notification when the moderator chose not to notify, nor for a suspended user", async () => {
    const quiet = await user();
    await act(quiet, { type: "none", text: "Between us.", send_email_notification: false });
    assert.deepEqual(await notes(quiet), []);
    const gone = await user();
    await act(gone, { type: "suspend" });
    const stored = await server.ctx.db.kysely
      .selectFrom("notifications")
      .select("id")
      .where("account_id", "=", gone.account.id)
      .execute();
    assert.deepEqual(stored, []);
  });

  test("the grouped API shows it as a group of its own with the strike", async () => {
    const erin = await user();
    await act(erin, { type: "none", text: "First." });
    await act(erin, { type: "none", text: "Second." });
    const res = await request(server.app, "GET", "/api/v2/notifications", { token: erin.token });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as Grouped;
    assert.deepEqual(
      body.notification_groups.map((g) => [g.type, g.moderation_warning?.text, g.sample_account_ids]),
      [
        ["moderation_warning", "Second.", [erin.account.id]],
        ["moderation_warning", "First.", [erin.account.id]],
      ],
    );
    assert.deepEqual(
      body.accounts.map((a) => a.id),
      [erin.account.id],
    );
  });

  test("v1 and grouped results match Mastodon's OpenAPI schemas", { skip: openApiSkip }, async () => {
    const frank = await user();
    const post = await postStatus(server, frank, { status: "x" });
    const reporter = await user("reporter");
    const report = await request(server.app, "POST", "/api/v1/reports", {
      token: reporter.token,
      json: { account_id: frank.account.id, status_ids: [post.id] },
    });
    await act(frank, { type: "none", text: "Hm.", report_id: (report.json() as { id: string }).id });
    await appealStrike(server.ctx, frank.account, await warningIdOf(frank), "Why?");
    const v1 = await notes(frank);
    assert.equal(v1.length, 1);
    assert.deepEqual(validateSchema("Notification", v1[0]), []);
    assert.deepEqual(validateSchema("AccountWarning", v1[0].moderation_warning), []);
    const res = await request(server.app, "GET", "/api/v2/notifications", { token: frank.token });
    const body = res.json() as Grouped;
    // Rookery sends most_recent_notification_id as a string (docs/compatibility.md); the schema says integer.
    const asMastodon = {
      ...body,
      notification_groups: body.notification_groups.map((g) => ({
        ...g,
        most_recent_notification_id: Number(g.most_recent_notification_id),
      })),
    };
    assert.deepEqual(validateSchema("GroupedNotificationsResults", asMastodon), []);
  });
});
