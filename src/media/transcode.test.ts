import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Probe } from "./ffmpeg.ts";
import { ProgramSlots } from "./program_slots.ts";
import { classify, MediaRejected, supportedMimeTypes, timedMeta, transcodeArguments } from "./transcode.ts";

const CAPS = { seconds: 1201, bytes: 1 << 29 };
const limits = {
  videoMatrixLimit: 3840 * 2160,
  videoFrameRateLimit: 120,
  videoDurationLimit: 1200,
  audioDurationLimit: 10800,
};

function info(overrides: Partial<Probe> = {}, video: Partial<NonNullable<Probe["video"]>> | null = {}): Probe {
  return {
    formatName: "mov,mp4,m4a,3gp,3g2,mj2",
    duration: 10,
    bitrate: 800_000,
    video:
      video === null
        ? undefined
        : {
            codec: "h264",
            width: 1280,
            height: 720,
            frameRate: "30/1",
            fps: 30,
            pixelFormat: "yuv420p",
            rotation: 0,
            ...video,
          },
    coverArt: false,
    audio: { codec: "aac", sampleRate: 44100, channels: 2, channelLayout: "stereo" },
    ...overrides,
  };
}

describe("classify", () => {
  test("moving pictures with sound are video, without sound gifv, sound alone audio", () => {
    assert.equal(classify(info(), limits), "video");
    assert.equal(classify(info({ audio: undefined }), limits), "gifv");
    assert.equal(classify(info({ formatName: "mp3" }, null), limits), "audio");
  });

  test("limits: dimensions, frame rate, duration; unknown containers", () => {
    const refused = (probe: Probe) => {
      try {
        classify(probe, limits);
      } catch (error) {
        assert.ok(error instanceof MediaRejected);
        return error.message;
      }
      assert.fail("accepted");
    };
    assert.match(refused(info({}, { width: 4096, height: 2160 })), /dimensions 4096x2160 are too large/);
    assert.match(refused(info({}, { fps: 240 })), /frame rate 240 is above 120/);
    assert.equal(refused(info({ duration: 1201 })), "Validation failed: File is too long (maximum is 20 minutes)");
    assert.equal(
      refused(info({ formatName: "mp3", duration: 10801 }, null)),
      "Validation failed: File is too long (maximum is 3 hours)",
    );
    assert.equal(refused(info({ formatName: "tty" })), "File type of uploaded media could not be verified");
    assert.equal(refused(info({ audio: undefined }, null)), "File type of uploaded media could not be verified");
  });
});

describe("transcodeArguments", () => {
  test("an H.264/AAC MP4 is only re-wrapped (Mastodon's passthrough), with faststart and no metadata", () => {
    const args = transcodeArguments(info(), "video", "in", "out.mp4", CAPS);
    assert.ok(args.join(" ").includes("-c copy"));
    assert.ok(args.join(" ").includes("-movflags +faststart"));
    assert.ok(args.join(" ").includes("-map_metadata -1"));
    assert.ok(args.join(" ").includes("-t 1201 -fs 536870912"), "output bounded in time and size");
    assert.ok(args.join(" ").includes("-format_whitelist"), "only media demuxers may read the upload");
  });

  test("anything else is encoded: H.264 capped at 1300 kbit/s, even dimensions; gifv without sound", () => {
    const webm = transcodeArguments(
      info({ formatName: "matroska,webm" }, { codec: "vp8" }),
      "video",
      "in",
      "out.mp4",
      CAPS,
    ).join(" ");
    assert.match(webm, /-c:v libx264 .*-maxrate 1300K/);
    assert.match(webm, /scale=trunc\(iw\/2\)\*2:trunc\(ih\/2\)\*2/);
    assert.match(webm, /-c:a aac/);
    const rotated = transcodeArguments(info({}, { rotation: 90 }), "video", "in", "out.mp4", CAPS).join(" ");
    assert.match(rotated, /libx264/, "a rotated video is encoded so that players need no rotation flag");
    const gifv = transcodeArguments(
      info({ formatName: "gif", audio: undefined }, { codec: "gif" }),
      "gifv",
      "in",
      "out.mp4",
      CAPS,
    );
    assert.ok(gifv.includes("-an"));
    assert.ok(!gifv.includes("-c:a"));
  });

  test("audio becomes MP3 without pictures", () => {
    const args = transcodeArguments(info({ formatName: "ogg" }, null), "audio", "in", "out.mp3", CAPS).join(" ");
    assert.match(args, /-vn -c:a libmp3lame -q:a 2 -f mp3 out\.mp3$/);
  });
});

test("timedMeta: Mastodon's keys", () => {
  const meta = timedMeta(info({ duration: 62.3456 }));
  assert.equal(meta.length, "0:01:02.35");
  assert.equal(meta.duration, 62.35);
  assert.equal(meta.fps, 30);
  assert.equal(meta.size, "1280x720");
  assert.equal(meta.audio_encode, "aac");
  assert.equal(meta.audio_channels, "stereo");
  assert.deepEqual(meta.original, { duration: 62.35, bitrate: 800000, width: 1280, height: 720, frame_rate: "30/1" });
});

test("supportedMimeTypes: images only without ffmpeg", () => {
  assert.deepEqual(supportedMimeTypes(["image/png"], undefined), ["image/png"]);
  const all = supportedMimeTypes(["image/png"], {
    ffmpeg: "f",
    ffprobe: "p",
    source: "path",
    slots: new ProgramSlots(),
  });
  assert.ok(all.includes("video/mp4") && all.includes("audio/flac") && all.includes("image/png"));
});
