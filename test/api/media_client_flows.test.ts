/**
 * Video, audio and animated GIFs the way real clients (masto.js in Elk and Phanpy, Ivory, Tusky)
 * use them, end to end: upload through v2, poll GET /api/v1/media/:id until the conversion is done,
 * then post, edit, schedule, delete and redraft, and read the attachment back wherever the status
 * shows (account media tab, public and home timelines, history, scheduled statuses), never where
 * the reader may not see the status. Also the multipart quirks of real clients. The conversion
 * itself (codecs, meta, refusals) is tested in media_video.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import sharp from "sharp";
import {
  createTestServer,
  createUser,
  errorOf,
  follow,
  get,
  type MultipartPart,
  request,
  uploadImage,
  later,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { MediaAttachment, ScheduledStatus, Status, StatusEdit } from "../types.ts";
import { makeMedia, noTranscoder, samples } from "../media_samples.ts";

const NOT_READY = "Cannot attach files that have not finished processing. Try again in a moment!";
const MIXED = "Cannot attach a video to a post that already contains images";
const IN_USE = "Media attachment is currently used by a status";
const MINUTE = 60_000;

/** Each sample is made once by ffmpeg and uploaded as often as needed. */
const made = new Map<string, Promise<Buffer>>();
const sample = (name: string): Promise<Buffer> => {
  let data = made.get(name);
  if (!data) {
    data = name === "mov" ? iphoneMov() : samples[name]!();
    made.set(name, data);
  }
  return data;
};

/** What an iPhone sends through Ivory or Ice Cubes: H.264/AAC in a QuickTime container. */
const iphoneMov = () =>
  makeMedia("mov", [
    ..."-f lavfi -i testsrc=size=160x120:rate=10 -t 1".split(" "),
    ..."-f lavfi -i sine=frequency=440:sample_rate=44100 -t 1".split(" "),
    ..."-c:v libx264 -pix_fmt yuv420p -c:a aac -shortest".split(" "),
  ]);

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * MINUTE).toISOString();

