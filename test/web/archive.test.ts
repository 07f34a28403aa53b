/**
 * "Request your archive": a job makes a ZIP of the account (actor, outbox with every post of every
 * visibility, likes, bookmarks, media); its owner downloads it from the settings, nobody else
 * can, not even through /system; one request every 6 days; archives go after 7 days.
 */
import assert from "node:assert/strict";
import { inflateRawSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { pruneArchives } from "../../src/services/archives/archives.ts";
import { alertOf, Browser } from "../browser.ts";
import {
  createTestServer,
  createUser,
  postStatus,
  request,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../kit.ts";

/** The files of a ZIP (read from its central directory), by name. */
function unzip(zip: Buffer): Map<string, Buffer> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end >= 0, "an end of central directory record");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const offset = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString("utf8");
    const dataAt = offset + 30 + zip.readUInt16LE(offset + 26) + zip.readUInt16LE(offset + 28);
    const data = zip.subarray(dataAt, dataAt + compressed);
    files.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
    at += 46 + nameLength + extra + comment;
  }
  return files;
}

describe("account archives", () => {
  let server: TestServer;
  let owner: TestUser;
  let other: TestUser;

  before(async () => {
    server = await createTestServer();
    owner = await createUser(server.ctx, "archivist");
    other = await createUser(server.ctx, "snoop");
  });
  after(() => server.close());

  async function signedIn(user: TestUser): Promise<Browser> {
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(user.user.email)).statusCode, 303);
    return browser;
  }

  test("the owner asks, a job makes the ZIP, the owner downloads it; nobody else can", async () => {
    const media = await uploadImage(server, owner);
    const original = await server.ctx.db.kysely
      .selectFrom("media_attachments")
      .select("file")
      .where("id", "=", media.id)
      .executeTakeFirstOrThrow();
    const open = await postStatus(server, owner, { status: "public words", media_ids: [media.id] });
    const secret = await postStatus(server, owner, { status: "followers only words", visibility: "private" });
    const direct = await postStatus(server, owner, { status: "@snoop just for you", visibility: "direct" });
    const theirs = await postStatus(server, other, { status: "a post to like" });
    await request(server.app, "POST", `/api/v1/statuses/${theirs.id}/favourite`, { token: owner.token });
    await request(server.app, "POST", `/api/v1/statuses/${theirs.id}/bookmark`, { token: owner.token });
    const boost = await request(server.app, "POST", `/api/v1/statuses/${theirs.id}/reblog`, { token: owner.token });
    assert.equal(boost.statusCode, 200);

    const browser = await signedIn(owner);
    const page = await browser.get("/settings/archive");
    assert.equal(page.statusCode, 200);
    const asked = await browser.submit(page, "/settings/archive");
    assert.equal(asked.statusCode, 200, alertOf(asked.body) ?? "");
    assert.match(asked.body, /Being prepared/);
    // Again within 6 days: refused.
    const again = await browser.submit(asked, "/settings/archive");
    assert.equal(again.statusCode, 429);
    assert.match(alertOf(again.body) ?? "", /once every 6 days/);

    await server.ctx.jobs.drain();
    const ready = await browser.get("/settings/archive");
    const link = /href="(\/settings\/archive\/\d+\/download)"/.exec(ready.body)?.[1];
    assert.ok(link, ready.body);
    const download = await browser.get(link);
    assert.equal(download.statusCode, 200);
    assert.equal(download.headers["content-type"], "application/zip");
    assert.match(String(download.headers["content-disposition"]), /^attachment; filename="archive-archivist\.zip"$/);
    const files = unzip(download.rawPayload);

    const actor = JSON.parse(files.get("actor.json")!.toString());
    assert.equal(actor.id, owner.account.uri);
    const outbox = JSON.parse(files.get("outbox.json")!.toString());
    assert.equal(outbox.type, "OrderedCollection");
    const objectIds = (outbox.orderedItems as Array<{ type: string; object: { id?: string } | string }>).map((item) =>
      typeof item.object === "string" ? item.object : item.object.id,
    );
    for (const post of [open, secret, direct]) assert.ok(objectIds.includes(post.uri), `${post.uri} in the outbox`);
    assert.ok(
      (outbox.orderedItems as Array<{ type: string; object: unknown }>).some(
        (item) => item.type === "Announce" && item.object === theirs.uri,
      ),
      "the boost as an Announce",
    );
    assert.deepEqual(JSON.parse(files.get("likes.json")!.toString()).orderedItems, [theirs.uri]);
    assert.deepEqual(JSON.parse(files.get("bookmarks.json")!.toString()).orderedItems, [theirs.uri]);
    const stored = await server.ctx.media.get(original.file!);
    assert.deepEqual(files.get(`media_attachments/files/${original.file}`), stored);

    // Nobody else: not another user, not a visitor, not /system.
    const snoop = await signedIn(other);
    assert.equal((await snoop.get(link)).statusCode, 404);
    assert.equal((await request(server.app, "GET", link)).statusCode, 303);
    const key = (await server.ctx.db.kysely.selectFrom("account_archives").select("file_key").executeTakeFirstOrThrow())
      .file_key!;
    assert.equal((await request(server.app, "GET", `/system/${key}`)).statusCode, 404);
  });

  test("archives go after 7 days, with their files", async () => {
    const rows = await server.ctx.db.kysely.selectFrom("account_archives").select(["id", "file_key"]).execute();
    assert.ok(rows.length > 0);
    assert.equal(await pruneArchives(server.ctx, Date.now()), 0, "a fresh archive stays");
    assert.equal(await pruneArchives(server.ctx, Date.now() + 8 * 24 * 3600 * 1000), rows.length);
    for (const row of rows) if (row.file_key) assert.equal(await server.ctx.media.get(row.file_key), undefined);
  });
});
