import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { pageParams, setLinkHeader } from "../../src/api/pagination.ts";
import { fetchPage } from "../../src/db/paging.ts";
import type { Ctx } from "../../src/context.ts";
import { newId } from "../../src/db/ids.ts";
import { createTestServer, createUser, request, type TestServer } from "../kit.ts";

/** A status-like list (`prev` with min_id, `next` whenever non-empty) and an account-like one. */
function pagedRoutes(app: FastifyInstance, ctx: Ctx) {
  const statuses = (req: FastifyRequest) => {
    const page = pageParams(req.input, 20, 40);
    return fetchPage(ctx.db.kysely.selectFrom("statuses").select(["id", "text"]), "id", page).then((rows) => ({
      page,
      rows,
    }));
  };
  app.get("/test/statuses", async (req, reply) => {
    const { page, rows } = await statuses(req);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      nextWhen: "non-empty",
      keep: ["only_media", "types"],
    });
    return rows.map((r) => r.text);
  });
  app.get("/test/accounts", async (req, reply) => {
    const { page, rows } = await statuses(req);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      prevParam: "since_id",
      nextWhen: "full",
    });
    return rows.map((r) => r.text);
  });
}

function links(header: string | string[] | number | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of String(header ?? "")
    .split(", ")
    .filter(Boolean)) {
    const match = /^<([^>]+)>; rel="(next|prev)"$/.exec(part);
    assert.ok(match, `malformed link ${part}`);
    result[match[2]] = match[1];
  }
  return result;
}

describe("pagination and Link headers", () => {
  let server: TestServer;
  const ids: string[] = [];
  before(async () => {
    server = await createTestServer({ routes: pagedRoutes });
    const alice = await createUser(server.ctx, "alice");
    const now = new Date().toISOString();
    // 30 statuses created in quick succession: many share a millisecond, and must still sort in creation order.
    for (let i = 1; i <= 30; i++) {
      const id = newId();
      ids.push(id);
      await server.ctx.db.kysely
        .insertInto("statuses")
        .values({
          id,
          uri: `https://rookery.test/s/${i}`,
          account_id: alice.account.id,
          text: `s${i}`,
          visibility: "public",
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  });
  after(() => server.close());

  const texts = (from: number, to: number) =>
    Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => `s${from > to ? from - i : from + i}`);

  test("the first page is the newest, newest first, with the default limit", async () => {
    const res = await request(server.app, "GET", "/test/statuses");
    assert.deepEqual(res.json(), texts(30, 11));
  });

  test("limit is clamped to the maximum, and junk or 0 gives an empty page", async () => {
    assert.equal((await request(server.app, "GET", "/test/statuses?limit=1000")).json().length, 30);
    assert.equal((await request(server.app, "GET", "/test/statuses?limit=-3")).json().length, 3);
    assert.deepEqual((await request(server.app, "GET", "/test/statuses?limit=0")).json(), []);
    assert.deepEqual((await request(server.app, "GET", "/test/statuses?limit=abc")).json(), []);
  });

  test("next leads to older items and prev to newer ones; following them walks the list both ways", async () => {
    const first = await request(server.app, "GET", "/test/statuses?limit=10&only_media=false&types[]=a&ignored=1");
    assert.deepEqual(first.json(), texts(30, 21));
    const firstLinks = links(first.headers.link);
    assert.equal(
      firstLinks.next,
      `https://rookery.test/test/statuses?limit=10&max_id=${ids[20]}&only_media=false&types%5B%5D=a`,
    );
    assert.equal(
      firstLinks.prev,
      `https://rookery.test/test/statuses?limit=10&min_id=${ids[29]}&only_media=false&types%5B%5D=a`,
    );

    const second = await request(server.app, "GET", firstLinks.next.replace("https://rookery.test", ""));
    assert.deepEqual(second.json(), texts(20, 11));
    const back = await request(server.app, "GET", links(second.headers.link).prev.replace("https://rookery.test", ""));
    assert.deepEqual(back.json(), texts(30, 21));
  });

  test("min_id gives the page immediately newer; since_id the newest above it", async () => {
    assert.deepEqual((await request(server.app, "GET", `/test/statuses?limit=3&min_id=${ids[4]}`)).json(), texts(8, 6));
    assert.deepEqual(
      (await request(server.app, "GET", `/test/statuses?limit=3&since_id=${ids[4]}`)).json(),
      texts(30, 28),
    );
    assert.deepEqual(
      (await request(server.app, "GET", `/test/statuses?limit=3&since_id=${ids[4]}&min_id=${ids[9]}`)).json(),
      texts(13, 11),
    );
  });

  test("max_id and min_id combine", async () => {
    assert.deepEqual(
      (await request(server.app, "GET", `/test/statuses?max_id=${ids[9]}&min_id=${ids[4]}`)).json(),
      texts(9, 6),
    );
  });

  test("an empty page has no Link header; status lists link next on any non-empty page", async () => {
    const empty = await request(server.app, "GET", `/test/statuses?max_id=${ids[0]}`);
    assert.deepEqual(empty.json(), []);
    assert.equal(empty.headers.link, undefined);
    const short = await request(server.app, "GET", `/test/statuses?max_id=${ids[2]}`);
    assert.deepEqual(Object.keys(links(short.headers.link)).sort(), ["next", "prev"]);
  });

  test("account lists page back with since_id and link next only on full pages", async () => {
    const full = links((await request(server.app, "GET", "/test/accounts?limit=5")).headers.link);
    assert.match(full.prev, new RegExp(`since_id=${ids[29]}`));
    assert.match(full.next, new RegExp(`max_id=${ids[25]}`));
    const partial = links((await request(server.app, "GET", `/test/accounts?limit=5&max_id=${ids[2]}`)).headers.link);
    assert.equal(partial.next, undefined);
    assert.ok(partial.prev);
  });

  test("cursors that are not IDs are ignored", async () => {
    assert.deepEqual((await request(server.app, "GET", "/test/statuses?limit=2&max_id=abc")).json(), texts(30, 29));
  });
});
