/** PUT /api/v1/statuses/:id (edits), GET /api/v1/statuses/:id/history and /source. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  appToken,
  createTestServer,
  describeAuth,
  errorOf,
  get,
  postStatus,
  request,
  standardAccounts,
  statusJson,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";
import { openApiSkip, validateSchema } from "../../openapi.ts";
import type { Poll, Status, StatusEdit } from "../../types.ts";

const TOO_LONG = "Validation failed: Text character limit of 500 exceeded";
const BLANK = "Validation failed: Text can't be blank";

describe("PUT /api/v1/statuses/:id (edit), history and source", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const edit = (id: string, json: Record<string, unknown>, token = a.alice.token) =>
    request(server.app, "PUT", `/api/v1/statuses/${id}`, { token, json });
  const editOk = async (id: string, json: Record<string, unknown>, token = a.alice.token): Promise<Status> => {
    const res = await edit(id, json, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const history = async (id: string, token?: string) => {
    const res = await get(server.app, `/api/v1/statuses/${id}/history`, token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<StatusEdit[]>();
  };

  test("an unedited status has one version in its history", async () => {
    const status = await postStatus(server, a.alice, { status: "never edited", spoiler_text: "cw" });
    const versions = await history(status.id);
    assert.equal(versions.length, 1);
    assert.equal(versions[0].content, "<p>never edited</p>");
    assert.equal(versions[0].spoiler_text, "cw");
    assert.equal(versions[0].account.id, a.alice.account.id);
  });

  test("editing the text sets edited_at; the history lists every version, the first included", async () => {
    const status = await postStatus(server, a.alice, { status: "version one" });
    const edited = await editOk(status.id, { status: "version two #edited" });
    assert.equal(edited.id, status.id);
    assert.equal(
      edited.content,
      '<p>version two <a href="https://rookery.test/tags/edited" class="mention hashtag" rel="tag">#<span>edited</span></a></p>',
    );
    assert.deepEqual(
      edited.tags.map((t) => t.name),
      ["edited"],
    );
    assert.match(String(edited.edited_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(Date.parse(String(edited.edited_at)) >= Date.parse(status.created_at));
    assert.equal(edited.created_at, status.created_at);
    const first = await history(status.id);
    assert.deepEqual(
      first.map((v) => v.content),
      ["<p>version one</p>", edited.content],
    );
    assert.equal(first[0].created_at, status.created_at);
    await editOk(status.id, { status: "version three" });
    const second = await history(status.id);
    assert.deepEqual(
      second.map((v) => v.content),
      ["<p>version one</p>", edited.content, "<p>version three</p>"],
    );
    assert.equal((await statusJson(server, status.id)).content, "<p>version three</p>");
  });

  test("history and its versions match the OpenAPI schema", { skip: openApiSkip }, async () => {
    const status = await postStatus(server, a.alice, {
      status: "schema",
      poll: { options: ["a", "b"], expires_in: 600 },
    });
    await editOk(status.id, { status: "schema 2" });
    for (const version of await history(status.id)) assert.deepEqual(validateSchema("StatusEdit", version), []);
    const source = await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token);
    assert.deepEqual(validateSchema("StatusSource", source.json()), []);
  });

  test("spoiler_text, sensitive and language", async () => {
    const status = await postStatus(server, a.alice, { status: "plain", language: "en" });
    const withCw = await editOk(status.id, { spoiler_text: "now with a CW" });
    assert.equal(withCw.spoiler_text, "now with a CW");
    assert.equal(withCw.sensitive, true);
    assert.equal(withCw.content, "<p>plain</p>", "an absent status keeps the text");
    const noCw = await editOk(status.id, { spoiler_text: "", sensitive: false });
    assert.equal(noCw.spoiler_text, "");
    assert.equal(noCw.sensitive, false);
    assert.equal((await editOk(status.id, { sensitive: true })).sensitive, true);
    assert.equal((await editOk(status.id, { language: "fr" })).language, "fr");
    assert.equal((await editOk(status.id, { language: "de-AT" })).language, "de");
    const versions = await history(status.id);
    assert.equal(versions.length, 6);
    assert.deepEqual(
      versions.map((v) => v.spoiler_text),
      ["", "now with a CW", "", "", "", ""],
    );
    assert.deepEqual(
      versions.map((v) => v.sensitive),
      [false, true, false, true, true, true],
    );
  });

  test("source returns the plain text and warning", async () => {
    const status = await postStatus(server, a.alice, {
      status: "Look at https://example.com & @bob",
      spoiler_text: "warn",
    });
    const res = await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id: status.id, text: "Look at https://example.com & @bob", spoiler_text: "warn" });
    await editOk(status.id, { status: "edited <text>" });
    assert.equal(
      (await get(server.app, `/api/v1/statuses/${status.id}/source`, a.alice.token)).json().text,
      "edited <text>",
    );
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/source`)).statusCode, 401);
  });

  test("media_ids add and remove attachments; removed media are free again", async () => {
    const m1 = (await uploadImage(server, a.alice)).id;
    const m2 = (await uploadImage(server, a.alice)).id;
    const status = await postStatus(server, a.alice, { status: "media edit" });
    const added = await editOk(status.id, { media_ids: [m1, m2] });
    assert.deepEqual(
      added.media_attachments.map((m) => m.id),
      [m1, m2],
    );
    const reordered = await editOk(status.id, { media_ids: [m2] });
    assert.deepEqual(
      reordered.media_attachments.map((m) => m.id),
      [m2],
    );
    assert.equal((await get(server.app, `/api/v1/media/${m1}`, a.alice.token)).statusCode, 200);
    assert.equal((await get(server.app, `/api/v1/media/${m2}`, a.alice.token)).statusCode, 404);
    // Media may replace the text entirely.
    const onlyMedia = await editOk(status.id, { status: "", media_ids: [m2] });
    assert.equal(onlyMedia.content, "");
    // And someone else's media cannot be attached.
    const bobs = (await uploadImage(server, a.bob)).id;
    assert.equal((await edit(status.id, { media_ids: [bobs] })).statusCode, 422);
    assert.equal(
      (
        await edit(status.id, {
          media_ids: [
            m1,
            m2,
            (await uploadImage(server, a.alice)).id,
            (await uploadImage(server, a.alice)).id,
            (await uploadImage(server, a.alice)).id,
          ],
        })
      ).statusCode,
      422,
    );
  });

  test("media_attributes change descriptions and focus of attached media (form and JSON)", async () => {
    const m1 = (await uploadImage(server, a.alice)).id;
    const m2 = (await uploadImage(server, a.alice)).id;
    const status = await postStatus(server, a.alice, { status: "described", media_ids: [m1, m2] });
    const res = await request(server.app, "PUT", `/api/v1/statuses/${status.id}`, {
      token: a.alice.token,
      form: [
        ["media_ids[]", m1],
        ["media_ids[]", m2],
        ["media_attributes[][id]", m1],
        ["media_attributes[][description]", "A red square"],
        ["media_attributes[][focus]", "0.5,-0.25"],
        ["media_attributes[][id]", m2],
        ["media_attributes[][description]", "A blue square"],
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const [first, second] = res.json().media_attachments;
    assert.equal(first.description, "A red square");
    assert.deepEqual(first.meta.focus, { x: 0.5, y: -0.25 });
    assert.equal(second.description, "A blue square");
    const json = await editOk(status.id, {
      media_ids: [m1, m2],
      media_attributes: [{ id: m2, description: "Changed", focus: "-1,1" }],
    });
    assert.equal(json.media_attachments[0].description, "A red square");
    assert.equal(json.media_attachments[1].description, "Changed");
    assert.deepEqual(json.media_attachments[1].meta.focus, { x: -1, y: 1 });
    const versions = await history(status.id);
    assert.deepEqual(
      versions.at(-1)!.media_attachments.map((m) => m.description),
      ["A red square", "Changed"],
    );
    assert.deepEqual(
      versions[1].media_attachments.map((m) => m.description),
      ["A red square", "A blue square"],
    );
  });

  test("the history keeps each version's media descriptions, also when they were empty", {}, async () => {
    const media = (await uploadImage(server, a.alice)).id;
    const status = await postStatus(server, a.alice, { status: "undescribed", media_ids: [media] });
    await editOk(status.id, { media_ids: [media], media_attributes: [{ id: media, description: "Described later" }] });
    const versions = await history(status.id);
    assert.deepEqual(
      versions.map((v) => v.media_attachments.map((m) => m.description)),
      [[null], ["Described later"]],
    );
  });

  test("changing the poll's options resets its votes; keeping them keeps the votes", async () => {
    const status = await postStatus(server, a.alice, {
      status: "vote",
      poll: { options: ["red", "blue"], expires_in: 3600 },
    });
    const vote = await request(server.app, "POST", `/api/v1/polls/${status.poll?.id}/votes`, {
      token: a.bob.token,
      json: { choices: [0] },
    });
    assert.equal(vote.statusCode, 200, vote.body);
    const kept = await editOk(status.id, {
      status: "vote (edited)",
      poll: { options: ["red", "blue"], expires_in: 3600 },
    });
    assert.equal(kept.poll?.votes_count, 1);
    assert.deepEqual(kept.poll?.options, [
      { title: "red", votes_count: 1 },
      { title: "blue", votes_count: 0 },
    ]);
    const textOnly = await editOk(status.id, { status: "text only" });
    assert.equal(textOnly.poll?.votes_count, 1, "an edit without poll keeps the poll");
    const changed = await editOk(status.id, { poll: { options: ["red", "green", "blue"], expires_in: 3600 } });
    assert.equal(changed.poll?.votes_count, 0);
    assert.deepEqual(changed.poll?.options, [
      { title: "red", votes_count: 0 },
      { title: "green", votes_count: 0 },
      { title: "blue", votes_count: 0 },
    ]);
    const bobView = (await get(server.app, `/api/v1/polls/${changed.poll?.id}`, a.bob.token)).json<Poll>();
    assert.equal(bobView.voted, false);
    assert.deepEqual(bobView.own_votes, []);
    assert.equal(
      (
        await request(server.app, "POST", `/api/v1/polls/${changed.poll?.id}/votes`, {
          token: a.bob.token,
          json: { choices: [1] },
        })
      ).statusCode,
      200,
    );
    const versions = await history(status.id);
    assert.deepEqual(versions[0].poll, { options: [{ title: "red" }, { title: "blue" }] });
    assert.deepEqual(versions.at(-1)!.poll, { options: [{ title: "red" }, { title: "green" }, { title: "blue" }] });
  });

  test("keeping the options but changing expires_in or multiple updates the poll", {}, async () => {
    const status = await postStatus(server, a.alice, {
      status: "settings",
      poll: { options: ["a", "b"], expires_in: 600 },
    });
    const edited = await editOk(status.id, { poll: { options: ["a", "b"], expires_in: 7200, multiple: true } });
    assert.ok(Date.parse(String(edited.poll?.expires_at)) > Date.now() + 3600_000, String(edited.poll?.expires_at));
    assert.equal(edited.poll?.multiple, true);
  });

  test("a poll can be added by an edit, and cannot be combined with media", async () => {
    const status = await postStatus(server, a.alice, { status: "no poll yet" });
    const withPoll = await editOk(status.id, { poll: { options: ["x", "y"], expires_in: 600 } });
    assert.deepEqual(
      withPoll.poll?.options.map((o) => o.title),
      ["x", "y"],
    );
    const media = (await uploadImage(server, a.alice)).id;
    assert.equal(
      (await edit(status.id, { media_ids: [media], poll: { options: ["x", "y"], expires_in: 600 } })).statusCode,
      422,
    );
    assert.equal((await edit(status.id, { poll: { options: ["only one"], expires_in: 600 } })).statusCode, 422);
  });

  test("edits follow the rules of new posts and store nothing when refused", async () => {
    const status = await postStatus(server, a.alice, { status: "rules" });
    assert.deepEqual(errorOf(await edit(status.id, { status: "" })), [422, BLANK]);
    assert.deepEqual(errorOf(await edit(status.id, { status: "x".repeat(501) })), [422, TOO_LONG]);
    const after = await statusJson(server, status.id);
    assert.equal(after.content, "<p>rules</p>");
    assert.equal(after.edited_at, null);
    assert.equal((await history(status.id)).length, 1);
  });

  test("mentions added by an edit are listed", async () => {
    const status = await postStatus(server, a.alice, { status: "hello" });
    const edited = await editOk(status.id, { status: "hello @carol" });
    assert.deepEqual(
      edited.mentions.map((m) => m.acct),
      ["carol"],
    );
  });

  test("a mention removed by an edit leaves the list but keeps the account's access to a direct post", async () => {
    const status = await postStatus(server, a.alice, { status: "@carol @bob secret plan", visibility: "direct" });
    const edited = await editOk(status.id, { status: "@bob secret plan" });
    assert.deepEqual(
      edited.mentions.map((m) => m.acct),
      ["bob"],
    );
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}`, a.carol.token)).statusCode, 200);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}`, a.lucy.token)).statusCode, 404);
  });

  test("someone else's status, a boost, an unknown ID: 404; an app token: 422", async () => {
    const status = await postStatus(server, a.alice, { status: "alice's" });
    assert.equal((await edit(status.id, { status: "hijack" }, a.bob.token)).statusCode, 404);
    const boost = (
      await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: a.bob.token })
    ).json();
    assert.equal((await edit(boost.id, { status: "boost edit" }, a.bob.token)).statusCode, 404);
    assert.equal((await edit("123456", { status: "nothing" })).statusCode, 404);
    const token = await appToken(server.ctx);
    assert.equal((await edit(status.id, { status: "app" }, token)).statusCode, 422);
    assert.equal((await statusJson(server, status.id)).content, "<p>alice&#39;s</p>");
  });

  test("history and source of a private status are hidden from strangers", async () => {
    const status = await postStatus(server, a.alice, { status: "secret", visibility: "private" });
    await editOk(status.id, { status: "secret 2" });
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/history`, a.carol.token)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/history`)).statusCode, 404);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}/source`, a.carol.token)).statusCode, 404);
    assert.equal((await history(status.id, a.alice.token)).length, 2);
  });

  describeAuth("PUT /api/v1/statuses/:id", () => server, {
    scope: "write:statuses",
    send: async (s, token, owner) => {
      const status = await postStatus(s, owner, { status: "before" });
      return request(s.app, "PUT", `/api/v1/statuses/${status.id}`, { token, json: { status: "after" } });
    },
  });

  describeAuth("GET /api/v1/statuses/:id/source", () => server, {
    scope: "read:statuses",
    send: async (s, token, owner) =>
      get(s.app, `/api/v1/statuses/${(await postStatus(s, owner, { status: "source" })).id}/source`, token),
  });

  describeAuth("GET /api/v1/statuses/:id/history", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: async (s, token, owner) =>
      get(s.app, `/api/v1/statuses/${(await postStatus(s, owner, { status: "history" })).id}/history`, token),
  });
});
