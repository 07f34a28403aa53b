/**
 * The visibility matrix: for each visibility of a post, which surfaces show it to the author, a
 * follower, an account it mentions, a stranger, an account the author blocks, a follower who mutes
 * the author, and an anonymous reader — home, public and hashtag timelines, the author's page, the
 * thread, the post itself, conversations and search — as Mastodon decides (reference/behaviour.md §5).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  block,
  createTestServer,
  createUser,
  follow,
  get,
  mute,
  postStatus,
  type TestServer,
  type TestUser,
} from "../../kit.ts";
import type { Status } from "../../types.ts";

type Visibility = "public" | "unlisted" | "private" | "direct";
type Viewer = "author" | "follower" | "mentioned" | "stranger" | "blocked" | "muter" | "anonymous";
type Surface = "home" | "public" | "tag" | "account" | "thread" | "status" | "conversations" | "search";

const ALL: Visibility[] = ["public", "unlisted", "private", "direct"];
const NONE: Visibility[] = [];

/** What each viewer sees on each surface. */
const EXPECTED: Record<Viewer, Record<Surface, Visibility[]>> = {
  author: {
    home: ALL,
    public: ["public"],
    tag: ["public"],
    account: ALL,
    thread: ALL,
    status: ALL,
    conversations: ["direct"],
    search: ALL,
  },
  follower: {
    home: ["public", "unlisted", "private"],
    public: ["public"],
    tag: ["public"],
    account: ["public", "unlisted", "private"],
    thread: ["public", "unlisted", "private"],
    status: ["public", "unlisted", "private"],
    conversations: NONE,
    search: ["public"],
  },
  mentioned: {
    home: NONE,
    public: ["public"],
    tag: ["public"],
    account: ALL,
    thread: ALL,
    status: ALL,
    conversations: ["direct"],
    search: ALL,
  },
  stranger: {
    home: NONE,
    public: ["public"],
    tag: ["public"],
    account: ["public", "unlisted"],
    thread: ["public", "unlisted"],
    status: ["public", "unlisted"],
    conversations: NONE,
    search: ["public"],
  },
  blocked: {
    home: NONE,
    public: NONE,
    tag: NONE,
    account: NONE,
    thread: NONE,
    status: NONE,
    conversations: NONE,
    search: NONE,
  },
  muter: {
    home: NONE,
    public: NONE,
    tag: NONE,
    account: ["public", "unlisted", "private"],
    thread: NONE,
    status: ["public", "unlisted", "private"],
    conversations: NONE,
    search: NONE,
  },
  anonymous: {
    home: NONE,
    public: ["public"],
    tag: ["public"],
    account: ["public", "unlisted"],
    thread: ["public", "unlisted"],
    status: ["public", "unlisted"],
    conversations: NONE,
    search: NONE,
  },
};

describe("the visibility matrix", () => {
  let server: TestServer;
  let users: Record<Exclude<Viewer, "anonymous">, TestUser>;
  let root: Status;
  const posts = new Map<Visibility, Status>();

  before(async () => {
    server = await createTestServer();
    const names = ["author", "follower", "mentioned", "stranger", "blocked", "muter"] as const;
    const made = await Promise.all(names.map((n) => createUser(server.ctx, `matrix${n}`)));
    users = Object.fromEntries(names.map((n, i) => [n, made[i]!])) as typeof users;
    const { author } = users;
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ indexable: true })
      .where("id", "=", author.account.id)
      .execute();
    await follow(server, users.follower, author);
    await follow(server, users.muter, author);
    await follow(server, users.blocked, author);
    await block(server, author, users.blocked);
    await mute(server, users.muter, author);
    root = await postStatus(server, author, { status: "matrix thread root" });
    for (const visibility of ALL) {
      posts.set(
        visibility,
        await postStatus(server, author, {
          status: `@${users.mentioned.username} matrixword ${visibility} #matrixtag`,
          visibility,
          in_reply_to_id: root.id,
        }),
      );
    }
    await server.ctx.jobs.drain();
  });
  after(() => server.close());

  /** The visibilities among `statuses` (posts of the matrix only). */
  const visibilitiesIn = (statuses: Status[]): Visibility[] => {
    const ids = new Map([...posts].map(([visibility, s]) => [s.id, visibility]));
    return ALL.filter((v) => statuses.some((s) => ids.get(s.id) === v));
  };

  async function seen(viewer: Viewer, surface: Surface): Promise<Visibility[]> {
    const token = viewer === "anonymous" ? undefined : users[viewer].token;
    const read = async (path: string) => {
      const res = await get(server.app, path, token);
      return { status: res.statusCode, body: res.statusCode === 200 ? res.json() : undefined };
    };
    const list = async (path: string) => {
      const { status, body } = await read(path);
      if (status === 401 && viewer === "anonymous") return [];
      assert.equal(status, 200, `${viewer} ${surface}: ${status}`);
      return visibilitiesIn(body as Status[]);
    };
    switch (surface) {
      case "home":
        return viewer === "anonymous" ? [] : list("/api/v1/timelines/home");
      case "public":
        return list("/api/v1/timelines/public?local=true");
      case "tag":
        return list("/api/v1/timelines/tag/matrixtag");
      case "account":
        return list(`/api/v1/accounts/${users.author.account.id}/statuses`);
      case "thread": {
        const { status, body } = await read(`/api/v1/statuses/${root.id}/context`);
        if (status === 404) return [];
        assert.equal(status, 200);
        return visibilitiesIn((body as { descendants: Status[] }).descendants);
      }
      case "status": {
        const found: Visibility[] = [];
        for (const [visibility, post] of posts) {
          const { status } = await read(`/api/v1/statuses/${post.id}`);
          assert.ok(status === 200 || status === 404, `${viewer} status ${visibility}: ${status}`);
          if (status === 200) found.push(visibility);
        }
        return found;
      }
      case "conversations": {
        if (viewer === "anonymous") return [];
        const { body } = await read("/api/v1/conversations");
        return visibilitiesIn((body as Array<{ last_status: Status | null }>).flatMap((c) => c.last_status ?? []));
      }
      case "search": {
        const { status, body } = await read("/api/v2/search?q=matrixword&type=statuses");
        assert.equal(status, 200);
        return visibilitiesIn((body as { statuses: Status[] }).statuses);
      }
    }
  }

  for (const viewer of Object.keys(EXPECTED) as Viewer[]) {
    test(`what ${viewer === "anonymous" ? "an anonymous reader" : `the ${viewer}`} sees`, async () => {
      const actual: Record<string, Visibility[]> = {};
      for (const surface of Object.keys(EXPECTED[viewer]) as Surface[]) actual[surface] = await seen(viewer, surface);
      assert.deepEqual(actual, EXPECTED[viewer]);
    });
  }
});
