/**
 * GET /api/v1/polls/:id and POST /api/v1/polls/:id/votes: votes in form and JSON bodies, Mastodon's
 * 422 texts, multiple choice, hidden totals, the closing job, and visibility that follows the status.
 */
import assert from "node:assert/strict";
import { after, before, describe, mock, test } from "node:test";
import { closePoll } from "../../src/services/polls/vote.ts";
import {
  block,
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  standardAccounts,
  statusJson,
  type StandardAccounts,
  type StatusParams,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import type { Poll, Status } from "../types.ts";

/** A status known to carry a poll. */
type PollStatus = Status & { poll: Poll };
type PollParams = { options: string[]; expires_in?: number; multiple?: boolean; hide_totals?: boolean };

describe("polls", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const createPoll = async (user: TestUser, poll: PollParams, extra: StatusParams = {}): Promise<PollStatus> => {
    const status = await postStatus(server, user, { status: "A poll", poll: { expires_in: 3600, ...poll }, ...extra });
    assert.ok(status.poll, "the status has a poll");
    return { ...status, poll: status.poll };
  };
  /** A vote by a user, or with a bare token (none: anonymous). */
  type VoteBody = { json?: Record<string, unknown>; form?: Array<[string, string]> };
  const vote = (voter: TestUser | string | undefined, pollId: string, body: VoteBody) => {
    const token = typeof voter === "object" ? voter.token : voter;
    return request(server.app, "POST", `/api/v1/polls/${pollId}/votes`, { token, ...body });
  };
  const voteOk = async (user: TestUser, pollId: string, choices: Array<number | string>): Promise<Poll> => {
    const res = await vote(user, pollId, { json: { choices } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Poll>();
  };
  const poll = async (id: string, user?: TestUser): Promise<Poll> => {
    const res = await get(server.app, `/api/v1/polls/${id}`, user?.token);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Poll>();
  };
  const expire = (pollId: string) =>
    server.ctx.db.kysely
      .updateTable("polls")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("id", "=", pollId)
      .execute();

  test("GET shows the poll; voted and own_votes only with a token; the author counts as voted", async () => {
    const status = await createPoll(a.alice, { options: ["Tea", "Coffee"] });
    const anon = await poll(status.poll.id);
    assert.equal(anon.id, status.poll.id);
    assert.equal(anon.expired, false);
    assert.equal(anon.multiple, false);
    assert.equal(anon.votes_count, 0);
    assert.equal(anon.voters_count, 0);
    assert.deepEqual(anon.options, [
      { title: "Tea", votes_count: 0 },
      { title: "Coffee", votes_count: 0 },
    ]);
    assert.deepEqual(anon.emojis, []);
    assert.equal("voted" in anon, false);
    assert.equal("own_votes" in anon, false);
    assert.equal(anon.expires_at, status.poll.expires_at);
    const bob = await poll(status.poll.id, a.bob);
    assert.equal(bob.voted, false);
    assert.deepEqual(bob.own_votes, []);
    assert.equal((await poll(status.poll.id, a.alice)).voted, true);
  });

  test("the poll matches the OpenAPI schema, before and after a vote", { skip: openApiSkip }, async () => {
    const status = await createPoll(a.alice, { options: ["a", "b", "c"], multiple: true });
    assert.deepEqual(validateSchema("Poll", await poll(status.poll.id)), []);
    assert.deepEqual(validateSchema("Poll", await voteOk(a.bob, status.poll.id, [0, 2])), []);
  });

  test("a vote with choices[] in a form body", async () => {
    const status = await createPoll(a.alice, { options: ["Yes", "No"] });
    const res = await vote(a.bob, status.poll.id, { form: [["choices[]", "1"]] });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<Poll>();
    assert.equal(body.voted, true);
    assert.deepEqual(body.own_votes, [1]);
    assert.equal(body.votes_count, 1);
    assert.equal(body.voters_count, 1);
    assert.deepEqual(body.options, [
      { title: "Yes", votes_count: 0 },
      { title: "No", votes_count: 1 },
    ]);
    // The status shows the same poll to the voter.
    const seen = await statusJson(server, status.id, a.bob);
    assert.equal(seen.poll?.voted, true);
    assert.deepEqual(seen.poll?.own_votes, [1]);
    assert.deepEqual((await poll(status.poll.id, a.carol)).own_votes, []);
  });

  test("a vote with a JSON array of numbers or numeric strings", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b", "c"] });
    assert.deepEqual((await voteOk(a.bob, status.poll.id, [2])).own_votes, [2]);
    assert.deepEqual(
      (await voteOk(a.carol, status.poll.id, ["2"])).options.map((o) => o.votes_count),
      [0, 0, 2],
    );
  });

  test("422: voting in one's own poll", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    assert.deepEqual(errorOf(await vote(a.alice, status.poll.id, { json: { choices: [0] } })), [
      422,
      "Validation failed: You cannot vote in your own polls",
    ]);
  });

  test("422: voting in an expired poll", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    await expire(status.poll.id);
    assert.deepEqual(errorOf(await vote(a.bob, status.poll.id, { json: { choices: [0] } })), [
      422,
      "Validation failed: The poll has already ended",
    ]);
    assert.equal((await poll(status.poll.id)).votes_count, 0);
  });

  test("422: an option that does not exist", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    for (const choice of ["2", "-1", "x", "1.5", "99"]) {
      assert.deepEqual(
        errorOf(await vote(a.bob, status.poll.id, { form: [["choices[]", choice]] })),
        [422, "Validation failed: The chosen vote option does not exist"],
        choice,
      );
    }
    assert.equal((await poll(status.poll.id, a.bob)).voted, false);
  });

  test("422: a second vote, also when sent at the same time", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    await voteOk(a.bob, status.poll.id, [0]);
    assert.deepEqual(errorOf(await vote(a.bob, status.poll.id, { json: { choices: [1] } })), [
      422,
      "Validation failed: You have already voted on this poll",
    ]);
    const other = await createPoll(a.alice, { options: ["a", "b"] });
    const results = await Promise.all(
      [0, 1, 0].map((choice) => vote(a.carol, other.poll.id, { json: { choices: [choice] } })),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 422, 422]);
    const after = await poll(other.poll.id);
    assert.equal(after.votes_count, 1);
    assert.equal(after.voters_count, 1);
  });

  test("400 when choices are missing or empty", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    for (const options of [
      { json: {} },
      { json: { choices: [] } },
      { form: [["other", "1"]] as Array<[string, string]> },
    ]) {
      const [code, error] = errorOf(await vote(a.bob, status.poll.id, options));
      assert.equal(code, 400, JSON.stringify(options));
      assert.match(error, /choices/);
    }
  });

  test("multiple choice: several options by one voter", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b", "c"], multiple: true });
    const body = await voteOk(a.bob, status.poll.id, [2, 0]);
    assert.deepEqual(body.own_votes, [0, 2]);
    assert.equal(body.votes_count, 2);
    assert.equal(body.voters_count, 1);
    assert.deepEqual(
      body.options.map((o) => o.votes_count),
      [1, 0, 1],
    );
    const second = await voteOk(a.carol, status.poll.id, [1, 1]);
    assert.deepEqual(second.own_votes, [1]);
    assert.equal(second.votes_count, 3);
    assert.equal(second.voters_count, 2);
  });

  test("a single-choice poll refuses several choices", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b", "c"] });
    const [code] = errorOf(await vote(a.bob, status.poll.id, { json: { choices: [0, 1] } }));
    assert.equal(code, 422);
    assert.equal((await poll(status.poll.id)).votes_count, 0);
  });

  test("hide_totals hides per-option counts from others until the poll ends", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"], hide_totals: true });
    const voted = await voteOk(a.bob, status.poll.id, [1]);
    assert.deepEqual(voted.options, [
      { title: "a", votes_count: null },
      { title: "b", votes_count: null },
    ]);
    assert.deepEqual(
      (await poll(status.poll.id)).options.map((o) => o.votes_count),
      [null, null],
    );
    assert.deepEqual(
      (await poll(status.poll.id, a.carol)).options.map((o) => o.votes_count),
      [null, null],
    );
    assert.deepEqual(
      (await poll(status.poll.id, a.alice)).options.map((o) => o.votes_count),
      [0, 1],
      "the author sees the totals",
    );
    await expire(status.poll.id);
    const ended = await poll(status.poll.id, a.carol);
    assert.equal(ended.expired, true);
    assert.deepEqual(
      ended.options.map((o) => o.votes_count),
      [0, 1],
    );
  });

  test("the closing job runs at the poll's end and marks it closed once", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"], expires_in: 300 });
    const job = await server.ctx.db.kysely
      .selectFrom("jobs")
      .selectAll()
      .where("name", "=", "polls.close")
      .where("payload", "like", `%${status.poll.id}%`)
      .executeTakeFirst();
    assert.ok(job, "a polls.close job was enqueued");
    assert.equal(job.run_at, status.poll.expires_at);
    // Not yet due: nothing runs.
    await server.ctx.jobs.drain();
    assert.equal((await poll(status.poll.id)).expired, false);
    const pollRow = () =>
      server.ctx.db.kysely.selectFrom("polls").selectAll().where("id", "=", status.poll.id).executeTakeFirstOrThrow();
    assert.equal((await pollRow()).closed_at, null);
    // Six minutes later.
    mock.timers.enable({ apis: ["Date"], now: Date.now() + 6 * 60_000 });
    try {
      assert.ok((await server.ctx.jobs.drain()) >= 1);
      const closed = await pollRow();
      assert.ok(closed.closed_at, "closed_at is set");
      assert.equal(await closePoll(server.ctx, status.poll.id), false, "a second run does nothing");
      assert.equal((await pollRow()).closed_at, closed.closed_at);
      const ended = await poll(status.poll.id, a.bob);
      assert.equal(ended.expired, true);
      assert.deepEqual(errorOf(await vote(a.bob, status.poll.id, { json: { choices: [0] } })), [
        422,
        "Validation failed: The poll has already ended",
      ]);
    } finally {
      mock.timers.reset();
    }
  });

  test("closePoll does nothing before the end", async () => {
    const status = await createPoll(a.alice, { options: ["a", "b"] });
    assert.equal(await closePoll(server.ctx, status.poll.id), false);
    assert.equal(await closePoll(server.ctx, "1"), false);
  });

  describe("visibility follows the status", () => {
    let follower: TestUser;
    let privatePoll: PollStatus;
    let directPoll: PollStatus;
    before(async () => {
      follower = await createUser(server.ctx, "poll_follower");
      await follow(server, follower, a.lucy);
      privatePoll = await createPoll(a.lucy, { options: ["x", "y"] }, { visibility: "private" });
      directPoll = await createPoll(
        a.lucy,
        { options: ["x", "y"] },
        { visibility: "direct", status: "@carol direct poll" },
      );
    });

    test("a private status's poll: 404 for strangers and anonymous readers, open to followers", async () => {
      const id = privatePoll.poll.id;
      assert.equal((await get(server.app, `/api/v1/polls/${id}`)).statusCode, 404);
      assert.equal((await get(server.app, `/api/v1/polls/${id}`, a.bob.token)).statusCode, 404);
      assert.equal((await vote(a.bob, id, { json: { choices: [0] } })).statusCode, 404);
      assert.equal((await poll(id, follower)).id, id);
      assert.equal((await voteOk(follower, id, [0])).votes_count, 1);
    });

    test("a direct status's poll: only the mentioned and the author", async () => {
      const id = directPoll.poll.id;
      assert.equal((await get(server.app, `/api/v1/polls/${id}`, follower.token)).statusCode, 404);
      assert.equal((await vote(follower, id, { json: { choices: [0] } })).statusCode, 404);
      assert.equal((await voteOk(a.carol, id, [1])).votes_count, 1);
      assert.equal((await poll(id, a.lucy)).votes_count, 1);
    });

    test("a poll of a public status the author blocks you from is 404", async () => {
      const status = await createPoll(a.lucy, { options: ["x", "y"] });
      await block(server, a.lucy, a.admin);
      assert.equal((await get(server.app, `/api/v1/polls/${status.poll.id}`, a.admin.token)).statusCode, 404);
      assert.equal((await vote(a.admin, status.poll.id, { json: { choices: [0] } })).statusCode, 404);
    });

    test("the poll of a deleted status, and unknown polls, are 404", async () => {
      const status = await createPoll(a.alice, { options: ["x", "y"] });
      await request(server.app, "DELETE", `/api/v1/statuses/${status.id}`, { token: a.alice.token });
      assert.equal((await get(server.app, `/api/v1/polls/${status.poll.id}`)).statusCode, 404);
      assert.equal((await get(server.app, "/api/v1/polls/123")).statusCode, 404);
      assert.equal((await get(server.app, "/api/v1/polls/abc")).statusCode, 404);
    });
  });

  describeAuth("POST /api/v1/polls/:id/votes", () => server, {
    scope: "write:statuses",
    insufficient: ["read write:favourites", "push"],
    send: async (_, token) => {
      const { poll: created } = await createPoll(a.alice, { options: ["a", "b"] });
      return vote(token, created.id, { json: { choices: [0] } });
    },
  });

  describeAuth("GET /api/v1/polls/:id", () => server, {
    scope: "read:statuses",
    anonymous: true,
    user: false,
    send: async (_, token) => {
      const { poll: created } = await createPoll(a.alice, { options: ["a", "b"] });
      return get(server.app, `/api/v1/polls/${created.id}`, token);
    },
  });
});
