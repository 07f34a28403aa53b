/**
 * Other servers' media kept here, as Mastodon keeps them: between two Rookery servers behind TLS on
 * loopback (two_servers.ts), and a plain file server (`files.test`) whose answers each test
 * chooses, for what a real server would not send.
 *
 * - Video, gifv and audio of a remote post are downloaded and converted as uploads are; the
 *   content decides what an attachment is (a still "video" is a picture, an animated GIF a gifv).
 * - What cannot be kept is not (missing, not media, too large, behind a private address) and is
 *   not asked for again by every reader.
 * - Avatars and headers of remote accounts are kept, replaced when they change and dropped when
 *   they go; the API shows the default picture until one is kept.
 * - `rookery media remove` drops copies (attachments, or with --prune-profiles / --remove-headers
 *   the profiles' pictures); the media proxy fetches an attachment again when asked, a pruned
 *   picture comes back when its account is fetched again.
 * - The media proxy serves only remote attachments of posts the reader may see, never waits
 *   forever, and is throttled.
 * - `reject_media` stops downloads of a domain and drops what was kept of it.
 * - Without ffmpeg, remote video and audio stay links.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { runCli, type ContextFactory } from "../../src/cli/main.ts";
import type { AccountRow, MediaType } from "../../src/db/schema.ts";
import { storeRemoteAccount } from "../../src/services/accounts/remote.ts";
import { storeRemoteStatus } from "../../src/services/statuses/remote.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  errorOf,
  eventually,
  postStatus,
  remoteStatusData,
  request,
  testImage,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { ffprobe, noTranscoder, samples } from "../media_samples.ts";
import type { Account, MediaAttachment, Status } from "../types.ts";
import { followEachOther, startPeers, type Peer, type Peers } from "./two_servers.ts";

const NOT_FOUND = "Record not found";

interface FileAnswer {
  status?: number;
  type?: string;
  body?: Buffer | string;
  /** Never answers (until the server closes). */
  hang?: boolean;
}

interface FileServer {
  port: number;
  /** `http://files.test:PORT<path>`. */
  url(path: string): string;
  serve(path: string, answer: FileAnswer): void;
  /** How many requests `path` got. */
  hits(path: string): number;
  close(): Promise<void>;
}

