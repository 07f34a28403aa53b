/**
 * POST /api/v1/reports: the stored report as its reporter sees it, categories and rules, the
 * target's statuses only, validation, and the `admin.report` notification to moderators.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface ReportJson {
  id: string;
  action_taken: boolean;
  action_taken_at: string | null;
  category: string;
  comment: string;
  forwarded: boolean;
  status_ids: string[] | null;
  rule_ids: string[] | null;
  target_account: { id: string };
}

describe("POST /api/v1/reports", () => {
  let server: TestServer;
  let moderator: TestUser;
  before(async () => {
    server = await createTestServer();
    moderator = await createUser(server.ctx, "moderator", { role: "Moderator" });
    await saveSetting(server.ctx.db.kysely, "rules", [
      { text: "Be kind", hint: "" },
      { text: "No spam", hint: "" },
    ]);
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const report = (reporter: TestUser, json: object) =>
    request(server.app, "POST", "/api/v1/reports", { token: reporter.token, json });

  test("a report with statuses and a comment; only the target's visible statuses are kept", async () => {
    const [reporter, target, other] = await Promise.all([user("reporter"), user("target"), user("other")]);
    const bad = await postStatus(server, target, { status: "bad post" });
    const secret = await postStatus(server, target, { status: "private", visibility: "private" });
    const unrelated = await postStatus(server, other, { status: "unrelated" });
    const res = await report(reporter, {
      account_id: target.account.id,
      status_ids: [bad.id, secret.id, unrelated.id],
      comment: "please look",
      category: "spam",
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as ReportJson;
    assert.equal(body.target_account.id, target.account.id);
    assert.deepEqual(body.status_ids, [bad.id]);
    assert.equal(body.comment, "please look");
    assert.equal(body.category, "spam");
    assert.equal(body.action_taken, false);
    assert.equal(body.action_taken_at, null);
    assert.equal(body.forwarded, false);
    assert.equal(body.rule_ids, null);
  });

  test("rule_ids make it a violation report; unknown rules and categories are 422", async () => {
    const [reporter, target] = await Promise.all([user("rulereporter"), user("ruletarget")]);
    const res = await report(reporter, { account_id: target.account.id, rule_ids: ["2"], category: "other" });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([(res.json() as ReportJson).category, (res.json() as ReportJson).rule_ids], ["violation", ["2"]]);
    assert.deepEqual(errorOf(await report(reporter, { account_id: target.account.id, rule_ids: ["9"] })), [
      422,
      "Validation failed: Rule ids contains invalid rule IDs",
    ]);
    assert.deepEqual(errorOf(await report(reporter, { account_id: target.account.id, category: "rude" })), [
      422,
      "Validation failed: Category is not included in the list",
    ]);
    assert.deepEqual(errorOf(await report(reporter, { account_id: target.account.id, comment: "x".repeat(1001) })), [
      422,
      "Validation failed: Comment is too long (maximum is 1000 characters)",
    ]);
  });

  test("unknown, missing or suspended targets are 404", async () => {
    const [reporter, gone] = await Promise.all([user("r404"), user("gone")]);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", gone.account.id)
      .execute();
    for (const json of [{}, { account_id: "123" }, { account_id: "nope" }, { account_id: gone.account.id }])
      assert.equal(errorOf(await report(reporter, json))[0], 404, JSON.stringify(json));
  });

  test("forward is kept for a remote target only", async () => {
    const reporter = await user("forwarder");
    const remote = await createRemoteAccount(server.ctx, "spammer", "elsewhere.example");
    const local = await user("localtarget");
    const remoteReport = await report(reporter, {
      account_id: remote.id,
      forward: true,
      forward_to_domains: ["third.example"],
    });
    assert.equal((remoteReport.json() as ReportJson).forwarded, true);
    const stored = await server.ctx.db.kysely
      .selectFrom("reports")
      .select(["forward_to_domains"])
      .where("id", "=", (remoteReport.json() as ReportJson).id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(stored.forward_to_domains!), ["third.example"]);
    const localReport = await report(reporter, { account_id: local.account.id, forward: true });
    assert.equal((localReport.json() as ReportJson).forwarded, false);
  });

  test("moderators get an admin.report notification carrying the report; others do not", async () => {
    const [reporter, target, bystander] = await Promise.all([user("nreporter"), user("ntarget"), user("nbystander")]);
    const res = await report(reporter, { account_id: target.account.id, comment: "abuse" });
    const id = (res.json() as ReportJson).id;
    await server.ctx.jobs.drain();
    const notes = (
      await get(server.app, "/api/v1/notifications?types[]=admin.report", moderator.token)
    ).json() as Array<{
      type: string;
      account: { id: string };
      report?: ReportJson;
    }>;
    const note = notes.find((n) => n.report?.id === id);
    assert.ok(note, JSON.stringify(notes));
    assert.equal(note.account.id, reporter.account.id);
    assert.equal(note.report!.target_account.id, target.account.id);
    const grouped = (await get(server.app, "/api/v2/notifications?types[]=admin.report", moderator.token)).json() as {
      notification_groups: Array<{ type: string; report?: ReportJson }>;
    };
    assert.ok(grouped.notification_groups.some((g) => g.type === "admin.report" && g.report?.id === id));
    const theirs = (await get(server.app, "/api/v1/notifications", bystander.token)).json() as unknown[];
    assert.deepEqual(theirs, []);
  });

  test("the Report matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const [reporter, target] = await Promise.all([user("schemareporter"), user("schematarget")]);
    const res = await report(reporter, { account_id: target.account.id, rule_ids: ["1"] });
    assert.deepEqual(validateSchema("Report", res.json()), []);
  });

  describeAuth("POST /api/v1/reports", () => server, {
    scope: "write:reports",
    send: async (s, token) => {
      const target = await createUser(s.ctx, `authtarget${++users}`);
      return request(s.app, "POST", "/api/v1/reports", { token, json: { account_id: target.account.id } });
    },
  });
});
