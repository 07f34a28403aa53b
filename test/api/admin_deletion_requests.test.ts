/**
 * A suspended account's data goes 30 days after the suspension (Mastodon's AccountDeletionRequest):
 * the suspension asks for it, lifting the suspension withdraws the request, the daily job deletes
 * what is due — a local account as its owner would delete it, a remote one's posts purged.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  DELETION_DELAY_DAYS,
  DELETION_REQUESTS_JOB,
  dataDeletionDue,
  processDataDeletions,
} from "../../src/services/admin/deletion_requests.ts";
import { newId } from "../../src/db/ids.ts";
import { Browser } from "../browser.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";

const DAY = 86_400_000;

describe("deleting a suspended account's data after 30 days", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;

  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "cleaner", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read admin:write");
  });
  after(() => server.close());

  const act = async (id: string, path: string, json?: object) => {
    const res = await request(server.app, "POST", `/api/v1/admin/accounts/${id}${path}`, { token, json });
    assert.equal(res.statusCode, 200, res.body);
  };
  const accountRow = (id: string) =>
    server.ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const later = (days: number) => new Date(Date.now() + days * DAY);

  test("a suspended local account: nothing before the 30 days, then deleted as its owner would delete it", async () => {
    const spammer = await createUser(server.ctx, "spammer");
    await postStatus(server, spammer, { status: "buy now" });
    await act(spammer.account.id, "/action", { type: "suspend" });
    const due = await dataDeletionDue(server.ctx.db.kysely, spammer.account.id);
    assert.ok(due, "the suspension asked for the data to go");
    assert.ok(Math.abs(due.getTime() - later(DELETION_DELAY_DAYS).getTime()) < 60_000);
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(admin.user.email)).statusCode, 303);
    const page = await browser.get(`/admin/accounts/${spammer.account.id}`);
    assert.match(page.body, /its data will be deleted on \d{4}-\d\d-\d\d/, "the account page says when");

    await processDataDeletions(server.ctx, later(DELETION_DELAY_DAYS - 1));
    assert.equal((await accountRow(spammer.account.id)).deleted_at, null, "not yet");

    assert.ok((await processDataDeletions(server.ctx, later(DELETION_DELAY_DAYS + 1))) >= 1);
    const row = await accountRow(spammer.account.id);
    assert.ok(row.deleted_at, "deleted");
    assert.equal(await dataDeletionDue(server.ctx.db.kysely, spammer.account.id), null, "the request is done");
    await server.ctx.jobs.drain();
    const left = await server.ctx.db.kysely
      .selectFrom("statuses")
      .select("id")
      .where("account_id", "=", spammer.account.id)
      .where("deleted_at", "is", null)
      .execute();
    assert.deepEqual(left, [], "its posts are gone");
  });

  test("unsuspending withdraws the request: the account keeps its data", async () => {
    const forgiven = await createUser(server.ctx, "forgiven");
    await act(forgiven.account.id, "/action", { type: "suspend" });
    await act(forgiven.account.id, "/unsuspend");
    assert.equal(await dataDeletionDue(server.ctx.db.kysely, forgiven.account.id), null);
    await processDataDeletions(server.ctx, later(DELETION_DELAY_DAYS + 1));
    assert.equal((await accountRow(forgiven.account.id)).deleted_at, null);
    const me = await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: forgiven.token });
    assert.equal(me.statusCode, 200, me.body);
  });

  test("a suspended remote account: its posts are purged when due", async () => {
    const remote = await createRemoteAccount(server.ctx, "farspam", "spam.example");
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id: newId(),
        uri: "https://spam.example/statuses/1",
        account_id: remote.id,
        text: "",
        content: "<p>spam</p>",
        visibility: "public",
        created_at: now,
        updated_at: now,
      })
      .execute();
    await act(remote.id, "/action", { type: "suspend" });
    await processDataDeletions(server.ctx, later(DELETION_DELAY_DAYS + 1));
    await server.ctx.jobs.drain();
    const left = await server.ctx.db.kysely
      .selectFrom("statuses")
      .select("id")
      .where("account_id", "=", remote.id)
      .where("deleted_at", "is", null)
      .execute();
    assert.deepEqual(left, []);
  });

  test("the job is one of the recurring ones", async () => {
    await server.ctx.jobs.scheduleRecurring();
    const job = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select("name")
      .where("name", "=", DELETION_REQUESTS_JOB)
      .execute();
    assert.equal(job.length, 1, "scheduled once");
  });
});
