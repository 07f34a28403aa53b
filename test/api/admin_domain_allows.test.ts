/**
 * Admin domain allows (the allow-list of limited federation mode): every endpoint and its errors
 * (403 without a token, with a token outside the scopes or of a user without Manage Federation;
 * 404; 422 for a blank or invalid domain), Link paging with Mastodon's limits, an idempotent POST,
 * the domain as stored (lowercase, punycode, no trailing dot, no port), IDs as strings, DELETE
 * answering `{}`, and what removing an allow does: in limited federation mode the domain's accounts
 * are suspended at once and a job removes their posts and follows; outside it, nothing else changes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { newId } from "../../src/db/ids.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  follow,
  OUTSIDE_SCOPES,
  request,
  revokeToken,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Allow {
  id: string;
  domain: string;
  created_at: string;
}

const NOT_ALLOWED = "This action is not allowed";
const NOT_FOUND = "Record not found";
const BLANK = "Validation failed: Domain can't be blank";
const INVALID = "Validation failed: Domain is not a valid domain name";
const ALLOWS = "/api/v1/admin/domain_allows";
const PURGE_JOB = "domain_allows.purge";

type Method = "GET" | "POST" | "DELETE";

/** An admin of `server` with a token holding both domain_allows scopes. */
async function adminOf(server: TestServer, username: string): Promise<{ admin: TestUser; token: string }> {
  const admin = await createUser(server.ctx, username, { role: "Admin" });
  return { admin, token: await tokenFor(server.ctx, admin, "admin:read:domain_allows admin:write:domain_allows") };
}

function call(server: TestServer, method: Method, path: string, token: string | undefined, json?: object) {
  return request(server.app, method, path, { token, json });
}

async function allow(server: TestServer, token: string, domain: unknown): Promise<Allow> {
  const res = await call(server, "POST", ALLOWS, token, { domain });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Allow;
}

