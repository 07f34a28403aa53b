/**
 * Batching: a page of statuses, whatever it carries (media, polls, mentions, tags, emoji, boosts,
 * the viewer's favourites, bookmarks, votes, pins and mutes), is serialized with a fixed, small
 * number of queries. Pages of 5 and of 40 must cost the same.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { newId } from "../../src/db/ids.ts";
import type { StatusRow } from "../../src/db/schema.ts";
import { serializeStatuses } from "../../src/entities/status.ts";
import {
  createCustomEmoji,
  createTestServer,
  createUser,
  follow,
  get,
  postStatus,
  request,
  standardAccounts,
  uploadImage,
  type StandardAccounts,
  type StatusParams,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { Context, Status } from "../types.ts";

const MAX_QUERIES = 25;

describe("queries per page of statuses", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let viewer: TestUser;
  /** Every status made, oldest first (boosts included). */
  const made: Status[] = [];
  /** Statuses the viewer favourited, bookmarked, voted in. */
  const favourited = new Set<string>();
  const bookmarked: string[] = [];

  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
    viewer = await createUser(server.ctx, "viewer");
    await follow(server, viewer, a.bob);
    await createCustomEmoji(server, "blobcat");

    const post = (user: TestUser, params: StatusParams) => postStatus(server, user, params);
    const act = async (user: TestUser, id: string, action: string): Promise<Status> => {
      const res = await request(server.app, "POST", `/api/v1/statuses/${id}/${action}`, { token: user.token });
      assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
      return res.json<Status>();
    };

    // Twelve blocks of five: every block holds each kind of status, so any five consecutive statuses do too.
    let lastMedia: Status | undefined;
    let lastPoll: Status | undefined;
    for (let block = 0; block < 12; block++) {
      const pictures = [(await uploadImage(server, a.alice)).id, (await uploadImage(server, a.alice)).id];
      const withMedia = await post(a.alice, {
        status: `#Tag${block} hello @bob :blobcat: https://example.com/${block}`,
        media_ids: pictures,
        spoiler_text: ":blobcat:",
      });
      made.push(withMedia);
      lastMedia = withMedia;
      const withPoll = await post(a.bob, {
        status: `poll ${block} #poll`,
        poll: { options: ["a", "b", "c"], expires_in: 3600, multiple: block % 2 === 0, hide_totals: block % 3 === 0 },
      });
      made.push(withPoll);
      lastPoll = withPoll;
      const boost =
        block % 2 === 0 ? await act(viewer, lastMedia.id, "reblog") : await act(a.carol, lastPoll.id, "reblog");
      made.push(boost);
      const reply = await post(a.carol, {
        status: `@viewer @rita@remote.example reply ${block} #Reply`,
        in_reply_to_id: withPoll.id,
        visibility: "unlisted",
      });
      made.push(reply);
      const restricted =
        block % 2 === 0
          ? await post(viewer, { status: `my own private ${block} @alice`, visibility: "private" })
          : await post(a.bob, { status: `@viewer direct ${block} :blobcat:`, visibility: "direct" });
      made.push(restricted);

      await act(viewer, withMedia.id, "favourite");
      await act(viewer, reply.id, "favourite");
      favourited.add(withMedia.id).add(reply.id);
      await act(viewer, withPoll.id, "bookmark");
      await act(viewer, withMedia.id, "bookmark");
      await act(viewer, reply.id, "bookmark");
      await act(viewer, restricted.id, "bookmark");
      bookmarked.push(withPoll.id, withMedia.id, reply.id, restricted.id);
      await act(a.carol, withMedia.id, "favourite");
      const vote = await request(server.app, "POST", `/api/v1/polls/${withPoll.poll?.id}/votes`, {
        token: viewer.token,
        json: { choices: [1] },
      });
      assert.equal(vote.statusCode, 200, vote.body);
      if (block % 3 === 0) await act(viewer, reply.id, "mute");
      if (block >= 10 && restricted.account.id === viewer.account.id) await act(viewer, restricted.id, "pin");
    }
  });
  after(() => server.close());

  /** The newest `n` statuses as rows, newest first. */
  const newest = async (n: number): Promise<StatusRow[]> => {
    const ids = made.slice(-n).map((s) => s.id);
    const rows = await server.ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "in", ids).execute();
    return rows.sort((x, y) => (BigInt(y.id) > BigInt(x.id) ? 1 : -1));
  };
  const measure = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
    const start = server.ctx.db.queryCount;
    const result = await fn();
    return [server.ctx.db.queryCount - start, result];
  };

  test("serializeStatuses: 5 and 40 statuses cost the same, small number of queries (signed-in viewer)", async (t) => {
    const five = await newest(5);
    const forty = await newest(40);
    assert.equal(forty.length, 40);
    assert.ok(
      five.some((s) => s.reblog_of_id) &&
        five.some((s) => s.poll_id) &&
        five.some((s) => s.ordered_media_attachment_ids),
      "the small page has every kind too",
    );
    const [small, smallPage] = await measure(() => serializeStatuses(server.ctx, five, viewer.account));
    const [large, largePage] = await measure(() => serializeStatuses(server.ctx, forty, viewer.account));
    assert.equal(smallPage.length, 5);
    assert.equal(largePage.length, 40);
    assert.ok(large < MAX_QUERIES, `${large} queries for 40 statuses`);
    assert.equal(large, small, `5 statuses: ${small} queries, 40 statuses: ${large}`);
    t.diagnostic(`queries: ${small} for 5 statuses, ${large} for 40`);

    // And the page is complete: everything per viewer is there.
    for (const status of largePage) {
      const proper = status.reblog ?? status;
      assert.equal(proper.favourited, favourited.has(proper.id), `favourited ${proper.id}`);
      assert.equal(proper.bookmarked, bookmarked.includes(proper.id), `bookmarked ${proper.id}`);
      if (proper.poll) {
        assert.equal(proper.poll.voted, true);
        assert.deepEqual(proper.poll.own_votes, [1]);
      }
      if (proper.media_attachments.length) {
        assert.equal(proper.media_attachments.length, 2);
        assert.deepEqual(proper.tags.map((t) => t.name).sort(), [
          `tag${proper.content!.match(/#<span>Tag(\d+)</)![1]}`,
        ]);
        assert.deepEqual(
          proper.mentions.map((m) => m.acct),
          ["bob"],
        );
        assert.deepEqual(
          proper.emojis.map((e) => e.shortcode),
          ["blobcat"],
        );
      }
    }
    const boosts = largePage.filter((s) => s.reblog);
    assert.equal(boosts.length, 8);
    assert.ok(boosts.some((s) => s.account.id === viewer.account.id && s.reblog!.reblogged === true));
    assert.ok(largePage.some((s) => s.pinned === true));
    assert.ok(largePage.some((s) => s.muted === true));
    assert.ok(largePage.some((s) => s.mentions.some((m) => m.acct === "rita@remote.example")));
  });

  test("serializeStatuses: the same for an anonymous reader", async () => {
    const five = (await newest(5)).filter((s) => s.visibility === "public" || s.visibility === "unlisted");
    const forty = (await newest(40)).filter((s) => s.visibility === "public" || s.visibility === "unlisted");
    const [small] = await measure(() => serializeStatuses(server.ctx, five, undefined));
    const [large, page] = await measure(() => serializeStatuses(server.ctx, forty, undefined));
    assert.ok(large < MAX_QUERIES, `${large} queries`);
    assert.equal(large, small);
    assert.equal("favourited" in page[0], false);
  });

  /** Runs a request once to warm the token's bookkeeping, then counts the queries of a second run. */
  const httpQueries = async (url: string, token?: string): Promise<[number, LightMyRequestResponse]> => {
    await get(server.app, url, token);
    return measure(() => get(server.app, url, token));
  };

  test("GET /api/v1/bookmarks: a page of 5 and a page of 40 cost the same", async (t) => {
    const [small, smallRes] = await httpQueries("/api/v1/bookmarks?limit=5", viewer.token);
    const [large, largeRes] = await httpQueries("/api/v1/bookmarks?limit=40", viewer.token);
    assert.equal(smallRes.statusCode, 200);
    assert.deepEqual(
      smallRes.json<Status[]>().map((s) => s.id),
      [...bookmarked].reverse().slice(0, 5),
    );
    assert.deepEqual(
      largeRes.json<Status[]>().map((s) => s.id),
      [...bookmarked].reverse().slice(0, 40),
    );
    assert.ok(large < MAX_QUERIES + 6, `${large} queries for a page of 40 bookmarks`);
    assert.equal(large, small, `5 bookmarks: ${small} queries, 40 bookmarks: ${large}`);
    t.diagnostic(`queries: ${small} for 5 bookmarks, ${large} for 40`);
  });

  test("GET /api/v1/favourites: a page of 5 and a page of 24 cost the same", async () => {
    const [small, smallRes] = await httpQueries("/api/v1/favourites?limit=5", viewer.token);
    const [large, largeRes] = await httpQueries("/api/v1/favourites?limit=40", viewer.token);
    assert.equal(smallRes.json<Status[]>().length, 5);
    assert.equal(largeRes.json<Status[]>().length, 24);
    assert.equal(large, small, `5: ${small}, 24: ${large}`);
  });

  test("GET /api/v1/statuses?id[]=: 5 and 20 IDs cost the same", async () => {
    const query = (n: number) =>
      made
        .slice(-n)
        .map((s) => `id[]=${s.id}`)
        .join("&");
    const [small, smallRes] = await httpQueries(`/api/v1/statuses?${query(5)}`, viewer.token);
    const [large, largeRes] = await httpQueries(`/api/v1/statuses?${query(20)}`, viewer.token);
    assert.equal(smallRes.json<Status[]>().length, 5);
    assert.equal(largeRes.json<Status[]>().length, 20);
    assert.ok(large < MAX_QUERIES + 6, `${large} queries`);
    assert.equal(large, small);
  });

  test("GET /api/v1/statuses/:id/context costs the same for a short and a long thread", async () => {
    const root = made[1];
    const [small] = await httpQueries(`/api/v1/statuses/${root.id}/context`, viewer.token);
    // Thirty more replies under the same root, inserted at once.
    const now = new Date().toISOString();
    const rows = Array.from({ length: 30 }, (_, i) => {
      const id = newId();
      return {
        id,
        uri: `https://rookery.test/users/carol/statuses/${id}`,
        account_id: a.carol.account.id,
        text: `r${i}`,
        content: `<p>r${i}</p>`,
        visibility: "public" as const,
        in_reply_to_id: root.id,
        in_reply_to_account_id: a.bob.account.id,
        local: true,
        created_at: now,
        updated_at: now,
      };
    });
    await server.ctx.db.kysely.insertInto("statuses").values(rows).execute();
    const [large, res] = await httpQueries(`/api/v1/statuses/${root.id}/context`, viewer.token);
    assert.equal(res.json<Context>().descendants.length, 31);
    assert.ok(large < MAX_QUERIES + 10, `${large} queries`);
    assert.equal(large, small);
  });
});
