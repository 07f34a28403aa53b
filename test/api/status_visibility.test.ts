/**
 * Who may see a status (Mastodon's StatusPolicy#show?), for each visibility and each kind of reader:
 * the author, a follower, a mentioned user, a stranger, a user the author blocks, and an anonymous
 * reader. Every read and action endpoint must agree, and hidden statuses must answer 404 (never
 * 403, never a body that leaks them).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { newId } from "../../src/db/ids.ts";
import {
  block,
  createTestServer,
  createUser,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  unfollow,
  type StatusParams,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { Context, Status, Visibility } from "../types.ts";

type Reader = "author" | "follower" | "mentioned" | "stranger" | "blocked" | "anonymous";

const VISIBILITIES: Visibility[] = ["public", "unlisted", "private", "direct"];
const READERS: Reader[] = ["author", "follower", "mentioned", "stranger", "blocked", "anonymous"];

/** Mastodon's StatusPolicy#show? for these readers. */
const CAN_SEE: Record<Visibility, Reader[]> = {
  public: ["author", "follower", "mentioned", "stranger", "anonymous"],
  unlisted: ["author", "follower", "mentioned", "stranger", "anonymous"],
  private: ["author", "follower", "mentioned"],
  direct: ["author", "mentioned"],
};

/** StatusPolicy#reblog?: visible, not direct, and private only for the author. */
const CAN_REBLOG: Record<Visibility, Reader[]> = {
  public: ["author", "follower", "mentioned", "stranger"],
  unlisted: ["author", "follower", "mentioned", "stranger"],
  private: ["author"],
  direct: [],
};

