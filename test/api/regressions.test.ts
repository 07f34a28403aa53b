/** Defects found in review, each pinned by a test. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import {
  createTestServer,
  errorOf,
  follow,
  get,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import { Browser } from "../browser.ts";

describe("review regressions", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const post = async (token: string, body: Record<string, unknown>) => {
    const res = await request(server.app, "POST", "/api/v1/statuses", { token, json: body });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { id: string; application: unknown };
  };

  test("JSON bodies with a charset parameter are read", async () => {
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: accounts.alice.token,
      body: JSON.stringify({ status: "with charset" }),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().content, "<p>with charset</p>");
  });

  test("a huge status is refused at once with 422 (no quadratic parsing)", async () => {
    for (const status of ["http://a.b/" + ")".repeat(160_000), "#a ".repeat(60_000), "@a ".repeat(60_000)]) {
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: accounts.alice.token,
        json: { status },
      });
      assert.deepEqual(errorOf(res), [422, "Validation failed: Text character limit of 500 exceeded"]);
    }
  });

  test("a return path that normalises to another host is refused", async () => {
    const browser = new Browser(server.app);
    for (const target of ["/.//evil.example/phish", "/..//evil.example", "/a/..//evil.example", "/%2e//evil.example"]) {
      const page = await browser.get(`/auth/sign_in?return_to=${encodeURIComponent(target)}`);
      const hidden = /name="return_to" value="([^"]*)"/.exec(page.body)?.[1];
      assert.equal(hidden, "/settings", target);
    }
  });

  test("a suspended or disabled user's token reads nothing, public endpoints included", async () => {
    const { id } = await post(accounts.alice.token, { status: "for followers", visibility: "private" });
    await follow(server, accounts.carol, accounts.alice);
    assert.equal((await get(server.app, `/api/v1/statuses/${id}`, accounts.carol.token)).statusCode, 200);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", accounts.carol.account.id)
      .execute();
    assert.deepEqual(errorOf(await get(server.app, `/api/v1/statuses/${id}`, accounts.carol.token)), [
      403,
      "Your login is currently disabled",
    ]);
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: null })
      .where("id", "=", accounts.carol.account.id)
      .execute();
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: true })
      .where("id", "=", accounts.carol.user.id)
      .execute();
    assert.deepEqual(errorOf(await get(server.app, `/api/v1/statuses/${id}`, accounts.carol.token)), [
      403,
      "Your login is currently disabled",
    ]);
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: false })
      .where("id", "=", accounts.carol.user.id)
      .execute();
  });

  test("password guesses at /oauth/token are throttled per address", async () => {
    const guess = () =>
      server.app.inject({
        method: "POST",
        url: "/oauth/token",
        remoteAddress: "203.0.113.77",
        payload: {
          grant_type: "password",
          username: "alice@rookery.test",
          password: "wrong",
          client_id: accounts.app.client_id,
          client_secret: accounts.app.client_secret,
        },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 26; i++) statuses.push((await guess()).statusCode);
    assert.deepEqual(statuses.slice(0, 25), Array(25).fill(400));
    assert.equal(statuses[25], 429);
  });

  test("a malformed Basic header is invalid_client, not a 500", async () => {
    const res = await request(server.app, "POST", "/oauth/token", {
      form: { grant_type: "client_credentials" },
      headers: { authorization: `Basic ${Buffer.from("%E0%A4%A:secret").toString("base64")}` },
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, "invalid_client");
  });

  test("reblogged_by lists only public and unlisted boosts", async () => {
    const { id } = await post(accounts.alice.token, { status: "boost me" });
    await request(server.app, "POST", `/api/v1/statuses/${id}/reblog`, {
      token: accounts.bob.token,
      json: { visibility: "private" },
    });
    await request(server.app, "POST", `/api/v1/statuses/${id}/reblog`, {
      token: accounts.lucy.token,
      json: { visibility: "unlisted" },
    });
    const names = (
      (await get(server.app, `/api/v1/statuses/${id}/reblogged_by`)).json() as Array<{ username: string }>
    ).map((a) => a.username);
    assert.deepEqual(names, ["lucy"]);
  });

  test("concurrent deletions count once; the losers get 404", async () => {
    const before = (await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`)).json()
      .statuses_count as number;
    const { id } = await post(accounts.bob.token, { status: "delete me thrice" });
    const answers = await Promise.all(
      [1, 2, 3].map(() => request(server.app, "DELETE", `/api/v1/statuses/${id}`, { token: accounts.bob.token })),
    );
    assert.equal(answers.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(answers.every((r) => r.statusCode === 200 || r.statusCode === 404));
    assert.equal((await get(server.app, `/api/v1/accounts/${accounts.bob.account.id}`)).json().statuses_count, before);
  });

  test("an Idempotency-Key whose status was deleted can be used again", async () => {
    const headers = { "idempotency-key": "reused-key" };
    const first = await request(server.app, "POST", "/api/v1/statuses", {
      token: accounts.alice.token,
      json: { status: "first" },
      headers,
    });
    await request(server.app, "DELETE", `/api/v1/statuses/${first.json().id}`, { token: accounts.alice.token });
    const second = await request(server.app, "POST", "/api/v1/statuses", {
      token: accounts.alice.token,
      json: { status: "second" },
      headers,
    });
    assert.equal(second.statusCode, 200, second.body);
    assert.notEqual(second.json().id, first.json().id);
  });

  test("local and remote together filter nothing, as in Mastodon", async () => {
    const both = (await get(server.app, "/api/v1/timelines/public?local=true&remote=true")).json() as unknown[];
    const all = (await get(server.app, "/api/v1/timelines/public")).json() as unknown[];
    assert.ok(both.length > 0);
    assert.equal(both.length, all.length);
  });

  test("application is null when a status has none", async () => {
    const { id } = await post(accounts.alice.token, { status: "from an app" });
    assert.deepEqual((await get(server.app, `/api/v1/statuses/${id}`)).json().application, {
      name: "Test Client",
      website: "https://client.example",
    });
    const now = new Date().toISOString();
    const bare = newId();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id: bare,
        uri: `https://rookery.test/s/${bare}`,
        account_id: accounts.alice.account.id,
        text: "x",
        content: "<p>x</p>",
        visibility: "public",
        created_at: now,
        updated_at: now,
      })
      .execute();
    const body = (await get(server.app, `/api/v1/statuses/${bare}`)).json();
    assert.ok("application" in body);
    assert.equal(body.application, null);
  });

  test("an edit with only a content warning uses it as the text, as posting does", async () => {
    const { id } = await post(accounts.alice.token, { status: "to be edited" });
    const res = await request(server.app, "PUT", `/api/v1/statuses/${id}`, {
      token: accounts.alice.token,
      json: { status: "", spoiler_text: "just a warning" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().content, "<p>just a warning</p>");
  });
});
