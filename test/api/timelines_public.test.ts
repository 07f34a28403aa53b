import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import { saveSetting } from "../../src/services/instance/settings.ts";
import {
  appToken,
  block,
  createTestServer,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  standardAccounts,
  tokenFor,
  uploadImage,
  type StandardAccounts,
  type StatusParams,
  type TestServer,
} from "../kit.ts";
import type { Status } from "../types.ts";

describe("GET /api/v1/timelines/public", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  const ids: Record<string, string> = {};

  const post = async (who: keyof Omit<StandardAccounts, "rita" | "app">, params: StatusParams) =>
    (await postStatus(server, accounts[who], params)).id;
  const texts = async (url: string, token?: string) => {
    const res = await get(server.app, url, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Status[]>().map((s) => s.content.replace(/<[^>]+>/g, ""));
  };

  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
    ids.public = await post("alice", { status: "alice public" });
    ids.unlisted = await post("alice", { status: "alice unlisted", visibility: "unlisted" });
    ids.private = await post("alice", { status: "alice private", visibility: "private" });
    ids.direct = await post("alice", { status: "alice direct @bob", visibility: "direct" });
    ids.selfReply = await post("alice", { status: "alice replies to herself", in_reply_to_id: ids.public });
    ids.otherReply = await post("bob", { status: "bob replies to alice", in_reply_to_id: ids.public });
    await request(server.app, "POST", `/api/v1/statuses/${ids.public}/reblog`, { token: accounts.carol.token });
    ids.carol = await post("carol", { status: "carol public" });
    const media = await uploadImage(server, accounts.bob);
    ids.media = await post("bob", { status: "bob with a picture", media_ids: [media.id] });
    const now = new Date().toISOString();
    ids.remote = newId();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id: ids.remote,
        uri: "https://remote.example/s/1",
        url: "https://remote.example/@rita/1",
        account_id: accounts.rita.id,
        content: "<p>rita remote</p>",
        visibility: "public",
        local: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
  after(() => server.close());

  test("shows public originals newest first: no unlisted, private, direct, boosts or replies to others", async () => {
    assert.deepEqual(await texts("/api/v1/timelines/public"), [
      "rita remote",
      "bob with a picture",
      "carol public",
      "alice replies to herself",
      "alice public",
    ]);
  });

  test("local, remote and only_media narrow it", async () => {
    assert.deepEqual(await texts("/api/v1/timelines/public?local=true"), [
      "bob with a picture",
      "carol public",
      "alice replies to herself",
      "alice public",
    ]);
    assert.deepEqual(await texts("/api/v1/timelines/public?remote=1"), ["rita remote"]);
    assert.deepEqual(await texts("/api/v1/timelines/public?only_media=true"), ["bob with a picture"]);
    assert.deepEqual(await texts("/api/v1/timelines/public?local=false"), await texts("/api/v1/timelines/public"));
  });

  test("pages with Link headers that keep the filters", async () => {
    const first = await get(server.app, "/api/v1/timelines/public?limit=2&local=true");
    assert.equal(first.json<Status[]>().length, 2);
    const link = String(first.headers.link);
    const next = /<([^>]+)>; rel="next"/.exec(link)![1];
    assert.match(next, /^https:\/\/rookery\.test\/api\/v1\/timelines\/public\?limit=2&local=true&max_id=\d+$/);
    assert.match(
      link,
      /<https:\/\/rookery\.test\/api\/v1\/timelines\/public\?limit=2&local=true&min_id=\d+>; rel="prev"/,
    );
    const second = (await get(server.app, next.replace("https://rookery.test", ""))).json<Status[]>();
    assert.deepEqual(
      second.map((s) => s.id),
      [ids.selfReply, ids.public],
    );
  });

  test("suspended and silenced authors are left out", async () => {
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ silenced_at: new Date().toISOString() })
      .where("id", "=", accounts.carol.account.id)
      .execute();
    assert.ok(!(await texts("/api/v1/timelines/public")).includes("carol public"));
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ silenced_at: null, suspended_at: new Date().toISOString() })
      .where("id", "=", accounts.carol.account.id)
      .execute();
    assert.ok(!(await texts("/api/v1/timelines/public")).includes("carol public"));
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: null })
      .where("id", "=", accounts.carol.account.id)
      .execute();
    assert.ok((await texts("/api/v1/timelines/public")).includes("carol public"));
  });

  test("a signed-in reader does not see authors they block or who block them", async () => {
    await block(server, accounts.lucy, accounts.alice);
    await block(server, accounts.bob, accounts.lucy);
    const seen = await texts("/api/v1/timelines/public", accounts.lucy.token);
    assert.deepEqual(seen, ["rita remote", "carol public"]);
    assert.equal((await texts("/api/v1/timelines/public")).length, 5);
  });

  test("statuses carry the viewer's flags", async () => {
    await request(server.app, "POST", `/api/v1/statuses/${ids.carol}/favourite`, { token: accounts.bob.token });
    const statuses = (await get(server.app, "/api/v1/timelines/public", accounts.bob.token)).json<Status[]>();
    assert.equal(statuses.find((s) => s.id === ids.carol)?.favourited, true);
    const anonymous = (await get(server.app, "/api/v1/timelines/public")).json<Status[]>();
    assert.equal(anonymous.find((s) => s.id === ids.carol)?.favourited, undefined);
  });

  describeAuth("GET /api/v1/timelines/public", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: (_, token) => get(server.app, "/api/v1/timelines/public", token),
  });

  test("without the timeline preview, readers need a token with read:statuses (an app token is enough)", async () => {
    await saveSetting(server.ctx.db.kysely, "timeline_preview", false);
    try {
      assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/public")), [
        401,
        "This API requires an authenticated user",
      ]);
      assert.equal(
        (await get(server.app, "/api/v1/timelines/public", await appToken(server.ctx, "read:statuses"))).statusCode,
        200,
      );
      assert.equal((await get(server.app, "/api/v1/timelines/public", accounts.bob.token)).statusCode, 200);
      assert.deepEqual(
        errorOf(await get(server.app, "/api/v1/timelines/public", await tokenFor(server.ctx, accounts.bob, "write"))),
        [403, "This action is outside the authorized scopes"],
      );
    } finally {
      await saveSetting(server.ctx.db.kysely, "timeline_preview", true);
    }
  });

  test("an unknown token reads as anonymous; a revoked one is refused", async () => {
    assert.equal((await get(server.app, "/api/v1/timelines/public", "not-a-token")).statusCode, 200);
    const token = await tokenFor(server.ctx, accounts.carol, "read");
    await server.ctx.db.kysely
      .updateTable("oauth_access_tokens")
      .set({ revoked_at: new Date().toISOString() })
      .where("user_id", "=", accounts.carol.user.id)
      .where("scopes", "=", "read")
      .execute();
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/public", token)), [
      401,
      "The access token was revoked",
    ]);
  });
});

describe("GET /api/v1/timelines/public when the API requires a signed-in user", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer({ env: { DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" } });
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("anonymous readers and app tokens get 401; users read it", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/public")), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/public", await appToken(server.ctx, "read"))), [
      401,
      "This API requires an authenticated user",
    ]);
    assert.equal((await get(server.app, "/api/v1/timelines/public", accounts.alice.token)).statusCode, 200);
  });
});