describe("status visibility matrix", () => {
  let server: TestServer;
  const users = {} as Record<Exclude<Reader, "anonymous">, TestUser>;
  let root: Status;
  const statuses = {} as Record<Visibility, Status>;
  const boosts = {} as Record<Visibility, Status | undefined>;

  const tokenOf = (reader: Reader) => (reader === "anonymous" ? undefined : users[reader].token);
  const act = (reader: Reader, id: string, action: string) =>
    request(server.app, "POST", `/api/v1/statuses/${id}/${action}`, { token: tokenOf(reader) });
  const idsOf = (res: LightMyRequestResponse) => res.json<Status[]>().map((s) => s.id);

  before(async () => {
    server = await createTestServer();
    for (const reader of ["author", "follower", "mentioned", "stranger", "blocked"] as const)
      users[reader] = await createUser(server.ctx, reader);
    await follow(server, users.follower, users.author);
    await block(server, users.author, users.blocked);
    const post = (params: StatusParams) => postStatus(server, users.author, params);
    root = await post({ status: "A public thread" });
    for (const visibility of VISIBILITIES)
      statuses[visibility] = await post({
        status: `@mentioned a ${visibility} reply`,
        visibility,
        in_reply_to_id: root.id,
      });
    // Earlier bookmarks by everyone (as if made before a follow ended): the list must still hide what they may not see.
    const now = new Date().toISOString();
    const rows = [];
    for (const reader of ["author", "follower", "mentioned", "stranger", "blocked"] as const) {
      for (const visibility of VISIBILITIES)
        rows.push({
          id: newId(),
          account_id: users[reader].account.id,
          status_id: statuses[visibility].id,
          created_at: now,
        });
    }
    await server.ctx.db.kysely.insertInto("bookmarks").values(rows).execute();
  });
  after(() => server.close());

  for (const visibility of VISIBILITIES) {
    describe(`a ${visibility} status`, () => {
      for (const reader of READERS) {
        const sees = CAN_SEE[visibility].includes(reader);
        test(`${reader}: ${sees ? "sees it" : "gets 404 everywhere"}`, async () => {
          const status = statuses[visibility];
          const token = tokenOf(reader);

          const single = await get(server.app, `/api/v1/statuses/${status.id}`, token);
          assert.equal(single.statusCode, sees ? 200 : 404, "GET /api/v1/statuses/:id");
          if (sees) {
            assert.equal(single.json<Status>().visibility, visibility);
          } else {
            assert.equal(single.body.includes("reply"), false, "the 404 body leaks nothing");
            assert.deepEqual(Object.keys(single.json()), ["error"]);
          }

          const batch = await get(server.app, `/api/v1/statuses?id[]=${status.id}&id[]=${root.id}`, token);
          assert.equal(batch.statusCode, 200);
          const rootVisible = reader !== "blocked";
          assert.deepEqual(
            idsOf(batch),
            [...(sees ? [status.id] : []), ...(rootVisible ? [root.id] : [])],
            "GET /api/v1/statuses?id[]=",
          );

          const own = await get(server.app, `/api/v1/statuses/${status.id}/context`, token);
          assert.equal(own.statusCode, sees ? 200 : 404, "context of the status");
          if (sees)
            assert.deepEqual(
              own.json<Context>().ancestors.map((s) => s.id),
              rootVisible ? [root.id] : [],
            );

          const thread = await get(server.app, `/api/v1/statuses/${root.id}/context`, token);
          assert.equal(thread.statusCode, rootVisible ? 200 : 404, "context of the public root");
          if (rootVisible)
            assert.equal(
              thread.json<Context>().descendants.some((s) => s.id === status.id),
              sees,
              "listed among the root's descendants",
            );

          for (const path of ["reblogged_by", "favourited_by", "history"]) {
            assert.equal(
              (await get(server.app, `/api/v1/statuses/${status.id}/${path}`, token)).statusCode,
              sees ? 200 : 404,
              path,
            );
          }

          if (reader === "anonymous") {
            for (const action of [
              "favourite",
              "unfavourite",
              "reblog",
              "unreblog",
              "bookmark",
              "unbookmark",
              "mute",
              "pin",
            ]) {
              assert.deepEqual(
                errorOf(await act(reader, status.id, action)),
                [401, "The access token is invalid"],
                action,
              );
            }
            return;
          }

          for (const action of ["favourite", "unfavourite", "unbookmark", "bookmark", "mute", "unmute"]) {
            const res = await act(reader, status.id, action);
            assert.equal(res.statusCode, sees ? 200 : 404, action);
            if (sees) assert.equal(res.json<Status>().id, status.id, action);
            else assert.equal(res.body.includes("reply"), false, `${action} leaks nothing`);
          }

          const reblog = await act(reader, status.id, "reblog");
          const reblogs = CAN_REBLOG[visibility].includes(reader);
          if (!sees) assert.equal(reblog.statusCode, 404, "reblog of an invisible status");
          else if (!reblogs) assert.deepEqual(errorOf(reblog), [403, "This action is not allowed"]);
          else {
            assert.equal(reblog.statusCode, 200, reblog.body);
            assert.equal(reblog.json<Status>().reblog?.id, status.id);
            assert.equal(reblog.json<Status>().visibility, visibility === "private" ? "private" : "public");
            if (reader === "author") boosts[visibility] = reblog.json<Status>();
            assert.equal((await act(reader, status.id, "unreblog")).statusCode, 200);
          }
        });
      }

      test("the author's boost is visible exactly where the status is", async () => {
        const status = statuses[visibility];
        const res = await act("author", status.id, "reblog");
        if (!CAN_REBLOG[visibility].includes("author")) {
          assert.equal(res.statusCode, 403);
          return;
        }
        const boost = res.json<Status>();
        // The boost has no mentions of its own: a private self-boost reaches the author and followers only.
        const audience = visibility === "private" ? ["author", "follower"] : CAN_SEE[visibility];
        for (const reader of READERS) {
          const expected = audience.includes(reader) ? 200 : 404;
          assert.equal(
            (await get(server.app, `/api/v1/statuses/${boost.id}`, tokenOf(reader))).statusCode,
            expected,
            reader,
          );
        }
        assert.equal((await act("author", status.id, "unreblog")).statusCode, 200);
      });
    });
  }

  describe("GET /api/v1/bookmarks", () => {
    for (const reader of ["author", "follower", "mentioned", "stranger", "blocked"] as const) {
      test(`${reader} sees only the bookmarks of statuses they may see`, async () => {
        const res = await get(server.app, "/api/v1/bookmarks", users[reader].token);
        assert.equal(res.statusCode, 200);
        const expected = VISIBILITIES.filter((v) => CAN_SEE[v].includes(reader)).map((v) => statuses[v].id);
        assert.deepEqual([...idsOf(res)].sort(), [...expected].sort());
        assert.equal(res.body.includes("direct reply") && !CAN_SEE.direct.includes(reader), false);
      });
    }

    test("a follower who stops following loses the private status from the list and from GET", async () => {
      const former = await createUser(server.ctx, "former_follower");
      await follow(server, former, users.author);
      assert.equal((await act("author", statuses.private.id, "bookmark")).statusCode, 200);
      const bookmark = await request(server.app, "POST", `/api/v1/statuses/${statuses.private.id}/bookmark`, {
        token: former.token,
      });
      assert.equal(bookmark.statusCode, 200);
      assert.deepEqual(idsOf(await get(server.app, "/api/v1/bookmarks", former.token)), [statuses.private.id]);
      await unfollow(server, former, users.author);
      assert.deepEqual(idsOf(await get(server.app, "/api/v1/bookmarks", former.token)), []);
      assert.equal((await get(server.app, `/api/v1/statuses/${statuses.private.id}`, former.token)).statusCode, 404);
    });

    test("anonymous readers get 401", async () => {
      assert.equal((await get(server.app, "/api/v1/bookmarks")).statusCode, 401);
    });
  });

  test("a stranger's boost of a public status is hidden from users the original author blocks", async () => {
    const boost = await act("stranger", root.id, "reblog");
    assert.equal(boost.statusCode, 200);
    assert.equal(
      (await get(server.app, `/api/v1/statuses/${boost.json<Status>().id}`, users.blocked.token)).statusCode,
      404,
    );
    assert.equal((await get(server.app, `/api/v1/statuses/${boost.json<Status>().id}`)).statusCode, 200);
    assert.equal((await act("blocked", boost.json<Status>().id, "favourite")).statusCode, 404);
  });

  test("a user the author blocks cannot reply, even to a public status", async () => {
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: users.blocked.token,
      json: { status: "hi", in_reply_to_id: root.id },
    });
    assert.deepEqual(errorOf(res), [404, "The post you are trying to reply to does not appear to exist."]);
  });

  test("statuses of a suspended author are hidden from everyone but 404", async () => {
    const suspended = await createUser(server.ctx, "soon_suspended");
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: suspended.token,
      json: { status: "before suspension" },
    });
    const id = res.json<Status>().id;
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", suspended.account.id)
      .execute();
    assert.equal((await get(server.app, `/api/v1/statuses/${id}`)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${id}`, users.stranger.token)).statusCode, 404);
    assert.deepEqual((await get(server.app, `/api/v1/statuses?id[]=${id}`)).json(), []);
  });
});
