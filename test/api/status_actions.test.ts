/**
 * The state table of status interactions: favourite, reblog, bookmark, conversation mute and pin
 * (idempotent, with their counters and per-viewer flags), reblogged_by/favourited_by, and the
 * bookmarks and favourites lists with their Link pagination.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import {
  accountJson,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  standardAccounts,
  statusJson,
  tokenFor,
  type StandardAccounts,
  type StatusParams,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import type { Account, Status } from "../types.ts";

function links(res: LightMyRequestResponse): Record<string, string> {
  const result: Record<string, string> = {};
  const header = res.headers.link;
  for (const part of String(header ?? "")
    .split(", ")
    .filter(Boolean)) {
    const match = /^<([^>]+)>; rel="(next|prev)"$/.exec(part);
    assert.ok(match, `malformed link ${part}`);
    result[match[2]] = match[1];
  }
  return result;
}

/** The path and query of an absolute link on this server. */
function pathOf(url: string): string {
  assert.ok(url.startsWith("https://rookery.test/"), url);
  return url.slice("https://rookery.test".length);
}

describe("status actions", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const post = (user: TestUser, params: StatusParams) => postStatus(server, user, params);
  /** An action by a user, or with a bare token (none: anonymous). */
  const act = (actor: TestUser | string | undefined, id: string, action: string, json?: Record<string, unknown>) => {
    const token = typeof actor === "object" ? actor.token : actor;
    return request(server.app, "POST", `/api/v1/statuses/${id}/${action}`, { token, json });
  };
  const actOk = async (user: TestUser, id: string, action: string, json?: Record<string, unknown>): Promise<Status> => {
    const res = await act(user, id, action, json);
    assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    return res.json<Status>();
  };
  const view = (id: string, user?: TestUser) => statusJson(server, id, user);
  const statusesCount = async (user: TestUser) => (await accountJson(server, user)).statuses_count;

  describe("favourite and unfavourite", () => {
    test("are idempotent and keep favourites_count right", async () => {
      const status = await post(a.alice, { status: "fave me" });
      const first = await actOk(a.bob, status.id, "favourite");
      assert.equal(first.id, status.id);
      assert.equal(first.favourited, true);
      assert.equal(first.favourites_count, 1);
      const again = await actOk(a.bob, status.id, "favourite");
      assert.equal(again.favourited, true);
      assert.equal(again.favourites_count, 1);
      const carol = await actOk(a.carol, status.id, "favourite");
      assert.equal(carol.favourites_count, 2);
      // The flag is per viewer.
      assert.equal((await view(status.id, a.alice)).favourited, false);
      assert.equal((await view(status.id, a.bob)).favourited, true);
      const removed = await actOk(a.bob, status.id, "unfavourite");
      assert.equal(removed.favourited, false);
      assert.equal(removed.favourites_count, 1);
      const removedAgain = await actOk(a.bob, status.id, "unfavourite");
      assert.equal(removedAgain.favourited, false);
      assert.equal(removedAgain.favourites_count, 1);
      assert.equal((await view(status.id)).favourites_count, 1);
    });

    test("unfavourite of a status never favourited answers it unchanged", async () => {
      const status = await post(a.alice, { status: "never faved" });
      const res = await actOk(a.bob, status.id, "unfavourite");
      assert.equal(res.favourited, false);
      assert.equal(res.favourites_count, 0);
    });

    test("the answer matches the OpenAPI schema", { skip: openApiSkip }, async () => {
      const status = await post(a.alice, { status: "schema fave" });
      assert.deepEqual(validateSchema("Status", await actOk(a.bob, status.id, "favourite")), []);
    });
  });

  describe("reblog and unreblog", () => {
    test("reblog returns the boost wrapping the original", async () => {
      const status = await post(a.alice, { status: "boost me" });
      const before = await statusesCount(a.bob);
      const boost = await actOk(a.bob, status.id, "reblog");
      assert.notEqual(boost.id, status.id);
      assert.equal(boost.account.id, a.bob.account.id);
      assert.equal(boost.reblog?.id, status.id);
      assert.equal(boost.reblog?.content, "<p>boost me</p>");
      assert.equal(boost.reblog?.reblogged, true);
      assert.equal(boost.reblog?.reblogs_count, 1);
      assert.equal(boost.content, "");
      assert.equal(boost.visibility, "public");
      assert.equal(boost.uri, `https://rookery.test/users/bob/statuses/${boost.id}/activity`);
      assert.equal(boost.url, `https://rookery.test/users/bob/statuses/${boost.id}/activity`);
      assert.equal(await statusesCount(a.bob), before + 1);
      assert.equal((await view(status.id, a.bob)).reblogged, true);
      assert.equal((await view(status.id, a.carol)).reblogged, false);
      // The boost is a status of its own, readable by ID.
      assert.equal((await view(boost.id)).reblog?.id, status.id);
    });

    test("a second reblog returns the same boost and counts nothing", async () => {
      const status = await post(a.alice, { status: "boost twice" });
      const first = await actOk(a.bob, status.id, "reblog");
      const before = await statusesCount(a.bob);
      const second = await actOk(a.bob, status.id, "reblog");
      assert.equal(second.id, first.id);
      assert.equal(second.reblog?.reblogs_count, 1);
      assert.equal(await statusesCount(a.bob), before);
    });

    test("concurrent reblogs make one boost", async () => {
      const status = await post(a.alice, { status: "race boost" });
      const results = await Promise.all([1, 2, 3].map(() => act(a.carol, status.id, "reblog")));
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [200, 200, 200],
      );
      assert.equal(new Set(results.map((r) => r.json<Status>().id)).size, 1);
      assert.equal((await view(status.id)).reblogs_count, 1);
    });

    test("the visibility parameter sets the boost's visibility", async () => {
      const status = await post(a.alice, { status: "boost visibility" });
      const unlisted = await actOk(a.bob, status.id, "reblog", { visibility: "unlisted" });
      assert.equal(unlisted.visibility, "unlisted");
      const other = await post(a.alice, { status: "boost privately" });
      const priv = await actOk(a.carol, other.id, "reblog", { visibility: "private" });
      assert.equal(priv.visibility, "private");
      // A private boost reaches the booster's followers only.
      assert.equal((await get(server.app, `/api/v1/statuses/${priv.id}`, a.bob.token)).statusCode, 404);
      assert.equal((await get(server.app, `/api/v1/statuses/${priv.id}`, a.carol.token)).statusCode, 200);
    });

    test("a private status: others get 403, the author's self-boost stays private", async () => {
      const status = await post(a.lucy, { status: "locked thoughts", visibility: "private" });
      const follower = await createUser(server.ctx, "lucy_follower");
      await follow(server, follower, a.lucy);
      assert.deepEqual(errorOf(await act(follower, status.id, "reblog")), [403, "This action is not allowed"]);
      assert.equal((await act(a.bob, status.id, "reblog")).statusCode, 404, "not visible to a stranger at all");
      const self = await actOk(a.lucy, status.id, "reblog", { visibility: "public" });
      assert.equal(self.visibility, "private");
      assert.equal(self.reblog?.id, status.id);
      assert.equal((await view(status.id, a.lucy)).reblogs_count, 1);
    });

    test("a direct status is never boosted, not even by its author", async () => {
      const status = await post(a.alice, { status: "@bob secret", visibility: "direct" });
      assert.deepEqual(errorOf(await act(a.alice, status.id, "reblog")), [403, "This action is not allowed"]);
      assert.deepEqual(errorOf(await act(a.bob, status.id, "reblog")), [403, "This action is not allowed"]);
      assert.equal((await view(status.id, a.alice)).reblogs_count, 0);
    });

    test("unreblog returns the original with reblogged false and the count decreased; idempotent", async () => {
      const status = await post(a.alice, { status: "unboost me" });
      const boost = await actOk(a.bob, status.id, "reblog");
      await actOk(a.carol, status.id, "reblog");
      const before = await statusesCount(a.bob);
      const res = await actOk(a.bob, status.id, "unreblog");
      assert.equal(res.id, status.id);
      assert.equal(res.reblog, null);
      assert.equal(res.reblogged, false);
      assert.equal(res.reblogs_count, 1);
      assert.equal(await statusesCount(a.bob), before - 1);
      assert.equal((await get(server.app, `/api/v1/statuses/${boost.id}`)).statusCode, 404);
      const again = await actOk(a.bob, status.id, "unreblog");
      assert.equal(again.reblogged, false);
      assert.equal(again.reblogs_count, 1);
      assert.equal(await statusesCount(a.bob), before - 1);
      // Boosting again works and counts again.
      assert.equal((await actOk(a.bob, status.id, "reblog")).reblog?.reblogs_count, 2);
    });

    test("reblogging a boost boosts the original; unreblog by the boost's ID undoes it", async () => {
      const status = await post(a.alice, { status: "original" });
      const bobs = await actOk(a.bob, status.id, "reblog");
      const carols = await actOk(a.carol, bobs.id, "reblog");
      assert.equal(carols.reblog?.id, status.id);
      assert.equal(carols.reblog?.reblogs_count, 2);
      const undone = await actOk(a.carol, bobs.id, "unreblog");
      assert.equal(undone.id, status.id);
      assert.equal(undone.reblogs_count, 1);
      assert.equal((await get(server.app, `/api/v1/statuses/${carols.id}`)).statusCode, 404);
    });
  });

  describe("actions on a boost's ID apply to the original", () => {
    test("favourite, bookmark and mute", async () => {
      const status = await post(a.alice, { status: "boosted original" });
      const boost = await actOk(a.bob, status.id, "reblog");
      const faved = await actOk(a.carol, boost.id, "favourite");
      const target = faved.reblog ?? faved;
      assert.equal(target.id, status.id);
      assert.equal(target.favourited, true);
      const original = await view(status.id, a.carol);
      assert.equal(original.favourited, true);
      assert.equal(original.favourites_count, 1);
      const bookmarked = await actOk(a.carol, boost.id, "bookmark");
      assert.equal((bookmarked.reblog ?? bookmarked).bookmarked, true);
      assert.equal((await view(status.id, a.carol)).bookmarked, true);
      const list = (await get(server.app, "/api/v1/bookmarks", a.carol.token)).json<Status[]>();
      assert.equal(list[0].id, status.id);
      await actOk(a.carol, boost.id, "mute");
      assert.equal((await view(status.id, a.carol)).muted, true);
      await actOk(a.carol, boost.id, "unfavourite");
      assert.equal((await view(status.id, a.carol)).favourites_count, 0);
    });
  });

  describe("bookmark and unbookmark", () => {
    test("set and clear the viewer's flag, idempotently", async () => {
      const status = await post(a.alice, { status: "bookmark me" });
      assert.equal((await actOk(a.bob, status.id, "bookmark")).bookmarked, true);
      assert.equal((await actOk(a.bob, status.id, "bookmark")).bookmarked, true);
      assert.equal((await view(status.id, a.bob)).bookmarked, true);
      assert.equal((await view(status.id, a.carol)).bookmarked, false);
      assert.equal((await actOk(a.bob, status.id, "unbookmark")).bookmarked, false);
      assert.equal((await actOk(a.bob, status.id, "unbookmark")).bookmarked, false);
      assert.equal((await view(status.id, a.bob)).bookmarked, false);
    });
  });

  describe("mute and unmute", () => {
    test("mute the whole conversation for the viewer only", async () => {
      const root = await post(a.alice, { status: "a thread" });
      const reply = await post(a.bob, { status: "a reply", in_reply_to_id: root.id });
      const muted = await actOk(a.alice, root.id, "mute");
      assert.equal(muted.muted, true);
      assert.equal((await actOk(a.alice, root.id, "mute")).muted, true);
      assert.equal((await view(reply.id, a.alice)).muted, true, "the reply is in the muted conversation");
      assert.equal((await view(root.id, a.bob)).muted, false);
      const other = await post(a.alice, { status: "another thread" });
      assert.equal((await view(other.id, a.alice)).muted, false);
      assert.equal((await actOk(a.alice, reply.id, "unmute")).muted, false);
      assert.equal((await view(root.id, a.alice)).muted, false);
      assert.equal((await actOk(a.alice, root.id, "unmute")).muted, false);
    });
  });

  describe("pin and unpin", () => {
    test("pin an own public or private status; unpin is idempotent", async () => {
      const user = await createUser(server.ctx, "pinner");
      const open = await post(user, { status: "pinned" });
      const res = await actOk(user, open.id, "pin");
      assert.equal(res.pinned, true);
      assert.equal((await actOk(user, open.id, "pin")).pinned, true);
      assert.equal((await view(open.id, user)).pinned, true);
      const priv = await post(user, { status: "private pin", visibility: "private" });
      assert.equal((await actOk(user, priv.id, "pin")).pinned, true);
      assert.equal((await actOk(user, open.id, "unpin")).pinned, false);
      assert.equal((await actOk(user, open.id, "unpin")).pinned, false);
      assert.equal((await view(open.id, user)).pinned, false);
    });

    test("someone else's status cannot be pinned", async () => {
      const status = await post(a.alice, { status: "not yours" });
      assert.deepEqual(errorOf(await act(a.bob, status.id, "pin")), [
        422,
        "Validation failed: Someone else's post cannot be pinned",
      ]);
    });

    test("a direct status cannot be pinned", async () => {
      const status = await post(a.alice, { status: "@bob dm", visibility: "direct" });
      assert.deepEqual(errorOf(await act(a.alice, status.id, "pin")), [
        422,
        "Validation failed: Posts that are only visible to mentioned users cannot be pinned",
      ]);
      assert.equal("pinned" in (await view(status.id, a.alice)), false, "pinned is not shown for direct statuses");
    });

    test("at most 5 pinned statuses", async () => {
      const user = await createUser(server.ctx, "pin_limit");
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push((await post(user, { status: `pin ${i}` })).id);
      for (const id of ids.slice(0, 5)) await actOk(user, id, "pin");
      assert.deepEqual(errorOf(await act(user, ids[5], "pin")), [
        422,
        "Validation failed: You have already pinned the maximum number of posts",
      ]);
      assert.equal((await view(ids[5], user)).pinned, false);
      // Pinning one already pinned still answers 200; after an unpin there is room again.
      await actOk(user, ids[0], "pin");
      await actOk(user, ids[0], "unpin");
      assert.equal((await actOk(user, ids[5], "pin")).pinned, true);
    });

    test("a boost cannot be pinned", {}, async () => {
      const own = await post(a.carol, { status: "carol's own" });
      const selfBoost = await actOk(a.carol, own.id, "reblog");
      assert.deepEqual(errorOf(await act(a.carol, selfBoost.id, "pin")), [
        422,
        "Validation failed: A boost cannot be pinned",
      ]);
      assert.equal((await view(own.id, a.carol)).pinned, false);
      const other = await post(a.alice, { status: "alice's" });
      const boost = await actOk(a.carol, other.id, "reblog");
      assert.deepEqual(errorOf(await act(a.carol, boost.id, "pin")), [
        422,
        "Validation failed: A boost cannot be pinned",
      ]);
    });
  });

  describe("scopes and errors", () => {
    test("each action needs its scope", async () => {
      const status = await post(a.alice, { status: "scopes" });
      const needs: Array<[string, string, string]> = [
        ["favourite", "write:favourites", "write:bookmarks"],
        ["unfavourite", "write:favourites", "write:statuses"],
        ["bookmark", "write:bookmarks", "write:favourites"],
        ["unbookmark", "write:bookmarks", "write:mutes"],
        ["mute", "write:mutes", "write:bookmarks"],
        ["unmute", "write:mutes", "write:favourites"],
        ["reblog", "write:statuses", "write:favourites"],
        ["unreblog", "write:statuses", "write:bookmarks"],
        ["pin", "write:accounts", "write:statuses"],
        ["unpin", "write:accounts", "write:statuses"],
      ];
      for (const [action, right, wrong] of needs) {
        const denied = await tokenFor(server.ctx, a.bob, `read ${wrong}`);
        assert.deepEqual(
          errorOf(await act(denied, status.id, action)),
          [403, "This action is outside the authorized scopes"],
          action,
        );
        const allowed = await tokenFor(server.ctx, action.endsWith("pin") ? a.alice : a.bob, right);
        assert.equal((await act(allowed, status.id, action)).statusCode, 200, `${action} with ${right}`);
        const write = await tokenFor(server.ctx, action.endsWith("pin") ? a.alice : a.bob, "write");
        assert.equal((await act(write, status.id, action)).statusCode, 200, `${action} with write`);
      }
    });

    const scopeOf: Array<[string, string]> = [
      ["favourite", "write:favourites"],
      ["unfavourite", "write:favourites"],
      ["bookmark", "write:bookmarks"],
      ["unbookmark", "write:bookmarks"],
      ["mute", "write:mutes"],
      ["unmute", "write:mutes"],
      ["reblog", "write:statuses"],
      ["unreblog", "write:statuses"],
      ["pin", "write:accounts"],
      ["unpin", "write:accounts"],
    ];
    for (const [action, scope] of scopeOf) {
      describeAuth(`POST /api/v1/statuses/:id/${action}`, () => server, {
        scope,
        send: async (_, token, owner) => {
          // Only one's own statuses can be pinned; the other actions take anyone's.
          const status = await post(action.endsWith("pin") ? owner : a.alice, { status: `to ${action}` });
          return act(token, status.id, action);
        },
      });
    }

    test("unknown statuses are 404 for every action", async () => {
      for (const action of [
        "favourite",
        "unfavourite",
        "reblog",
        "unreblog",
        "bookmark",
        "unbookmark",
        "mute",
        "unmute",
        "pin",
        "unpin",
      ]) {
        assert.equal((await act(a.bob, "123456789", action)).statusCode, 404, action);
        assert.equal((await act(a.bob, "nope", action)).statusCode, 404, action);
      }
    });
  });

  describe("reblogged_by and favourited_by", () => {
    let status: Status;
    const fans: TestUser[] = [];
    before(async () => {
      status = await post(a.alice, { status: "popular" });
      for (let i = 0; i < 3; i++) fans.push(await createUser(server.ctx, `fan${i}`));
      for (const fan of fans) {
        await actOk(fan, status.id, "favourite");
        await actOk(fan, status.id, "reblog");
      }
    });

    for (const path of ["favourited_by", "reblogged_by"]) {
      test(`${path} lists the accounts, newest first, with Link pagination`, async () => {
        const all = await get(server.app, `/api/v1/statuses/${status.id}/${path}`);
        assert.equal(all.statusCode, 200);
        assert.deepEqual(
          all.json<Account[]>().map((x) => x.id),
          [fans[2].account.id, fans[1].account.id, fans[0].account.id],
        );
        assert.equal(links(all).next, undefined, "no next link when the page is not full");

        const page1 = await get(server.app, `/api/v1/statuses/${status.id}/${path}?limit=2`);
        assert.deepEqual(
          page1.json<Account[]>().map((x) => x.username),
          ["fan2", "fan1"],
        );
        const l1 = links(page1);
        assert.match(
          l1.next,
          new RegExp(`^https://rookery\\.test/api/v1/statuses/${status.id}/${path}\\?limit=2&max_id=\\d+$`),
        );
        assert.match(
          l1.prev,
          new RegExp(`^https://rookery\\.test/api/v1/statuses/${status.id}/${path}\\?limit=2&since_id=\\d+$`),
        );
        const page2 = await get(server.app, pathOf(l1.next));
        assert.deepEqual(
          page2.json<Account[]>().map((x) => x.username),
          ["fan0"],
        );
        const l2 = links(page2);
        assert.equal(l2.next, undefined);
        const back = await get(server.app, pathOf(l2.prev));
        assert.deepEqual(
          back.json<Account[]>().map((x) => x.username),
          ["fan2", "fan1"],
        );
        const newer = await get(server.app, pathOf(l1.prev));
        assert.deepEqual(newer.json(), []);
        assert.equal(newer.headers.link, undefined);
      });
    }

    test("an unfavourite and an unreblog leave the lists", async () => {
      const leaver = await createUser(server.ctx, "leaver");
      await actOk(leaver, status.id, "favourite");
      await actOk(leaver, status.id, "reblog");
      await actOk(leaver, status.id, "unfavourite");
      await actOk(leaver, status.id, "unreblog");
      for (const path of ["favourited_by", "reblogged_by"]) {
        const names = (await get(server.app, `/api/v1/statuses/${status.id}/${path}`))
          .json<Account[]>()
          .map((x) => x.username);
        assert.equal(names.includes("leaver"), false, path);
      }
    });

    test("limit is capped at 80 and 0 gives an empty page", async () => {
      assert.equal(
        (await get(server.app, `/api/v1/statuses/${status.id}/favourited_by?limit=500`)).json<Account[]>().length,
        3,
      );
      assert.deepEqual((await get(server.app, `/api/v1/statuses/${status.id}/favourited_by?limit=0`)).json(), []);
    });
  });

  describe("GET /api/v1/bookmarks and /api/v1/favourites", () => {
    for (const [path, action, undo] of [
      ["/api/v1/bookmarks", "bookmark", "unbookmark"],
      ["/api/v1/favourites", "favourite", "unfavourite"],
    ] as const) {
      test(`${path}: in the order they were made, newest first, with Link pagination`, async () => {
        const user = await createUser(server.ctx, `lister_${action}`);
        const made: Status[] = [];
        for (let i = 0; i < 5; i++) made.push(await post(a.alice, { status: `${action} ${i}` }));
        // Marked in an order unlike the statuses' own.
        const order = [made[3], made[0], made[4], made[1], made[2]];
        for (const status of order) await actOk(user, status.id, action);
        const all = await get(server.app, path, user.token);
        assert.equal(all.statusCode, 200);
        assert.deepEqual(
          all.json<Status[]>().map((s) => s.id),
          [...order].reverse().map((s) => s.id),
        );
        assert.equal(all.json<Status[]>()[0][action === "bookmark" ? "bookmarked" : "favourited"], true);

        const page1 = await get(server.app, `${path}?limit=2`, user.token);
        assert.deepEqual(
          page1.json<Status[]>().map((s) => s.id),
          [made[2].id, made[1].id],
        );
        const l1 = links(page1);
        assert.match(l1.next, new RegExp(`^https://rookery\\.test${path}\\?limit=2&max_id=\\d+$`));
        assert.match(l1.prev, new RegExp(`^https://rookery\\.test${path}\\?limit=2&min_id=\\d+$`));
        const page2 = await get(server.app, pathOf(l1.next), user.token);
        assert.deepEqual(
          page2.json<Status[]>().map((s) => s.id),
          [made[4].id, made[0].id],
        );
        const page3 = await get(server.app, pathOf(links(page2).next), user.token);
        assert.deepEqual(
          page3.json<Status[]>().map((s) => s.id),
          [made[3].id],
        );
        assert.equal(links(page3).next, undefined);
        const back = await get(server.app, pathOf(links(page3).prev), user.token);
        assert.deepEqual(
          back.json<Status[]>().map((s) => s.id),
          [made[4].id, made[0].id],
        );

        await actOk(user, made[1].id, undo);
        assert.equal(
          (await get(server.app, path, user.token)).json<Status[]>().some((s) => s.id === made[1].id),
          false,
        );
        // A deleted status leaves the list.
        await request(server.app, "DELETE", `/api/v1/statuses/${made[2].id}`, { token: a.alice.token });
        assert.deepEqual(
          (await get(server.app, path, user.token)).json<Status[]>().map((s) => s.id),
          [made[4].id, made[0].id, made[3].id],
        );
      });
    }

    describeAuth("GET /api/v1/bookmarks", () => server, {
      scope: "read:bookmarks",
      send: (_, token) => get(server.app, "/api/v1/bookmarks", token),
    });
    describeAuth("GET /api/v1/favourites", () => server, {
      scope: "read:favourites",
      send: (_, token) => get(server.app, "/api/v1/favourites", token),
    });

    test("the lists belong to the viewer and need their read scope", async () => {
      assert.equal((await get(server.app, "/api/v1/bookmarks")).statusCode, 401);
      assert.equal((await get(server.app, "/api/v1/favourites")).statusCode, 401);
      const writeOnly = await tokenFor(server.ctx, a.bob, "write");
      assert.equal((await get(server.app, "/api/v1/bookmarks", writeOnly)).statusCode, 403);
      assert.equal(
        (await get(server.app, "/api/v1/bookmarks", await tokenFor(server.ctx, a.bob, "read:bookmarks"))).statusCode,
        200,
      );
      assert.equal(
        (await get(server.app, "/api/v1/favourites", await tokenFor(server.ctx, a.bob, "read:bookmarks"))).statusCode,
        403,
      );
      assert.equal(
        (await get(server.app, "/api/v1/favourites", await tokenFor(server.ctx, a.bob, "read:favourites"))).statusCode,
        200,
      );
      const stranger = await createUser(server.ctx, "empty_lists");
      assert.deepEqual((await get(server.app, "/api/v1/bookmarks", stranger.token)).json(), []);
      assert.equal((await get(server.app, "/api/v1/bookmarks", stranger.token)).headers.link, undefined);
    });
  });
});
