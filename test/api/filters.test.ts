/**
 * Filters: v2 CRUD with keywords and statuses (and their own routes), v1 over the same rows, and
 * filters applied by the server wherever statuses are shown — `filtered` holds FilterResults for
 * the context, `hide` removes the status, `warn` keeps it, expired filters do nothing, and a
 * whole-word keyword only matches whole words.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import type { Status } from "../types.ts";

interface FilterJson {
  id: string;
  title: string;
  context: string[];
  expires_at: string | null;
  filter_action: string;
  keywords: Array<{ id: string; keyword: string; whole_word: boolean }>;
  statuses: Array<{ id: string; status_id: string }>;
}
interface Result {
  filter: { id: string; title: string; filter_action: string; keywords?: unknown };
  keyword_matches: string[] | null;
  status_matches: string[] | null;
}

describe("filters", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const call = async <T = unknown>(
    viewer: TestUser,
    method: "POST" | "GET" | "PUT" | "DELETE",
    path: string,
    json?: object,
  ): Promise<T> => {
    const res = await request(server.app, method, path, { token: viewer.token, json });
    assert.equal(res.statusCode, 200, `${method} ${path}: ${res.body}`);
    return res.json() as T;
  };
  const createFilter = (viewer: TestUser, body: object) => call<FilterJson>(viewer, "POST", "/api/v2/filters", body);
  const plain = (s: Status) => (s.reblog ?? s).content.replace(/<[^>]+>/g, "");

  describe("v2 CRUD", () => {
    test("create with keywords (JSON), read, list, update keywords by id, delete", async () => {
      const owner = await user("crud");
      const created = await createFilter(owner, {
        title: "Spoilers",
        context: ["home", "public"],
        filter_action: "hide",
        expires_in: 3600,
        keywords_attributes: [{ keyword: "finale", whole_word: false }, { keyword: "ending" }],
      });
      assert.equal(created.title, "Spoilers");
      assert.deepEqual(created.context, ["home", "public"]);
      assert.equal(created.filter_action, "hide");
      assert.ok(created.expires_at && Date.parse(created.expires_at) > Date.now() + 3500_000);
      assert.deepEqual(
        created.keywords.map((k) => [k.keyword, k.whole_word]),
        [
          ["finale", false],
          ["ending", true],
        ],
      );
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/${created.id}`), created);
      assert.deepEqual(await call(owner, "GET", "/api/v2/filters"), [created]);

      const [finale, ending] = created.keywords;
      const updated = await call<FilterJson>(owner, "PUT", `/api/v2/filters/${created.id}`, {
        title: "Spoilers!",
        filter_action: "warn",
        expires_in: "",
        keywords_attributes: [
          { id: finale!.id, keyword: "season finale" },
          { id: ending!.id, _destroy: true },
          { keyword: "twist", whole_word: true },
        ],
      });
      assert.equal(updated.title, "Spoilers!");
      assert.equal(updated.filter_action, "warn");
      assert.equal(updated.expires_at, null);
      assert.deepEqual(updated.context, ["home", "public"]);
      assert.deepEqual(
        updated.keywords.map((k) => [k.keyword, k.whole_word]),
        [
          ["season finale", false],
          ["twist", true],
        ],
      );
      assert.deepEqual(await call(owner, "DELETE", `/api/v2/filters/${created.id}`), {});
      assert.deepEqual(await call(owner, "GET", "/api/v2/filters"), []);
      assert.equal(errorOf(await get(server.app, `/api/v2/filters/${created.id}`, owner.token))[0], 404);
    });

    test("create from a form with keywords_attributes[][…]", async () => {
      const owner = await user("form");
      const res = await request(server.app, "POST", "/api/v2/filters", {
        token: owner.token,
        form: [
          ["title", "Form"],
          ["context[]", "home"],
          ["context[]", "notifications"],
          ["keywords_attributes[][keyword]", "one"],
          ["keywords_attributes[][whole_word]", "false"],
          ["keywords_attributes[][keyword]", "two"],
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      const filter = res.json() as FilterJson;
      assert.deepEqual(filter.context, ["home", "notifications"]);
      assert.equal(filter.filter_action, "warn");
      assert.equal(filter.expires_at, null);
      assert.deepEqual(
        filter.keywords.map((k) => [k.keyword, k.whole_word]),
        [
          ["one", false],
          ["two", true],
        ],
      );
    });

    test("validation errors, in Mastodon's words", async () => {
      const owner = await user("invalid");
      const create = (json: object) => request(server.app, "POST", "/api/v2/filters", { token: owner.token, json });
      assert.deepEqual(errorOf(await create({})), [
        422,
        "Validation failed: Title can't be blank, Context can't be blank, Context None or invalid context supplied",
      ]);
      assert.deepEqual(errorOf(await create({ title: "x", context: ["home", "everywhere"] })), [
        422,
        "Validation failed: Context None or invalid context supplied",
      ]);
      assert.deepEqual(errorOf(await create({ title: "x", context: ["home"], filter_action: "explode" })), [
        422,
        "Validation failed: Action is not included in the list",
      ]);
      assert.deepEqual(errorOf(await create({ title: "x".repeat(257), context: ["home"] })), [
        422,
        "Validation failed: Title is too long (maximum is 256 characters)",
      ]);
      assert.deepEqual(
        errorOf(await create({ title: "x", context: ["home"], keywords_attributes: [{ keyword: " " }] })),
        [422, "Validation failed: Keywords keyword can't be blank"],
      );
      assert.deepEqual(await call(owner, "GET", "/api/v2/filters"), [], "nothing was stored");
      // An expiry too far to write down is taken as a hundred years.
      const far = await createFilter(owner, { title: "far", context: ["home"], expires_in: 1e20 });
      assert.ok(far.expires_at && Date.parse(far.expires_at) > Date.now() + 99 * 365 * 86_400_000);
    });

    test("other people's filters, keywords and statuses are 404", async () => {
      const [owner, other] = await Promise.all([user("mine"), user("theirs")]);
      const status = await postStatus(server, owner, { status: "filtered post" });
      const filter = await createFilter(owner, {
        title: "t",
        context: ["home"],
        keywords_attributes: [{ keyword: "k" }],
      });
      const filterStatus = await call<{ id: string }>(owner, "POST", `/api/v2/filters/${filter.id}/statuses`, {
        status_id: status.id,
      });
      const keyword = filter.keywords[0]!;
      for (const [method, path] of [
        ["GET", `/api/v2/filters/${filter.id}`],
        ["PUT", `/api/v2/filters/${filter.id}`],
        ["DELETE", `/api/v2/filters/${filter.id}`],
        ["GET", `/api/v2/filters/${filter.id}/keywords`],
        ["POST", `/api/v2/filters/${filter.id}/keywords`],
        ["GET", `/api/v2/filters/keywords/${keyword.id}`],
        ["PUT", `/api/v2/filters/keywords/${keyword.id}`],
        ["DELETE", `/api/v2/filters/keywords/${keyword.id}`],
        ["GET", `/api/v2/filters/${filter.id}/statuses`],
        ["GET", `/api/v2/filters/statuses/${filterStatus.id}`],
        ["DELETE", `/api/v2/filters/statuses/${filterStatus.id}`],
        ["GET", "/api/v1/filters/" + keyword.id],
        ["DELETE", "/api/v1/filters/" + keyword.id],
      ] as const) {
        const res = await request(server.app, method, path, { token: other.token, json: { keyword: "x" } });
        assert.deepEqual(errorOf(res), [404, "Record not found"], `${method} ${path}`);
      }
      // A keyword of another filter named in keywords_attributes is 404 too.
      const mine = await createFilter(other, { title: "o", context: ["home"] });
      const res = await request(server.app, "PUT", `/api/v2/filters/${mine.id}`, {
        token: other.token,
        json: { keywords_attributes: [{ id: keyword.id, keyword: "stolen" }] },
      });
      assert.equal(res.statusCode, 404);
      assert.equal((await call<FilterJson>(owner, "GET", `/api/v2/filters/${filter.id}`)).keywords[0]!.keyword, "k");
    });

    test("keywords and statuses on their own routes", async () => {
      const owner = await user("parts");
      const filter = await createFilter(owner, { title: "parts", context: ["home"] });
      const added = await call<{ id: string; keyword: string; whole_word: boolean }>(
        owner,
        "POST",
        `/api/v2/filters/${filter.id}/keywords`,
        { keyword: "alpha", whole_word: false },
      );
      assert.deepEqual([added.keyword, added.whole_word], ["alpha", false]);
      const changed = await call<{ keyword: string; whole_word: boolean }>(
        owner,
        "PUT",
        `/api/v2/filters/keywords/${added.id}`,
        { keyword: "beta" },
      );
      assert.deepEqual([changed.keyword, changed.whole_word], ["beta", false]);
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/keywords/${added.id}`), { ...changed, id: added.id });
      assert.equal((await call<unknown[]>(owner, "GET", `/api/v2/filters/${filter.id}/keywords`)).length, 1);
      const blank = await request(server.app, "POST", `/api/v2/filters/${filter.id}/keywords`, {
        token: owner.token,
        json: { keyword: "" },
      });
      assert.deepEqual(errorOf(blank), [422, "Validation failed: Keyword can't be blank"]);
      assert.deepEqual(await call(owner, "DELETE", `/api/v2/filters/keywords/${added.id}`), {});
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/${filter.id}/keywords`), []);

      const status = await postStatus(server, owner, { status: "to filter" });
      const fs = await call<{ id: string; status_id: string }>(owner, "POST", `/api/v2/filters/${filter.id}/statuses`, {
        status_id: status.id,
      });
      assert.equal(fs.status_id, status.id);
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/statuses/${fs.id}`), fs);
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/${filter.id}/statuses`), [fs]);
      const again = await request(server.app, "POST", `/api/v2/filters/${filter.id}/statuses`, {
        token: owner.token,
        json: { status_id: status.id },
      });
      assert.deepEqual(errorOf(again), [422, "Validation failed: Status has already been taken"]);
      const unknown = await request(server.app, "POST", `/api/v2/filters/${filter.id}/statuses`, {
        token: owner.token,
        json: { status_id: "123" },
      });
      assert.deepEqual(errorOf(unknown), [422, "Validation failed: Status must exist"]);
      assert.deepEqual(await call(owner, "DELETE", `/api/v2/filters/statuses/${fs.id}`), {});
      assert.deepEqual(await call(owner, "GET", `/api/v2/filters/${filter.id}/statuses`), []);
    });
  });

  describe("applied where statuses are shown", () => {
    /** A reader who follows an author, and the author's posts. */
    async function scene() {
      const [reader, author] = await Promise.all([user("reader"), user("author")]);
      await follow(server, reader, author);
      return { reader, author };
    }
    const home = async (viewer: TestUser) => {
      await server.ctx.jobs.drain();
      return call<Status[]>(viewer, "GET", "/api/v1/timelines/home");
    };

    test("warn keeps the status with a FilterResult; hide removes it in its contexts only", async () => {
      const { reader, author } = await scene();
      const warn = await createFilter(reader, {
        title: "Politics",
        context: ["home"],
        keywords_attributes: [{ keyword: "election" }],
      });
      await createFilter(reader, {
        title: "Food",
        context: ["home", "thread"],
        filter_action: "hide",
        keywords_attributes: [{ keyword: "broccoli" }],
      });
      await postStatus(server, author, { status: "The Election is tomorrow" });
      const hidden = await postStatus(server, author, { status: "I love broccoli" });
      await postStatus(server, author, { status: "nothing to see" });
      const page = await home(reader);
      assert.deepEqual(page.map(plain), ["nothing to see", "The Election is tomorrow"]);
      const results = page[1]!.filtered as unknown as Result[];
      assert.deepEqual(results, [
        {
          filter: {
            id: warn.id,
            title: "Politics",
            context: ["home"],
            expires_at: null,
            filter_action: "warn",
          },
          keyword_matches: ["Election"],
          status_matches: null,
        },
      ]);
      assert.deepEqual(page[0]!.filtered, []);
      // Not a home context: the public timeline and the profile show the hidden post, unmarked.
      const timeline = await call<Status[]>(reader, "GET", "/api/v1/timelines/public");
      assert.ok(timeline.some((s) => s.id === hidden.id && (s.filtered ?? []).length === 0));
      // Opened by itself, a status lists every filter that matches, whatever its context.
      const alone = await call<Status>(reader, "GET", `/api/v1/statuses/${hidden.id}`);
      assert.deepEqual(
        (alone.filtered as unknown as Result[]).map((r) => [r.filter.title, r.filter.filter_action]),
        [["Food", "hide"]],
      );
      // The author, who has no filters, sees everything.
      assert.equal((await home(author)).length, 3);
    });

    test("status filters match the status and boosts of it", async () => {
      const { reader, author } = await scene();
      const booster = await user("booster");
      await follow(server, reader, booster);
      const target = await postStatus(server, author, { status: "this one" });
      await call(booster, "POST", `/api/v1/statuses/${target.id}/reblog`);
      const filter = await createFilter(reader, { title: "That post", context: ["home"] });
      await call(reader, "POST", `/api/v2/filters/${filter.id}/statuses`, { status_id: target.id });
      const page = await home(reader);
      assert.ok(page.length >= 1);
      for (const s of page.filter((s) => (s.reblog ?? s).id === target.id)) {
        const [result] = s.filtered as unknown as Result[];
        assert.equal(result?.filter.id, filter.id);
        assert.ok(result?.status_matches?.includes(target.id));
        assert.equal(result?.keyword_matches, null);
      }
    });

    test("whole_word matches whole words only; without it, any substring", async () => {
      const { reader, author } = await scene();
      await createFilter(reader, {
        title: "cats",
        context: ["home"],
        keywords_attributes: [{ keyword: "cat", whole_word: true }],
      });
      await createFilter(reader, {
        title: "dogs",
        context: ["home"],
        keywords_attributes: [{ keyword: "dog", whole_word: false }],
      });
      for (const text of ["concatenate", "my cat!", "CAT", "hotdogs", "cat_food"])
        await postStatus(server, author, { status: text });
      const titles = Object.fromEntries(
        (await home(reader)).map((s) => [plain(s), (s.filtered as unknown as Result[]).map((r) => r.filter.title)]),
      );
      assert.deepEqual(titles, {
        concatenate: [],
        "my cat!": ["cats"],
        CAT: ["cats"],
        hotdogs: ["dogs"],
        cat_food: [],
      });
    });

    test("content warnings, poll options and media descriptions are searched too", async () => {
      const { reader, author } = await scene();
      await createFilter(reader, { title: "w", context: ["home"], keywords_attributes: [{ keyword: "zebra" }] });
      await postStatus(server, author, { status: "hidden text", spoiler_text: "zebra ahead" });
      await postStatus(server, author, { status: "vote", poll: { options: ["zebra", "lion"], expires_in: 600 } });
      const page = await home(reader);
      assert.deepEqual(
        page.map((s) => (s.filtered ?? []).length),
        [1, 1],
      );
    });

    test("an expired filter is kept but not applied", async () => {
      const { reader, author } = await scene();
      const filter = await createFilter(reader, {
        title: "old",
        context: ["home"],
        filter_action: "hide",
        keywords_attributes: [{ keyword: "stale" }],
      });
      await server.ctx.db.kysely
        .updateTable("custom_filters")
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where("id", "=", filter.id)
        .execute();
      await postStatus(server, author, { status: "stale news" });
      const page = await home(reader);
      assert.deepEqual(page.map(plain), ["stale news"]);
      assert.deepEqual(page[0]!.filtered, []);
      assert.equal((await call<FilterJson[]>(reader, "GET", "/api/v2/filters")).length, 1);
    });

    test("notifications, threads and profiles follow their contexts", async () => {
      const { reader, author } = await scene();
      await createFilter(reader, {
        title: "everywhere",
        context: ["notifications", "thread", "account"],
        filter_action: "hide",
        keywords_attributes: [{ keyword: "secret" }],
      });
      const root = await postStatus(server, author, { status: "root" });
      await postStatus(server, author, { status: `@${reader.username} secret reply`, in_reply_to_id: root.id });
      await postStatus(server, author, { status: `@${reader.username} plain reply`, in_reply_to_id: root.id });
      await server.ctx.jobs.drain();
      const notes = await call<Array<{ status?: Status }>>(reader, "GET", "/api/v1/notifications");
      assert.deepEqual(
        notes.map((n) => plain(n.status!)),
        [`@${reader.username} plain reply`],
      );
      const grouped = await call<{ notification_groups: unknown[]; statuses: Status[] }>(
        reader,
        "GET",
        "/api/v2/notifications",
      );
      assert.equal(grouped.notification_groups.length, 1);
      assert.deepEqual(grouped.statuses.map(plain), [`@${reader.username} plain reply`]);
      const context = await call<{ descendants: Status[] }>(reader, "GET", `/api/v1/statuses/${root.id}/context`);
      assert.deepEqual(context.descendants.map(plain), [`@${reader.username} plain reply`]);
      const profile = await call<Status[]>(reader, "GET", `/api/v1/accounts/${author.account.id}/statuses`);
      assert.deepEqual(profile.map(plain), [`@${reader.username} plain reply`, "root"]);
      // Home is not one of its contexts.
      assert.equal((await home(reader)).length, 3);
    });
  });

  describe("v1", () => {
    test("create, list and read one per keyword; irreversible hides in home; Deprecation header", async () => {
      const [reader, author] = await Promise.all([user("v1reader"), user("v1author")]);
      await follow(server, reader, author);
      const res = await request(server.app, "POST", "/api/v1/filters", {
        token: reader.token,
        json: { phrase: "Mondays", context: ["home"], irreversible: true, whole_word: false },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers.deprecation, "@1668384000");
      const v1 = res.json() as { id: string; phrase: string; irreversible: boolean; whole_word: boolean };
      assert.deepEqual(
        { phrase: v1.phrase, irreversible: v1.irreversible, whole_word: v1.whole_word },
        { phrase: "Mondays", irreversible: true, whole_word: false },
      );
      assert.deepEqual(await call(reader, "GET", "/api/v1/filters"), [v1]);
      assert.deepEqual(await call(reader, "GET", `/api/v1/filters/${v1.id}`), v1);
      const [v2] = await call<FilterJson[]>(reader, "GET", "/api/v2/filters");
      assert.deepEqual([v2!.title, v2!.filter_action, v2!.keywords[0]!.id], ["Mondays", "hide", v1.id]);

      await postStatus(server, author, { status: "I hate mondays" });
      await postStatus(server, author, { status: "fine" });
      await server.ctx.jobs.drain();
      assert.deepEqual((await call<Status[]>(reader, "GET", "/api/v1/timelines/home")).map(plain), ["fine"]);

      const changed = await call<{ phrase: string; irreversible: boolean }>(reader, "PUT", `/api/v1/filters/${v1.id}`, {
        phrase: "Tuesdays",
        irreversible: false,
      });
      assert.deepEqual([changed.phrase, changed.irreversible], ["Tuesdays", false]);
      assert.deepEqual(await call(reader, "DELETE", `/api/v1/filters/${v1.id}`), {});
      assert.deepEqual(await call(reader, "GET", "/api/v1/filters"), []);
      assert.deepEqual(await call(reader, "GET", "/api/v2/filters"), [], "its last keyword took the filter with it");
    });

    test("changing what a several-keyword filter shares is refused; deleting one keyword keeps the filter", async () => {
      const owner = await user("v1multi");
      const filter = await createFilter(owner, {
        title: "two",
        context: ["home"],
        keywords_attributes: [{ keyword: "a" }, { keyword: "b" }],
      });
      const [a] = filter.keywords;
      const res = await request(server.app, "PUT", `/api/v1/filters/${a!.id}`, {
        token: owner.token,
        json: { context: ["public"] },
      });
      assert.equal(errorOf(res)[0], 422);
      assert.match(errorOf(res)[1], /more than one filter keyword/);
      // The phrase alone may change.
      await call(owner, "PUT", `/api/v1/filters/${a!.id}`, { phrase: "aa" });
      await call(owner, "DELETE", `/api/v1/filters/${a!.id}`);
      const [left] = await call<FilterJson[]>(owner, "GET", "/api/v2/filters");
      assert.deepEqual(
        left!.keywords.map((k) => k.keyword),
        ["b"],
      );
      const bad = await request(server.app, "POST", "/api/v1/filters", {
        token: owner.token,
        json: { context: ["home"] },
      });
      assert.equal(errorOf(bad)[0], 422);
    });
  });

  test(
    "Filter, FilterKeyword, FilterStatus, FilterResult and V1Filter match Mastodon's OpenAPI schemas",
    {
      skip: openApiSkip,
    },
    async () => {
      const [reader, author] = await Promise.all([user("schema"), user("schemaauthor")]);
      await follow(server, reader, author);
      const status = await postStatus(server, author, { status: "schema word" });
      const filter = await createFilter(reader, {
        title: "schema",
        context: ["home"],
        expires_in: 600,
        keywords_attributes: [{ keyword: "word" }],
      });
      await call(reader, "POST", `/api/v2/filters/${filter.id}/statuses`, { status_id: status.id });
      const full = await call<FilterJson>(reader, "GET", `/api/v2/filters/${filter.id}`);
      assert.deepEqual(validateSchema("Filter", full), []);
      assert.deepEqual(validateSchema("FilterKeyword", full.keywords[0]), []);
      assert.deepEqual(validateSchema("FilterStatus", full.statuses[0]), []);
      await server.ctx.jobs.drain();
      const [shown] = await call<Status[]>(reader, "GET", "/api/v1/timelines/home");
      assert.deepEqual(validateSchema("FilterResult", shown!.filtered![0]), []);
      assert.deepEqual(validateSchema("Status", shown), []);
      assert.deepEqual(validateSchema("V1Filter", (await call<unknown[]>(reader, "GET", "/api/v1/filters"))[0]), []);
    },
  );

  const server_ = () => server;
  describeAuth("GET /api/v2/filters", server_, {
    scope: "read:filters",
    send: (s, token) => request(s.app, "GET", "/api/v2/filters", { token }),
  });
  describeAuth("POST /api/v2/filters", server_, {
    scope: "write:filters",
    send: (s, token) => request(s.app, "POST", "/api/v2/filters", { token, json: { title: "t", context: ["home"] } }),
  });
  describeAuth("GET /api/v1/filters", server_, {
    scope: "read:filters",
    send: (s, token) => request(s.app, "GET", "/api/v1/filters", { token }),
  });
  describeAuth("POST /api/v1/filters", server_, {
    scope: "write:filters",
    send: (s, token) => request(s.app, "POST", "/api/v1/filters", { token, json: { phrase: "p", context: ["home"] } }),
  });
});