describe("media as Mastodon clients use it", { skip: noTranscoder }, () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
    // The samples are made while the first tests run their own.
    for (const name of ["mp4", "silentMp4", "mp3", "gif"]) void sample(name).catch(() => {});
  });
  after(() => server.close());

  let users = 0;
  const user = (name: string) => createUser(server.ctx, `${name}${++users}`);
  const drain = () => server.ctx.jobs.drain();

  /** POST /api/v2/media with the given parts, as a multipart form. */
  const uploadParts = (owner: TestUser, parts: MultipartPart[]) =>
    request(server.app, "POST", "/api/v2/media", { token: owner.token, parts });

  /** Uploads a sample through v2 and checks the 202 of media that is still being converted. */
  const upload = async (
    owner: TestUser,
    name = "mp4",
    filename = "clip.mp4",
    type = "video/mp4",
    fields: MultipartPart[] = [],
  ): Promise<MediaAttachment> => {
    const res = await uploadParts(owner, [{ name: "file", value: await sample(name), filename, type }, ...fields]);
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json<MediaAttachment>();
    assert.equal(queued.url, null);
    return queued;
  };

  /**
   * masto.js's wait: GET /api/v1/media/:id until `url` is set (206 meanwhile); the job workers
   * run between two polls.
   */
  const pollUntilProcessed = async (owner: TestUser, id: string): Promise<MediaAttachment> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await get(server.app, `/api/v1/media/${id}`, owner.token);
      assert.ok(res.statusCode === 200 || res.statusCode === 206, `${res.statusCode} ${res.body}`);
      const media = res.json<MediaAttachment>();
      assert.equal(media.id, id);
      if (media.url !== null) {
        assert.equal(res.statusCode, 200, "a finished media answers 200");
        return media;
      }
      assert.equal(res.statusCode, 206, "media without a URL yet answers 206");
      await drain();
    }
    assert.fail(`media ${id} was never processed`);
  };

  /** A converted media of `owner`, ready to be attached. */
  const ready = async (owner: TestUser, name = "mp4", filename = "clip.mp4", type = "video/mp4") =>
    pollUntilProcessed(owner, (await upload(owner, name, filename, type)).id);

  const post = (owner: TestUser, json: object) =>
    request(server.app, "POST", "/api/v1/statuses", { token: owner.token, json });
  const postOk = async (owner: TestUser, json: object): Promise<Status> => {
    const res = await post(owner, json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Status>();
  };
  const edit = (owner: TestUser, id: string, body: { json?: object; form?: Array<[string, string]> }) =>
    request(server.app, "PUT", `/api/v1/statuses/${id}`, { token: owner.token, ...body });
  const list = async (path: string, token?: string): Promise<Status[]> => {
    const res = await get(server.app, path, token);
    assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    return res.json<Status[]>();
  };
  const find = (statuses: Status[], id: string) => statuses.find((s) => s.id === id);
  const mediaStatus = (owner: TestUser, id: string) => get(server.app, `/api/v1/media/${id}`, owner.token);
  /** The stored file behind a media URL, as a browser or a player fetches it. */
  const fetchFile = (url: string | null): Promise<LightMyRequestResponse> => {
    assert.ok(url !== null && url.startsWith("https://rookery.test/system/"), String(url));
    return get(server.app, url.slice("https://rookery.test".length));
  };

  describe("the masto.js upload protocol", () => {
    test("v2 answers 202, polling answers 206 then 200 with the URL; media_ids sent as JSON numbers attach it", async () => {
      const owner = await user("masto");
      const queued = await upload(owner, "mp4", "clip.mp4", "video/mp4", [{ name: "description", value: "Bars" }]);
      assert.equal(queued.type, "video");
      assert.equal(queued.description, "Bars");
      const first = await mediaStatus(owner, queued.id);
      assert.equal(first.statusCode, 206);
      assert.equal(first.json<MediaAttachment>().url, null);

      const media = await pollUntilProcessed(owner, queued.id);
      assert.equal(media.type, "video");
      assert.match(String(media.url), /\.mp4$/);
      assert.ok(media.preview_url);
      assert.equal(media.meta.original?.width, 320);

      // masto.js and Tusky send IDs as strings, but some clients send bare numbers beyond 2^53.
      const res = await request(server.app, "POST", "/api/v1/statuses", {
        token: owner.token,
        body: `{"status":"my clip","media_ids":[${media.id}]}`,
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.statusCode, 200, res.body);
      const status = res.json<Status>();
      assert.equal(status.media_attachments.length, 1);
      const attached = status.media_attachments[0]!;
      assert.equal(attached.id, media.id, "the ID survived the JSON number");
      assert.deepEqual(attached, media, "the status carries the attachment as the poll answered it");
      assert.equal((await fetchFile(attached.url)).headers["content-type"], "video/mp4");
      assert.equal((await fetchFile(attached.preview_url)).headers["content-type"], "image/jpeg");

      // Attached: no longer a draft (masto.js stops polling long before).
      assert.equal((await mediaStatus(owner, media.id)).statusCode, 404);
      // Anyone reads the same attachment on the public status.
      const shown = (await get(server.app, `/api/v1/statuses/${status.id}`)).json<Status>();
      assert.deepEqual(shown.media_attachments, status.media_attachments);
    });

    test("media_ids[] in a form, in a multipart form, and a video alone without text", async () => {
      const owner = await user("forms");
      const [first, second, third] = [await ready(owner), await ready(owner), await ready(owner, "silentMp4")];
      const form = await request(server.app, "POST", "/api/v1/statuses", {
        token: owner.token,
        form: [
          ["status", "form post"],
          ["media_ids[]", first.id],
        ],
      });
      assert.equal(form.statusCode, 200, form.body);
      assert.deepEqual(
        form.json<Status>().media_attachments.map((m) => [m.id, m.type]),
        [[first.id, "video"]],
      );
      const multipart = await request(server.app, "POST", "/api/v1/statuses", {
        token: owner.token,
        parts: [
          { name: "status", value: "multipart post" },
          { name: "media_ids[]", value: second.id },
        ],
      });
      assert.equal(multipart.statusCode, 200, multipart.body);
      assert.deepEqual(
        multipart.json<Status>().media_attachments.map((m) => [m.id, m.type]),
        [[second.id, "video"]],
      );
      // A post may be only media (Tusky sends an empty status).
      const alone = await postOk(owner, { status: "", media_ids: [third.id] });
      assert.equal(alone.content, "");
      assert.deepEqual(
        alone.media_attachments.map((m) => [m.id, m.type]),
        [[third.id, "gifv"]],
      );
    });

    test("Idempotency-Key: a retried post with a video makes one status", async () => {
      const owner = await user("retry");
      const media = await ready(owner);
      const send = () =>
        request(server.app, "POST", "/api/v1/statuses", {
          token: owner.token,
          json: { status: "sent twice", media_ids: [media.id] },
          headers: { "idempotency-key": "retry-video-1" },
        });
      const [one, two] = [await send(), await send()];
      assert.equal(one.statusCode, 200, one.body);
      assert.equal(two.statusCode, 200, two.body);
      assert.equal(one.json<Status>().id, two.json<Status>().id);
      assert.deepEqual(two.json<Status>().media_attachments, one.json<Status>().media_attachments);
    });
  });

  test("a posted video shows with the same attachment in the media tab, the public timelines and a follower's home", async () => {
    const author = await user("author");
    const follower = await user("fan");
    await follow(server, follower, author);
    const media = await ready(author);
    const status = await postOk(author, { status: "watch this", media_ids: [media.id] });
    const text = await postOk(author, { status: "just words" });
    await drain();
    const expected = status.media_attachments;
    assert.equal(expected[0]?.type, "video");

    const mediaTab = `/api/v1/accounts/${author.account.id}/statuses?only_media=true`;
    for (const [path, token] of [
      [mediaTab, undefined],
      [mediaTab, follower.token],
      [`/api/v1/accounts/${author.account.id}/statuses`, undefined],
      ["/api/v1/timelines/public", undefined],
      ["/api/v1/timelines/public?only_media=true", undefined],
      ["/api/v1/timelines/public?local=true&only_media=true", follower.token],
      ["/api/v1/timelines/home", follower.token],
      ["/api/v1/timelines/home", author.token],
      [`/api/v1/statuses?id[]=${status.id}`, undefined],
    ] as const) {
      const found = find(await list(path, token), status.id);
      assert.ok(found, `${path} shows the status`);
      assert.deepEqual(found.media_attachments, expected, path);
    }
    // The text-only post is not in the media tab nor in the media-only public timeline.
    assert.equal(find(await list(mediaTab), text.id), undefined);
    assert.equal(find(await list("/api/v1/timelines/public?only_media=true"), text.id), undefined);
    assert.ok(find(await list("/api/v1/timelines/public"), text.id));
    // A boost carries the attachment in its `reblog`.
    const boost = await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, {
      token: follower.token,
    });
    assert.equal(boost.statusCode, 200, boost.body);
    assert.deepEqual(boost.json<Status>().reblog?.media_attachments, expected);
  });

  test("an edit replaces an image by a video; media_attributes set the video's description and focus; the history shows it", async () => {
    const owner = await user("editor");
    const image = await uploadImage(server, owner, { description: "A still" });
    const status = await postOk(owner, { status: "a picture", media_ids: [image.id] });
    const video = await ready(owner);

    const replaced = await edit(owner, status.id, { json: { status: "now moving", media_ids: [video.id] } });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.deepEqual(
      replaced.json<Status>().media_attachments.map((m) => [m.id, m.type]),
      [[video.id, "video"]],
    );
    assert.ok(replaced.json<Status>().edited_at);
    // The image is a draft again.
    assert.equal((await mediaStatus(owner, image.id)).statusCode, 200);

    // Ivory and Elk send media_ids with media_attributes; a form, as Rails reads it.
    const described = await edit(owner, status.id, {
      form: [
        ["status", "now moving"],
        ["media_ids[]", video.id],
        ["media_attributes[][id]", video.id],
        ["media_attributes[][description]", "A test pattern with a tone"],
        ["media_attributes[][focus]", "0.25,-0.5"],
      ],
    });
    assert.equal(described.statusCode, 200, described.body);
    const attachment = described.json<Status>().media_attachments[0]!;
    assert.equal(attachment.description, "A test pattern with a tone");
    assert.deepEqual(attachment.meta.focus, { x: 0.25, y: -0.5 });
    assert.equal(attachment.url, video.url);
    assert.equal(attachment.type, "video");
    assert.deepEqual(attachment.meta.original, video.meta.original, "the focus keeps the video's meta");

    const shown = (await get(server.app, `/api/v1/statuses/${status.id}`)).json<Status>();
    assert.deepEqual(shown.media_attachments, described.json<Status>().media_attachments);

    const history = await get(server.app, `/api/v1/statuses/${status.id}/history`);
    assert.equal(history.statusCode, 200, history.body);
    const versions = history.json<StatusEdit[]>();
    assert.deepEqual(
      versions.map((v) => v.media_attachments.map((m) => [m.id, m.type, m.description])),
      [
        [[image.id, "image", "A still"]],
        [[video.id, "video", null]],
        [[video.id, "video", "A test pattern with a tone"]],
      ],
    );
    assert.equal(versions[2]!.media_attachments[0]!.url, video.url);

    // A second video still converting cannot be edited in, and the post is unchanged.
    const converting = await upload(owner);
    const early = await edit(owner, status.id, { json: { media_ids: [converting.id] } });
    assert.deepEqual(errorOf(early), [422, NOT_READY]);
    assert.deepEqual(
      (await get(server.app, `/api/v1/statuses/${status.id}`)).json<Status>().media_attachments.map((m) => m.id),
      [video.id],
    );
    await drain();
  });

  test("a scheduled post with a converted video: listed with it, the video reserved, published with it", async () => {
    const owner = await user("planner");
    const media = await ready(owner);
    const at = inMinutes(10);
    const res = await post(owner, { status: "later, a clip", media_ids: [media.id], scheduled_at: at });
    assert.equal(res.statusCode, 200, res.body);
    const scheduled = res.json<ScheduledStatus>();
    assert.deepEqual(scheduled.params.media_ids, [media.id]);
    assert.deepEqual(scheduled.media_attachments, [media]);

    const listed = await get(server.app, "/api/v1/scheduled_statuses", owner.token);
    assert.equal(listed.statusCode, 200, listed.body);
    const entry = listed.json<ScheduledStatus[]>().find((s) => s.id === scheduled.id);
    assert.ok(entry);
    assert.deepEqual(entry.media_attachments, [media]);
    const one = await get(server.app, `/api/v1/scheduled_statuses/${scheduled.id}`, owner.token);
    assert.deepEqual(one.json<ScheduledStatus>().media_attachments, [media]);

    // Reserved for the scheduled post: not a draft, cannot be deleted or used elsewhere.
    assert.equal((await mediaStatus(owner, media.id)).statusCode, 404);
    assert.deepEqual(
      errorOf(await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: owner.token })),
      [422, IN_USE],
    );
    assert.equal((await post(owner, { status: "steal", media_ids: [media.id] })).statusCode, 422);

    // Published by its job at its time.
    await later(11 * MINUTE, drain);
    const published = await list(`/api/v1/accounts/${owner.account.id}/statuses?only_media=true`, owner.token);
    assert.equal(published.length, 1);
    assert.equal(published[0]!.content, "<p>later, a clip</p>");
    assert.deepEqual(published[0]!.media_attachments, [media]);
    assert.equal((await list("/api/v1/scheduled_statuses", owner.token)).length, 0);

    // A video still converting cannot be scheduled.
    const converting = await upload(owner);
    assert.deepEqual(
      errorOf(await post(owner, { status: "too early", media_ids: [converting.id], scheduled_at: inMinutes(30) })),
      [422, NOT_READY],
    );
    assert.equal((await list("/api/v1/scheduled_statuses", owner.token)).length, 0);
    await drain();
  });

  describe("mixing media in one post", () => {
    test("a video with an image, or an audio file with a video, is 422 and leaves both free; four images are fine", async () => {
      const owner = await user("mixer");
      const video = await ready(owner);
      const secondVideo = await ready(owner);
      const audio = await ready(owner, "mp3", "tone.mp3", "audio/mpeg");
      assert.equal(audio.type, "audio");
      const images = [];
      for (let i = 0; i < 4; i++) images.push((await uploadImage(server, owner)).id);

      for (const ids of [
        [video.id, images[0]!],
        [images[0]!, video.id],
        [audio.id, video.id],
        [images[0]!, audio.id],
        [video.id, secondVideo.id],
      ]) {
        assert.deepEqual(errorOf(await post(owner, { status: "mixed", media_ids: ids })), [422, MIXED], ids.join());
      }
      for (const id of [video.id, audio.id, images[0]!])
        assert.equal((await mediaStatus(owner, id)).statusCode, 200, "still a draft");

      const four = await postOk(owner, { status: "four pictures", media_ids: images });
      assert.deepEqual(
        four.media_attachments.map((m) => m.id),
        images,
      );
      // An edit that adds an image to a video post is refused as well.
      const clip = await postOk(owner, { status: "a clip", media_ids: [video.id] });
      const other = await uploadImage(server, owner);
      assert.deepEqual(errorOf(await edit(owner, clip.id, { json: { media_ids: [video.id, other.id] } })), [
        422,
        MIXED,
      ]);
      // The audio file alone is fine.
      const song = await postOk(owner, { status: "a tone", media_ids: [audio.id] });
      assert.equal(song.media_attachments[0]?.type, "audio");
    });

    test("an animated GIF (gifv) may join images, as in Mastodon (only audio and video must be alone)", async () => {
      const owner = await user("gifs");
      const gifv = await ready(owner, "gif", "loop.gif", "image/gif");
      assert.equal(gifv.type, "gifv");
      const image = await uploadImage(server, owner);
      const res = await post(owner, { status: "a GIF and a picture", media_ids: [image.id, gifv.id] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json<Status>().media_attachments.map((m) => m.type),
        ["image", "gifv"],
      );
    });
  });

  test("deleting a post with a video answers it for redraft; the video is a draft again and goes on the new post", async () => {
    const owner = await user("redraft");
    const media = await ready(owner);
    const status = await postOk(owner, {
      status: "first take",
      media_ids: [media.id],
      sensitive: true,
      spoiler_text: "loud",
    });
    const res = await request(server.app, "DELETE", `/api/v1/statuses/${status.id}`, { token: owner.token });
    assert.equal(res.statusCode, 200, res.body);
    const deleted = res.json<Status>();
    assert.equal(deleted.text, "first take");
    assert.equal(deleted.spoiler_text, "loud");
    assert.equal(deleted.sensitive, true);
    assert.deepEqual(deleted.media_attachments, status.media_attachments);
    assert.equal((await get(server.app, `/api/v1/statuses/${status.id}`)).statusCode, 404);

    // The client puts the answer back in the composer and posts again.
    const draft = await mediaStatus(owner, media.id);
    assert.equal(draft.statusCode, 200, draft.body);
    assert.equal(draft.json<MediaAttachment>().url, media.url);
    const again = await postOk(owner, {
      status: deleted.text,
      spoiler_text: deleted.spoiler_text,
      sensitive: deleted.sensitive,
      media_ids: deleted.media_attachments.map((m) => m.id),
    });
    assert.deepEqual(again.media_attachments, status.media_attachments);
    assert.equal((await fetchFile(again.media_attachments[0]!.url)).statusCode, 200, "the file is still served");
  });

  test("private and direct posts with video: the attachment never reaches those who may not see the post", async () => {
    const author = await user("secret");
    const follower = await user("insider");
    const friend = await user("friend");
    const stranger = await user("outsider");
    await follow(server, follower, author);
    const privateVideo = await ready(author);
    const directVideo = await ready(author, "silentMp4");
    const privatePost = await postOk(author, {
      status: "followers only #clips",
      visibility: "private",
      media_ids: [privateVideo.id],
    });
    const directPost = await postOk(author, {
      status: `@${friend.username} just for you #clips`,
      visibility: "direct",
      media_ids: [directVideo.id],
    });
    await drain();

    const places = (id: string) => [
      `/api/v1/timelines/public`,
      `/api/v1/timelines/public?only_media=true`,
      `/api/v1/timelines/public?local=true`,
      `/api/v1/timelines/tag/clips?only_media=true`,
      `/api/v1/accounts/${id}/statuses`,
      `/api/v1/accounts/${id}/statuses?only_media=true`,
      `/api/v1/statuses?id[]=${privatePost.id}&id[]=${directPost.id}`,
    ];
    const leaks = async (token: string | undefined, mediaIds: string[], paths: string[]) => {
      for (const path of paths) {
        const body = (await get(server.app, path, token)).body;
        for (const id of mediaIds) assert.equal(body.includes(id), false, `${path} shows media ${id}`);
      }
    };
    // Strangers and anonymous readers see neither, anywhere.
    await leaks(
      stranger.token,
      [privateVideo.id, directVideo.id],
      [...places(author.account.id), "/api/v1/timelines/home"],
    );
    await leaks(undefined, [privateVideo.id, directVideo.id], places(author.account.id));
    for (const token of [stranger.token, undefined]) {
      for (const id of [privatePost.id, directPost.id]) {
        assert.equal((await get(server.app, `/api/v1/statuses/${id}`, token)).statusCode, 404);
        assert.equal((await get(server.app, `/api/v1/statuses/${id}/history`, token)).statusCode, 404);
      }
    }
    // Nor can anyone but the author read the media as a draft.
    for (const reader of [follower, friend, stranger])
      assert.equal((await mediaStatus(reader, privateVideo.id)).statusCode, 404);

    // The follower sees the private post with its video (status, home), not the direct one.
    const seen = await get(server.app, `/api/v1/statuses/${privatePost.id}`, follower.token);
    assert.equal(seen.statusCode, 200);
    assert.deepEqual(seen.json<Status>().media_attachments, privatePost.media_attachments);
    const home = find(await list("/api/v1/timelines/home", follower.token), privatePost.id);
    assert.deepEqual(home?.media_attachments, privatePost.media_attachments);
    const ownTab = find(
      await list(`/api/v1/accounts/${author.account.id}/statuses?only_media=true`, follower.token),
      privatePost.id,
    );
    assert.deepEqual(ownTab?.media_attachments, privatePost.media_attachments);
    assert.equal((await get(server.app, `/api/v1/statuses/${directPost.id}`, follower.token)).statusCode, 404);
    await leaks(follower.token, [directVideo.id], [...places(author.account.id), "/api/v1/timelines/home"]);

    // The mentioned friend sees the direct post with its video, not the private one.
    const direct = await get(server.app, `/api/v1/statuses/${directPost.id}`, friend.token);
    assert.equal(direct.statusCode, 200);
    assert.deepEqual(direct.json<Status>().media_attachments, directPost.media_attachments);
    assert.equal(directPost.media_attachments[0]?.type, "gifv");
    const conversations = await get(server.app, "/api/v1/conversations", friend.token);
    assert.equal(conversations.statusCode, 200, conversations.body);
    const conversation = conversations
      .json<Array<{ last_status: Status | null }>>()
      .find((c) => c.last_status?.id === directPost.id);
    assert.deepEqual(conversation?.last_status?.media_attachments, directPost.media_attachments);
    assert.equal((await get(server.app, `/api/v1/statuses/${privatePost.id}`, friend.token)).statusCode, 404);
    await leaks(friend.token, [privateVideo.id], places(author.account.id));
  });

  describe("what real clients send", () => {
    test("description and focus in the upload form, before or after the file, are kept through the conversion", async () => {
      const owner = await user("ivory");
      const file = { name: "file", value: await sample("mp4"), filename: "clip.mp4", type: "video/mp4" };
      const fields: MultipartPart[] = [
        { name: "description", value: "A colour test pattern, with a beep" },
        { name: "focus", value: "-0.5,0.75" },
      ];
      for (const parts of [
        [file, ...fields],
        [...fields, file],
      ]) {
        const res = await uploadParts(owner, parts);
        assert.equal(res.statusCode, 202, res.body);
        const queued = res.json<MediaAttachment>();
        assert.equal(queued.description, "A colour test pattern, with a beep");
        assert.deepEqual(queued.meta.focus, { x: -0.5, y: 0.75 });
        const done = await pollUntilProcessed(owner, queued.id);
        assert.equal(done.description, "A colour test pattern, with a beep");
        assert.deepEqual(done.meta.focus, { x: -0.5, y: 0.75 });
        assert.equal(done.meta.original?.width, 320, "the conversion's meta joins the focus");
        const status = await postOk(owner, { status: "described", media_ids: [done.id] });
        assert.deepEqual(status.media_attachments[0], done);
      }
    });

    test("a thumbnail part for an audio upload is its preview, while converted and after, and on the post", async () => {
      const owner = await user("tusky");
      const thumbnail = await sharp({ create: { width: 64, height: 48, channels: 3, background: "purple" } })
        .jpeg()
        .toBuffer();
      const queued = await upload(owner, "mp3", "voice.mp3", "audio/mpeg", [
        { name: "thumbnail", value: thumbnail, filename: "cover.jpg", type: "image/jpeg" },
        { name: "description", value: "A tone" },
      ]);
      assert.equal(queued.type, "audio");
      assert.match(String(queued.preview_url), /\/thumbnail\//);
      assert.ok(queued.blurhash);
      const done = await pollUntilProcessed(owner, queued.id);
      assert.equal(done.type, "audio");
      assert.match(String(done.url), /\.mp3$/);
      assert.equal(done.preview_url, queued.preview_url);
      assert.equal(done.blurhash, queued.blurhash);
      const picture = await sharp((await fetchFile(done.preview_url)).rawPayload).metadata();
      assert.deepEqual([picture.width, picture.height], [64, 48]);
      const status = await postOk(owner, { status: "listen", media_ids: [done.id] });
      assert.equal(status.media_attachments[0]?.preview_url, done.preview_url);
      assert.equal(status.media_attachments[0]?.description, "A tone");
    });

    test("files are identified by their content, whatever type and name the part claims", async () => {
      const owner = await user("browser");
      for (const [name, filename, type, expected] of [
        // Elk and Phanpy upload a Blob: the browser names it "blob", sometimes with no type.
        ["mp4", "blob", "application/octet-stream", "video"],
        ["mp4", "video", "", "video"],
        // A mislabelled file from a share sheet.
        ["mp3", "photo.jpg", "image/jpeg", "audio"],
        ["gif", "loop.mp4", "video/mp4", "gifv"],
        // An iPhone video through Ivory: QuickTime, upper-case extension.
        ["mov", "IMG_0042.MOV", "video/quicktime", "video"],
      ] as const) {
        const parts: MultipartPart[] = [
          { name: "file", value: await sample(name), filename, ...(type ? { type } : {}) },
        ];
        const res = await uploadParts(owner, parts);
        assert.equal(res.statusCode, 202, `${filename}: ${res.body}`);
        const done = await pollUntilProcessed(owner, res.json<MediaAttachment>().id);
        assert.equal(done.type, expected, filename);
        assert.match(String(done.url), expected === "audio" ? /\.mp3$/ : /\.mp4$/, filename);
        const served = await fetchFile(done.url);
        assert.equal(served.statusCode, 200);
        assert.equal(served.headers["content-type"], expected === "audio" ? "audio/mpeg" : "video/mp4", filename);
      }
    });
  });
});
