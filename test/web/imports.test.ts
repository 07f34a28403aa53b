/**
 * /settings/imports: a CSV file of each kind, merged or overwriting, applied by jobs through the
 * same services as by hand; accounts this server does not know are looked up in the background;
 * a bad row is reported with its reason while the others are applied; a file that cannot be
 * imported (too large, not UTF-8, not CSV, the wrong columns, empty, too many rows) is a 422 page
 * that says why, and nothing of it is stored.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { alertOf, Browser, decodeEntities, findForm, locationOf } from "../browser.ts";
import type { RemoteResolver } from "../../src/context.ts";
import type { AccountRow } from "../../src/db/schema.ts";
import { runImport } from "../../src/services/portability/run.ts";
import {
  block,
  createRemoteAccount,
  createTestServer,
  createUser,
  follow,
  mute,
  postStatus,
  request,
  type MultipartPart,
  type TestServer,
  type TestUser,
} from "../kit.ts";

const EXPIRED = "This form has expired. Please try again.";
const TOO_LARGE = "The file is too large: at most 20 MB can be imported.";
const NOT_UTF8 = "The file is not UTF-8 text. Save it as CSV with the UTF-8 encoding and try again.";
const EMPTY = "The file is empty.";
const NOTHING = "The file lists nothing to import.";
const TOO_MANY = "The file has more than 20,000 rows; split it into smaller files.";
const FOLLOWS_HEADER = "Account address,Show boosts,Notify on new posts,Languages";

describe("imports", () => {
  let server: TestServer;
  let users = 0;
  let realRemote: RemoteResolver;
  /** Handles the stand-in for other servers finds, and what it was asked. */
  const elsewhere = new Map<string, () => Promise<AccountRow>>();
  const asked: string[] = [];

  before(async () => {
    server = await createTestServer();
    realRemote = server.ctx.remote;
    // Other servers, without a network: the handles a test registers exist, nothing else does.
    server.ctx.remote = {
      account: async (query) => {
        asked.push(query);
        return elsewhere.get(query)?.();
      },
      url: async () => undefined,
      currentAliases: async () => undefined,
    };
  });
  after(async () => {
    if (server) server.ctx.remote = realRemote;
    await server?.close();
  });
  beforeEach(() => {
    asked.length = 0;
  });

  const user = (name = "importer") => createUser(server.ctx, `${name}${++users}`);

  async function signedIn(who: TestUser): Promise<Browser> {
    const browser = new Browser(server.app);
    assert.equal((await browser.signIn(who.user.email)).statusCode, 303);
    return browser;
  }

  interface Upload {
    type: string;
    mode?: string;
    file?: string | Buffer;
    filename?: string;
    token?: string;
  }

  /** Submits the upload form of /settings/imports as a browser does (multipart), with the page's CSRF token. */
  async function upload(browser: Browser, options: Upload): Promise<LightMyRequestResponse> {
    const page = await browser.get("/settings/imports");
    assert.equal(page.statusCode, 200);
    const form = findForm(page.body, "/settings/imports");
    assert.match(form.html, /enctype="multipart\/form-data"/);
    const parts: MultipartPart[] = [
      { name: "authenticity_token", value: options.token ?? form.fields.authenticity_token! },
      { name: "form_import[type]", value: options.type },
      { name: "form_import[mode]", value: options.mode ?? "merge" },
    ];
    if (options.file !== undefined)
      parts.push({
        name: "form_import[data]",
        value: options.file,
        filename: options.filename ?? "import.csv",
        type: "text/csv",
      });
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return request(server.app, "POST", "/settings/imports", { parts, headers: { cookie, accept: "text/html" } });
  }

  /** Uploads, expects the import's page, runs the jobs; returns the import's page afterwards. */
  async function imported(browser: Browser, options: Upload): Promise<{ id: string; page: string }> {
    const res = await upload(browser, options);
    assert.equal(res.statusCode, 303, alertOf(res.body) ?? res.body.slice(0, 500));
    const path = locationOf(res).pathname;
    const id = /^\/settings\/imports\/(\d+)$/.exec(path)?.[1];
    assert.ok(id, path);
    await server.ctx.jobs.drain();
    const page = await browser.get(path);
    assert.equal(page.statusCode, 200);
    return { id, page: decodeEntities(page.body) };
  }

  /** The import's counters as its page shows them. */
  function progress(page: string): Record<string, string> {
    return Object.fromEntries(
      [...page.matchAll(/<tr><td>(\w+)<\/td><td>([^<]+)<\/td><\/tr>/g)].map((m) => [m[1], m[2]]),
    );
  }

  async function rowsStored(who: TestUser): Promise<[number, number]> {
    const imports = await server.ctx.db.kysely
      .selectFrom("bulk_imports")
      .select("id")
      .where("account_id", "=", who.account.id)
      .execute();
    const rows = imports.length
      ? await server.ctx.db.kysely
          .selectFrom("bulk_import_rows")
          .select("id")
          .where(
            "bulk_import_id",
            "in",
            imports.map((i) => i.id),
          )
          .execute()
      : [];
    return [imports.length, rows.length];
  }

  async function relationship(who: TestUser, target: { id: string }) {
    const res = await request(server.app, "GET", `/api/v1/accounts/relationships?id[]=${target.id}`, {
      token: who.token,
    });
    return res.json()[0] as {
      following: boolean;
      requested: boolean;
      showing_reblogs: boolean;
      notifying: boolean;
      languages: string[] | null;
      blocking: boolean;
      muting: boolean;
      muting_notifications: boolean;
      domain_blocking: boolean;
    };
  }

  async function apiList<T>(who: TestUser, path: string): Promise<T[]> {
    const res = await request(server.app, "GET", path, { token: who.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as T[];
  }

  describe("access", () => {
    test("not signed in: the page and the upload send the browser to sign in", async () => {
      const browser = new Browser(server.app);
      const page = await browser.get("/settings/imports");
      assert.equal(page.statusCode, 303);
      assert.equal(locationOf(page).pathname, "/auth/sign_in");
      const direct = await request(server.app, "POST", "/settings/imports", {
        parts: [
          { name: "form_import[type]", value: "blocking" },
          { name: "form_import[data]", value: "x@y.test\n", filename: "b.csv" },
        ],
      });
      assert.equal(direct.statusCode, 303);
      assert.equal(locationOf(direct).pathname, "/auth/sign_in");
    });

    test("a forged or stale form is refused and stores nothing", async () => {
      const me = await user();
      const bob = await user("bob");
      const browser = await signedIn(me);
      const res = await upload(browser, { type: "blocking", file: `${bob.username}\n`, token: "a".repeat(43) });
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), EXPIRED);
      assert.deepEqual(await rowsStored(me), [0, 0]);
      assert.equal((await relationship(me, bob.account)).blocking, false);
    });

    test("someone else's import is not found", async () => {
      const me = await user();
      const other = await user();
      const { id } = await imported(await signedIn(other), { type: "domain_blocking", file: "a.example\n" });
      const browser = await signedIn(me);
      assert.equal((await browser.get(`/settings/imports/${id}`)).statusCode, 404);
      assert.equal((await browser.get(`/settings/imports/${id}/failures.csv`)).statusCode, 404);
    });
  });

  describe("files that are refused whole", () => {
    async function refused(options: Upload): Promise<string | undefined> {
      const me = await user();
      const browser = await signedIn(me);
      const res = await upload(browser, options);
      assert.equal(res.statusCode, 422, res.body.slice(0, 500));
      assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
      assert.deepEqual(await rowsStored(me), [0, 0], "nothing stored");
      await server.ctx.jobs.drain();
      assert.equal((await apiList(me, "/api/v1/blocks")).length, 0, "nothing applied");
      return alertOf(res.body);
    }

    test("a file over 20 MB", async () => {
      const row = "someone@remote.example\n";
      const file = Buffer.alloc(20 * 1024 * 1024 + 1, row);
      assert.equal(await refused({ type: "blocking", file }), TOO_LARGE);
    });

    test("exactly 20 MB is not too large (it is refused for its rows)", async () => {
      const file = Buffer.alloc(20 * 1024 * 1024, "someone@remote.example\n");
      assert.equal(await refused({ type: "blocking", file }), TOO_MANY);
    });

    test("a file that is not UTF-8", async () => {
      const file = Buffer.concat([Buffer.from("bob@rookery.test\ncaf"), Buffer.from([0xe9]), Buffer.from("@b.test\n")]);
      assert.equal(await refused({ type: "blocking", file }), NOT_UTF8);
    });

    test("a file with NUL characters", async () => {
      assert.equal(
        await refused({ type: "blocking", file: "bob\u0000@rookery.test\n" }),
        "The file is not a text file: it contains NUL characters.",
      );
    });

    test("a file that is not CSV", async () => {
      assert.equal(
        await refused({ type: "blocking", file: 'bob@rookery.test\n"carol@rookery.test\n' }),
        "The file is not valid CSV: line 2: a quoted field is never closed.",
      );
    });

    test("a follows file imported as domain blocks or as lists", async () => {
      const file = `${FOLLOWS_HEADER}\nbob@rookery.test,true,false,\n`;
      assert.equal(
        await refused({ type: "domain_blocking", file }),
        "The file does not fit the selected type (Domain blocking list): it needs the column “#domain”, and its first line names “Account address”, “Show boosts”, “Notify on new posts”, “Languages”.",
      );
      assert.match((await refused({ type: "lists", file })) ?? "", /it needs the column “List name”/);
    });

    test("an empty file, and a file with only its header", async () => {
      assert.equal(await refused({ type: "blocking", file: "" }), EMPTY);
      assert.equal(await refused({ type: "blocking", file: "\r\n\n" }), EMPTY);
      assert.equal(await refused({ type: "following", file: `${FOLLOWS_HEADER}\n` }), NOTHING);
    });

    test("more than 20,000 rows", async () => {
      assert.equal(await refused({ type: "blocking", file: "bob@rookery.test\n".repeat(20_001) }), TOO_MANY);
    });

    test("a file of which no row can be read", async () => {
      assert.equal(
        await refused({ type: "bookmarks", file: "not a link\nneither\n" }),
        "None of the rows can be imported (line 1: Not the address of a post). Is it the right file?",
      );
    });

    test("no file, an unknown type, an unknown mode", async () => {
      assert.equal(await refused({ type: "blocking" }), "Choose a CSV file to import.");
      assert.equal(await refused({ type: "statuses", file: "x\n" }), "Choose what to import.");
      assert.equal(
        await refused({ type: "blocking", mode: "replace", file: "x\n" }),
        "Choose to merge or to overwrite.",
      );
    });
  });

  describe("each kind", () => {
    test("follows, merged: settings kept, unknown accounts found in the background, bad rows reported", async () => {
      const me = await user();
      const bob = await user("bob");
      const carol = await user("carol");
      const rita = await createRemoteAccount(server.ctx, `rita${users}`, "remote.example");
      const newcomer = `new${users}@far.example`;
      elsewhere.set(newcomer, () => createRemoteAccount(server.ctx, `new${users}`, "far.example"));
      await follow(server, me, carol);
      const file = [
        FOLLOWS_HEADER,
        `${bob.username}@rookery.test,false,true,"en, de"`,
        `@${rita.username}@remote.example,true,false,`,
        `${newcomer},,,`,
        "not an address,true,false,",
        `ghost${users}@rookery.test,true,false,`,
        "",
      ].join("\n");
      const browser = await signedIn(me);
      const before = await upload(browser, { type: "following", file });
      assert.equal(before.statusCode, 303);
      // Before the jobs run: stored, waiting, the unreadable row already counted as failed.
      const waiting = decodeEntities((await browser.follow(before)).body);
      assert.deepEqual(progress(waiting), {
        State: "Waiting",
        Rows: "5",
        Processed: "1",
        Imported: "0",
        Failed: "1",
      });
      assert.match(waiting, /The import is running/);
      await server.ctx.jobs.drain();
      const page = decodeEntities((await browser.follow(before)).body);
      assert.match(progress(page).State!, /^Finished/);
      assert.deepEqual(
        { ...progress(page), State: undefined },
        {
          State: undefined,
          Rows: "5",
          Processed: "5",
          Imported: "3",
          Failed: "2",
        },
      );
      assert.match(
        page,
        /Line 5<\/td><td><code>not an address<\/code><br><span class="muted">Not an account address \(user@domain\)/,
      );
      assert.match(
        page,
        new RegExp(`Line 6</td><td><code>ghost${users}@rookery.test</code><br><span class="muted">Account not found`),
      );
      assert.deepEqual(asked, [newcomer]);

      const toBob = await relationship(me, bob.account);
      assert.equal(toBob.following, true);
      assert.equal(toBob.showing_reblogs, false);
      assert.equal(toBob.notifying, true);
      assert.deepEqual(toBob.languages, ["en", "de"]);
      assert.equal((await relationship(me, rita)).requested, true, "a remote account is asked");
      const found = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select("id")
        .where("username", "=", `new${users}`)
        .executeTakeFirstOrThrow();
      assert.equal((await relationship(me, found)).requested, true);
      assert.equal((await relationship(me, carol.account)).following, true, "merge keeps what the file does not list");

      const failures = await browser.get(`${locationOf(before).pathname}/failures.csv`);
      assert.equal(failures.statusCode, 200);
      assert.equal(failures.headers["content-type"], "text/csv; charset=utf-8");
      assert.equal(failures.headers["content-disposition"], 'attachment; filename="following_accounts_failures.csv"');
      assert.equal(
        failures.body,
        `${FOLLOWS_HEADER}\nnot an address,true,false,\nghost${users}@rookery.test,true,false,\n`,
      );

      const index = decodeEntities((await browser.get("/settings/imports")).body);
      assert.match(index, /Following list<\/a><br><span class="muted">import\.csv/);
      assert.match(
        index,
        /Finished<br><span class="muted">3 of 5 imported · <a href="\/settings\/imports\/\d+">2 failed<\/a>/,
      );
    });

    test("follows, overwritten: what the file does not list is unfollowed", async () => {
      const me = await user();
      const bob = await user("bob");
      const carol = await user("carol");
      await follow(server, me, bob, { showReblogs: true });
      await follow(server, me, carol);
      const browser = await signedIn(me);
      await imported(browser, {
        type: "following",
        mode: "overwrite",
        file: `${FOLLOWS_HEADER}\n${bob.username}@rookery.test,false,false,\n`,
      });
      assert.equal((await relationship(me, bob.account)).following, true);
      assert.equal((await relationship(me, bob.account)).showing_reblogs, false);
      assert.equal((await relationship(me, carol.account)).following, false);
    });

    test("blocks, merged and overwritten; your own account is a bad row", async () => {
      const me = await user();
      const bob = await user("bob");
      const carol = await user("carol");
      const dave = await user("dave");
      await block(server, me, carol);
      const browser = await signedIn(me);
      const merged = await imported(browser, {
        type: "blocking",
        file: `${bob.username}@rookery.test\n${me.username}\n`,
      });
      assert.match(merged.page, /That is your own account/);
      assert.equal((await relationship(me, bob.account)).blocking, true);
      assert.equal((await relationship(me, carol.account)).blocking, true);
      await imported(browser, { type: "blocking", mode: "overwrite", file: `${dave.username}\n` });
      assert.deepEqual(
        (await apiList<{ id: string }>(me, "/api/v1/blocks")).map((a) => a.id),
        [dave.account.id],
      );
    });

    test("mutes, merged and overwritten, with Hide notifications", async () => {
      const me = await user();
      const bob = await user("bob");
      const carol = await user("carol");
      const dave = await user("dave");
      await mute(server, me, dave);
      const browser = await signedIn(me);
      await imported(browser, {
        type: "muting",
        file: `Account address,Hide notifications\n${bob.username}@rookery.test,false\n${carol.username},\n`,
      });
      const toBob = await relationship(me, bob.account);
      assert.equal(toBob.muting, true);
      assert.equal(toBob.muting_notifications, false);
      assert.equal((await relationship(me, carol.account)).muting_notifications, true, "the default hides them");
      assert.equal((await relationship(me, dave.account)).muting, true);
      await imported(browser, { type: "muting", mode: "overwrite", file: `${carol.username}@rookery.test\n` });
      assert.deepEqual(
        (await apiList<{ id: string }>(me, "/api/v1/mutes")).map((a) => a.id),
        [carol.account.id],
      );
    });

    test("domain blocks, merged and overwritten; this server's own domain is a bad row", async () => {
      const me = await user();
      const browser = await signedIn(me);
      await request(server.app, "POST", "/api/v1/domain_blocks", { token: me.token, json: { domain: "old.example" } });
      const merged = await imported(browser, {
        type: "domain_blocking",
        file: "Spam.Example\nrookery.test\n",
      });
      assert.match(merged.page, /Domain is not a valid domain name/);
      assert.deepEqual((await apiList<string>(me, "/api/v1/domain_blocks")).sort(), ["old.example", "spam.example"]);
      await imported(browser, { type: "domain_blocking", mode: "overwrite", file: "worse.example\nspam.example\n" });
      assert.deepEqual((await apiList<string>(me, "/api/v1/domain_blocks")).sort(), ["spam.example", "worse.example"]);
    });

    test("lists: made by title, members followed first; overwrite deletes other lists and refills the rest", async () => {
      const me = await user();
      const bob = await user("bob");
      const carol = await user("carol");
      const lucy = await createUser(server.ctx, `lucy${++users}`, { locked: true });
      const browser = await signedIn(me);
      const old = (
        await request(server.app, "POST", "/api/v1/lists", { token: me.token, json: { title: "Old" } })
      ).json();
      await imported(browser, {
        type: "lists",
        file: `Friends,${bob.username}@rookery.test\nFriends,${lucy.username}\n"Work, mostly",${carol.username}\n`,
      });
      const lists = await apiList<{ id: string; title: string }>(me, "/api/v1/lists");
      assert.deepEqual(lists.map((l) => l.title).sort(), ["Friends", "Old", "Work, mostly"]);
      const friends = lists.find((l) => l.title === "Friends")!;
      const members = async (id: string) =>
        (await apiList<{ id: string }>(me, `/api/v1/lists/${id}/accounts`)).map((a) => a.id).sort();
      assert.deepEqual(await members(friends.id), [bob.account.id, lucy.account.id].sort());
      assert.equal((await relationship(me, bob.account)).following, true);
      assert.equal((await relationship(me, lucy.account)).requested, true, "a locked account is asked");

      await imported(browser, { type: "lists", mode: "overwrite", file: `Friends,${carol.username}\n` });
      const after = await apiList<{ id: string; title: string }>(me, "/api/v1/lists");
      assert.deepEqual(
        after.map((l) => l.title),
        ["Friends"],
      );
      assert.equal(after[0]!.id, friends.id, "a list the file names is kept");
      assert.notEqual(after[0]!.id, old.id);
      assert.deepEqual(await members(friends.id), [carol.account.id]);
    });

    test("bookmarks: by URI; a post the user may not see is a bad row; overwrite drops the others", async () => {
      const me = await user();
      const bob = await user("bob");
      const first = await postStatus(server, bob, { status: "first" });
      const second = await postStatus(server, bob, { status: "second" });
      const secret = await postStatus(server, bob, { status: "secret", visibility: "private" });
      const kept = await postStatus(server, bob, { status: "kept" });
      await request(server.app, "POST", `/api/v1/statuses/${kept.id}/bookmark`, { token: me.token });
      const browser = await signedIn(me);
      const merged = await imported(browser, {
        type: "bookmarks",
        file: `${first.uri}\n${second.url}\n${secret.uri}\nhttps://rookery.test/users/nobody/statuses/1\n`,
      });
      assert.equal((merged.page.match(/Post not found/g) ?? []).length, 2);
      const ids = async () => (await apiList<{ id: string }>(me, "/api/v1/bookmarks")).map((s) => s.id).sort();
      assert.deepEqual(await ids(), [first.id, second.id, kept.id].sort());
      await imported(browser, { type: "bookmarks", mode: "overwrite", file: `${second.uri}\n` });
      assert.deepEqual(await ids(), [second.id]);
    });
  });

  test("a round trip on one server: what one user exports, another imports", async () => {
    const alice = await user("alice");
    const dave = await user("dave");
    const bob = await user("bob");
    const carol = await user("carol");
    await request(server.app, "POST", `/api/v1/accounts/${bob.account.id}/follow`, {
      token: alice.token,
      json: { reblogs: false, languages: ["fr"] },
    });
    await request(server.app, "POST", `/api/v1/accounts/${carol.account.id}/mute`, {
      token: alice.token,
      json: { notifications: false },
    });
    const from = await signedIn(alice);
    const to = await signedIn(dave);
    for (const [kind, type] of [
      ["follows", "following"],
      ["mutes", "muting"],
    ] as const) {
      const file = (await from.get(`/settings/exports/${kind}.csv`)).body;
      const { page } = await imported(to, { type, file, filename: `${kind}.csv` });
      assert.match(progress(page).Failed!, /^0$/);
    }
    const toBob = await relationship(dave, bob.account);
    assert.equal(toBob.following, true);
    assert.equal(toBob.showing_reblogs, false);
    assert.deepEqual(toBob.languages, ["fr"]);
    assert.equal((await relationship(dave, carol.account)).muting_notifications, false);
  });

  test("rows are applied in batches, each recording its progress; the job hands over to its successor", async () => {
    const me = await user();
    const browser = await signedIn(me);
    const domains = Array.from({ length: 45 }, (_, i) => `batch${i}.example`);
    const res = await upload(browser, { type: "domain_blocking", file: `${domains.join("\n")}\n` });
    assert.equal(res.statusCode, 303);
    const id = locationOf(res).pathname.split("/").pop()!;
    // A worker shutting down stops after one batch and queues the rest.
    await runImport(server.ctx, id, AbortSignal.abort());
    const partial = progress(decodeEntities((await browser.follow(res)).body));
    assert.equal(partial.State, "In progress");
    assert.equal(partial.Processed, "20");
    assert.equal(partial.Imported, "20");
    await server.ctx.jobs.drain();
    const done = progress(decodeEntities((await browser.follow(res)).body));
    assert.equal(done.Processed, "45");
    assert.equal(done.Imported, "45");
    assert.equal((await apiList<string>(me, "/api/v1/domain_blocks")).length, 45);
    assert.deepEqual(await rowsStored(me), [1, 0], "applied rows are not kept");
  });

  test("at most five imports wait at once", async () => {
    const me = await user();
    const browser = await signedIn(me);
    for (let i = 0; i < 5; i++)
      assert.equal((await upload(browser, { type: "domain_blocking", file: `d${i}.example\n` })).statusCode, 303);
    const sixth = await upload(browser, { type: "domain_blocking", file: "d6.example\n" });
    assert.equal(sixth.statusCode, 422);
    assert.equal(alertOf(sixth.body), "You have 5 imports still running; wait until one of them is done.");
    await server.ctx.jobs.drain();
    assert.equal((await upload(browser, { type: "domain_blocking", file: "d6.example\n" })).statusCode, 303);
    await server.ctx.jobs.drain();
  });
});
