/**
 * Video, audio and animated GIFs: real files made by ffmpeg in the test, uploaded as clients do,
 * converted by the `media.process` job, and checked with ffprobe (codec, duration, dimensions,
 * streaming layout) together with the `meta` the API describes them with. Also the asynchronous
 * protocol (202, 206, 422 when posting too early), thumbnails, refusals and clean-up.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import type { LightMyRequestResponse } from "fastify";
import {
  createTestServer,
  errorOf,
  get,
  multipartBody,
  type MultipartPart,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import type { MediaAttachment } from "../types.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";
import { recoverOverdueWork } from "../../src/services/housekeeping.ts";
import { ffprobe, isFastStart, noTranscoder, samples, type Probed } from "../media_samples.ts";

const NOT_VERIFIED = "File type of uploaded media could not be verified";
const NOT_READY = "Cannot attach files that have not finished processing. Try again in a moment!";

function pathOf(url: string | null): string {
  assert.ok(url !== null && url.startsWith("https://rookery.test/system/"), String(url));
  return url.slice("https://rookery.test".length);
}

// This test process's own temporary folder (os.tmpdir() reads TMPDIR), to see that conversions leave nothing there.
const scratch = mkdtempSync(join(tmpdir(), "rookery-media-video-test-"));
process.env.TMPDIR = scratch;
/** Temporary folders of uploads (spooled parts) and conversions still there, once the last request's have gone. */
async function scratchLeft(): Promise<string[]> {
  const left = () => readdirSync(scratch).filter((name) => /^rookery-(media|upload)-/.test(name));
  // A request's spooled upload is removed as its response ends, a moment after the client has it.
  for (let i = 0; i < 50 && left().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return left();
}

const streamOf = (probed: Probed, type: string) => probed.streams.find((s) => s.codec_type === type);

describe("video, audio and animated GIFs", { skip: noTranscoder }, () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const send = (parts: MultipartPart[], version = "v2", token = a.alice.token) =>
    request(server.app, "POST", `/api/${version}/media`, { token, parts });
  const fileParts = (data: Buffer, filename: string, type: string, extra: Record<string, string | Buffer> = {}) => [
    { name: "file", value: data, filename, type },
    ...Object.entries(extra).map(([name, value]) =>
      Buffer.isBuffer(value) ? { name, value, filename: `${name}.png`, type: "image/png" } : { name, value },
    ),
  ];
  /** Uploads through v2, checks the 202 of media still being converted, runs the job and answers the result. */
  const uploadAndProcess = async (
    data: Buffer,
    filename: string,
    type: string,
    extra: Record<string, string | Buffer> = {},
  ): Promise<MediaAttachment> => {
    const res = await send(fileParts(data, filename, type, extra));
    assert.equal(res.statusCode, 202, res.body);
    const queued = res.json<MediaAttachment>();
    assert.equal(queued.url, null);
    const pending = await get(server.app, `/api/v1/media/${queued.id}`, a.alice.token);
    assert.equal(pending.statusCode, 206, "GET answers 206 while the media is processed");
    assert.equal(pending.json<MediaAttachment>().url, null);
    await server.ctx.jobs.drain();
    const done = await get(server.app, `/api/v1/media/${queued.id}`, a.alice.token);
    assert.equal(done.statusCode, 200, done.body);
    return done.json<MediaAttachment>();
  };
  const fetchFile = (url: string | null): Promise<LightMyRequestResponse> => get(server.app, pathOf(url));
  const mediaFolder = (id: string) => join(server.ctx.config.mediaDir, "media_attachments", "files", id);
  const filesLeft = (id: string): string[] =>
    existsSync(mediaFolder(id))
      ? readdirSync(mediaFolder(id), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name)
      : [];
  const storedFiles = (): number =>
    existsSync(join(server.ctx.config.mediaDir, "media_attachments"))
      ? readdirSync(join(server.ctx.config.mediaDir, "media_attachments"), {
          recursive: true,
          withFileTypes: true,
        }).filter((e) => e.isFile()).length
      : 0;
  /** The newest attachment's ID, "0" when there is none. */
  const newestMediaId = async () =>
    (await server.ctx.db.kysely.selectFrom("media_attachments").select("id").orderBy("id", "desc").executeTakeFirst())
      ?.id ?? "0";

  test("an MP4 becomes a streamable H.264/AAC video with a preview, meta and blurhash", async () => {
    const media = await uploadAndProcess(await samples.mp4(), "clip.mp4", "video/mp4");
    assert.equal(media.type, "video");
    assert.match(String(media.url), /\/media_attachments\/files\/\d+\/original\/[0-9a-f]+\.mp4$/);
    const served = await fetchFile(media.url);
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers["content-type"], "video/mp4");
    const probed = await ffprobe(served.rawPayload);
    assert.equal(streamOf(probed, "video")?.codec_name, "h264");
    assert.equal(streamOf(probed, "video")?.pix_fmt, "yuv420p");
    assert.equal(streamOf(probed, "audio")?.codec_name, "aac");
    assert.deepEqual([streamOf(probed, "video")?.width, streamOf(probed, "video")?.height], [320, 240]);
    assert.ok(Math.abs(Number(probed.format.duration) - 2) < 0.2, probed.format.duration);
    assert.ok(isFastStart(served.rawPayload), "moov comes before mdat (+faststart)");

    const original = media.meta.original!;
    assert.deepEqual([original.width, original.height, original.frame_rate], [320, 240, "25/1"]);
    assert.ok(Math.abs(original.duration! - 2) < 0.2);
    assert.ok(original.bitrate! > 0);
    assert.equal(media.meta.length?.startsWith("0:00:0"), true);
    assert.equal(media.meta.fps, 25);
    assert.equal(media.meta.audio_encode, "aac");
    assert.deepEqual(media.meta.small, { width: 320, height: 240, size: "320x240", aspect: 320 / 240 });
    assert.match(String(media.blurhash), /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/);
    const preview = await fetchFile(media.preview_url);
    assert.equal(preview.headers["content-type"], "image/jpeg");
    const picture = await sharp(preview.rawPayload).metadata();
    assert.deepEqual([picture.width, picture.height], [320, 240]);
    // The upload as sent is gone: only the converted file and the preview are kept.
    assert.equal(filesLeft(media.id).length, 2, filesLeft(media.id).join(", "));
    assert.deepEqual(await scratchLeft(), [], "the request's spooled upload and the job's folder are removed");
  });

  test("a phone video's rotation is applied: stored upright, described with its shown size", async () => {
    const media = await uploadAndProcess(await samples.rotatedMp4(), "phone.mp4", "video/mp4");
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.deepEqual([streamOf(probed, "video")?.width, streamOf(probed, "video")?.height], [240, 320]);
    assert.deepEqual([media.meta.original?.width, media.meta.original?.height], [240, 320]);
    const preview = await sharp((await fetchFile(media.preview_url)).rawPayload).metadata();
    assert.deepEqual([preview.width, preview.height], [240, 320]);
  });

  test("served videos answer byte ranges, so players can seek", async () => {
    const media = await uploadAndProcess(await samples.silentMp4(), "seek.mp4", "video/mp4");
    const whole = await fetchFile(media.url);
    const part = await request(server.app, "GET", pathOf(media.url), { headers: { range: "bytes=100-199" } });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers["content-range"], `bytes 100-199/${whole.rawPayload.length}`);
    assert.equal(part.headers["content-type"], "video/mp4");
    assert.deepEqual(part.rawPayload, whole.rawPayload.subarray(100, 200));
    assert.equal(whole.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(whole.headers["accept-ranges"], "bytes");
  });

  test("a WebM (VP8/Vorbis) is converted to H.264/AAC MP4", async () => {
    const media = await uploadAndProcess(await samples.webm(), "clip.webm", "video/webm");
    assert.equal(media.type, "video");
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.match(probed.format.format_name, /mp4/);
    assert.equal(streamOf(probed, "video")?.codec_name, "h264");
    assert.equal(streamOf(probed, "audio")?.codec_name, "aac");
    assert.deepEqual([streamOf(probed, "video")?.width, streamOf(probed, "video")?.height], [240, 180]);
    assert.ok(Math.abs(Number(probed.format.duration) - 1.5) < 0.2, probed.format.duration);
    assert.deepEqual([media.meta.original?.width, media.meta.original?.height], [240, 180]);
    assert.equal(media.meta.original?.frame_rate, "30/1");
  });

  test("an animated GIF becomes a gifv: a silent H.264 MP4 with even dimensions", async () => {
    const media = await uploadAndProcess(await samples.gif(), "loop.gif", "image/gif");
    assert.equal(media.type, "gifv");
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.equal(streamOf(probed, "video")?.codec_name, "h264");
    assert.equal(streamOf(probed, "audio"), undefined);
    assert.deepEqual([streamOf(probed, "video")?.width, streamOf(probed, "video")?.height], [64, 48]);
    assert.ok(Math.abs(Number(probed.format.duration) - 1) < 0.25, probed.format.duration);
    assert.deepEqual([media.meta.original?.width, media.meta.original?.height], [64, 48]);
    assert.equal(media.meta.audio_encode, undefined);
    assert.ok(media.preview_url);
  });

  test("a still GIF stays an image, processed at once", async () => {
    const still = await sharp({ create: { width: 20, height: 10, channels: 3, background: "red" } })
      .gif()
      .toBuffer();
    const res = await send(fileParts(still, "still.gif", "image/gif"));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<MediaAttachment>().type, "image");
  });

  test("a video without sound is a gifv (Mastodon's rule)", async () => {
    const media = await uploadAndProcess(await samples.silentMp4(), "silent.mp4", "video/mp4");
    assert.equal(media.type, "gifv");
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.equal(streamOf(probed, "audio"), undefined);
    assert.equal(streamOf(probed, "video")?.codec_name, "h264");
  });

  test("an MP3 is kept as MP3 audio with duration and bitrate; audio has no preview", async () => {
    const media = await uploadAndProcess(await samples.mp3(), "tone.mp3", "audio/mpeg");
    assert.equal(media.type, "audio");
    assert.match(String(media.url), /\.mp3$/);
    const served = await fetchFile(media.url);
    assert.equal(served.headers["content-type"], "audio/mpeg");
    const probed = await ffprobe(served.rawPayload);
    assert.equal(probed.format.format_name, "mp3");
    assert.equal(streamOf(probed, "audio")?.codec_name, "mp3");
    assert.equal(streamOf(probed, "video"), undefined);
    assert.ok(Math.abs(Number(probed.format.duration) - 2) < 0.2, probed.format.duration);
    assert.ok(Math.abs(media.meta.original!.duration! - 2) < 0.2);
    assert.ok(media.meta.original!.bitrate! > 0);
    assert.equal(media.meta.audio_encode, "mp3");
    assert.equal(media.meta.audio_bitrate, "44100 Hz");
    assert.equal(media.preview_url, null);
    assert.equal(media.blurhash, null);
  });

  test("an Ogg Vorbis file becomes MP3 audio", async () => {
    const media = await uploadAndProcess(await samples.ogg(), "voice.ogg", "audio/ogg");
    assert.equal(media.type, "audio");
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.equal(streamOf(probed, "audio")?.codec_name, "mp3");
    assert.ok(Math.abs(Number(probed.format.duration) - 1.5) < 0.2, probed.format.duration);
  });

  test("WAVE, FLAC and M4A voice memos become MP3 audio too", async () => {
    for (const [name, type] of [
      ["wav", "audio/wav"],
      ["flac", "audio/flac"],
      ["m4a", "audio/mp4"],
    ]) {
      const media = await uploadAndProcess(await samples[name](), `memo.${name}`, type);
      assert.equal(media.type, "audio", name);
      const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
      assert.equal(streamOf(probed, "audio")?.codec_name, "mp3", name);
      assert.ok(Math.abs(Number(probed.format.duration) - 1) < 0.2, `${name}: ${probed.format.duration}`);
      assert.ok(Math.abs(media.meta.original!.duration! - 1) < 0.2, name);
    }
  });

  test("an MP3's cover art becomes its thumbnail; the stored MP3 carries no picture", async () => {
    const media = await uploadAndProcess(await samples.mp3WithCover(), "song.mp3", "audio/mpeg");
    assert.equal(media.type, "audio");
    assert.ok(media.preview_url, "the cover is the preview");
    const cover = await sharp((await fetchFile(media.preview_url)).rawPayload).metadata();
    assert.deepEqual([cover.width, cover.height], [200, 200]);
    assert.ok(media.blurhash);
    const probed = await ffprobe((await fetchFile(media.url)).rawPayload);
    assert.equal(streamOf(probed, "video"), undefined);
  });

  test("video, gifv and audio attachments match the OpenAPI schema", { skip: openApiSkip }, async () => {
    const video = await uploadAndProcess(await samples.mp4(), "s.mp4", "video/mp4", { description: "x" });
    const gifv = await uploadAndProcess(await samples.gif(), "s.gif", "image/gif", { focus: "0.2,0.3" });
    const audio = await uploadAndProcess(await samples.mp3(), "s.mp3", "audio/mpeg");
    for (const media of [video, gifv, audio])
      assert.deepEqual(validateSchema("MediaAttachment", media), [], media.type);
    // While it is converted, too.
    const queued = (await send(fileParts(await samples.silentMp4(), "t.mp4", "video/mp4"))).json<MediaAttachment>();
    assert.deepEqual(validateSchema("MediaAttachment", queued), []);
    await server.ctx.jobs.drain();
  });

  describe("asynchronous processing", () => {
    test("posting with media still processing is 422; once processed the post carries it", async () => {
      const res = await send(fileParts(await samples.silentMp4(), "a.mp4", "video/mp4", { description: "a loop" }));
      assert.equal(res.statusCode, 202);
      const id = res.json<MediaAttachment>().id;
      const early = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        json: { status: "look", media_ids: [id] },
      });
      assert.deepEqual(errorOf(early), [422, NOT_READY]);
      await server.ctx.jobs.drain();
      const posted = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        json: { status: "look", media_ids: [id] },
      });
      assert.equal(posted.statusCode, 200, posted.body);
      const attachment = posted.json<{ media_attachments: MediaAttachment[] }>().media_attachments[0];
      assert.equal(attachment.type, "gifv");
      assert.equal(attachment.description, "a loop");
      assert.ok(attachment.url);
    });

    test("v1 answers the finished video: it waits for the job workers", async () => {
      const pending = send(fileParts(await samples.silentMp4(), "b.mp4", "video/mp4"), "v1");
      let settled = false;
      void pending.finally(() => (settled = true));
      while (!settled) {
        await server.ctx.jobs.drain();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const res = await pending;
      assert.equal(res.statusCode, 200, res.body);
      const media = res.json<MediaAttachment>();
      assert.equal(media.type, "gifv");
      assert.ok(media.url);
    });

    test("a thumbnail chosen at upload is the preview; DELETE /thumbnail brings back the first frame", async () => {
      const thumb = await sharp({ create: { width: 300, height: 200, channels: 3, background: "green" } })
        .png()
        .toBuffer();
      const res = await send(fileParts(await samples.silentMp4(), "c.mp4", "video/mp4", { thumbnail: thumb }));
      assert.equal(res.statusCode, 202);
      const queued = res.json<MediaAttachment>();
      assert.ok(queued.preview_url, "the chosen thumbnail is shown while the video is converted");
      await server.ctx.jobs.drain();
      const done = (await get(server.app, `/api/v1/media/${queued.id}`, a.alice.token)).json<MediaAttachment>();
      assert.equal(done.preview_url, queued.preview_url);
      assert.equal(done.blurhash, queued.blurhash);
      const picture = await sharp((await fetchFile(done.preview_url)).rawPayload).metadata();
      assert.deepEqual([picture.width, picture.height], [300, 200]);

      const removed = await request(server.app, "DELETE", `/api/v1/media/${done.id}/thumbnail`, {
        token: a.alice.token,
      });
      assert.equal(removed.statusCode, 200, removed.body);
      const after = removed.json<MediaAttachment>();
      assert.notEqual(after.preview_url, done.preview_url);
      assert.match(String(after.preview_url), /\/small\//);
      assert.notEqual(after.blurhash, done.blurhash);
      assert.equal((await fetchFile(done.preview_url)).statusCode, 404, "the old thumbnail file is gone");

      // PUT sets a new one.
      const parts: MultipartPart[] = [
        { name: "thumbnail", value: thumb, filename: "t.png", type: "image/png" },
        { name: "focus", value: "0.5,-0.5" },
      ];
      const put = await request(server.app, "PUT", `/api/v1/media/${done.id}`, {
        token: a.alice.token,
        parts,
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.match(String(put.json<MediaAttachment>().preview_url), /\/thumbnail\//);
      assert.deepEqual(put.json<MediaAttachment>().meta.focus, { x: 0.5, y: -0.5 });
    });

    test("a whole form with an empty thumbnail part (no file chosen) is an upload without thumbnail", async () => {
      const res = await send([
        { name: "file", value: await samples.silentMp4(), filename: "f.mp4", type: "video/mp4" },
        { name: "thumbnail", value: Buffer.alloc(0), filename: "", type: "application/octet-stream" },
        { name: "description", value: "" },
        { name: "focus", value: "" },
      ]);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json<MediaAttachment>().preview_url, null);
      await server.ctx.jobs.drain();
    });

    test("thumbnails: a non-image is 422; another user's media or unknown IDs are 404", async () => {
      const res = await send(fileParts(await samples.silentMp4(), "d.mp4", "video/mp4"));
      const id = res.json<MediaAttachment>().id;
      const parts: MultipartPart[] = [
        { name: "thumbnail", value: Buffer.from("not a picture"), filename: "t.png", type: "image/png" },
      ];
      assert.deepEqual(
        errorOf(
          await request(server.app, "PUT", `/api/v1/media/${id}`, {
            token: a.alice.token,
            parts,
          }),
        ),
        [422, "Validation failed: Thumbnail content type is invalid"],
      );
      for (const [token, path] of [
        [a.bob.token, `/api/v1/media/${id}/thumbnail`],
        [a.alice.token, `/api/v1/media/123456/thumbnail`],
        [a.alice.token, `/api/v1/media/abc/thumbnail`],
      ]) {
        assert.equal((await request(server.app, "DELETE", path, { token })).statusCode, 404, path);
      }
      assert.equal((await request(server.app, "DELETE", `/api/v1/media/${id}/thumbnail`)).statusCode, 401);
      // Still processing: answers 206 with the media as it is.
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${id}/thumbnail`, { token: a.alice.token })).statusCode,
        206,
      );
      await server.ctx.jobs.drain();
    });

    test("a conversion whose job ran out of attempts unrecorded is failed by the recovery sweep; live ones are not", async () => {
      const lost = (await send(fileParts(await samples.silentMp4(), "l.mp4", "video/mp4"))).json<MediaAttachment>().id;
      // Its worker crashed on every attempt: the job is failed for good, the attachment still queued.
      await server.ctx.db.kysely
        .updateTable("jobs")
        .set({ failed_at: new Date().toISOString() })
        .where("unique_key", "=", `media.process:${lost}`)
        .execute();
      const live = (await send(fileParts(await samples.silentMp4(), "m.mp4", "video/mp4"))).json<MediaAttachment>().id;
      const recovered = await recoverOverdueWork(server.ctx);
      assert.equal(recovered.mediaFailed, 1);
      assert.deepEqual(errorOf(await get(server.app, `/api/v1/media/${lost}`, a.alice.token)), [
        422,
        "Error processing thumbnail for uploaded media: the conversion was interrupted; upload the file again",
      ]);
      assert.deepEqual(filesLeft(lost), []);
      assert.equal((await get(server.app, `/api/v1/media/${live}`, a.alice.token)).statusCode, 206);
      await server.ctx.jobs.drain();
      assert.equal((await get(server.app, `/api/v1/media/${live}`, a.alice.token)).statusCode, 200);
    });

    test("a thumbnail chosen or removed while the video converts is what the finished media shows", async () => {
      const green = await sharp({ create: { width: 90, height: 60, channels: 3, background: "green" } })
        .png()
        .toBuffer();
      const put = (id: string) => {
        const parts: MultipartPart[] = [{ name: "thumbnail", value: green, filename: "t.png", type: "image/png" }];
        return request(server.app, "PUT", `/api/v1/media/${id}`, {
          token: a.alice.token,
          parts,
        });
      };
      const chosen = (await send(fileParts(await samples.silentMp4(), "n.mp4", "video/mp4"))).json<MediaAttachment>();
      const during = await put(chosen.id);
      assert.equal(during.statusCode, 206, "PUT answers 206 while the media is converted");
      const thumbnailUrl = during.json<MediaAttachment>().preview_url;
      assert.match(String(thumbnailUrl), /\/thumbnail\//);
      await server.ctx.jobs.drain();
      const done = (await get(server.app, `/api/v1/media/${chosen.id}`, a.alice.token)).json<MediaAttachment>();
      assert.equal(done.preview_url, thumbnailUrl, "the job keeps the thumbnail chosen meanwhile");
      assert.equal(done.blurhash, during.json<MediaAttachment>().blurhash);
      assert.equal((await fetchFile(done.preview_url)).statusCode, 200);

      const thumbnail = await sharp({ create: { width: 50, height: 50, channels: 3, background: "blue" } })
        .png()
        .toBuffer();
      const removed = (
        await send(fileParts(await samples.silentMp4(), "o.mp4", "video/mp4", { thumbnail }))
      ).json<MediaAttachment>();
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${removed.id}/thumbnail`, { token: a.alice.token }))
          .statusCode,
        206,
      );
      await server.ctx.jobs.drain();
      const after = (await get(server.app, `/api/v1/media/${removed.id}`, a.alice.token)).json<MediaAttachment>();
      assert.match(String(after.preview_url), /\/small\//, "the first frame, not the removed thumbnail");
      assert.ok(after.blurhash);
      assert.equal(filesLeft(removed.id).length, 2, filesLeft(removed.id).join(", "));
    });

    test("a thumbnail chosen for an audio file wins over its cover art, which is not kept", async () => {
      const thumbnail = await sharp({ create: { width: 40, height: 40, channels: 3, background: "yellow" } })
        .png()
        .toBuffer();
      const media = await uploadAndProcess(await samples.mp3WithCover(), "c.mp3", "audio/mpeg", { thumbnail });
      const picture = await sharp((await fetchFile(media.preview_url)).rawPayload).metadata();
      assert.deepEqual([picture.width, picture.height], [40, 40]);
      assert.equal(filesLeft(media.id).length, 2, "the MP3 and the chosen thumbnail");
    });

    test("a retry after a crash first removes the files the cut-short attempt wrote", async () => {
      const id = (await send(fileParts(await samples.silentMp4(), "p.mp4", "video/mp4"))).json<MediaAttachment>().id;
      // The first attempt had started (in_progress) and written a file before its worker died.
      await server.ctx.db.kysely
        .updateTable("media_attachments")
        .set({ processing: "in_progress" })
        .where("id", "=", id)
        .execute();
      await server.ctx.media.put(`media_attachments/files/${id}/original/deadbeef.mp4`, Buffer.from("half"));
      await server.ctx.jobs.drain();
      const done = (await get(server.app, `/api/v1/media/${id}`, a.alice.token)).json<MediaAttachment>();
      assert.ok(done.url);
      assert.ok(!filesLeft(id).includes("deadbeef.mp4"));
      assert.equal(filesLeft(id).length, 2);
    });

    test("deleting media removes every file of its folder, recorded or not", async () => {
      const media = await uploadAndProcess(await samples.silentMp4(), "q.mp4", "video/mp4");
      await server.ctx.media.put(`media_attachments/files/${media.id}/original/orphan.mp4`, Buffer.from("x"));
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: a.alice.token })).statusCode,
        200,
      );
      assert.equal(existsSync(mediaFolder(media.id)), false);
    });

    test("media deleted while queued leaves no file behind once the job has run", async () => {
      const res = await send(fileParts(await samples.silentMp4(), "e.mp4", "video/mp4"));
      const id = res.json<MediaAttachment>().id;
      assert.equal(filesLeft(id).length, 1, "the upload waits in storage");
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${id}`, { token: a.alice.token })).statusCode,
        200,
      );
      await server.ctx.jobs.drain();
      assert.deepEqual(filesLeft(id), []);
    });
  });

  test("a v1 client that hangs up while its video is converted stops the wait; the media is still finished", async () => {
    await server.app.listen({ port: 0, host: "127.0.0.1" }).catch(() => {});
    const port = (server.app.server.address() as AddressInfo).port;
    const before = await newestMediaId();
    const { body, contentType } = multipartBody(fileParts(await samples.silentMp4(), "g.mp4", "video/mp4"));
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write(
      `POST /api/v1/media HTTP/1.1\r\nHost: rookery.test\r\nAuthorization: Bearer ${a.alice.token}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    let id = before;
    while (id === before) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      id = await newestMediaId();
    }
    socket.resetAndDestroy();
    // The server stops polling for it: its query count settles while the job has not run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const settled = server.ctx.db.queryCount;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(server.ctx.db.queryCount, settled, "no more queries after the hang-up");
    await server.ctx.jobs.drain();
    const done = await get(server.app, `/api/v1/media/${id}`, a.alice.token);
    assert.equal(done.statusCode, 200);
    assert.ok(done.json<MediaAttachment>().url);
  });

  test("a client that hangs up halfway through its upload leaves no spooled part behind, and the server answers on", async () => {
    await server.app.listen({ port: 0, host: "127.0.0.1" }).catch(() => {});
    const port = (server.app.server.address() as AddressInfo).port;
    const before = await newestMediaId();
    const { body, contentType } = multipartBody(fileParts(Buffer.alloc(4 * 1024 * 1024, 3), "big.mp4", "video/mp4"));
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write(
      `POST /api/v2/media HTTP/1.1\r\nHost: rookery.test\r\nAuthorization: Bearer ${a.alice.token}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.subarray(0, body.length / 2));
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.resetAndDestroy();
    assert.deepEqual(await scratchLeft(), []);
    assert.equal(await newestMediaId(), before);
    assert.equal((await get(server.app, "/api/v1/instance")).statusCode, 200);
  });

  describe("refusals", () => {
    test("a corrupt file or an MP4 cut before its index is refused at once, and nothing is stored", async () => {
      const before = await newestMediaId();
      const filesBefore = storedFiles();
      const whole = await samples.mp4();
      for (const [data, name] of [
        [Buffer.concat([Buffer.from("\x00\x00\x00\x18ftypmp42"), Buffer.alloc(2000, 7)]), "corrupt.mp4"],
        [whole.subarray(0, Math.floor(whole.length * 0.6)), "cut.mp4"],
        [Buffer.from("RIFF....WAVEfmt garbage"), "broken.wav"],
      ] as const) {
        assert.deepEqual(errorOf(await send(fileParts(data, name, "video/mp4"))), [422, NOT_VERIFIED], name);
      }
      // A good video with a thumbnail that is no picture: refused, and its stored upload removed.
      assert.deepEqual(
        errorOf(
          await send(fileParts(await samples.silentMp4(), "ok.mp4", "video/mp4", { thumbnail: Buffer.from("no") })),
        ),
        [422, "Validation failed: Thumbnail content type is invalid"],
      );
      assert.equal(await newestMediaId(), before, "no row was stored");
      assert.equal(storedFiles(), filesBefore, "no file was stored");
      assert.deepEqual(await scratchLeft(), [], "no temporary file is left");
    });

    test("a truncated streamable video fails in processing: GET is 422 with the reason, its files are gone", async () => {
      const whole = await samples.streamableMp4();
      const res = await send(fileParts(whole.subarray(0, Math.floor(whole.length * 0.5)), "half.mp4", "video/mp4"));
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json<MediaAttachment>().id;
      await server.ctx.jobs.drain();
      const [code, error] = errorOf(await get(server.app, `/api/v1/media/${id}`, a.alice.token));
      assert.equal(code, 422);
      assert.match(error, /^Error processing thumbnail for uploaded media: the file is truncated or corrupt/);
      assert.deepEqual(filesLeft(id), []);
      assert.deepEqual(await scratchLeft(), []);
      const post = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        json: { media_ids: [id] },
      });
      assert.equal(post.statusCode, 422);
      assert.match(errorOf(post)[1], /could not be processed/);
    });

    test("failed media: PUT and DELETE /thumbnail answer 422 and change nothing", async () => {
      const whole = await samples.streamableMp4();
      const id = (
        await send(fileParts(whole.subarray(0, Math.floor(whole.length * 0.5)), "r.mp4", "video/mp4"))
      ).json<MediaAttachment>().id;
      await server.ctx.jobs.drain();
      const put = await request(server.app, "PUT", `/api/v1/media/${id}`, {
        token: a.alice.token,
        json: { description: "too late" },
      });
      assert.equal(put.statusCode, 422);
      const row = await server.ctx.db.kysely
        .selectFrom("media_attachments")
        .select("description")
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      assert.equal(row.description, null);
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${id}/thumbnail`, { token: a.alice.token })).statusCode,
        422,
      );
    });

    test("v1 answers 422 for a video whose conversion fails", async () => {
      const whole = await samples.streamableMp4();
      const pending = send(fileParts(whole.subarray(0, Math.floor(whole.length * 0.5)), "h.mp4", "video/mp4"), "v1");
      let settled = false;
      void pending.finally(() => (settled = true));
      while (!settled) {
        await server.ctx.jobs.drain();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [code, error] = errorOf(await pending);
      assert.equal(code, 422);
      assert.match(error, /^Error processing thumbnail for uploaded media/);
    });

    test("a video over 20 minutes, over 120 fps or over 3840×2160 is refused at once with the limit", async () => {
      const before = await newestMediaId();
      const filesBefore = storedFiles();
      assert.deepEqual(errorOf(await send(fileParts(await samples.overLong(), "long.mp4", "video/mp4"))), [
        422,
        "Validation failed: File is too long (maximum is 20 minutes)",
      ]);
      const [code, error] = errorOf(await send(fileParts(await samples.tooFast(), "fast.mp4", "video/mp4")));
      assert.equal(code, 422);
      assert.match(error, /^Validation failed: File frame rate 150 is above 120 frames per second/);
      assert.deepEqual(errorOf(await send(fileParts(await samples.tooLarge(), "big.mp4", "video/mp4"))), [
        422,
        "Validation failed: File dimensions 4096x2176 are too large",
      ]);
      assert.equal(await newestMediaId(), before);
      assert.equal(storedFiles(), filesBefore);
      assert.deepEqual(await scratchLeft(), []);
    });

    test("a video larger than 99 MB is 413 before it is stored; its spooled part is removed", async () => {
      const huge = Buffer.alloc(99 * 1024 * 1024 + 10, 1);
      const res = await send(fileParts(huge, "huge.mp4", "video/mp4"));
      assert.equal(res.statusCode, 413);
      assert.deepEqual(await scratchLeft(), []);
    });
  });

  describe("without ffmpeg", () => {
    let plain: TestServer;
    before(async () => {
      plain = await createTestServer();
      plain.ctx.config.transcoder = undefined;
    });
    after(() => plain.close());

    test("only images are listed and accepted", async () => {
      const user = (await standardAccounts(plain.ctx)).alice;
      const types = (await get(plain.app, "/api/v2/instance")).json<{
        configuration: { media_attachments: { supported_mime_types: string[] } };
      }>().configuration.media_attachments.supported_mime_types;
      assert.ok(
        types.every((t) => t.startsWith("image/")),
        types.join(),
      );
      const parts: MultipartPart[] = [
        { name: "file", value: await samples.mp3(), filename: "a.mp3", type: "audio/mpeg" },
      ];
      const res = await request(plain.app, "POST", "/api/v2/media", {
        token: user.token,
        parts,
      });
      assert.deepEqual(errorOf(res), [422, NOT_VERIFIED]);
    });
  });

  test("the instance lists the video and audio types it converts", async () => {
    const media = (await get(server.app, "/api/v2/instance")).json<{
      configuration: { media_attachments: Record<string, unknown> };
    }>().configuration.media_attachments;
    const types = media.supported_mime_types as string[];
    for (const type of [
      "video/mp4",
      "video/webm",
      "video/quicktime",
      "audio/mpeg",
      "audio/ogg",
      "audio/wav",
      "audio/flac",
      "audio/mp4",
    ])
      assert.ok(types.includes(type), type);
    assert.equal(media.video_size_limit, 99 * 1024 * 1024);
    assert.equal(media.video_matrix_limit, 3840 * 2160);
    assert.equal(media.video_frame_rate_limit, 120);
    const v1 = (await get(server.app, "/api/v1/instance")).json<{
      configuration: { media_attachments: { supported_mime_types: string[] } };
    }>().configuration.media_attachments.supported_mime_types;
    assert.deepEqual(v1, types);
  });
});
