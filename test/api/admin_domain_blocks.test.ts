/**
 * Admin domain blocks: every endpoint and its errors (permission, scopes, 404, 422 with the
 * existing block, the spec's 500 for a bad severity on update), Link paging, enforcement on the
 * accounts already known (suspend hides them and their posts, silence keeps their posts off the
 * public and hashtag timelines and filters their notifications; lifting restores them), the public
 * list with obfuscation, and the `rookery domain-blocks` command.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runCli } from "../../src/cli/main.ts";
import { newId } from "../../src/db/ids.ts";
import { notify } from "../../src/services/notifications/notify.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Block {
  id: string;
  domain: string;
  digest: string;
  severity: string;
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
}

const NOT_ALLOWED = "This action is not allowed";

describe("admin domain blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "fedadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read:domain_blocks admin:write:domain_blocks");
  });
  after(() => server.close());

  const api = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, json?: object, t = token) =>
    request(server.app, method, path, { token: t, json });
  const create = async (json: object) => {
    const res = await api("POST", "/api/v1/admin/domain_blocks", json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Block;
  };
  let domains = 0;
  const domain = () => `blocked${++domains}.example`;

  test("create with every field, read, update, delete", async () => {
    const name = domain();
    const block = await create({
      domain: ` ${name.toUpperCase()} `,
      severity: "suspend",
      reject_media: true,
      reject_reports: true,
      private_comment: "spam wave",
      public_comment: "Spam",
      obfuscate: true,
    });
    assert.equal(block.domain, name);
    assert.match(block.digest, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      [
        block.severity,
        block.reject_media,
        block.reject_reports,
        block.private_comment,
        block.public_comment,
        block.obfuscate,
      ],
      ["suspend", true, true, "spam wave", "Spam", true],
    );
    assert.deepEqual((await api("GET", `/api/v1/admin/domain_blocks/${block.id}`)).json(), block);
    const updated = (
      await api("PUT", `/api/v1/admin/domain_blocks/${block.id}`, {
        severity: "noop",
        reject_media: false,
        public_comment: "",
        domain: "ignored.example",
      })
    ).json() as Block;
    assert.deepEqual(
      [updated.domain, updated.severity, updated.reject_media, updated.public_comment, updated.private_comment],
      [name, "noop", false, null, "spam wave"],
    );
    assert.deepEqual((await api("DELETE", `/api/v1/admin/domain_blocks/${block.id}`)).json(), {});
    assert.equal(errorOf(await api("GET", `/api/v1/admin/domain_blocks/${block.id}`))[0], 404);
    assert.equal(errorOf(await api("PUT", `/api/v1/admin/domain_blocks/${block.id}`, { severity: "noop" }))[0], 404);
    assert.equal(errorOf(await api("DELETE", `/api/v1/admin/domain_blocks/${block.id}`))[0], 404);
  });

  test("defaults: silence, nothing rejected, not obfuscated", async () => {
    const block = await create({ domain: domain() });
    assert.deepEqual(
      [block.severity, block.reject_media, block.reject_reports, block.obfuscate, block.private_comment],
      ["silence", false, false, false, null],
    );
  });

  test("422: no domain, not a domain, an unknown severity; a covered domain answers with the existing block", async () => {
    assert.deepEqual(errorOf(await api("POST", "/api/v1/admin/domain_blocks", {})), [
      422,
      "Validation failed: Domain can't be blank",
    ]);
    assert.equal(errorOf(await api("POST", "/api/v1/admin/domain_blocks", { domain: "not a domain" }))[0], 422);
    assert.equal(
      errorOf(await api("POST", "/api/v1/admin/domain_blocks", { domain: domain(), severity: "x" }))[0],
      422,
    );

    const parent = `parent${++domains}.example`;
    const existing = await create({ domain: parent, severity: "silence" });
    for (const json of [
      { domain: parent },
      { domain: `sub.${parent}`, severity: "silence" },
      { domain: `sub.${parent}`, severity: "noop" },
    ]) {
      const res = await api("POST", "/api/v1/admin/domain_blocks", json);
      assert.equal(res.statusCode, 422, JSON.stringify(json));
      const body = res.json() as { error: string; existing_domain_block: Block };
      assert.equal(typeof body.error, "string");
      assert.deepEqual(body.existing_domain_block, existing);
    }
    // Stricter than the parent's: allowed.
    const stricter = await create({ domain: `sub.${parent}`, severity: "suspend" });
    assert.equal(stricter.domain, `sub.${parent}`);
  });

  test("PUT with an unknown severity is the spec's 500, with a JSON body; nothing changes", async () => {
    const block = await create({ domain: domain(), severity: "silence" });
    const res = await api("PUT", `/api/v1/admin/domain_blocks/${block.id}`, { severity: "obliterate" });
    assert.equal(res.statusCode, 500);
    assert.equal(typeof (res.json() as { error: string }).error, "string");
    assert.equal(((await api("GET", `/api/v1/admin/domain_blocks/${block.id}`)).json() as Block).severity, "silence");
  });

  test("pages of 100 by default, up to 200, with a Link header", async () => {
    const fresh = await createTestServer();
    try {
      const owner = await createUser(fresh.ctx, "pager", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, owner, "admin:read admin:write");
      for (let i = 0; i < 5; i++)
        await request(fresh.app, "POST", "/api/v1/admin/domain_blocks", {
          token: t,
          json: { domain: `p${i}.example` },
        });
      const res = await request(fresh.app, "GET", "/api/v1/admin/domain_blocks?limit=2", { token: t });
      assert.deepEqual(
        (res.json() as Block[]).map((b) => b.domain),
        ["p4.example", "p3.example"],
      );
      const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link))?.[1];
      assert.ok(next);
      const rest = await request(fresh.app, "GET", `/api/v1/admin/domain_blocks${new URL(next).search}`, { token: t });
      assert.deepEqual(
        (rest.json() as Block[]).map((b) => b.domain),
        ["p2.example", "p1.example"],
      );
      assert.equal(
        ((await request(fresh.app, "GET", "/api/v1/admin/domain_blocks", { token: t })).json() as Block[]).length,
        5,
      );
    } finally {
      await fresh.close();
    }
  });

  test("403 without the permission, without a token, with a bad token; 403 outside the scopes", async () => {
    const plain = await createUser(server.ctx, "plainuser");
    const plainToken = await tokenFor(server.ctx, plain, "admin:read admin:write");
    const moderator = await createUser(server.ctx, "justmod", { role: "Moderator" });
    const modToken = await tokenFor(server.ctx, moderator, "admin:read admin:write");
    for (const t of [plainToken, modToken, undefined, "nonsense"]) {
      const list = await request(server.app, "GET", "/api/v1/admin/domain_blocks", { token: t });
      assert.deepEqual(errorOf(list), [403, NOT_ALLOWED], String(t));
      const post = await request(server.app, "POST", "/api/v1/admin/domain_blocks", {
        token: t,
        json: { domain: domain() },
      });
      assert.deepEqual(errorOf(post), [403, NOT_ALLOWED], String(t));
    }
    const readOnly = await tokenFor(server.ctx, admin, "admin:read:domain_blocks");
    assert.equal(errorOf(await api("POST", "/api/v1/admin/domain_blocks", { domain: domain() }, readOnly))[0], 403);
    const other = await tokenFor(server.ctx, admin, "admin:read:accounts read");
    assert.equal(errorOf(await api("GET", "/api/v1/admin/domain_blocks", undefined, other))[0], 403);
    const parent = await tokenFor(server.ctx, admin, "admin:read");
    assert.equal((await api("GET", "/api/v1/admin/domain_blocks", undefined, parent)).statusCode, 200);
  });

  describe("enforcement on what is already stored", () => {
    test("suspend hides the domain's accounts and their posts; lifting the block restores them", async () => {
      const name = domain();
      const viewer = await createUser(server.ctx, "enfviewer");
      const [remote, sub] = await Promise.all([
        createRemoteAccount(server.ctx, "remoteuser", name),
        createRemoteAccount(server.ctx, "subuser", `sub.${name}`),
      ]);
      const untouched = await createRemoteAccount(server.ctx, "already", name);
      const manual = new Date(Date.now() - 3600_000).toISOString();
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ suspended_at: manual })
        .where("id", "=", untouched.id)
        .execute();
      const block = await create({ domain: name, severity: "suspend" });
      // Shown as suspended, as any suspended account is (spec: GET account of a suspended account).
      for (const account of [remote, sub]) {
        const shown = (await get(server.app, `/api/v1/accounts/${account.id}`, viewer.token)).json() as {
          suspended?: boolean;
        };
        assert.equal(shown.suspended, true);
      }
      const rows = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select(["id", "suspended_at"])
        .where("id", "in", [remote.id, sub.id, untouched.id])
        .execute();
      assert.ok(rows.every((r) => r.suspended_at !== null));
      await api("DELETE", `/api/v1/admin/domain_blocks/${block.id}`);
      const after = new Map(
        (
          await server.ctx.db.kysely
            .selectFrom("accounts")
            .select(["id", "suspended_at"])
            .where("id", "in", [remote.id, sub.id, untouched.id])
            .execute()
        ).map((r) => [r.id, r.suspended_at]),
      );
      assert.equal(after.get(remote.id), null);
      assert.equal(after.get(sub.id), null);
      assert.equal(after.get(untouched.id), manual, "a moderator's own suspension stays");
    });

    test("silence keeps posts off the public timeline and filters notifications; softening to noop lifts it", async () => {
      const name = domain();
      const receiver = await createUser(server.ctx, "silreceiver");
      const remote = await createRemoteAccount(server.ctx, "loud", name);
      const now = new Date().toISOString();
      const statusId = newId();
      await server.ctx.db.kysely
        .insertInto("statuses")
        .values({
          id: statusId,
          uri: `https://${name}/statuses/1`,
          url: `https://${name}/@loud/1`,
          account_id: remote.id,
          text: "",
          content: "<p>remote post</p>",
          visibility: "public",
          local: false,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const publicIds = async () =>
        ((await get(server.app, "/api/v1/timelines/public", receiver.token)).json() as Array<{ id: string }>).map(
          (s) => s.id,
        );
      assert.ok((await publicIds()).includes(statusId));
      const block = await create({ domain: name, severity: "silence" });
      assert.ok(!(await publicIds()).includes(statusId));
      await notify(server.ctx, {
        type: "follow",
        receiverId: receiver.account.id,
        fromId: remote.id,
        activityType: "Follow",
        activityId: newId(),
      });
      const notes = (
        await get(server.app, "/api/v1/notifications?include_filtered=true", receiver.token)
      ).json() as Array<{
        filtered?: boolean;
      }>;
      assert.deepEqual(
        notes.map((n) => n.filtered),
        [true],
      );
      await api("PUT", `/api/v1/admin/domain_blocks/${block.id}`, { severity: "noop" });
      assert.ok((await publicIds()).includes(statusId));
    });
  });

  test("GET /api/v1/instance/domain_blocks follows the instance settings; obfuscates when asked", async () => {
    const fresh = await createTestServer();
    try {
      const owner = await createUser(fresh.ctx, "pubadmin", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, owner, "admin:write read");
      for (const json of [
        { domain: "example.com", severity: "suspend", obfuscate: true, public_comment: "abuse" },
        { domain: "quiet.example", severity: "silence" },
        { domain: "noop.example", severity: "noop", reject_media: true },
      ])
        await request(fresh.app, "POST", "/api/v1/admin/domain_blocks", { token: t, json });
      const list = (tok?: string) => get(fresh.app, "/api/v1/instance/domain_blocks", tok);
      assert.equal((await list()).statusCode, 404);
      await saveSetting(fresh.ctx.db.kysely, "show_domain_blocks", "users");
      assert.equal((await list()).statusCode, 404);
      assert.equal((await list(t)).statusCode, 200);
      await saveSetting(fresh.ctx.db.kysely, "show_domain_blocks", "all");
      await saveSetting(fresh.ctx.db.kysely, "show_domain_blocks_rationale", "all");
      const body = (await list()).json() as Array<{
        domain: string;
        digest: string;
        severity: string;
        comment?: string;
      }>;
      assert.deepEqual(
        body.map((b) => [b.domain, b.severity, b.comment]),
        [
          ["exa****.*om", "suspend", "abuse"],
          ["quiet.example", "silence", ""],
        ],
      );
      assert.match(body[0]!.digest, /^[0-9a-f]{64}$/);
    } finally {
      await fresh.close();
    }
  });

  test("rookery domain-blocks add, list, remove", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const cli = (...argv: string[]) => {
      out.length = 0;
      err.length = 0;
      return runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, async () => ({
        ctx: server.ctx,
        release: async () => {},
      }));
    };
    const name = `cli${++domains}.example`;
    assert.equal(await cli("domain-blocks", "add", name, "--severity", "suspend", "--reject-media"), 0);
    assert.match(out.join("\n"), new RegExp(`Blocked ${name} \\(suspend\\)`));
    assert.equal(await cli("domain-blocks", "list"), 0);
    assert.ok(
      out.some((l) => l.startsWith(`${name}\tsuspend\treject-media`)),
      out.join("\n"),
    );
    assert.equal(await cli("domain-blocks", "add", name, "--severity", "silence"), 0);
    assert.match(out.join("\n"), /Updated the block/);
    assert.notEqual(await cli("domain-blocks", "add", name, "--severity", "bogus"), 0);
    assert.notEqual(await cli("domain-blocks", "add", `sub.${name}`), 0);
    assert.equal(await cli("domain-blocks", "list", "--json"), 0);
    assert.ok((JSON.parse(out.join("\n")) as Block[]).some((b) => b.domain === name && b.severity === "silence"));
    assert.equal(await cli("domain-blocks", "remove", name), 0);
    assert.equal(await cli("domain-blocks", "remove", name), 1);
    assert.equal(await cli("domain-blocks", "--help"), 0);
  });

  test("Admin::DomainBlock matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const block = await create({ domain: domain(), public_comment: "x" });
    assert.deepEqual(validateSchema("AdminDomainBlock", block), []);
  });
});
