/**
 * Posts between two Rookery servers on loopback with HTTPS: a post reaches the remote follower's
 * home timeline; a reply mentions and notifies across servers and joins the thread; favourites
 * and boosts notify the author and move the counts; an edit arrives with its history; a deletion
 * removes the copy; followers-only posts reach only followers and direct ones only the addressee;
 * pictures keep their blurhash and focal point, and both servers name a thread alike.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  createCustomEmoji,
  createUser,
  eventually,
  postStatus,
  request,
  tokenFor,
  uploadImage,
  type TestUser,
} from "../kit.ts";
import { WsClient } from "../streaming_clients.ts";
import type { MediaAttachment } from "../types.ts";
import { followEachOther, resolveOn, startPeers, type Peer, type Peers } from "./two_servers.ts";

interface StatusJson {
  id: string;
  uri: string;
  content: string;
  visibility: string;
  favourites_count: number;
  reblogs_count: number;
  account: { acct: string };
  in_reply_to_id: string | null;
}

describe("posts between two servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let aliceOnB: string;
  let bobOnA: string;

  async function home(peer: Peer, viewer: TestUser): Promise<StatusJson[]> {
    const res = await request(peer.server.app, "GET", "/api/v1/timelines/home", { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  async function notifications(peer: Peer, viewer: TestUser, type: string) {
    const res = await request(peer.server.app, "GET", `/api/v1/notifications?types[]=${type}`, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Array<{ type: string; account: { acct: string }; status?: StatusJson }>;
  }

  /** The copy on `peer` of a status whose uri is `uri`, as `viewer` finds it in the home timeline. */
  async function copyIn(peer: Peer, viewer: TestUser, uri: string): Promise<StatusJson> {
    let found: StatusJson | undefined;
    await eventually(async () => {
      found = (await home(peer, viewer)).find((s) => s.uri === uri);
      return found !== undefined;
    }, `${uri} in the home timeline`);
    return found!;
  }

  before(async () => {
    peers = await startPeers(["a.test", "b.test"]);
    [a, b] = peers.peers as [Peer, Peer];
    alice = await createUser(a.server.ctx, "alice");
    bob = await createUser(b.server.ctx, "bob");
    carol = await createUser(b.server.ctx, "carol");
    ({ xOnY: aliceOnB, yOnX: bobOnA } = await followEachOther(a, alice, b, bob));
  });
  after(() => peers?.close());

  test("a public post reaches the follower's home; its id serves the Note", async () => {
    const post = await postStatus(a.server, alice, { status: "Hello from #rookery a", language: "en" });
    const copy = await copyIn(b, bob, post.uri);
    assert.equal(copy.account.acct, `alice@${a.domain}`);
    assert.match(copy.content, /Hello from/);
    assert.equal(copy.visibility, "public");
    const note = await fetch(post.uri, { headers: { accept: "application/activity+json" } });
    assert.equal(note.status, 200);
    const json = (await note.json()) as Record<string, unknown>;
    assert.equal(json.type, "Note");
    assert.equal(json.id, post.uri);
    assert.ok(
      ["as:Public", "https://www.w3.org/ns/activitystreams#Public"].includes(json.to as string),
      String(json.to),
    );
  });

  test("a reply mentions and notifies across servers and joins the thread", async () => {
    const post = await postStatus(a.server, alice, { status: "Who is there?" });
    const copy = await copyIn(b, bob, post.uri);
    const reply = await postStatus(b.server, bob, { status: `@alice@${a.domain} me!`, in_reply_to_id: copy.id });
    let mention: { status?: StatusJson } | undefined;
    await eventually(async () => {
      mention = (await notifications(a, alice, "mention")).find((n) => n.status?.uri === reply.uri);
      return mention !== undefined;
    }, "alice is notified of the mention");
    assert.equal(mention!.status!.in_reply_to_id, post.id);
    const context = await request(a.server.app, "GET", `/api/v1/statuses/${post.id}/context`, { token: alice.token });
    assert.deepEqual(
      context.json().descendants.map((s: StatusJson) => s.uri),
      [reply.uri],
    );
  });

  test("a favourite and a boost notify the author and move the counts", async () => {
    const post = await postStatus(a.server, alice, { status: "Like me" });
    const copy = await copyIn(b, bob, post.uri);
    assert.equal(
      (await request(b.server.app, "POST", `/api/v1/statuses/${copy.id}/favourite`, { token: bob.token })).statusCode,
      200,
    );
    assert.equal(
      (await request(b.server.app, "POST", `/api/v1/statuses/${copy.id}/reblog`, { token: bob.token })).statusCode,
      200,
    );
    await eventually(async () => {
      const counted = (
        await request(a.server.app, "GET", `/api/v1/statuses/${post.id}`, { token: alice.token })
      ).json();
      return counted.favourites_count === 1 && counted.reblogs_count === 1;
    }, "the counts move on a");
    for (const type of ["favourite", "reblog"])
      await eventually(
        async () =>
          (await notifications(a, alice, type)).some(
            (n) => n.account.acct === `bob@${b.domain}` && n.status?.id === post.id,
          ),
        `alice's ${type} notification`,
      );

    await request(b.server.app, "POST", `/api/v1/statuses/${copy.id}/unfavourite`, { token: bob.token });
    await request(b.server.app, "POST", `/api/v1/statuses/${copy.id}/unreblog`, { token: bob.token });
    await eventually(async () => {
      const counted = (
        await request(a.server.app, "GET", `/api/v1/statuses/${post.id}`, { token: alice.token })
      ).json();
      return counted.favourites_count === 0 && counted.reblogs_count === 0;
    }, "the undos reach a");
  });

  test("an edit arrives with its history; a deletion removes the copy", async () => {
    const post = await postStatus(a.server, alice, { status: "First version" });
    const copy = await copyIn(b, bob, post.uri);
    const edited = await request(a.server.app, "PUT", `/api/v1/statuses/${post.id}`, {
      token: alice.token,
      json: { status: "Second version" },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    await eventually(async () => {
      const now = (await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: bob.token })).json();
      return /Second version/.test(now.content) && now.edited_at !== null;
    }, "the edit reaches b");
    const history = await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}/history`, { token: bob.token });
    assert.deepEqual(
      history.json().map((v: { content: string }) => v.content.replace(/<[^>]+>/g, "")),
      ["First version", "Second version"],
    );

    assert.equal(
      (await request(a.server.app, "DELETE", `/api/v1/statuses/${post.id}`, { token: alice.token })).statusCode,
      200,
    );
    await eventually(
      async () =>
        (await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: bob.token })).statusCode === 404,
      "the deletion reaches b",
    );
    assert.ok(!(await home(b, bob)).some((s) => s.uri === post.uri));
    const gone = await fetch(post.uri, { headers: { accept: "application/activity+json" } });
    assert.equal(gone.status, 404);
  });

  test("followers-only reaches only followers; direct only its addressee", async () => {
    const privatePost = await postStatus(a.server, alice, { status: "Followers only", visibility: "private" });
    const privateCopy = await copyIn(b, bob, privatePost.uri);
    assert.equal(privateCopy.visibility, "private");
    const asCarol = await request(b.server.app, "GET", `/api/v1/statuses/${privateCopy.id}`, { token: carol.token });
    assert.equal(asCarol.statusCode, 404);
    const hidden = await fetch(privatePost.uri, { headers: { accept: "application/activity+json" } });
    assert.equal(hidden.status, 404, "an unsigned fetch does not get a followers-only post");
    // Fetched signed by an account of b: a follower gets it, anyone else does not.
    const signedBy = async (username: string) => {
      const fedCtx = b.server.ctx.federation.createContext(new URL(b.baseUrl), undefined);
      const loader = await fedCtx.getDocumentLoader({ identifier: username });
      return loader(privatePost.uri).then(
        (doc) => (doc.document as { type?: string }).type,
        () => "refused",
      );
    };
    assert.equal(await signedBy("bob"), "Note");
    assert.equal(await signedBy("carol"), "refused");

    const direct = await postStatus(a.server, alice, {
      status: `@carol@${b.domain} just for you`,
      visibility: "direct",
    });
    // Carol follows nobody: Mastodon's default policy files the mention under requests, the conversation shows it.
    let last: StatusJson | undefined;
    await eventually(async () => {
      const conversations = await request(b.server.app, "GET", "/api/v1/conversations", { token: carol.token });
      last = conversations
        .json()
        .find((c: { last_status: StatusJson }) => c.last_status.uri === direct.uri)?.last_status;
      return last !== undefined;
    }, "carol gets the direct post");
    assert.equal(last!.visibility, "direct");
    await eventually(async () => {
      const requests = await request(b.server.app, "GET", "/api/v1/notifications/requests", { token: carol.token });
      return requests.json().some((r: { account: { acct: string } }) => r.account.acct === `alice@${a.domain}`);
    }, "the mention waits among carol's notification requests");
    const asBob = await request(b.server.app, "GET", `/api/v1/statuses/${last!.id}`, { token: bob.token });
    assert.equal(asBob.statusCode, 404);
    assert.ok(!(await home(b, bob)).some((s) => s.uri === direct.uri));
  });

  test("a profile change reaches the followers' servers", async () => {
    const res = await request(a.server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: alice.token,
      json: { display_name: "Alice Liddell", note: "Down the rabbit hole" },
    });
    assert.equal(res.statusCode, 200, res.body);
    await eventually(async () => {
      const copy = (await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}`)).json();
      return copy.display_name === "Alice Liddell" && /rabbit hole/.test(copy.note);
    }, "the new profile on b");
  });

  test("a link to the other server's post or profile resolves in search", async () => {
    const post = await postStatus(a.server, alice, { status: "Find me by my link" });
    const byUrl = await request(b.server.app, "GET", `/api/v2/search?q=${encodeURIComponent(post.url!)}&resolve=true`, {
      token: carol.token,
    });
    assert.equal(byUrl.statusCode, 200, byUrl.body);
    assert.deepEqual(
      byUrl.json().statuses.map((s: StatusJson) => s.uri),
      [post.uri],
    );
    const profile = await request(
      b.server.app,
      "GET",
      `/api/v2/search?q=${encodeURIComponent(`${a.baseUrl}/@alice`)}&resolve=true&type=accounts`,
      { token: carol.token },
    );
    assert.equal(profile.json().accounts[0].acct, `alice@${a.domain}`);
    const unresolved = await request(b.server.app, "GET", `/api/v2/search?q=${encodeURIComponent(post.url!)}`, {
      token: carol.token,
    });
    assert.equal(unresolved.statusCode, 200);
  });

  test("streaming on the receiving side delivers a remote post", async () => {
    const address = b.server.app.server.address() as AddressInfo;
    const stream = await WsClient.connect(`127.0.0.1:${address.port}`, bob.token, { query: "stream=user" });
    try {
      const post = await postStatus(a.server, alice, { status: "Live from a" });
      const frame = await stream.event("update", (payload) => JSON.parse(payload ?? "{}").uri === post.uri, 8000);
      assert.equal(JSON.parse(frame.payload!).account.acct, `alice@${a.domain}`);
    } finally {
      stream.close();
    }
  });

  test("a poll crosses as a Question; votes reach its author and tallies come back", async () => {
    const post = await postStatus(a.server, alice, {
      status: "Tea or coffee?",
      poll: { options: ["tea", "coffee"], expires_in: 3600 },
    });
    const copy = await copyIn(b, bob, post.uri);
    const pollOnB = (copy as unknown as { poll: { id: string; options: Array<{ title: string }>; multiple: boolean } })
      .poll;
    assert.deepEqual(
      pollOnB.options.map((o) => o.title),
      ["tea", "coffee"],
    );
    const voted = await request(b.server.app, "POST", `/api/v1/polls/${pollOnB.id}/votes`, {
      token: bob.token,
      json: { choices: [0] },
    });
    assert.equal(voted.statusCode, 200, voted.body);
    const pollOnA = (post as unknown as { poll: { id: string } }).poll;
    await eventually(async () => {
      const now = (await request(a.server.app, "GET", `/api/v1/polls/${pollOnA.id}`, { token: alice.token })).json();
      return now.options[0].votes_count === 1 && now.voters_count === 1;
    }, "bob's vote counted on a");
    // A vote on a's side comes back to b with the tallies.
    const dave = await createUser(a.server.ctx, "dave");
    await request(a.server.app, "POST", `/api/v1/polls/${pollOnA.id}/votes`, {
      token: dave.token,
      json: { choices: [1] },
    });
    await eventually(async () => {
      const now = (await request(b.server.app, "GET", `/api/v1/polls/${pollOnB.id}`, { token: carol.token })).json();
      return now.options[0].votes_count === 1 && now.options[1].votes_count === 1 && now.voters_count === 2;
    }, "the tallies reach b");
    const after = await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: bob.token });
    assert.equal(after.json().edited_at, null, "new tallies are no edit");
  });

  test("a pin and an unpin reach the followers' servers", async () => {
    const post = await postStatus(a.server, alice, { status: "Pinned on my profile" });
    await copyIn(b, bob, post.uri);
    const pinned = async () =>
      (
        (
          await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}/statuses?pinned=true`, { token: bob.token })
        ).json() as StatusJson[]
      ).map((s) => s.uri);
    await request(a.server.app, "POST", `/api/v1/statuses/${post.id}/pin`, { token: alice.token });
    await eventually(async () => (await pinned()).includes(post.uri), "the pin reaches b");
    await request(a.server.app, "POST", `/api/v1/statuses/${post.id}/unpin`, { token: alice.token });
    await eventually(async () => !(await pinned()).includes(post.uri), "the unpin reaches b");
  });

  test("a report forwarded to the reported account's server reaches its moderators", async () => {
    const moderator = await createUser(b.server.ctx, "moderator", { role: "Admin" });
    const post = await postStatus(b.server, bob, { status: "Report me" });
    const copy = await copyIn(a, alice, post.uri);
    const reported = await request(a.server.app, "POST", "/api/v1/reports", {
      token: alice.token,
      json: { account_id: bobOnA, status_ids: [copy.id], comment: "spam from b", forward: true },
    });
    assert.equal(reported.statusCode, 200, reported.body);
    let report: { target_account: { id: string }; statuses?: Array<{ id: string }>; comment: string } | undefined;
    await eventually(async () => {
      report = (await notifications(b, moderator, "admin.report")).map(
        (n) => (n as unknown as { report: typeof report }).report,
      )[0];
      return report !== undefined;
    }, "b's moderators hear of the report");
    assert.equal(report!.target_account.id, bob.account.id);
    assert.equal(report!.comment, "spam from b");
  });

  test("custom emoji of a post cross with it", async () => {
    await createCustomEmoji(a.server, "blobcat", { imageRemoteUrl: `${a.baseUrl}/emoji/blobcat.png` });
    const post = await postStatus(a.server, alice, { status: "Hello :blobcat:" });
    const copy = await copyIn(b, bob, post.uri);
    const emojis = (copy as unknown as { emojis: Array<{ shortcode: string; url: string }> }).emojis;
    assert.deepEqual(
      emojis.map((e) => [e.shortcode, e.url]),
      [["blobcat", `${a.baseUrl}/emoji/blobcat.png`]],
    );
    // …and those of a name, with the profile.
    await request(a.server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: alice.token,
      json: { display_name: "Alice :blobcat:" },
    });
    await eventually(async () => {
      const copy = (await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}`)).json();
      return (
        copy.display_name === "Alice :blobcat:" &&
        copy.emojis.some((e: { shortcode: string }) => e.shortcode === "blobcat")
      );
    }, "the name's emoji on b");
  });

  test("a picture's blurhash and focal point cross with it; a reply names the thread as its first post does", async () => {
    const media = await uploadImage(a.server, alice, { focus: "-0.5,0.75" });
    const post = await postStatus(a.server, alice, { status: "a picture", media_ids: [media.id] });
    const copy = await copyIn(b, bob, post.uri);
    const res = await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: bob.token });
    const [copied] = (res.json() as { media_attachments: MediaAttachment[] }).media_attachments;
    assert.ok(media.blurhash);
    assert.equal(copied?.blurhash, media.blurhash);
    assert.deepEqual(copied?.meta.focus, { x: -0.5, y: 0.75 });

    const reply = await postStatus(b.server, bob, { status: `@alice@${a.domain} nice`, in_reply_to_id: copy.id });
    const served = async (uri: string) =>
      (await (await fetch(uri, { headers: { accept: "application/activity+json" } })).json()) as Record<string, any>;
    const [note, replyNote] = await Promise.all([served(post.uri), served(reply.uri)]);
    assert.match(note.context, /\/contexts\/\d+$/);
    assert.equal(note.conversation, note.context);
    assert.equal(replyNote.context, note.context);
    assert.equal(replyNote.conversation, note.conversation);
  });

  test("a picture of a remote post is kept here; reject_media drops the copy", async () => {
    const media = await uploadImage(a.server, alice, { description: "a square", width: 64, height: 48 });
    const post = await postStatus(a.server, alice, { status: "With a picture", media_ids: [media.id] });
    const copy = await copyIn(b, bob, post.uri);
    const attachmentOnB = async () =>
      (await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}`, { token: bob.token })).json()
        .media_attachments[0] as {
        id: string;
        url: string;
        remote_url: string;
        description: string;
        preview_url: string;
      };
    await eventually(
      async () => (await attachmentOnB()).url.startsWith(`${b.baseUrl}/system/`),
      "the picture is kept on b",
    );
    const kept = await attachmentOnB();
    assert.equal(kept.remote_url, media.url);
    assert.equal(kept.description, "a square");
    assert.ok(kept.preview_url.startsWith(b.baseUrl));
    const served = await request(b.server.app, "GET", new URL(kept.url).pathname);
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers["content-type"], "image/png");

    const admin = await createUser(b.server.ctx, "mediaadmin", { role: "Admin" });
    const adminToken = await tokenFor(b.server.ctx, admin, "admin:read admin:write");
    const block = await request(b.server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      json: { domain: "a.test", severity: "noop", reject_media: true },
    });
    assert.equal(block.statusCode, 200, block.body);
    await eventually(
      async () => (await attachmentOnB()).url === `${b.baseUrl}/media_proxy/${kept.id}/original`,
      "the copy is dropped",
    );
    await eventually(
      async () => (await request(b.server.app, "GET", new URL(kept.url).pathname)).statusCode === 404,
      "the kept file is gone",
    );
    await request(b.server.app, "DELETE", `/api/v1/admin/domain_blocks/${block.json().id}`, { token: adminToken });
  });

  test("an account met for the first time brings its pinned posts", async () => {
    const erin = await createUser(a.server.ctx, "erin");
    const pinned = await postStatus(a.server, erin, { status: "My pinned post" });
    await request(a.server.app, "POST", `/api/v1/statuses/${pinned.id}/pin`, { token: erin.token });
    const erinOnB = (await resolveOn(b, carol, `erin@${a.domain}`)).id;
    await eventually(async () => {
      const res = await request(b.server.app, "GET", `/api/v1/accounts/${erinOnB}/statuses?pinned=true`, {
        token: carol.token,
      });
      return (res.json() as StatusJson[]).some((s) => s.uri === pinned.uri);
    }, "erin's pin on b");
  });

  test("a thread fills downward: replies never received are fetched when the thread is opened", async () => {
    const post = await postStatus(a.server, alice, { status: "Thread root" });
    const copy = await copyIn(b, bob, post.uri);
    const zed = await createUser(a.server.ctx, "zed");
    const reply = await postStatus(a.server, zed, { status: "b never heard of me", in_reply_to_id: post.id });
    const note = (await (await fetch(post.uri, { headers: { accept: "application/activity+json" } })).json()) as {
      replies?: string;
    };
    assert.equal(note.replies, `${post.uri}/replies`);
    const descendants = async () =>
      (
        (await request(b.server.app, "GET", `/api/v1/statuses/${copy.id}/context`, { token: bob.token })).json()
          .descendants as StatusJson[]
      ).map((s) => s.uri);
    assert.deepEqual(await descendants(), []);
    await eventually(async () => (await descendants()).includes(reply.uri), "the reply is fetched into b's thread");
  });
});
