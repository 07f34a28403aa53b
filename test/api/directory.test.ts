/**
 * The profile directory, `GET /api/v1/directory` (Mastodon's DirectoriesController): who is listed,
 * in which order, paging by offset, and who may read it.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/db/schema.ts";
import {
  appToken,
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  get,
  mute,
  postStatus,
  request,
  revokeToken,
  REVOKED_TOKEN,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateResponse } from "../openapi.ts";
import type { Account } from "../types.ts";

const AUTHENTICATION_REQUIRED = "This API requires an authenticated user";

/** Lists `who` in the directory (or takes it out), as its owner does in the profile settings. */
async function setDiscoverable(server: TestServer, who: TestUser, discoverable: boolean): Promise<void> {
  const res = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
    token: who.token,
    json: { discoverable },
  });
  assert.equal(res.statusCode, 200, res.body);
}

/** Sets columns of an account the API gives no way to set here (moderation, remote profiles). */
async function setAccount(server: TestServer, id: string, values: Partial<AccountRow>): Promise<void> {
  await server.ctx.db.kysely.updateTable("accounts").set(values).where("id", "=", id).execute();
}

describe("the profile directory", () => {
  let server: TestServer;
  /** Listed, created in this order: ann, ben, cat, dan and eve (local), rita (remote). */
  let listed: Record<"ann" | "ben" | "cat" | "dan" | "eve", TestUser>;
  let rita: AccountRow;
  /** Accounts that posted last but must not be listed. */
  let hidden: Record<string, string>;

  const directory = async (query = "", token?: string): Promise<string[]> => {
    const res = await get(server.app, `/api/v1/directory${query}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Account[]).map((a) => a.acct);
  };

  before(async () => {
    server = await createTestServer();
    const make = (name: string, options?: Parameters<typeof createUser>[2]) => createUser(server.ctx, name, options);
    listed = {
      ann: await make("ann"),
      ben: await make("ben"),
      cat: await make("cat"),
      dan: await make("dan"),
      eve: await make("eve"),
    };
    for (const who of Object.values(listed)) await setDiscoverable(server, who, true);
    rita = await createRemoteAccount(server.ctx, "rita", "remote.example");
    await setAccount(server, rita.id, { discoverable: true });

    // Active order: cat, ben, rita, ann (by their last post); eve and dan never post.
    await postStatus(server, listed.ann, { status: "first" });
    await sleep(5);
    await setAccount(server, rita.id, { last_status_at: new Date().toISOString() });
    await sleep(5);
    await postStatus(server, listed.ben, { status: "second" });
    await sleep(5);
    await postStatus(server, listed.cat, { status: "third" });
    await sleep(5);

    // Each of these posted more recently than anyone listed, and none may appear.
    const quiet = await make("quiet");
    await setDiscoverable(server, quiet, false);
    const undecided = await make("undecided");
    const suspended = await make("suspended");
    const silenced = await make("silenced");
    const moved = await make("moved");
    const unconfirmed = await make("unconfirmed");
    const disabled = await make("disabled");
    for (const who of [suspended, silenced, moved, unconfirmed, disabled]) await setDiscoverable(server, who, true);
    for (const who of [quiet, undecided, suspended, silenced, moved, unconfirmed, disabled])
      await postStatus(server, who, { status: "later" });
    const pending = await make("pending", { approved: false });
    const now = new Date().toISOString();
    await setAccount(server, pending.account.id, { discoverable: true, last_status_at: now });
    await setAccount(server, suspended.account.id, { suspended_at: now });
    await setAccount(server, silenced.account.id, { silenced_at: now });
    await setAccount(server, moved.account.id, { moved_to_account_id: listed.ann.account.id });
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ confirmed_at: null })
      .where("id", "=", unconfirmed.user.id)
      .execute();
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ disabled: true })
      .where("id", "=", disabled.user.id)
      .execute();
    const remoteSilenced = await createRemoteAccount(server.ctx, "loud", "remote.example");
    await setAccount(server, remoteSilenced.id, { discoverable: true, silenced_at: now, last_status_at: now });
    hidden = Object.fromEntries(
      [quiet, undecided, suspended, silenced, moved, unconfirmed, disabled, pending].map((u) => [
        u.username,
        u.account.id,
      ]),
    );
    hidden.loud = remoteSilenced.id;
  });
  after(() => server.close());

  test("order=active, the default: by the last post, accounts that never posted last, newest first", async () => {
    const expected = ["cat", "ben", "rita@remote.example", "ann", "eve", "dan"];
    assert.deepEqual(await directory(), expected);
    assert.deepEqual(await directory("?order=active"), expected);
  });

  test("order=new: the newest account first", async () => {
    assert.deepEqual(await directory("?order=new"), ["rita@remote.example", "eve", "dan", "cat", "ben", "ann"]);
  });

  test("an order Mastodon does not know is read as active", async () => {
    assert.deepEqual(await directory("?order=popular"), await directory());
  });

  test("local=true: local accounts only, in either order", async () => {
    assert.deepEqual(await directory("?local=true"), ["cat", "ben", "ann", "eve", "dan"]);
    assert.deepEqual(await directory("?local=true&order=new"), ["eve", "dan", "cat", "ben", "ann"]);
    assert.deepEqual(await directory("?local=false"), await directory());
    assert.deepEqual(await directory("?local=0"), await directory());
  });

  test("unlisted, undecided, suspended, silenced, moved, unconfirmed, unapproved and disabled accounts are left out", async () => {
    const ids = new Set(Object.values(hidden));
    for (const query of ["", "?order=new", "?local=true", "?local=true&order=new", "?limit=80"]) {
      const res = await get(server.app, `/api/v1/directory${query}`);
      const shown = (res.json() as Account[]).filter((a) => ids.has(a.id)).map((a) => a.acct);
      assert.deepEqual(shown, [], query);
    }
  });

  test("offset and limit page through the list; no Link header (Mastodon sends none)", async () => {
    assert.deepEqual(await directory("?limit=2"), ["cat", "ben"]);
    assert.deepEqual(await directory("?limit=2&offset=2"), ["rita@remote.example", "ann"]);
    assert.deepEqual(await directory("?limit=2&offset=4"), ["eve", "dan"]);
    assert.deepEqual(await directory("?offset=6"), []);
    assert.deepEqual(await directory("?order=new&offset=1&limit=1"), ["eve"]);
    assert.deepEqual(await directory("?limit=0"), []);
    const res = await get(server.app, "/api/v1/directory?limit=2");
    assert.equal(res.headers.link, undefined);
  });

  test("a signed-in reader does not see accounts they block, that block them, that they mute, nor blocked domains", async () => {
    const reader = await createUser(server.ctx, "reader");
    await block(server, reader, listed.ben);
    await block(server, listed.cat, reader);
    await mute(server, reader, listed.dan);
    const res = await request(server.app, "POST", "/api/v1/domain_blocks", {
      token: reader.token,
      json: { domain: "remote.example" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await directory("", reader.token), ["ann", "eve"]);
    assert.deepEqual(await directory("?order=new&local=true", reader.token), ["eve", "ann"]);
    // Others, and anonymous readers, still see everyone.
    assert.deepEqual(await directory("", listed.ann.token), ["cat", "ben", "rita@remote.example", "ann", "eve", "dan"]);
  });

  test("anyone may read it: no token, an unknown one, an app token or a user token without read scopes", async () => {
    assert.equal((await get(server.app, "/api/v1/directory")).statusCode, 200);
    assert.equal((await get(server.app, "/api/v1/directory", "not-a-token")).statusCode, 200);
    assert.equal((await get(server.app, "/api/v1/directory", await appToken(server.ctx, "read"))).statusCode, 200);
    const push = await tokenFor(server.ctx, listed.eve, "push");
    assert.equal((await get(server.app, "/api/v1/directory", push)).statusCode, 200);
  });

  test("a revoked token is 401", async () => {
    const token = await tokenFor(server.ctx, listed.eve, "read");
    await revokeToken(server.ctx, token);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/directory", token)), [401, REVOKED_TOKEN]);
  });

  test("the accounts match Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const res = await get(server.app, "/api/v1/directory", listed.ann.token);
    assert.deepEqual(validateResponse("get", "/api/v1/directory", res.json()), []);
  });

  test("an account that posts moves to the top; one that leaves the directory disappears", async () => {
    await postStatus(server, listed.ann, { status: "back again" });
    assert.deepEqual((await directory()).slice(0, 2), ["ann", "cat"]);
    await setDiscoverable(server, listed.cat, false);
    assert.deepEqual(await directory("?local=true"), ["ann", "ben", "eve", "dan"]);
  });
});

describe("the profile directory's limit", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
    for (let i = 0; i < 85; i++) {
      const account = await createRemoteAccount(server.ctx, `listed${i}`, "many.example");
      await setAccount(server, account.id, { discoverable: true });
    }
  });
  after(() => server.close());

  const count = async (query: string) => {
    const res = await get(server.app, `/api/v1/directory${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Account[]).length;
  };

  test("40 by default, at most 80, negative limits counted as positive (Mastodon's limit_param)", async () => {
    assert.equal(await count(""), 40);
    assert.equal(await count("?limit=80"), 80);
    assert.equal(await count("?limit=100"), 80);
    assert.equal(await count("?limit=-3"), 3);
    assert.equal(await count("?limit=80&offset=80"), 5);
  });
});

describe("the profile directory with DISALLOW_UNAUTHENTICATED_API_ACCESS", () => {
  let server: TestServer;
  let user: TestUser;
  before(async () => {
    server = await createTestServer({ env: { DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" } });
    user = await createUser(server.ctx, "member");
  });
  after(() => server.close());

  test("anonymous callers and app tokens get 401; a user token is served", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/directory")), [401, AUTHENTICATION_REQUIRED]);
    const app = await appToken(server.ctx, "read");
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/directory", app)), [401, AUTHENTICATION_REQUIRED]);
    const res = await get(server.app, "/api/v1/directory", user.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), []);
  });
});
