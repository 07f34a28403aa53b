/**
 * The admin accounts API (Mastodon's Api::V1/V2::Admin::AccountsController and
 * AccountActionsController): listing with v1's and v2's filters and Link paging, one account,
 * the moderation actions with their warnings, report resolution, audit log and e-mails, approve,
 * reject, enable, unsilence, unsuspend, unsensitive and DELETE; who may call each (permission,
 * scope, the moderator's role outranking the target's), unknown IDs, bad input, and what each
 * action does elsewhere (tokens, public timelines, other servers, the data removal job).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
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
const DISABLED = "Your login is currently disabled";
const V1 = "/api/v1/admin/accounts";
const V2 = "/api/v2/admin/accounts";
const SCOPES = "admin:read:accounts admin:write:accounts";

interface AdminAccount {
  id: string;
  username: string;
  domain: string | null;
  email: string | null;
  ip: string | null;
  role: { id: string; name: string; permissions: string; position?: number } | null;
  confirmed: boolean;
  suspended: boolean;
  silenced: boolean;
  sensitized: boolean;
  disabled: boolean;
  approved: boolean;
  locale: string | null;
  invite_request: string | null;
  ips: Array<{ ip: string; used_at: string }>;
  account: { id: string; acct: string; suspended?: boolean; limited?: boolean };
}

type Method = "GET" | "POST" | "DELETE";

describe("admin accounts API", () => {
  let server: TestServer;
  let admin: TestUser;
  let adminToken: string;
  let moderator: TestUser;
  let modToken: string;
  let names = 0;
  /** A fresh local user (names are unique across the suite). */
  const user = (prefix: string, options: Parameters<typeof createUser>[2] = {}) =>
    createUser(server.ctx, `${prefix}${++names}`, options);
  const call = (method: Method, path: string, token: string | undefined, json?: object) =>
    request(server.app, method, path, { token, json });
  const list = async (path: string, token = adminToken): Promise<AdminAccount[]> => {
    const res = await call("GET", path, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as AdminAccount[];
  };
  const ids = (rows: AdminAccount[]) => rows.map((r) => r.id);
  const act = (id: string, json: object, token = adminToken) => call("POST", `${V1}/${id}/action`, token, json);
  /** Sends `body` as it is written: IDs as bare JSON numbers, every digit kept. */
  const actRaw = (id: string, body: string) =>
    request(server.app, "POST", `${V1}/${id}/action`, {
      token: adminToken,
      body,
      headers: { "content-type": "application/json" },
    });
  /**
   * Schema errors, except where Mastodon itself writes null (its own example shows `locale: null`;
   * a remote account has no user, so no e-mail or role).
   */
  const schemaErrors = (row: AdminAccount) =>
    validateSchema("AdminAccount", row).filter(
      (e) =>
        !(row.locale === null && e.startsWith("/locale ")) &&
        !(row.domain !== null && (e.startsWith("/email ") || e.startsWith("/role "))),
    );
  const show = async (id: string): Promise<AdminAccount> => {
    const res = await call("GET", `${V1}/${id}`, adminToken);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as AdminAccount;
  };
  const auditOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["action", "target_type", "account_id"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();
  const jobsNamed = async (name: string, contains: string) =>
    (await server.ctx.db.kysely.selectFrom("jobs").select("payload").where("name", "=", name).execute())
      .map((j) => j.payload)
      .filter((p) => p.includes(contains));
  const publicIds = async (token: string) =>
    (
      (await (await call("GET", "/api/v1/timelines/public?local=true&limit=40", token)).json()) as Array<{
        id: string;
      }>
    ).map((s) => s.id);

  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "boss", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, SCOPES);
    moderator = await createUser(server.ctx, "mod", { role: "Moderator" });
    modToken = await tokenFor(server.ctx, moderator, SCOPES);
  });
  after(() => server.close());

  describe("reading", () => {
    test("one local account: Mastodon's Admin::Account with its user's e-mail, role, state and addresses", async () => {
      const alice = await user("alice");
      await server.ctx.db.kysely
        .updateTable("users")
        .set({ sign_up_ip: "192.0.2.7", locale: "en" })
        .where("id", "=", alice.user.id)
        .execute();
      const body = await show(alice.account.id);
      assert.equal(body.id, alice.account.id);
      assert.equal(body.username, alice.username);
      assert.equal(body.domain, null);
      assert.equal(body.email, `${alice.username}@rookery.test`);
      assert.equal(body.ip, "192.0.2.7");
      assert.deepEqual(
        body.ips.map((i) => i.ip),
        ["192.0.2.7"],
      );
      assert.equal(body.role?.id, "-99");
      assert.equal(body.locale, "en");
      assert.deepEqual(
        [body.confirmed, body.approved, body.suspended, body.silenced, body.sensitized, body.disabled],
        [true, true, false, false, false, false],
      );
      assert.equal(body.account.id, alice.account.id);
      assert.equal(body.account.acct, alice.username);
    });

    test("matches the AdminAccount schema", { skip: openApiSkip }, async () => {
      const alice = await user("schema");
      await server.ctx.db.kysely.updateTable("users").set({ locale: "de" }).where("id", "=", alice.user.id).execute();
      assert.deepEqual(validateSchema("AdminAccount", await show(alice.account.id)), []);
      for (const row of await list(`${V2}?limit=200`)) assert.deepEqual(schemaErrors(row), [], row.username);
    });

    test("a remote account has no user: no e-mail, role or locale, flags false, no addresses", async () => {
      const rita = await createRemoteAccount(server.ctx, "rita", "remote.example");
      const body = await show(rita.id);
      assert.equal(body.domain, "remote.example");
      assert.equal(body.email, null);
      assert.equal(body.role, null);
      assert.equal(body.ip, null);
      assert.deepEqual(body.ips, []);
      assert.equal(body.approved, false);
      assert.equal(body.account.acct, "rita@remote.example");
    });

    test("404 for an unknown ID, a word or an ID beyond 64 bits", async () => {
      for (const id of [newId(), "abc", "99999999999999999999999"]) {
        assert.deepEqual(errorOf(await call("GET", `${V1}/${id}`, adminToken)), [404, NOT_FOUND], id);
        assert.deepEqual(errorOf(await act(id, { type: "silence" })), [404, NOT_FOUND], id);
        for (const path of ["approve", "reject", "enable", "unsilence", "unsuspend", "unsensitive"])
          assert.deepEqual(errorOf(await call("POST", `${V1}/${id}/${path}`, adminToken)), [404, NOT_FOUND], path);
        assert.deepEqual(errorOf(await call("DELETE", `${V1}/${id}`, adminToken)), [404, NOT_FOUND], id);
      }
    });

    test("IDs are strings in the body", async () => {
      const alice = await user("strid");
      assert.match((await call("GET", `${V1}/${alice.account.id}`, adminToken)).body, /"id":"\d+"/);
    });
  });

  describe("v1 filters", () => {
    let local: TestUser;
    let pending: TestUser;
    let remote: string;
    before(async () => {
      local = await user("Filterme");
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ display_name: "Ünïque Dísplay" })
        .where("id", "=", local.account.id)
        .execute();
      await server.ctx.db.kysely
        .updateTable("users")
        .set({ sign_up_ip: "198.51.100.9" })
        .where("id", "=", local.user.id)
        .execute();
      pending = await user("pending", { approved: false });
      remote = (await createRemoteAccount(server.ctx, "faraway", "filter.example")).id;
    });

    test("by default: local accounts that are not suspended, newest first", async () => {
      const rows = await list(`${V1}?limit=200`);
      assert.ok(ids(rows).includes(local.account.id));
      assert.ok(ids(rows).includes(pending.account.id));
      assert.ok(!ids(rows).includes(remote));
      assert.ok(rows.every((r) => r.domain === null && !r.suspended));
      assert.deepEqual(
        ids(rows),
        [...ids(rows)].sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1)),
      );
    });

    test("remote, by_domain, pending, username, display_name, email, ip, staff", async () => {
      assert.ok(ids(await list(`${V1}?remote=true`)).includes(remote));
      assert.deepEqual(ids(await list(`${V1}?remote=true&by_domain=filter.example`)), [remote]);
      assert.deepEqual(ids(await list(`${V1}?pending=true`)), [pending.account.id]);
      assert.deepEqual(ids(await list(`${V1}?username=filterm`)), [local.account.id]);
      assert.deepEqual(ids(await list(`${V1}?username=ilterme`)), []);
      assert.deepEqual(ids(await list(`${V1}?display_name=${encodeURIComponent("que dís")}`)), [local.account.id]);
      assert.deepEqual(ids(await list(`${V1}?email=${local.username.toUpperCase()}@`)), [local.account.id]);
      assert.deepEqual(ids(await list(`${V1}?ip=198.51.100.9`)), [local.account.id]);
      assert.deepEqual(ids(await list(`${V1}?ip=not-an-ip`)), []);
      assert.deepEqual(ids(await list(`${V1}?username=%25`)), []);
      const staff = ids(await list(`${V1}?staff=true`));
      assert.ok(staff.includes(admin.account.id) && staff.includes(moderator.account.id));
      assert.ok(!staff.includes(local.account.id));
    });

    test("disabled, silenced, suspended, sensitized", async () => {
      const d = await user("isdisabled");
      const si = await user("issilenced");
      const su = await user("issuspended");
      const se = await user("issensitized");
      for (const [target, type] of [
        [d, "disable"],
        [si, "silence"],
        [su, "suspend"],
        [se, "sensitive"],
      ] as const)
        assert.equal((await act(target.account.id, { type, send_email_notification: false })).statusCode, 200);
      assert.deepEqual(ids(await list(`${V1}?disabled=true`)), [d.account.id]);
      assert.deepEqual(ids(await list(`${V1}?silenced=true`)), [si.account.id]);
      assert.deepEqual(ids(await list(`${V1}?suspended=true`)), [su.account.id]);
      assert.deepEqual(ids(await list(`${V1}?sensitized=true`)), [se.account.id]);
      assert.ok(!ids(await list(`${V1}?limit=200`)).includes(su.account.id));
    });
  });

  describe("v2 filters", () => {
    test("origin, status, permissions=staff, role_ids[], invited_by", async () => {
      const remote = (await createRemoteAccount(server.ctx, "v2remote", "v2.example")).id;
      const p = await user("v2pending", { approved: false });
      const all = ids(await list(`${V2}?limit=200`));
      assert.ok(all.includes(remote) && all.includes(p.account.id));
      assert.ok(ids(await list(`${V2}?origin=remote&limit=200`)).includes(remote));
      assert.ok(!ids(await list(`${V2}?origin=local&limit=200`)).includes(remote));
      assert.ok(ids(await list(`${V2}?status=pending`)).includes(p.account.id));
      assert.ok(!ids(await list(`${V2}?status=active&origin=remote&by_domain=v2.example`)).includes("x"));
      const staff = ids(await list(`${V2}?permissions=staff`));
      assert.deepEqual(new Set(staff), new Set([admin.account.id, moderator.account.id]));
      assert.deepEqual(ids(await list(`${V2}?role_ids[]=1`)), [moderator.account.id]);
      assert.deepEqual(new Set(ids(await list(`${V2}?role_ids[]=1&role_ids[]=2`))), new Set(staff));
      assert.deepEqual(ids(await list(`${V2}?invited_by=${admin.user.id}`)), []);
      assert.deepEqual(ids(await list(`${V2}?by_domain=V2.EXAMPLE`)), [remote]);
    });

    test("400 for an unknown origin or status (Mastodon's InvalidParameterError)", async () => {
      assert.deepEqual(errorOf(await call("GET", `${V2}?origin=mars`, adminToken)), [400, "Unknown origin: mars"]);
      assert.deepEqual(errorOf(await call("GET", `${V2}?status=asleep`, adminToken)), [400, "Unknown status: asleep"]);
    });

    test("Link paging keeps the filters and walks every page", async () => {
      for (let i = 0; i < 3; i++) await user("pager");
      const first = await call("GET", `${V2}?origin=local&username=pager&limit=2`, adminToken);
      const link = String(first.headers.link);
      assert.match(link, /rel="next"/);
      assert.match(link, /rel="prev"/);
      const next = /<([^>]+)>; rel="next"/.exec(link)![1];
      assert.match(next, /origin=local/);
      assert.match(next, /username=pager/);
      const second = await call("GET", next.replace("https://rookery.test", ""), adminToken);
      const seen = [...ids(first.json() as AdminAccount[]), ...ids(second.json() as AdminAccount[])];
      assert.equal(new Set(seen).size, 3);
      // limit is clamped to 200
      assert.equal((await call("GET", `${V1}?limit=1000`, adminToken)).statusCode, 200);
    });
  });

  describe("who may call it", () => {
    test("403 without a token, for a user without Manage Users, and with a token outside the scopes", async () => {
      const alice = await user("plain");
      const plain = await tokenFor(server.ctx, alice, SCOPES);
      const target = (await user("target")).account.id;
      const routes: Array<[Method, string, object?]> = [
        ["GET", V1],
        ["GET", V2],
        ["GET", `${V1}/${target}`],
        ["POST", `${V1}/${target}/action`, { type: "none" }],
        ["POST", `${V1}/${target}/enable`],
        ["POST", `${V1}/${target}/unsilence`],
        ["DELETE", `${V1}/${target}`],
      ];
      const wrongScope = await tokenFor(server.ctx, admin, "read write admin:read:reports admin:write:reports");
      for (const [method, path, json] of routes) {
        assert.deepEqual(errorOf(await call(method, path, undefined, json)), [403, NOT_ALLOWED], path);
        assert.deepEqual(errorOf(await call(method, path, plain, json)), [403, NOT_ALLOWED], path);
        assert.deepEqual(errorOf(await call(method, path, wrongScope, json)), [403, OUTSIDE_SCOPES], path);
      }
      const readOnly = await tokenFor(server.ctx, admin, "admin:read");
      assert.equal((await call("GET", V1, readOnly)).statusCode, 200);
      assert.deepEqual(errorOf(await act(target, { type: "none" }, readOnly)), [403, OUTSIDE_SCOPES]);
      const broad = await tokenFor(server.ctx, admin, "admin:write");
      assert.equal((await act(target, { type: "none", send_email_notification: false }, broad)).statusCode, 200);
    });

    test("a moderator acts on users but not on a moderator or an admin; remote accounts are below everyone", async () => {
      const peer = await user("peer", { role: "Moderator" });
      const plain = await user("below");
      const rita = await createRemoteAccount(server.ctx, "modrita", "mod.example");
      for (const type of ["none", "disable", "sensitive", "silence", "suspend"]) {
        assert.deepEqual(errorOf(await act(admin.account.id, { type }, modToken)), [403, NOT_ALLOWED], type);
        assert.deepEqual(errorOf(await act(peer.account.id, { type }, modToken)), [403, NOT_ALLOWED], type);
      }
      assert.equal((await act(plain.account.id, { type: "silence" }, modToken)).statusCode, 200);
      assert.equal((await act(rita.id, { type: "silence" }, modToken)).statusCode, 200);
      assert.equal((await act(peer.account.id, { type: "silence" })).statusCode, 200, "an admin outranks a moderator");
      assert.equal((await show(admin.account.id)).silenced, false);
      // Lifting needs no rank (Mastodon's AccountPolicy#unsilence?).
      assert.equal((await call("POST", `${V1}/${peer.account.id}/unsilence`, modToken)).statusCode, 200);
    });

    test("DELETE needs Delete User Data: a moderator is refused", async () => {
      const victim = await user("modelete");
      await act(victim.account.id, { type: "suspend", send_email_notification: false });
      assert.deepEqual(errorOf(await call("DELETE", `${V1}/${victim.account.id}`, modToken)), [403, NOT_ALLOWED]);
    });
  });

  describe("actions", () => {
    test("422 without a type or with an unknown one; 404 for an unknown report or preset; disable of a remote account", async () => {
      const target = (await user("badinput")).account.id;
      const blank = "Validation failed: Type can't be blank, Type is not included in the list";
      const unknown = "Validation failed: Type is not included in the list";
      assert.deepEqual(errorOf(await act(target, {})), [422, blank]);
      assert.deepEqual(errorOf(await act(target, { type: "" })), [422, blank]);
      assert.deepEqual(errorOf(await act(target, { type: "obliterate" })), [422, unknown]);
      assert.deepEqual(errorOf(await act(target, { type: ["suspend"] })), [422, blank]);
      assert.deepEqual(errorOf(await act(target, { type: "none", report_id: newId() })), [404, NOT_FOUND]);
      assert.deepEqual(errorOf(await act(target, { type: "none", report_id: "abc" })), [404, NOT_FOUND]);
      assert.deepEqual(errorOf(await act(target, { type: "none", warning_preset_id: 12345 })), [404, NOT_FOUND]);
      const rita = await createRemoteAccount(server.ctx, "nodisable", "nd.example");
      assert.deepEqual(errorOf(await act(rita.id, { type: "disable" })), [422, unknown]);
      assert.equal((await show(target)).suspended, false);
    });

    test("suspend with a report: strike, every open report resolved, audit log, e-mail, tokens refused, posts gone, other servers told", async () => {
      const reporter = await user("reporter");
      const spammer = await user("spammer");
      const observer = await user("observer");
      const post = await postStatus(server, spammer, { status: "buy now", visibility: "public" });
      assert.ok((await publicIds(observer.token)).includes(post.id));
      const file = async () => {
        const res = await request(server.app, "POST", "/api/v1/reports", {
          token: reporter.token,
          json: { account_id: spammer.account.id, status_ids: [post.id], comment: "spam" },
        });
        assert.equal(res.statusCode, 200, res.body);
        return (res.json() as { id: string }).id;
      };
      const [first, second] = [await file(), await file()];
      const res = await actRaw(spammer.account.id, `{"type":"suspend","report_id":${first},"text":"Spam."}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});

      const warning = await server.ctx.db.kysely
        .selectFrom("account_warnings")
        .selectAll()
        .where("target_account_id", "=", spammer.account.id)
        .executeTakeFirstOrThrow();
      assert.equal(warning.action, "suspend");
      assert.equal(warning.text, "Spam.");
      assert.equal(warning.account_id, admin.account.id);
      assert.equal(warning.report_id, first);
      assert.deepEqual(JSON.parse(warning.status_ids!), [post.id]);
      const reports = await server.ctx.db.kysely
        .selectFrom("reports")
        .select(["id", "action_taken_at", "action_taken_by_account_id"])
        .where("id", "in", [first, second])
        .execute();
      assert.ok(reports.every((r) => r.action_taken_at && r.action_taken_by_account_id === admin.account.id));
      assert.deepEqual(
        (await auditOf(spammer.account.id)).map((e) => [e.action, e.target_type, e.account_id]),
        [["suspend", "Account", admin.account.id]],
      );
      assert.deepEqual(
        (await auditOf(first)).map((e) => e.action),
        ["resolve"],
      );
      const mails = await jobsNamed("mail.deliver", spammer.username);
      assert.equal(mails.length, 1);
      assert.match(mails[0], /has been suspended/);
      assert.match(mails[0], /Spam\./);
      const strike = await server.ctx.db.kysely
        .selectFrom("account_warnings")
        .select("id")
        .where("target_account_id", "=", spammer.account.id)
        .executeTakeFirstOrThrow();
      assert.ok(
        mails[0].includes(`/disputes/strikes/${strike.id}`),
        "the mail links to the strike, where it is appealed",
      );
      assert.equal((await jobsNamed("account.updated:deliver", spammer.account.id)).length, 1);

      assert.deepEqual(
        errorOf(await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: spammer.token })),
        [403, DISABLED],
      );
      assert.ok(!(await publicIds(observer.token)).includes(post.id));
      const shown = await show(spammer.account.id);
      assert.equal(shown.suspended, true);
      assert.equal(shown.account.suspended, true);
    });

    test("silence: public posts leave the public timelines; unsilence brings them back, logged once", async () => {
      const loud = await user("loud");
      const observer = await user("listener");
      const post = await postStatus(server, loud, { status: "hello world", visibility: "public" });
      assert.equal((await act(loud.account.id, { type: "silence", send_email_notification: "0" })).statusCode, 200);
      assert.ok(!(await publicIds(observer.token)).includes(post.id));
      assert.equal((await show(loud.account.id)).account.limited, true);
      assert.deepEqual(await jobsNamed("mail.deliver", loud.username), []);
      const lifted = await call("POST", `${V1}/${loud.account.id}/unsilence`, adminToken);
      assert.equal(lifted.statusCode, 200);
      assert.equal((lifted.json() as AdminAccount).silenced, false);
      assert.ok((await publicIds(observer.token)).includes(post.id));
      await call("POST", `${V1}/${loud.account.id}/unsilence`, adminToken);
      assert.deepEqual(
        (await auditOf(loud.account.id)).map((e) => e.action),
        ["silence", "unsilence"],
      );
    });

    test("disable refuses the user's tokens; enable lets them in again", async () => {
      const frozen = await user("frozen");
      assert.equal((await act(frozen.account.id, { type: "disable" })).statusCode, 200);
      const me = () => request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: frozen.token });
      assert.deepEqual(errorOf(await me()), [403, DISABLED]);
      assert.equal((await show(frozen.account.id)).disabled, true);
      assert.match((await jobsNamed("mail.deliver", frozen.username))[0], /frozen/);
      const enabled = await call("POST", `${V1}/${frozen.account.id}/enable`, adminToken);
      assert.equal(enabled.statusCode, 200);
      assert.equal((enabled.json() as AdminAccount).disabled, false);
      assert.equal((await me()).statusCode, 200);
      assert.deepEqual(
        (await auditOf(frozen.user.id)).map((e) => [e.action, e.target_type]),
        [
          ["disable", "User"],
          ["enable", "User"],
        ],
      );
    });

    test("sensitive and unsensitive", async () => {
      const nsfw = await user("nsfw");
      assert.equal((await act(nsfw.account.id, { type: "sensitive" })).statusCode, 200);
      assert.equal((await show(nsfw.account.id)).sensitized, true);
      const res = await call("POST", `${V1}/${nsfw.account.id}/unsensitive`, adminToken);
      assert.equal((res.json() as AdminAccount).sensitized, false);
      assert.deepEqual(
        (await auditOf(nsfw.account.id)).map((e) => e.action),
        ["sensitive", "unsensitive"],
      );
    });

    test("none: a warning with the preset's text and the moderator's; logged as a warning; only the given report resolved", async () => {
      const warned = await user("warned");
      const reporter = await user("reporter");
      const now = new Date().toISOString();
      const presetId = newId();
      await server.ctx.db.kysely
        .insertInto("account_warning_presets")
        .values({ id: presetId, title: "Rude", text: "Be kind.", created_at: now, updated_at: now })
        .execute();
      const file = async () =>
        (
          (
            await request(server.app, "POST", "/api/v1/reports", {
              token: reporter.token,
              json: { account_id: warned.account.id, comment: "rude" },
            })
          ).json() as { id: string }
        ).id;
      const [given, other] = [await file(), await file()];
      const res = await actRaw(
        warned.account.id,
        `{"type":"none","warning_preset_id":${presetId},"text":"Last chance.","report_id":"${given}"}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      const warning = await server.ctx.db.kysely
        .selectFrom("account_warnings")
        .selectAll()
        .where("target_account_id", "=", warned.account.id)
        .executeTakeFirstOrThrow();
      assert.equal(warning.text, "Be kind.\n\nLast chance.");
      assert.equal(warning.action, "none");
      const audit = await server.ctx.db.kysely
        .selectFrom("admin_action_logs")
        .select(["action", "target_type"])
        .where("target_id", "in", [warning.id, given, other])
        .execute();
      assert.deepEqual(
        new Set(audit.map((a) => `${a.action} ${a.target_type}`)),
        new Set(["create AccountWarning", "resolve Report"]),
      );
      const open = await server.ctx.db.kysely
        .selectFrom("reports")
        .select("id")
        .where("id", "in", [given, other])
        .where("action_taken_at", "is", null)
        .execute();
      assert.deepEqual(
        open.map((r) => r.id),
        [other],
      );
      const state = await show(warned.account.id);
      assert.deepEqual([state.suspended, state.silenced, state.disabled], [false, false, false]);
      assert.match((await jobsNamed("mail.deliver", warned.username))[0], /Be kind/);
    });

    test("resolving reports needs Manage Reports", async () => {
      const now = new Date().toISOString();
      const roleId = newId();
      await server.ctx.db.kysely
        .insertInto("user_roles")
        .values({
          id: roleId,
          name: "Users only",
          permissions: 1 << 10,
          position: 50,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const limited = await user("usersonly");
      await server.ctx.db.kysely
        .updateTable("users")
        .set({ role_id: roleId })
        .where("id", "=", limited.user.id)
        .execute();
      const token = await tokenFor(server.ctx, limited, SCOPES);
      const target = await user("reported");
      const reporter = await user("reporter");
      await request(server.app, "POST", "/api/v1/reports", {
        token: reporter.token,
        json: { account_id: target.account.id, comment: "x" },
      });
      assert.deepEqual(errorOf(await act(target.account.id, { type: "silence" }, token)), [403, NOT_ALLOWED]);
      assert.equal((await show(target.account.id)).silenced, false);
      const clean = await user("unreported");
      assert.equal((await act(clean.account.id, { type: "silence" }, token)).statusCode, 200);
    });

    test("suspending a remote account ends its follows of local accounts", async () => {
      const rita = await createRemoteAccount(server.ctx, "follower", "susp.example");
      const local = await user("followed");
      await server.ctx.db.kysely
        .insertInto("follows")
        .values({
          id: newId(),
          account_id: rita.id,
          target_account_id: local.account.id,
          uri: "https://susp.example/follows/1",
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
        })
        .execute();
      assert.equal((await act(rita.id, { type: "suspend" })).statusCode, 200);
      const follows = await server.ctx.db.kysely
        .selectFrom("follows")
        .select("id")
        .where("account_id", "=", rita.id)
        .execute();
      assert.deepEqual(follows, []);
      assert.deepEqual(await jobsNamed("mail.deliver", "follower"), []);
    });
  });

  describe("approve, reject, unsuspend, delete", () => {
    test("approve a pending sign-up: approved, logged, mailed; again, or a remote account: 403", async () => {
      const waiting = await user("waiting", { approved: false });
      const res = await call("POST", `${V1}/${waiting.account.id}/approve`, adminToken);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json() as AdminAccount).approved, true);
      assert.deepEqual(
        (await auditOf(waiting.user.id)).map((e) => e.action),
        ["approve"],
      );
      assert.match((await jobsNamed("mail.deliver", waiting.username))[0], /approved/);
      assert.deepEqual(errorOf(await call("POST", `${V1}/${waiting.account.id}/approve`, adminToken)), [
        403,
        NOT_ALLOWED,
      ]);
      const rita = await createRemoteAccount(server.ctx, "approverita", "ap.example");
      for (const path of ["approve", "reject", "enable"])
        assert.deepEqual(errorOf(await call("POST", `${V1}/${rita.id}/${path}`, adminToken)), [403, NOT_ALLOWED], path);
    });

    test("reject a pending sign-up: the account is gone and the username free; an approved one: 403", async () => {
      const waiting = await user("rejectme", { approved: false });
      const res = await call("POST", `${V1}/${waiting.account.id}/reject`, adminToken);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
      assert.deepEqual(errorOf(await call("GET", `${V1}/${waiting.account.id}`, adminToken)), [404, NOT_FOUND]);
      assert.deepEqual(
        (await auditOf(waiting.user.id)).map((e) => e.action),
        ["reject"],
      );
      await createUser(server.ctx, waiting.username);
      const approved = await user("approved");
      assert.deepEqual(errorOf(await call("POST", `${V1}/${approved.account.id}/reject`, adminToken)), [
        403,
        NOT_ALLOWED,
      ]);
    });

    test("unsuspend: 403 unless suspended; lifts it, logs it and tells other servers", async () => {
      const back = await user("comeback");
      assert.deepEqual(errorOf(await call("POST", `${V1}/${back.account.id}/unsuspend`, adminToken)), [
        403,
        NOT_ALLOWED,
      ]);
      await act(back.account.id, { type: "suspend", send_email_notification: false });
      const res = await call("POST", `${V1}/${back.account.id}/unsuspend`, adminToken);
      assert.equal(res.statusCode, 200);
      assert.equal((res.json() as AdminAccount).suspended, false);
      assert.equal(
        (await request(server.app, "GET", "/api/v1/accounts/verify_credentials", { token: back.token })).statusCode,
        200,
      );
      assert.equal((await jobsNamed("account.updated:deliver", back.account.id)).length, 2);
      assert.deepEqual(
        (await auditOf(back.account.id)).map((e) => e.action),
        ["suspend", "unsuspend"],
      );
    });

    test("DELETE: 403 unless suspended; then {} and a job removes a local account's posts; again: 403", async () => {
      const gone = await user("goner");
      const post = await postStatus(server, gone, { status: "soon gone", visibility: "public" });
      assert.deepEqual(errorOf(await call("DELETE", `${V1}/${gone.account.id}`, adminToken)), [403, NOT_ALLOWED]);
      await act(gone.account.id, { type: "suspend", send_email_notification: false });
      const res = await call("DELETE", `${V1}/${gone.account.id}`, adminToken);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
      await server.ctx.jobs.drain();
      const status = await server.ctx.db.kysely
        .selectFrom("statuses")
        .select(["id", "deleted_at"])
        .where("id", "=", post.id)
        .executeTakeFirst();
      assert.ok(!status || status.deleted_at !== null);
      const row = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select("deleted_at")
        .where("id", "=", gone.account.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.deleted_at);
      assert.deepEqual(errorOf(await call("DELETE", `${V1}/${gone.account.id}`, adminToken)), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await call("POST", `${V1}/${gone.account.id}/unsuspend`, adminToken)), [
        403,
        NOT_ALLOWED,
      ]);
      assert.deepEqual(
        (await auditOf(gone.account.id)).map((e) => e.action),
        ["suspend", "destroy"],
      );
    });

    test("DELETE of a suspended remote account queues the purge of its posts", async () => {
      const rita = await createRemoteAccount(server.ctx, "purgeme", "purge.example");
      await act(rita.id, { type: "suspend" });
      assert.equal((await call("DELETE", `${V1}/${rita.id}`, adminToken)).statusCode, 200);
      assert.equal((await jobsNamed("accounts.purge", rita.id)).length, 1);
    });
  });
});
