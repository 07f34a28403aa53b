/**
 * What real clients hit when posting and boosting (conformance issue, items 3, 4 and 6): the boost
 * answer carries the viewer's flags, the `allowed_mentions` safeguard, and scheduled statuses as
 * Mastodon writes and refuses them.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createTestServer,
  errorOf,
  get,
  postStatus,
  request,
  standardAccounts,
  statusRowCount,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import type { Status } from "../types.ts";

const UNEXPECTED = "Post would be sent to unexpected accounts";
const TOO_SOON = "Validation failed: Scheduled at The scheduled date must be in the future";
const NO_REPLY_TARGET = "The post you are trying to reply to does not appear to exist.";

describe("posting and boosting as clients expect", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const post = (token: string, json: Record<string, unknown>) =>
    request(server.app, "POST", "/api/v1/statuses", { token, json });
  const action = async (token: string, id: string, name: string): Promise<Status> => {
    const res = await request(server.app, "POST", `/api/v1/statuses/${id}/${name}`, { token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Status>();
  };

  describe("the boost answer", () => {
    test("the wrapper carries reblogged, favourited, bookmarked and muted of the boosted status", async () => {
      const original = await postStatus(server, a.alice, { status: "boost me" });
      await action(a.bob.token, original.id, "favourite");
      await action(a.bob.token, original.id, "bookmark");
      await action(a.bob.token, original.id, "mute");
      const boost = await action(a.bob.token, original.id, "reblog");
      assert.notEqual(boost.id, original.id);
      assert.equal(boost.reblog?.id, original.id);
      assert.equal(boost.reblogged, true);
      assert.equal(boost.favourited, true);
      assert.equal(boost.bookmarked, true);
      assert.equal(boost.muted, true);
      assert.equal(boost.reblog?.reblogged, true);
      assert.equal(boost.reblog?.favourited, true);
    });

    test("boosting again answers the same boost, still marked as boosted", async () => {
      const original = await postStatus(server, a.alice, { status: "twice" });
      const first = await action(a.carol.token, original.id, "reblog");
      const second = await action(a.carol.token, original.id, "reblog");
      assert.equal(second.id, first.id);
      assert.equal(second.reblogged, true);
      assert.equal(second.favourited, false);
    });

    test("one's own boost of one's own post: no pinned flag on the wrapper, pinned on the original", async () => {
      const original = await postStatus(server, a.alice, { status: "mine" });
      await action(a.alice.token, original.id, "pin");
      const boost = await action(a.alice.token, original.id, "reblog");
      assert.equal(boost.reblogged, true);
      assert.equal("pinned" in boost, false);
      assert.equal(boost.reblog?.pinned, true);
    });

    test("reading the boost later shows the same flags", async () => {
      const original = await postStatus(server, a.alice, { status: "read later" });
      const boost = await action(a.bob.token, original.id, "reblog");
      const read = (await get(server.app, `/api/v1/statuses/${boost.id}`, a.bob.token)).json<Status>();
      assert.equal(read.reblogged, true);
      assert.equal(read.favourited, false);
      const stranger = (await get(server.app, `/api/v1/statuses/${boost.id}`, a.carol.token)).json<Status>();
      assert.equal(stranger.reblogged, false);
    });
  });

  describe("allowed_mentions", () => {
    test("a mention outside the list is refused with the unexpected accounts, and nothing is posted", async () => {
      const before = await statusRowCount(server, a.alice);
      const res = await post(a.alice.token, { status: "hi @bob and @carol", allowed_mentions: [a.bob.account.id] });
      assert.deepEqual(errorOf(res), [422, UNEXPECTED]);
      const body = res.json() as { unexpected_accounts: Array<{ id: string; acct: string }> };
      assert.deepEqual(
        body.unexpected_accounts.map((x) => x.acct),
        ["carol"],
      );
      assert.equal(body.unexpected_accounts[0].id, a.carol.account.id);
      assert.equal(await statusRowCount(server, a.alice), before);
    });

    test("mentions inside the list are posted", async () => {
      const ok = await postStatus(server, a.alice, {
        status: "hi @bob and @carol",
        allowed_mentions: [a.carol.account.id, a.bob.account.id],
      });
      assert.ok(ok.id);
    });

    test("an empty list refuses any mention; no list at all allows every mention", async () => {
      assert.deepEqual(errorOf(await post(a.alice.token, { status: "hi @bob", allowed_mentions: [] })), [
        422,
        UNEXPECTED,
      ]);
      assert.ok((await postStatus(server, a.alice, { status: "no mentions", allowed_mentions: [] })).id);
      assert.ok((await postStatus(server, a.alice, { status: "hi @bob" })).id);
    });

    test("form-encoded allowed_mentions[] work the same; a scheduled post is checked when it is scheduled", async () => {
      const form = request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        form: [
          ["status", "hey @carol"],
          ["allowed_mentions[]", a.bob.account.id],
        ],
      });
      assert.deepEqual(errorOf(await form), [422, UNEXPECTED]);
      const later = new Date(Date.now() + 3600_000).toISOString();
      const scheduled = await post(a.alice.token, {
        status: "later @carol",
        allowed_mentions: [a.bob.account.id],
        scheduled_at: later,
      });
      assert.deepEqual(errorOf(scheduled), [422, UNEXPECTED]);
      const list = await get(server.app, "/api/v1/scheduled_statuses", a.alice.token);
      assert.deepEqual(list.json(), []);
    });
  });

  describe("scheduled statuses", () => {
    test("params.application_id is a JSON number with every digit", async () => {
      const later = new Date(Date.now() + 3600_000).toISOString();
      const res = await post(a.alice.token, { status: "scheduled", scheduled_at: later });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, new RegExp(`"application_id":${a.app.id}[,}]`));
      const id = (res.json() as { id: string }).id;
      const shown = await get(server.app, `/api/v1/scheduled_statuses/${id}`, a.alice.token);
      assert.match(shown.body, new RegExp(`"application_id":${a.app.id}[,}]`));
      const listed = await get(server.app, "/api/v1/scheduled_statuses", a.alice.token);
      assert.match(listed.body, new RegExp(`"application_id":${a.app.id}[,}]`));
    });

    test("less than 5 minutes ahead answers the rescheduling text, on create and on PUT", async () => {
      const soon = new Date(Date.now() + 60_000).toISOString();
      assert.deepEqual(errorOf(await post(a.bob.token, { status: "soon", scheduled_at: soon })), [422, TOO_SOON]);
      const later = new Date(Date.now() + 3600_000).toISOString();
      const created = await post(a.bob.token, { status: "later", scheduled_at: later });
      const id = (created.json() as { id: string }).id;
      const put = await request(server.app, "PUT", `/api/v1/scheduled_statuses/${id}`, {
        token: a.bob.token,
        json: { scheduled_at: soon },
      });
      assert.deepEqual(errorOf(put), [422, TOO_SOON]);
    });
  });

  test("a reply to something that is not an ID is a 404 naming the reply target, and nothing is posted", async () => {
    const before = await statusRowCount(server, a.carol);
    for (const target of ["0", "abc", "99999999999999999999", "-1"]) {
      assert.deepEqual(
        errorOf(await post(a.carol.token, { status: "reply", in_reply_to_id: target })),
        [404, NO_REPLY_TARGET],
        target,
      );
    }
    assert.equal(await statusRowCount(server, a.carol), before);
  });
});
