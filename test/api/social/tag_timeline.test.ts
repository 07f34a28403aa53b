/** GET /api/v1/timelines/tag/:hashtag: public posts with the tag; any, all, none, local, only_media, paging. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  get,
  postStatus,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import { newId } from "../../../src/db/ids.ts";
import type { Status } from "../../types.ts";

describe("the hashtag timeline", () => {
  let server: TestServer;
  let author: TestUser;
  let reader: TestUser;
  before(async () => {
    server = await createTestServer();
    [author, reader] = await Promise.all([createUser(server.ctx, "tagauthor"), createUser(server.ctx, "tagreader")]);
    await postStatus(server, author, { status: "plain #cats" });
    await postStatus(server, author, { status: "both #cats #dogs" });
    await postStatus(server, author, { status: "dogs only #dogs" });
    await postStatus(server, author, { status: "unlisted #cats", visibility: "unlisted" });
    await postStatus(server, author, { status: "private #cats", visibility: "private" });
    await postStatus(server, author, { status: "fish #fish #cats" });
    const media = await uploadImage(server, author);
    await postStatus(server, author, { status: "picture #cats", media_ids: [media.id] });
  });
  after(() => server.close());

  const texts = async (path: string, user?: TestUser) => {
    const res = await get(server.app, path, user?.token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Status[]).map((s) => s.content.replace(/<[^>]+>/g, ""));
  };

  test("public posts with the tag, newest first; unlisted and private ones never", async () => {
    assert.deepEqual(await texts("/api/v1/timelines/tag/Cats"), [
      "picture #cats",
      "fish #fish #cats",
      "both #cats #dogs",
      "plain #cats",
    ]);
  });

  test("any[], all[] and none[]", async () => {
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?any[]=dogs"), [
      "picture #cats",
      "fish #fish #cats",
      "dogs only #dogs",
      "both #cats #dogs",
      "plain #cats",
    ]);
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?all[]=dogs"), ["both #cats #dogs"]);
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?none[]=dogs&none[]=fish"), [
      "picture #cats",
      "plain #cats",
    ]);
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?all[]=neverused"), []);
    assert.equal((await texts("/api/v1/timelines/tag/cats?any[]=neverused")).length, 4);
  });

  test("only_media, local and remote", async () => {
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?only_media=true"), ["picture #cats"]);
    assert.equal((await texts("/api/v1/timelines/tag/cats?local=true")).length, 4);
    const remote = await createRemoteAccount(server.ctx, "faraway", "remote.example");
    const id = newId();
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id,
        uri: `https://remote.example/s/${id}`,
        account_id: remote.id,
        text: "",
        content: "<p>remote #cats</p>",
        visibility: "public",
        local: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const tag = await server.ctx.db.kysely
      .selectFrom("tags")
      .select("id")
      .where("name", "=", "cats")
      .executeTakeFirstOrThrow();
    await server.ctx.db.kysely.insertInto("statuses_tags").values({ status_id: id, tag_id: tag.id }).execute();
    assert.deepEqual(await texts("/api/v1/timelines/tag/cats?remote=true"), ["remote #cats"]);
    assert.equal((await texts("/api/v1/timelines/tag/cats?local=true")).length, 4);
  });

  test("paging: limit, max_id, min_id and a Link header that keeps the filters", async () => {
    const res = await get(server.app, "/api/v1/timelines/tag/cats?limit=2&none[]=fish");
    const page = res.json() as Status[];
    assert.equal(page.length, 2);
    assert.match(String(res.headers.link), /limit=2&max_id=\d+&none%5B%5D=fish>; rel="next"/);
    const older = (
      await get(server.app, `/api/v1/timelines/tag/cats?none[]=fish&max_id=${page[1].id}`)
    ).json() as Status[];
    assert.ok(older.every((s) => BigInt(s.id) < BigInt(page[1].id)));
    const newer = (
      await get(server.app, `/api/v1/timelines/tag/cats?none[]=fish&min_id=${page[1].id}&limit=1`)
    ).json() as Status[];
    assert.deepEqual(
      newer.map((s) => s.id),
      [page[0].id],
    );
  });

  test("an unknown tag or a name that cannot be a tag is 404; hidden authors leave a viewer's timeline", async () => {
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/tag/neverused")), [404, "Record not found"]);
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/timelines/tag/123")), [404, "Record not found"]);
    await block(server, reader, author);
    assert.deepEqual(
      (await texts("/api/v1/timelines/tag/cats", reader)).filter((t) => !t.startsWith("remote")),
      [],
    );
  });

  describeAuth("GET /api/v1/timelines/tag/:hashtag", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: (s, token) => get(s.app, "/api/v1/timelines/tag/cats", token),
  });
});