/** A plain HTTP file server on loopback answering what each test chooses. */
async function startFileServer(): Promise<FileServer> {
  const answers = new Map<string, FileAnswer>();
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://files.test").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const answer = answers.get(path) ?? { status: 404, type: "text/plain", body: "no such file" };
    if (answer.hang) return;
    res.writeHead(answer.status ?? 200, { "content-type": answer.type ?? "application/octet-stream" });
    res.end(answer.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://files.test:${port}${path}`,
    serve: (path, answer) => void answers.set(path, answer),
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `rookery ARGV` against `server`'s context, as the CLI test does. */
async function cli(server: TestServer, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const factory: ContextFactory = async () => ({ ctx: server.ctx, release: async () => {} });
  const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, factory);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A picture of another server's post, as another Rookery would send it. */
const picture = (width = 64, height = 48) => testImage({ width, height, color: "#e76f51" });

let remoteN = 0;

/** Stores a post of `author` (an account on files.test) with attachments at `media` paths, through the writer of remote posts. */
async function remotePost(
  server: TestServer,
  files: FileServer,
  author: AccountRow,
  media: Array<{ path: string; type: MediaType; url?: string }>,
): Promise<string> {
  const n = ++remoteN;
  const status = await storeRemoteStatus(
    server.ctx,
    author,
    remoteStatusData(`https://files.test/statuses/${n}`, {
      content: `<p>remote post ${n}</p>`,
      media: media.map((m) => ({
        url: m.url ?? files.url(m.path),
        type: m.type,
        description: null,
        blurhash: null,
        width: null,
        height: null,
        focus: null,
      })),
    }),
  );
  server.ctx.jobs.wake();
  return status.id;
}

describe("remote media between two servers", () => {
  let peers: Peers;
  let a: Peer;
  let b: Peer;
  let files: FileServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let aliceOnB: string;
  let dora: AccountRow;
  let adminToken: string;

  const statusOnB = async (id: string, reader?: TestUser): Promise<Status> => {
    const res = await request(b.server.app, "GET", `/api/v1/statuses/${id}`, { token: reader?.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status;
  };
  const attachmentsOnB = async (id: string, reader?: TestUser) => (await statusOnB(id, reader)).media_attachments;
  const aliceAsSeenOnB = async () =>
    (await request(b.server.app, "GET", `/api/v1/accounts/${aliceOnB}`)).json() as Account;
  const keptOnB = (url: string | null) => url !== null && url.startsWith(`${b.baseUrl}/system/`);
  /** GET of one of b's own URLs (by its path). */
  const getOnB = (url: string, token?: string) => request(b.server.app, "GET", new URL(url).pathname, { token });
  /** Waits until b no longer serves `url` (a job deletes files right after it changes the row). */
  const goneOnB = (url: string, what: string) => eventually(async () => (await getOnB(url)).statusCode === 404, what);
  const proxy = (id: string, style = "original", token?: string) =>
    request(b.server.app, "GET", `/media_proxy/${id}/${style}`, { token });

  /** Alice's post on a, once it reached bob's home on b: its id on b. */
  async function copyIn(uri: string): Promise<string> {
    let id: string | undefined;
    await eventually(
      async () => {
        const home = (
          await request(b.server.app, "GET", "/api/v1/timelines/home", { token: bob.token })
        ).json() as Status[];
        id = home.find((s) => s.uri === uri)?.id;
        return id !== undefined;
      },
      `${uri} in bob's home on b`,
      15_000,
    );
    return id!;
  }

  async function uploadOnA(file: Buffer, filename: string, type: string): Promise<string> {
    const res = await request(a.server.app, "POST", "/api/v1/media", {
      token: alice.token,
      parts: [{ name: "file", value: file, filename, type }],
    });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as MediaAttachment).id;
  }

  async function alicePosts(media: string[], visibility: "public" | "private" = "public"): Promise<string> {
    const post = await postStatus(a.server, alice, { status: "with media", media_ids: media, visibility });
    return copyIn(post.uri);
  }

  async function updateAliceOnA(
    parts: Array<{ name: string; value: Buffer | string; filename?: string; type?: string }>,
  ) {
    const res = await request(a.server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: alice.token,
      parts,
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  before(async () => {
    files = await startFileServer();
    peers = await startPeers(["a.test", "b.test"], {
      // files.test answers on loopback too; private.test is an address Rookery may not reach.
      OUTBOUND_HOSTS: "a.test=127.0.0.1,b.test=127.0.0.1,files.test=127.0.0.1,private.test=127.0.0.2",
    });
    [a, b] = peers.peers as [Peer, Peer];
    alice = await createUser(a.server.ctx, "alice");
    bob = await createUser(b.server.ctx, "bob");
    carol = await createUser(b.server.ctx, "carol");
    const admin = await createUser(b.server.ctx, "admin", { role: "Admin" });
    adminToken = await tokenFor(b.server.ctx, admin, "admin:read admin:write");
    ({ xOnY: aliceOnB } = await followEachOther(a, alice, b, bob));
    dora = await createRemoteAccount(b.server.ctx, "dora", `files.test:${files.port}`);
  });
  after(async () => {
    // The file server first: a download hanging on it ends at once, so the workers can stop.
    await files?.close();
    await peers?.close();
  });

  test(
    "a remote post's video, gifv and audio are downloaded and converted as uploads are",
    { skip: noTranscoder },
    async () => {
      const [video, gif, audio] = await Promise.all([samples.mp4(), samples.gif(), samples.mp3()]);
      const ids = [
        await uploadOnA(video, "clip.mp4", "video/mp4"),
        await uploadOnA(gif, "loop.gif", "image/gif"),
        await uploadOnA(audio, "tone.mp3", "audio/mpeg"),
      ];
      const originals = (
        await Promise.all(
          ids.map(async (id) =>
            (await request(a.server.app, "GET", `/api/v1/media/${id}`, { token: alice.token })).json(),
          ),
        )
      ).map((m) => (m as MediaAttachment).url);
      // One post each: Mastodon's rules allow one video or audio file per post.
      const copies = await Promise.all(ids.map((id) => alicePosts([id])));
      const attachments = async () => (await Promise.all(copies.map((copy) => attachmentsOnB(copy)))).flat();
      await eventually(
        async () => (await attachments()).every((m) => keptOnB(m.url)),
        "every attachment kept on b",
        90_000,
      );
      const media = await attachments();
      assert.deepEqual(
        media.map((m) => m.type),
        ["video", "gifv", "audio"],
      );
      assert.deepEqual(
        media.map((m) => m.remote_url),
        originals,
      );
      const [keptVideo, keptGifv, keptAudio] = media as [MediaAttachment, MediaAttachment, MediaAttachment];
      const served = await getOnB(keptVideo.url!);
      assert.equal(served.statusCode, 200);
      assert.equal(served.headers["content-type"], "video/mp4");
      const probed = await ffprobe(served.rawPayload);
      assert.deepEqual(probed.streams.map((s) => s.codec_name).sort(), ["aac", "h264"]);
      const loop = await ffprobe((await getOnB(keptGifv.url!)).rawPayload);
      assert.deepEqual(
        loop.streams.map((s) => s.codec_type),
        ["video"],
      );
      const sound = await getOnB(keptAudio.url!);
      assert.equal(sound.headers["content-type"], "audio/mpeg");
      // Previews are b's own (a video's first frame); audio without cover art has none.
      assert.ok(keptOnB(keptVideo.preview_url), keptVideo.preview_url ?? "no preview");
      assert.equal((await getOnB(keptVideo.preview_url!)).statusCode, 200);
      assert.ok(keptOnB(keptGifv.preview_url));
      assert.equal(keptAudio.preview_url, null);
      assert.ok((keptVideo.meta.original?.duration ?? 0) > 1.5, JSON.stringify(keptVideo.meta));
      assert.ok((keptAudio.meta.original?.duration ?? 0) > 1.5, JSON.stringify(keptAudio.meta));
    },
  );

  test(
    "the content decides, as for uploads: a still 'video' is a picture, an animated GIF a gifv, cover art a thumbnail",
    { skip: noTranscoder },
    async () => {
      files.serve("/still.png", { type: "video/mp4", body: await picture(80, 60) });
      files.serve("/anim.gif", { type: "image/gif", body: await samples.gif() });
      files.serve("/cover.mp3", { type: "audio/mpeg", body: await samples.mp3WithCover() });
      const id = await remotePost(b.server, files, dora, [
        { path: "/still.png", type: "video" },
        { path: "/anim.gif", type: "image" },
        { path: "/cover.mp3", type: "audio" },
      ]);
      await eventually(
        async () => (await attachmentsOnB(id)).every((m) => keptOnB(m.url)),
        "every attachment kept on b",
        60_000,
      );
      const [still, anim, cover] = (await attachmentsOnB(id)) as [MediaAttachment, MediaAttachment, MediaAttachment];
      assert.equal(still.type, "image");
      assert.equal((await getOnB(still.url!)).headers["content-type"], "image/png");
      assert.equal(anim.type, "gifv");
      assert.equal((await getOnB(anim.url!)).headers["content-type"], "video/mp4");
      assert.equal(cover.type, "audio");
      assert.ok(keptOnB(cover.preview_url), `cover art as preview: ${cover.preview_url}`);
      assert.equal((await getOnB(cover.preview_url!)).statusCode, 200);
    },
  );

  test("what cannot be kept is not, and the proxy does not ask for it again", async () => {
    files.serve("/page.png", { type: "text/html", body: "<html>not a picture</html>" });
    files.serve("/huge.png", { type: "image/png", body: Buffer.alloc(16 * 1024 * 1024 + 1, 7) });
    const id = await remotePost(b.server, files, dora, [
      { path: "/missing.png", type: "image" },
      { path: "/page.png", type: "image" },
      { path: "/huge.png", type: "image" },
      { path: "/inside.png", type: "image", url: `http://private.test:${files.port}/inside.png` },
    ]);
    const media = await attachmentsOnB(id);
    // Each was tried once; the links stay.
    await eventually(
      async () => files.hits("/missing.png") === 1 && files.hits("/page.png") === 1 && files.hits("/huge.png") === 1,
      "each file asked for",
    );
    await eventually(async () => (await b.server.ctx.jobs.drain()) === 0, "b's queue is empty");
    const now = await attachmentsOnB(id);
    for (const m of now) {
      assert.equal(m.url, `${b.baseUrl}/media_proxy/${m.id}/original`);
      assert.equal(m.preview_url, `${b.baseUrl}/media_proxy/${m.id}/small`);
      assert.ok(m.remote_url?.endsWith(".png"));
    }
    // The proxy answers 404 at once and does not fetch them again.
    for (const m of media) assert.deepEqual(errorOf(await proxy(m.id)), [404, NOT_FOUND]);
    assert.equal(files.hits("/missing.png"), 1);
    assert.equal(files.hits("/page.png"), 1);
    assert.equal(files.hits("/huge.png"), 1);
    assert.equal(files.hits("/inside.png"), 0);
  });

  test("rookery media remove drops kept copies; the media proxy fetches one again when asked", async () => {
    const media = [
      (
        await request(a.server.app, "POST", "/api/v2/media", {
          token: alice.token,
          parts: [{ name: "file", value: await picture(120, 90), filename: "p.png", type: "image/png" }],
        })
      ).json().id as string,
    ];
    const copy = await alicePosts(media);
    await eventually(async () => keptOnB((await attachmentsOnB(copy))[0]!.url), "kept on b", 15_000);
    const kept = (await attachmentsOnB(copy))[0]!;

    const dry = await cli(b.server, "media", "remove", "--days", "0", "--dry-run");
    assert.equal(dry.code, 0, dry.err);
    assert.match(
      dry.out,
      /^Would drop \d+ kept cop(y|ies) of remote media older than 0 days \(about [\d.]+ \w+\)\. \(dry run/,
    );
    assert.equal((await getOnB(kept.url!)).statusCode, 200);

    const removed = await cli(b.server, "media", "remove", "--days", "0");
    assert.equal(removed.code, 0, removed.err);
    assert.match(removed.out, /^Dropped \d+ kept cop(y|ies) of remote media older than 0 days/);
    assert.equal((await getOnB(kept.url!)).statusCode, 404);
    const dropped = (await attachmentsOnB(copy))[0]!;
    assert.equal(dropped.url, `${b.baseUrl}/media_proxy/${kept.id}/original`);
    assert.equal(dropped.preview_url, `${b.baseUrl}/media_proxy/${kept.id}/small`);
    assert.equal(dropped.remote_url, kept.remote_url);

    const original = await proxy(kept.id, "original");
    assert.equal(original.statusCode, 302, original.body);
    const location = String(original.headers.location);
    assert.ok(keptOnB(location), location);
    const served = await getOnB(location);
    assert.equal(served.statusCode, 200);
    assert.deepEqual(
      [(await sharp(served.rawPayload).metadata()).width, (await sharp(served.rawPayload).metadata()).height],
      [120, 90],
    );
    const small = await proxy(kept.id, "small");
    assert.equal(small.statusCode, 302);
    assert.notEqual(small.headers.location, location);
    assert.equal((await getOnB(String(small.headers.location))).statusCode, 200);
    // Any other last part is the original, as Mastodon's route reads it.
    assert.equal((await proxy(kept.id, "whatever")).headers.location, location);
    // Kept again: the API shows the copy, and it is a fresh one for `--days`.
    assert.equal((await attachmentsOnB(copy))[0]!.url, location);
    const again = await cli(b.server, "media", "remove", "--days", "1");
    assert.match(again.out, /^Dropped 0 kept copies/);
  });

  test("a removed video is fetched and converted again through the proxy", { skip: noTranscoder }, async () => {
    const copy = await alicePosts([await uploadOnA(await samples.silentMp4(), "loop.mp4", "video/mp4")]);
    await eventually(async () => keptOnB((await attachmentsOnB(copy))[0]!.url), "kept on b", 60_000);
    const id = (await attachmentsOnB(copy))[0]!.id;
    assert.equal((await cli(b.server, "media", "remove", "--days", "0")).code, 0);
    assert.equal((await attachmentsOnB(copy))[0]!.url, `${b.baseUrl}/media_proxy/${id}/original`);
    const res = await proxy(id, "small");
    assert.equal(res.statusCode, 302, res.body);
    assert.match(String(res.headers.location), /\/small\/\w+\.jpg$/);
    const now = (await attachmentsOnB(copy))[0]!;
    assert.equal(now.type, "gifv");
    assert.equal((await getOnB(now.url!)).headers["content-type"], "video/mp4");
  });

  test("the media proxy serves only remote attachments of posts the reader may see", async () => {
    assert.deepEqual(errorOf(await proxy("99999999999")), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await proxy("not-an-id")), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await request(b.server.app, "GET", "/media_proxy/1")), [404, NOT_FOUND]);
    // A local attachment: nothing to fetch.
    const own = (
      await request(b.server.app, "POST", "/api/v2/media", {
        token: bob.token,
        parts: [{ name: "file", value: await picture(), filename: "p.png", type: "image/png" }],
      })
    ).json().id as string;
    await postStatus(b.server, bob, { status: "mine", media_ids: [own] });
    assert.deepEqual(errorOf(await proxy(own)), [404, NOT_FOUND]);

    // A followers-only post of alice's: bob follows her, carol does not.
    const upload = (
      await request(a.server.app, "POST", "/api/v2/media", {
        token: alice.token,
        parts: [{ name: "file", value: await picture(40, 30), filename: "p.png", type: "image/png" }],
      })
    ).json().id as string;
    const copy = await alicePosts([upload], "private");
    await eventually(async () => keptOnB((await attachmentsOnB(copy, bob))[0]!.url), "kept on b", 15_000);
    const id = (await attachmentsOnB(copy, bob))[0]!.id;
    // Kept or not, a reader who may not see the post learns nothing of it.
    assert.deepEqual(errorOf(await proxy(id)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await proxy(id, "original", carol.token)), [404, NOT_FOUND]);
    assert.equal((await proxy(id, "original", bob.token)).statusCode, 302);
    await cli(b.server, "media", "remove", "--days", "0");
    assert.deepEqual(errorOf(await proxy(id)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await proxy(id, "small", carol.token)), [404, NOT_FOUND]);
    assert.equal((await attachmentsOnB(copy, bob))[0]!.url, `${b.baseUrl}/media_proxy/${id}/original`);
    const res = await proxy(id, "original", bob.token);
    assert.equal(res.statusCode, 302, res.body);
    assert.ok(keptOnB(String(res.headers.location)));
  });

  test("the media proxy is throttled per address, as Mastodon's is (30 in 10 minutes)", async () => {
    const from = (address: string) =>
      b.server.app.inject({ method: "GET", url: "/media_proxy/99999999999/original", remoteAddress: address });
    for (let i = 0; i < 30; i++) assert.equal((await from("203.0.113.7")).statusCode, 404);
    const refused = await from("203.0.113.7");
    assert.deepEqual(errorOf(refused), [429, "Too many requests"]);
    assert.equal(refused.headers["x-ratelimit-limit"], "30");
    assert.equal((await from("203.0.113.8")).statusCode, 404);
  });

  test("avatars and headers of remote accounts are kept here, replaced when changed, dropped when removed", async () => {
    await updateAliceOnA([
      {
        name: "avatar",
        value: await testImage({ width: 500, height: 500, color: "#264653" }),
        filename: "a.png",
        type: "image/png",
      },
      {
        name: "header",
        value: await testImage({ width: 1600, height: 600, color: "#2a9d8f" }),
        filename: "h.png",
        type: "image/png",
      },
    ]);
    await eventually(
      async () => {
        const seen = await aliceAsSeenOnB();
        return keptOnB(seen.avatar) && keptOnB(seen.header);
      },
      "alice's pictures kept on b",
      15_000,
    );
    const first = await aliceAsSeenOnB();
    assert.match(first.avatar, /\/system\/accounts\/avatars\/\d+\/original\/\w+\.png$/);
    assert.equal(first.avatar_static, first.avatar);
    assert.equal(first.header_static, first.header);
    const avatar = await getOnB(first.avatar);
    assert.equal(avatar.statusCode, 200);
    assert.deepEqual(
      [(await sharp(avatar.rawPayload).metadata()).width, (await sharp(avatar.rawPayload).metadata()).height],
      [400, 400],
    );
    const header = await sharp((await getOnB(first.header)).rawPayload).metadata();
    assert.deepEqual([header.width, header.height], [1500, 500]);

    // An animated avatar: kept animated, with a still frame for avatar_static.
    await updateAliceOnA([{ name: "avatar", value: await animatedGif(), filename: "a.gif", type: "image/gif" }]);
    await eventually(async () => (await aliceAsSeenOnB()).avatar !== first.avatar, "the new avatar on b", 15_000);
    const second = await aliceAsSeenOnB();
    assert.match(second.avatar, /\.gif$/);
    assert.match(second.avatar_static, /\/static\/\w+\.png$/);
    assert.equal((await getOnB(second.avatar_static)).statusCode, 200);
    await goneOnB(first.avatar, "the old avatar's copy gone");
    assert.equal(second.header, first.header, "the header was not fetched again");

    // The header removed on a: the default on b, and its copy goes.
    const removed = await request(a.server.app, "DELETE", "/api/v1/profile/header", { token: alice.token });
    assert.equal(removed.statusCode, 200, removed.body);
    await eventually(
      async () => (await aliceAsSeenOnB()).header === `${b.baseUrl}/headers/original/missing.png`,
      "the default header on b",
      15_000,
    );
    await goneOnB(first.header, "the header's copy gone");
  });

  test("a remote picture that is not kept shows the default, and another server's URL is never shown", async () => {
    files.serve("/avatar.png", { type: "image/png", body: await picture(50, 50) });
    files.serve("/header.txt", { type: "text/plain", body: "not a picture" });
    const account = await storeRemoteAccount(b.server.ctx, {
      uri: `http://files.test:${files.port}/users/erin`,
      username: "erin",
      domain: `files.test:${files.port}`,
      actorType: "Person",
      displayName: "Erin",
      note: "",
      fields: [],
      url: null,
      inbox: `http://files.test:${files.port}/users/erin/inbox`,
      sharedInbox: null,
      outbox: null,
      followers: null,
      following: null,
      featured: null,
      publicKey: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n",
      locked: false,
      discoverable: true,
      indexable: true,
      memorial: false,
      avatarUrl: files.url("/avatar.png"),
      headerUrl: files.url("/header.txt"),
      published: null,
    });
    const seen = async () => (await request(b.server.app, "GET", `/api/v1/accounts/${account.id}`)).json() as Account;
    await eventually(async () => keptOnB((await seen()).avatar), "erin's avatar kept", 15_000);
    await eventually(async () => files.hits("/header.txt") === 1, "the header asked for");
    await eventually(async () => (await b.server.ctx.jobs.drain()) === 0, "b's queue is empty");
    const now = await seen();
    assert.equal(now.header, `${b.baseUrl}/headers/original/missing.png`);
    assert.equal(now.header_static, now.header);
    for (const url of [now.avatar, now.avatar_static, now.header]) assert.ok(!url.includes("files.test"), url);
  });

  test("rookery media remove --prune-profiles / --remove-headers; a pruned picture comes back with its account", async () => {
    const misuse = await cli(b.server, "media", "remove", "--prune-profiles", "--remove-headers");
    assert.equal(misuse.code, 1);
    assert.match(misuse.err, /--prune-profiles and --remove-headers cannot be given together/);
    const alone = await cli(b.server, "media", "remove", "--include-follows");
    assert.equal(alone.code, 1);
    assert.match(alone.err, /--include-follows goes only with --prune-profiles or --remove-headers/);
    const help = await cli(b.server, "media", "remove", "--help");
    assert.match(help.out, /--prune-profiles/);
    assert.match(help.out, /--remove-headers/);

    await updateAliceOnA([
      {
        name: "avatar",
        value: await testImage({ width: 90, height: 90, color: "#e9c46a" }),
        filename: "a.png",
        type: "image/png",
      },
      {
        name: "header",
        value: await testImage({ width: 1500, height: 500, color: "#f4a261" }),
        filename: "h.png",
        type: "image/png",
      },
    ]);
    await eventually(
      async () => {
        const seen = await aliceAsSeenOnB();
        return keptOnB(seen.avatar) && keptOnB(seen.header);
      },
      "alice's pictures kept on b",
      15_000,
    );
    const before = await aliceAsSeenOnB();
    // bob follows alice: her pictures stay unless --include-follows (those of accounts nobody here follows go).
    const followed = await cli(b.server, "media", "remove", "--prune-profiles", "--days", "0");
    assert.equal(followed.code, 0, followed.err);
    assert.match(
      followed.out,
      /^Dropped the kept avatars and headers of \d+ remote accounts? not fetched for 0 days\./,
    );
    assert.deepEqual(await aliceAsSeenOnB(), before);
    const headers = await cli(b.server, "media", "remove", "--remove-headers", "--include-follows", "--days", "0");
    assert.match(headers.out, /^Dropped the kept headers of 1 remote account not fetched for 0 days\./);
    let seen = await aliceAsSeenOnB();
    assert.equal(seen.header, `${b.baseUrl}/headers/original/missing.png`);
    assert.equal(seen.avatar, before.avatar);
    assert.equal((await getOnB(before.header)).statusCode, 404);
    const dry = await cli(
      b.server,
      "media",
      "remove",
      "--prune-profiles",
      "--include-follows",
      "--days",
      "0",
      "--dry-run",
    );
    assert.match(dry.out, /^Would drop the kept avatars and headers of 1 remote account .*\(dry run/);
    assert.equal((await aliceAsSeenOnB()).avatar, before.avatar);
    const recent = await cli(b.server, "media", "remove", "--prune-profiles", "--include-follows", "--days", "1");
    assert.match(recent.out, /of 0 remote accounts/);
    const all = await cli(b.server, "media", "remove", "--prune-profiles", "--include-follows", "--days", "0");
    assert.match(all.out, /of 1 remote account /);
    seen = await aliceAsSeenOnB();
    assert.equal(seen.avatar, `${b.baseUrl}/avatars/original/missing.png`);
    assert.equal(seen.avatar_static, seen.avatar);
    assert.equal((await getOnB(before.avatar)).statusCode, 404);

    // Fetched again (alice's profile changes): both come back.
    await updateAliceOnA([{ name: "display_name", value: "Alice again" }]);
    await eventually(
      async () => {
        const now = await aliceAsSeenOnB();
        return now.display_name === "Alice again" && keptOnB(now.avatar) && keptOnB(now.header);
      },
      "alice's pictures kept on b again",
      15_000,
    );
  });

  test(
    "a download that does not finish ends the proxy's wait with 503 and Retry-After",
    { timeout: 60_000 },
    async () => {
      files.serve("/slow.png", { hang: true });
      const id = await remotePost(b.server, files, dora, [{ path: "/slow.png", type: "image" }]);
      const mediaId = (await attachmentsOnB(id))[0]!.id;
      const started = Date.now();
      const res = await proxy(mediaId);
      const waited = Date.now() - started;
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.headers["retry-after"], "30");
      assert.match(res.json().error, /still being fetched/);
      assert.ok(waited < 25_000, `waited ${waited} ms`);
      // One download at a time, however many ask.
      assert.equal(files.hits("/slow.png"), 1);
    },
  );

  test("reject_media: nothing more is downloaded from the domain, and what was kept goes", async () => {
    const upload = (
      await request(a.server.app, "POST", "/api/v2/media", {
        token: alice.token,
        parts: [{ name: "file", value: await picture(30, 30), filename: "p.png", type: "image/png" }],
      })
    ).json().id as string;
    const copy = await alicePosts([upload]);
    await eventually(async () => keptOnB((await attachmentsOnB(copy))[0]!.url), "kept on b", 15_000);
    const kept = (await attachmentsOnB(copy))[0]!;
    const earlier = (await aliceAsSeenOnB()).avatar;
    await updateAliceOnA([
      {
        name: "avatar",
        value: await testImage({ width: 60, height: 60, color: "#8ab17d" }),
        filename: "a.png",
        type: "image/png",
      },
    ]);
    await eventually(
      async () => {
        const now = (await aliceAsSeenOnB()).avatar;
        return keptOnB(now) && now !== earlier;
      },
      "alice's avatar kept on b",
      15_000,
    );
    const avatar = (await aliceAsSeenOnB()).avatar;

    const block = await request(b.server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      json: { domain: "a.test", severity: "noop", reject_media: true },
    });
    assert.equal(block.statusCode, 200, block.body);
    await eventually(
      async () => (await attachmentsOnB(copy))[0]!.url === `${b.baseUrl}/media_proxy/${kept.id}/original`,
      "the copy dropped",
    );
    await eventually(
      async () => (await aliceAsSeenOnB()).avatar === `${b.baseUrl}/avatars/original/missing.png`,
      "the avatar dropped",
    );
    await goneOnB(kept.url!, "the attachment's copy gone");
    await goneOnB(avatar, "the avatar's copy gone");
    assert.deepEqual(errorOf(await proxy(kept.id)), [404, NOT_FOUND]);

    // New media of the domain are not downloaded, nor a changed avatar.
    const later = (
      await request(a.server.app, "POST", "/api/v2/media", {
        token: alice.token,
        parts: [{ name: "file", value: await picture(20, 20), filename: "p.png", type: "image/png" }],
      })
    ).json().id as string;
    const laterCopy = await alicePosts([later]);
    await updateAliceOnA([
      {
        name: "avatar",
        value: await testImage({ width: 100, height: 100, color: "#000000" }),
        filename: "a.png",
        type: "image/png",
      },
    ]);
    await eventually(async () => (await b.server.ctx.jobs.drain()) === 0, "b's queue is empty", 15_000);
    const notKept = (await attachmentsOnB(laterCopy))[0]!;
    assert.equal(notKept.url, `${b.baseUrl}/media_proxy/${notKept.id}/original`);
    assert.equal((await aliceAsSeenOnB()).avatar, `${b.baseUrl}/avatars/original/missing.png`);

    await request(b.server.app, "DELETE", `/api/v1/admin/domain_blocks/${block.json().id}`, { token: adminToken });
  });
});

/** A two-frame animated GIF, 64×64, red then blue. */
async function animatedGif(): Promise<Buffer> {
  const size = 64 * 64;
  const raw = Buffer.alloc(size * 2 * 4);
  for (let i = 0; i < size * 2; i++) raw.set(i < size ? [255, 0, 0, 255] : [0, 0, 255, 255], i * 4);
  return sharp(raw, { raw: { width: 64, height: 128, channels: 4, pageHeight: 64 } })
    .gif({ loop: 0, delay: [200, 200] })
    .toBuffer();
}

describe("remote media without ffmpeg", () => {
  let server: TestServer;
  let author: AccountRow;
  before(async () => {
    server = await createTestServer();
    server.ctx.config.transcoder = undefined;
    author = await createRemoteAccount(server.ctx, "faraway", "far.example");
  });
  after(() => server.close());

  test("video and audio stay links to the other server; pictures go through the proxy", async () => {
    const files = { url: (path: string) => `https://far.example${path}` } as FileServer;
    const id = await remotePost(server, files, author, [
      { path: "/clip.mp4", type: "video" },
      { path: "/tone.mp3", type: "audio" },
      { path: "/file.bin", type: "unknown" },
      { path: "/pic.png", type: "image" },
    ]);
    const media = ((await request(server.app, "GET", `/api/v1/statuses/${id}`)).json() as Status).media_attachments;
    assert.deepEqual(
      media.map((m) => [m.type, m.url, m.preview_url]),
      [
        ["video", "https://far.example/clip.mp4", null],
        ["audio", "https://far.example/tone.mp3", null],
        ["unknown", "https://far.example/file.bin", null],
        [
          "image",
          `https://rookery.test/media_proxy/${media[3]!.id}/original`,
          `https://rookery.test/media_proxy/${media[3]!.id}/small`,
        ],
      ],
    );
    // Nothing is queued for what is not kept; the proxy has nothing to give for it.
    const jobs = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select("name")
      .where("name", "like", "media.fetch%")
      .execute();
    assert.deepEqual(
      jobs.map((j) => j.name),
      ["media.fetch_remote"],
    );
    assert.deepEqual(errorOf(await request(server.app, "GET", `/media_proxy/${media[0]!.id}/original`)), [
      404,
      NOT_FOUND,
    ]);
  });
});