/** A public post of a remote account, stored as federation stores one. */
async function remotePost(server: TestServer, accountId: string, domain: string): Promise<string> {
  const id = newId();
  const now = new Date().toISOString();
  await server.ctx.db.kysely
    .insertInto("statuses")
    .values({
      id,
      uri: `https://${domain}/statuses/${id}`,
      url: `https://${domain}/@someone/${id}`,
      account_id: accountId,
      text: "",
      content: "<p>remote post</p>",
      visibility: "public",
      local: false,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

describe("admin domain allows", () => {
  let server: TestServer;
  let token: string;
  let admin: TestUser;
  before(async () => {
    server = await createTestServer();
    ({ admin, token } = await adminOf(server, "allowadmin"));
  });
  after(() => server.close());

  let domains = 0;
  const domain = () => `allowed${++domains}.example`;

  test("POST allows, GET shows it, the list has it, DELETE answers {} and it is gone", async () => {
    const name = domain();
    const created = await allow(server, token, name);
    assert.equal(created.domain, name);
    assert.ok(!Number.isNaN(Date.parse(created.created_at)), created.created_at);
    assert.deepEqual(Object.keys(created).sort(), ["created_at", "domain", "id"]);

    const shown = await call(server, "GET", `${ALLOWS}/${created.id}`, token);
    assert.equal(shown.statusCode, 200);
    assert.deepEqual(shown.json(), created);
    const list = (await call(server, "GET", ALLOWS, token)).json() as Allow[];
    assert.deepEqual(
      list.find((a) => a.id === created.id),
      created,
    );

    const removed = await call(server, "DELETE", `${ALLOWS}/${created.id}`, token);
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), {});
    assert.deepEqual(errorOf(await call(server, "GET", `${ALLOWS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await call(server, "DELETE", `${ALLOWS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.ok(!((await call(server, "GET", ALLOWS, token)).json() as Allow[]).some((a) => a.id === created.id));
  });

  test("GET and DELETE of an unknown ID, a word or an ID beyond 64 bits: 404", async () => {
    for (const id of [newId(), "abc", "9223372036854775808", "99999999999999999999999"]) {
      assert.deepEqual(errorOf(await call(server, "GET", `${ALLOWS}/${id}`, token)), [404, NOT_FOUND], id);
      assert.deepEqual(errorOf(await call(server, "DELETE", `${ALLOWS}/${id}`, token)), [404, NOT_FOUND], id);
    }
  });

  test("IDs are strings of digits, never JSON numbers (a 64-bit ID would lose digits as one)", async () => {
    const created = await call(server, "POST", ALLOWS, token, { domain: domain() });
    assert.match(created.body, /"id":"\d+"/);
    const { id } = created.json() as Allow;
    assert.equal(typeof id, "string");
    assert.match((await call(server, "GET", `${ALLOWS}/${id}`, token)).body, new RegExp(`"id":"${id}"`));
    assert.match((await call(server, "GET", ALLOWS, token)).body, new RegExp(`"id":"${id}"`));
  });

  test("POST of an allowed domain answers the existing allow with 200, however it is written", async () => {
    const name = domain();
    const first = await allow(server, token, name);
    for (const again of [name, name.toUpperCase(), `${name}.`, ` ${name} `, `${name}:8443`])
      assert.deepEqual(await allow(server, token, again), first, again);
    const rows = await server.ctx.db.kysely
      .selectFrom("domain_allows")
      .select("id")
      .where("domain", "=", name)
      .execute();
    assert.equal(rows.length, 1);
  });

  test("the domain is stored lowercase, in punycode, without a trailing dot or a port", async () => {
    const cases: Array<[string, string]> = [
      ["Mixed.CASE.Example", "mixed.case.example"],
      ["trailing.example.", "trailing.example"],
      ["bücher.example", "xn--bcher-kva.example"],
      ["ПРИМЕР.example", "xn--e1afmkfd.example"],
      ["ported.example:8443", "ported.example"],
      ["  spaced.example  ", "spaced.example"],
    ];
    for (const [sent, stored] of cases) assert.equal((await allow(server, token, sent)).domain, stored, sent);
  });

  test("422 for a blank or missing domain and for what is not a domain name", async () => {
    for (const json of [{}, { domain: "" }, { domain: "   " }, { domain: null }, { domain: ["a.example"] }])
      assert.deepEqual(errorOf(await call(server, "POST", ALLOWS, token, json)), [422, BLANK], JSON.stringify(json));
    for (const bad of [
      "not a domain",
      "-dash.example",
      "a..b.example",
      "under_score.example",
      "x".repeat(64) + ".example",
    ])
      assert.deepEqual(errorOf(await call(server, "POST", ALLOWS, token, { domain: bad })), [422, INVALID], bad);
  });

  test("form parameters work as JSON does", async () => {
    const name = domain();
    const res = await request(server.app, "POST", ALLOWS, { token, form: { domain: name } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as Allow).domain, name);
  });

  describe("who may call it", () => {
    const routes = async (): Promise<Array<[Method, string, object?]>> => {
      const target = await allow(server, token, domain());
      return [
        ["GET", ALLOWS],
        ["GET", `${ALLOWS}/${target.id}`],
        ["POST", ALLOWS, { domain: domain() }],
        ["DELETE", `${ALLOWS}/${target.id}`],
      ];
    };
    const send = (route: [Method, string, object?], t: string | undefined) =>
      call(server, route[0], route[1], t, route[2]);

    // Mastodon checks a token only when one is given, then Pundit refuses the missing user: 403.
    test("403 This action is not allowed without a token, with an unknown or a revoked one", async () => {
      const revoked = await tokenFor(server.ctx, admin, "admin:read admin:write");
      await revokeToken(server.ctx, revoked);
      for (const route of await routes())
        for (const t of [undefined, "not-a-token", revoked])
          assert.deepEqual(errorOf(await send(route, t)), [403, NOT_ALLOWED], `${route[0]} ${route[1]} ${t}`);
    });

    test("403 outside the scopes: the other half, the domain_blocks scopes, a user's scopes", async () => {
      const tokens = {
        read: await tokenFor(server.ctx, admin, "admin:read:domain_allows"),
        write: await tokenFor(server.ctx, admin, "admin:write:domain_allows"),
        blocks: await tokenFor(server.ctx, admin, "admin:read:domain_blocks admin:write:domain_blocks"),
        user: await tokenFor(server.ctx, admin, "read write follow push"),
      };
      for (const route of await routes()) {
        const wrong =
          route[0] === "GET" ? [tokens.write, tokens.blocks, tokens.user] : [tokens.read, tokens.blocks, tokens.user];
        for (const t of wrong)
          assert.deepEqual(errorOf(await send(route, t)), [403, OUTSIDE_SCOPES], `${route[0]} ${route[1]}`);
      }
    });

    test("403 for users without Manage Federation (a plain user, a moderator), whatever their scopes", async () => {
      const plain = await createUser(server.ctx, "allowplain");
      const moderator = await createUser(server.ctx, "allowmod", { role: "Moderator" });
      for (const user of [plain, moderator]) {
        const t = await tokenFor(server.ctx, user, "admin:read admin:write");
        for (const route of await routes())
          assert.deepEqual(
            errorOf(await send(route, t)),
            [403, NOT_ALLOWED],
            `${user.username} ${route[0]} ${route[1]}`,
          );
      }
    });

    test("the scopes themselves or admin:read / admin:write are enough; an Owner may", async () => {
      const owner = await createUser(server.ctx, "allowowner", { role: "Owner" });
      const cases: Array<[TestUser, string]> = [
        [admin, "admin:read:domain_allows admin:write:domain_allows"],
        [admin, "admin:read admin:write"],
        [owner, "admin:read admin:write"],
      ];
      for (const [user, scopes] of cases) {
        const t = await tokenFor(server.ctx, user, scopes);
        for (const route of await routes()) {
          const res = await send(route, t);
          assert.equal(res.statusCode, 200, `${scopes} ${route[0]} ${route[1]}: ${res.body}`);
        }
      }
    });
  });

  test("pages of 100 by default and at most 200, newest first, with a Link header", async () => {
    const fresh = await createTestServer();
    try {
      const { token: t } = await adminOf(fresh, "pager");
      const now = new Date().toISOString();
      const ids: string[] = [];
      for (let i = 0; i < 205; i++) ids.push(newId());
      await fresh.ctx.db.kysely
        .insertInto("domain_allows")
        .values(ids.map((id, i) => ({ id, domain: `p${i}.example`, created_at: now, updated_at: now })))
        .execute();
      const page = async (query: string) => {
        const res = await call(fresh, "GET", `${ALLOWS}${query}`, t);
        assert.equal(res.statusCode, 200, res.body);
        return { allows: res.json() as Allow[], link: String(res.headers.link ?? "") };
      };
      assert.equal((await page("")).allows.length, 100);
      assert.equal((await page("?limit=500")).allows.length, 200);

      const first = await page("?limit=2");
      assert.deepEqual(
        first.allows.map((a) => a.domain),
        ["p204.example", "p203.example"],
      );
      const next = /<([^>]+)>; rel="next"/.exec(first.link)?.[1];
      const prev = /<([^>]+)>; rel="prev"/.exec(first.link)?.[1];
      assert.ok(next && prev, first.link);
      assert.equal(new URL(next).pathname, ALLOWS);
      assert.equal(new URL(next).searchParams.get("max_id"), first.allows[1]!.id);
      assert.equal(new URL(prev).searchParams.get("min_id"), first.allows[0]!.id);
      const second = await page(new URL(next).search);
      assert.deepEqual(
        second.allows.map((a) => a.domain),
        ["p202.example", "p201.example"],
      );
      const back = await page(new URL(/<([^>]+)>; rel="prev"/.exec(second.link)![1]!).search);
      assert.deepEqual(
        back.allows.map((a) => a.domain),
        ["p204.example", "p203.example"],
      );
      assert.deepEqual(
        (await page(`?since_id=${ids[202]}`)).allows.map((a) => a.domain),
        ["p204.example", "p203.example"],
      );

      const last = await page(`?max_id=${ids[2]}`);
      assert.deepEqual(
        last.allows.map((a) => a.domain),
        ["p1.example", "p0.example"],
      );
      assert.doesNotMatch(last.link, /rel="next"/, "a page that is not full has no next");
      const none = await page(`?max_id=${ids[0]}`);
      assert.deepEqual([none.allows, none.link], [[], ""]);
    } finally {
      await fresh.close();
    }
  });

  test("outside limited federation mode, removing an allow leaves the domain's accounts and posts alone", async () => {
    const name = domain();
    const target = await allow(server, token, name);
    const local = await createUser(server.ctx, "allowfollower");
    const remote = await createRemoteAccount(server.ctx, "stays", name);
    await follow(server, local, remote);
    const post = await remotePost(server, remote.id, name);
    await server.ctx.jobs.drain();

    assert.deepEqual((await call(server, "DELETE", `${ALLOWS}/${target.id}`, token)).json(), {});
    const jobs = await server.ctx.db.kysely.selectFrom("jobs").select("id").where("name", "=", PURGE_JOB).execute();
    assert.deepEqual(jobs, []);
    await server.ctx.jobs.drain();
    const account = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("suspended_at")
      .where("id", "=", remote.id)
      .executeTakeFirstOrThrow();
    assert.equal(account.suspended_at, null);
    assert.ok(await server.ctx.db.kysely.selectFrom("statuses").select("id").where("id", "=", post).executeTakeFirst());
    const follows = await server.ctx.db.kysely
      .selectFrom("follows")
      .select("id")
      .where("target_account_id", "=", remote.id)
      .execute();
    assert.equal(follows.length, 1);
  });

  test("Admin::DomainAllow matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    assert.deepEqual(validateSchema("AdminDomainAllow", await allow(server, token, domain())), []);
  });
});

describe("admin domain allows in limited federation mode", () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await createTestServer({ env: { LIMITED_FEDERATION_MODE: "true" } });
    ({ token } = await adminOf(server, "limitedadmin"));
  });
  after(() => server.close());

  const db = () => server.ctx.db.kysely;
  const suspended = async (id: string) =>
    (await db().selectFrom("accounts").select("suspended_at").where("id", "=", id).executeTakeFirstOrThrow())
      .suspended_at !== null;
  const statusIds = async (accountId: string) =>
    (await db().selectFrom("statuses").select("id").where("account_id", "=", accountId).execute()).map((s) => s.id);
  const followCount = async (accountId: string) =>
    (
      await db()
        .selectFrom("follows")
        .select("id")
        .where((eb) => eb.or([eb("account_id", "=", accountId), eb("target_account_id", "=", accountId)]))
        .execute()
    ).length;

  test("removing an allow suspends the domain's accounts at once and a job removes their posts and follows", async () => {
    const gone = await allow(server, token, "gone.example");
    await allow(server, token, "kept.example");
    const local = await createUser(server.ctx, "limitedlocal");
    const [remote, ported, sub, kept] = await Promise.all([
      createRemoteAccount(server.ctx, "leaver", "gone.example"),
      createRemoteAccount(server.ctx, "porter", "gone.example:8443"),
      createRemoteAccount(server.ctx, "subber", "sub.gone.example"),
      createRemoteAccount(server.ctx, "keeper", "kept.example"),
    ]);
    for (const account of [remote, ported, sub, kept]) await follow(server, local, account);
    await follow(server, remote, local);
    const posts = new Map<string, string[]>();
    for (const account of [remote, ported, sub, kept])
      posts.set(account.id, [
        await remotePost(server, account.id, account.domain!),
        await remotePost(server, account.id, account.domain!),
      ]);
    await server.ctx.jobs.drain();

    const res: LightMyRequestResponse = await call(server, "DELETE", `${ALLOWS}/${gone.id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});

    // At once: the accounts of exactly that domain (on any port) are suspended; the purge is queued.
    assert.deepEqual(await Promise.all([remote, ported, sub, kept].map((a) => suspended(a.id))), [
      true,
      true,
      false,
      false,
    ]);
    const queued = await db().selectFrom("jobs").select("payload").where("name", "=", PURGE_JOB).execute();
    assert.deepEqual(
      queued.map((j) => JSON.parse(j.payload)),
      [{ domain: "gone.example" }],
    );

    await server.ctx.jobs.drain();
    for (const account of [remote, ported]) {
      assert.deepEqual(await statusIds(account.id), [], account.username);
      assert.equal(await followCount(account.id), 0, account.username);
    }
    for (const account of [sub, kept]) {
      assert.deepEqual((await statusIds(account.id)).sort(), [...posts.get(account.id)!].sort(), account.username);
      assert.equal(await followCount(account.id), 1, account.username);
    }
    const counts = await db()
      .selectFrom("accounts")
      .select(["following_count", "followers_count"])
      .where("id", "=", local.account.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([counts.following_count, counts.followers_count], [2, 0]);
  });

  test("a removed domain can be allowed again; the list is newest first", async () => {
    const again = await allow(server, token, "gone.example");
    const list = (await call(server, "GET", ALLOWS, token)).json() as Allow[];
    assert.deepEqual(
      list.map((a) => a.domain),
      ["gone.example", "kept.example"],
    );
    assert.equal(list[0]!.id, again.id);
  });
});
