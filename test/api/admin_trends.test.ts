/**
 * Review of trends (/api/v1/admin/trends/*): moderators list every ranked hashtag, status and
 * link with its review state, approve or reject each (and link publishers), every decision in
 * the audit log; the public trends then leave rejected items out always, and unreviewed ones too
 * once the server asks for review (`trendable_by_default` false). Refusals: no token, a user
 * without Manage Taxonomies, a token outside the scopes; unknown IDs are 404.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import { refreshTrends } from "../../src/services/trends/trends.ts";
import {
  createTestServer,
  createUser,
  errorOf,
  get,
  OUTSIDE_SCOPES,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import type { Status } from "../types.ts";

const NOT_ALLOWED = "This action is not allowed";
const NOT_FOUND = "Record not found";
const ADMIN = "/api/v1/admin/trends";

interface AdminTag {
  id: string;
  name: string;
  trendable: boolean;
  usable: boolean;
  requires_review: boolean;
}
interface AdminLink {
  id: string;
  url: string;
  requires_review: boolean;
}
interface Provider {
  id: string;
  domain: string;
  trendable: boolean | null;
  reviewed_at: string | null;
  requires_review: boolean;
}

describe("admin trends review", () => {
  let server: TestServer;
  let users: TestUser[];
  let moderator: TestUser;
  let token: string;
  let readOnly: string;
  let plain: string;
  let popular: Status;
  let cardId: string;

  before(async () => {
    server = await createTestServer();
    users = await Promise.all(["ra", "rb", "rc", "rd"].map((n) => createUser(server.ctx, n)));
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ discoverable: true })
      .where(
        "id",
        "in",
        users.map((u) => u.account.id),
      )
      .execute();
    moderator = await createUser(server.ctx, "modtrends", { role: "Moderator" });
    token = await tokenFor(server.ctx, moderator, "admin:read admin:write");
    readOnly = await tokenFor(server.ctx, moderator, "admin:read");
    plain = await tokenFor(server.ctx, users[0]!, "admin:read admin:write");
    const [a, b, c, d] = users as [TestUser, TestUser, TestUser, TestUser];
    await postStatus(server, a, { status: "#Approvable one" });
    await postStatus(server, b, { status: "#approvable two #rejectable" });
    await postStatus(server, c, { status: "#rejectable three" });
    popular = await postStatus(server, a, { status: "a popular post" });
    for (const user of [c, d])
      await request(server.app, "POST", `/api/v1/statuses/${popular.id}/favourite`, { token: user.token });
    cardId = newId();
    const now = new Date().toISOString();
    const url = "https://news.example/story";
    await server.ctx.db.kysely
      .insertInto("preview_cards")
      .values({
        id: cardId,
        url,
        title: "story",
        author_name: "Reporter",
        author_url: "https://news.example/reporter",
        provider_name: "News",
        provider_url: "https://news.example/",
        embed_url: url,
        created_at: now,
        updated_at: now,
      })
      .execute();
    for (const user of [a, b]) {
      const status = await postStatus(server, user, { status: `read ${url}` });
      await server.ctx.db.kysely
        .insertInto("preview_cards_statuses")
        .values({ status_id: status.id, preview_card_id: cardId, url })
        .execute();
    }
    await refreshTrends(server.ctx);
  });
  after(() => server.close());

  const list = async <T>(path: string, auth = token) => {
    const res = await get(server.app, path, auth);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as T;
  };
  const post = (path: string, auth = token) => request(server.app, "POST", path, { token: auth });
  const tagId = async (name: string) =>
    (
      await server.ctx.db.kysely
        .selectFrom("tags")
        .select("id")
        .where((eb) => eb(eb.fn("lower", ["name"]), "=", name))
        .executeTakeFirstOrThrow()
    ).id;
  const publicNames = async (path: string, field: "name" | "url" | "id") =>
    (await list<Array<Record<string, string>>>(path, "")).map((x) => x[field]);
  const audit = (targetType: string, targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["action", "account_id", "human_identifier"])
      .where("target_type", "=", targetType)
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();

  test("moderators see every ranked item, unreviewed, with Mastodon's admin shapes", async () => {
    const tags = await list<AdminTag[]>(`${ADMIN}/tags`);
    assert.deepEqual(tags.map((t) => t.name).sort(), ["approvable", "rejectable"]);
    for (const tag of tags) {
      assert.equal(tag.requires_review, true);
      assert.equal(tag.trendable, true);
      assert.equal(tag.usable, true);
    }
    const statuses = await list<Array<Status & { requires_review: boolean }>>(`${ADMIN}/statuses`);
    assert.deepEqual(
      statuses.map((s) => [s.id, s.requires_review]),
      [[popular.id, true]],
    );
    const links = await list<AdminLink[]>(`${ADMIN}/links`);
    assert.deepEqual(
      links.map((l) => [l.id, l.url, l.requires_review]),
      [[cardId, "https://news.example/story", true]],
    );
    const providers = await list<Provider[]>(`${ADMIN}/links/publishers`);
    assert.deepEqual(
      providers.map((p) => [p.domain, p.trendable, p.reviewed_at, p.requires_review]),
      [["news.example", null, null, true]],
    );
  });

  test("the admin entities match the OpenAPI description", { skip: openApiSkip }, async () => {
    for (const tag of await list<AdminTag[]>(`${ADMIN}/tags`)) {
      assert.deepEqual(validateSchema("Tag", tag), []);
      assert.deepEqual(validateSchema("AdminTag", tag), []);
    }
    for (const status of await list<Status[]>(`${ADMIN}/statuses`))
      assert.deepEqual(validateSchema("Status", status), []);
    for (const link of await list<AdminLink[]>(`${ADMIN}/links`))
      assert.deepEqual(validateSchema("TrendsLink", link), []);
  });

  test("rejecting a hashtag hides it from the public trends at once and is logged", async () => {
    const id = await tagId("rejectable");
    const res = await post(`${ADMIN}/tags/${id}/reject`);
    assert.equal(res.statusCode, 200, res.body);
    const tag = res.json() as AdminTag;
    assert.deepEqual([tag.id, tag.trendable, tag.requires_review], [id, false, false]);
    assert.deepEqual(await publicNames("/api/v1/trends/tags", "name"), ["approvable"]);
    // Moderators still see it, reviewed.
    const admin = await list<AdminTag[]>(`${ADMIN}/tags`);
    assert.deepEqual(
      admin.find((t) => t.id === id),
      { ...admin.find((t) => t.id === id)!, trendable: false, requires_review: false },
    );
    assert.deepEqual(await audit("Tag", id), [
      { action: "reject", account_id: moderator.account.id, human_identifier: "rejectable" },
    ]);
    // Approving again reverses it.
    assert.equal((await post(`${ADMIN}/tags/${id}/approve`)).statusCode, 200);
    assert.deepEqual((await publicNames("/api/v1/trends/tags", "name")).sort(), ["approvable", "rejectable"]);
    assert.deepEqual(
      (await audit("Tag", id)).map((e) => e.action),
      ["reject", "approve"],
    );
  });

  test("statuses and links: reject hides, approve shows; each decision is logged", async () => {
    const rejected = await post(`${ADMIN}/statuses/${popular.id}/reject`);
    assert.equal(rejected.statusCode, 200, rejected.body);
    assert.equal((rejected.json() as { requires_review: boolean }).requires_review, false);
    assert.deepEqual(await publicNames("/api/v1/trends/statuses", "id"), []);
    assert.equal((await post(`${ADMIN}/statuses/${popular.id}/approve`)).statusCode, 200);
    assert.deepEqual(await publicNames("/api/v1/trends/statuses", "id"), [popular.id]);
    assert.deepEqual(
      (await audit("Status", popular.id)).map((e) => [e.action, e.human_identifier]),
      [
        ["reject", "ra"],
        ["approve", "ra"],
      ],
    );

    const link = await post(`${ADMIN}/links/${cardId}/reject`);
    assert.equal(link.statusCode, 200, link.body);
    assert.deepEqual([(link.json() as AdminLink).id, (link.json() as AdminLink).requires_review], [cardId, false]);
    assert.deepEqual(await publicNames("/api/v1/trends/links", "url"), []);
    assert.deepEqual(
      (await audit("PreviewCard", cardId)).map((e) => [e.action, e.human_identifier]),
      [["reject", "https://news.example/story"]],
    );
  });

  test("publishers: approving one is logged and its unreviewed links follow it", async () => {
    const [provider] = await list<Provider[]>(`${ADMIN}/links/publishers`);
    const res = await post(`${ADMIN}/links/publishers/${provider!.id}/approve`);
    assert.equal(res.statusCode, 200, res.body);
    const approved = res.json() as Provider;
    assert.deepEqual([approved.domain, approved.trendable, approved.requires_review], ["news.example", true, false]);
    assert.ok(approved.reviewed_at);
    assert.deepEqual(
      (await audit("PreviewCardProvider", provider!.id)).map((e) => [e.action, e.human_identifier]),
      [["approve", "news.example"]],
    );
    // The link's own rejection still wins over its publisher's approval.
    assert.deepEqual(await publicNames("/api/v1/trends/links", "url"), []);
    assert.equal((await post(`${ADMIN}/links/${cardId}/approve`)).statusCode, 200);
    assert.deepEqual(await publicNames("/api/v1/trends/links", "url"), ["https://news.example/story"]);
    const rejected = await post(`${ADMIN}/links/publishers/${provider!.id}/reject`);
    assert.equal((rejected.json() as Provider).trendable, false);
  });

  test("when the server asks for review, only approved items trend", async () => {
    const db = server.ctx.db.kysely;
    await db
      .insertInto("instance_settings")
      .values({ key: "trendable_by_default", value: "false", updated_at: new Date().toISOString() })
      .execute();
    try {
      // Approved before: the #rejectable tag (approved again), the status and the link.
      assert.deepEqual(await publicNames("/api/v1/trends/tags", "name"), ["rejectable"]);
      assert.deepEqual(await publicNames("/api/v1/trends/statuses", "id"), [popular.id]);
      assert.deepEqual(await publicNames("/api/v1/trends/links", "url"), ["https://news.example/story"]);
      const approvable = (await list<AdminTag[]>(`${ADMIN}/tags`)).find((t) => t.name === "approvable")!;
      assert.deepEqual([approvable.trendable, approvable.requires_review], [false, true]);
      assert.equal((await post(`${ADMIN}/tags/${approvable.id}/approve`)).statusCode, 200);
      assert.deepEqual((await publicNames("/api/v1/trends/tags", "name")).sort(), ["approvable", "rejectable"]);
    } finally {
      await db.deleteFrom("instance_settings").where("key", "=", "trendable_by_default").execute();
    }
  });

  test("limit and offset page the admin lists", async () => {
    const first = await get(server.app, `${ADMIN}/tags?limit=1`, token);
    assert.equal((first.json() as AdminTag[]).length, 1);
    assert.match(String(first.headers.link), /offset=1/);
    const second = await list<AdminTag[]>(`${ADMIN}/tags?limit=1&offset=1`);
    assert.equal(second.length, 1);
    assert.notEqual(second[0]!.id, (first.json() as AdminTag[])[0]!.id);
    assert.deepEqual(await list(`${ADMIN}/tags?offset=5`), []);
  });

  test("unknown or malformed IDs are 404", async () => {
    for (const kind of ["tags", "statuses", "links", "links/publishers"]) {
      for (const decision of ["approve", "reject"]) {
        assert.deepEqual(errorOf(await post(`${ADMIN}/${kind}/${newId()}/${decision}`)), [404, NOT_FOUND]);
        assert.deepEqual(errorOf(await post(`${ADMIN}/${kind}/nope/${decision}`)), [404, NOT_FOUND]);
      }
    }
  });

  test("refusals: no token, no Manage Taxonomies, outside the scopes", async () => {
    const tag = await tagId("approvable");
    const writes = [
      `${ADMIN}/tags/${tag}/approve`,
      `${ADMIN}/statuses/${popular.id}/reject`,
      `${ADMIN}/links/${cardId}/approve`,
    ];
    for (const path of ["tags", "statuses", "links", "links/publishers"].map((k) => `${ADMIN}/${k}`)) {
      assert.deepEqual(errorOf(await get(server.app, path)), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await get(server.app, path, plain)), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await get(server.app, path, users[0]!.token)), [403, OUTSIDE_SCOPES]);
    }
    for (const path of writes) {
      assert.deepEqual(errorOf(await post(path, "")), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await post(path, plain)), [403, NOT_ALLOWED]);
      assert.deepEqual(errorOf(await post(path, readOnly)), [403, OUTSIDE_SCOPES]);
    }
  });
});
