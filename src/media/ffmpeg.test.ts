import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  checkTranscoder,
  DEMUXERS,
  findTranscoder,
  parseProbe,
  probe,
  runTool,
  ToolFailed,
  TranscoderConfigError,
} from "./ffmpeg.ts";
import { CONTAINERS } from "./transcode.ts";

describe("findTranscoder", () => {
  const folder = mkdtempSync(join(tmpdir(), "rookery-ffmpeg-"));
  const bin = join(folder, "bin");
  const fake = (name: string) => {
    const path = join(folder, name);
    writeFileSync(path, "#!/bin/sh\nexit 0\n");
    chmodSync(path, 0o755);
    return path;
  };
  mkdirSync(bin);
  const ffmpegOnPath = fake("bin/ffmpeg");
  const ffprobeOnPath = fake("bin/ffprobe");
  after(() => rmSync(folder, { recursive: true, force: true }));

  test("FFMPEG_BINARY wins, with ffprobe taken from beside it", () => {
    const found = findTranscoder({ FFMPEG_BINARY: ffmpegOnPath, PATH: "" });
    assert.deepEqual(found, { ffmpeg: ffmpegOnPath, ffprobe: ffprobeOnPath, source: "environment" });
  });

  test("a program name in FFMPEG_BINARY is looked up on the PATH", () => {
    assert.equal(findTranscoder({ FFMPEG_BINARY: "ffmpeg", PATH: bin })?.ffmpeg, ffmpegOnPath);
  });

  test("an FFMPEG_BINARY or FFPROBE_BINARY that is no program is a start-up error naming the variable", () => {
    assert.throws(
      () => findTranscoder({ FFMPEG_BINARY: join(folder, "missing") }),
      (error: Error) =>
        error instanceof TranscoderConfigError && error.message.startsWith("FFMPEG_BINARY must name an executable"),
    );
    const notExecutable = join(folder, "plain");
    writeFileSync(notExecutable, "");
    assert.throws(
      () => findTranscoder({ FFMPEG_BINARY: ffmpegOnPath, FFPROBE_BINARY: notExecutable }),
      /FFPROBE_BINARY must name an executable program/,
    );
  });

  test("both on the PATH are used when nothing is set", () => {
    assert.deepEqual(findTranscoder({ PATH: bin }), { ffmpeg: ffmpegOnPath, ffprobe: ffprobeOnPath, source: "path" });
  });

  test("without either, the npm packages' builds (when installed for this platform)", () => {
    const found = findTranscoder({ PATH: "" });
    if (found) assert.equal(found.source, "npm package");
    if (found) assert.match(found.ffmpeg, /@ffmpeg-installer/);
  });
});

describe("checkTranscoder", () => {
  test("programs that print their version pass; one that fails is named", async () => {
    const folder = mkdtempSync(join(tmpdir(), "rookery-check-"));
    try {
      const good = join(folder, "good");
      writeFileSync(good, "#!/bin/sh\necho 'ffmpeg version 9'\n");
      const bad = join(folder, "bad");
      writeFileSync(bad, "#!/bin/sh\nexit 126\n");
      chmodSync(good, 0o755);
      chmodSync(bad, 0o755);
      assert.equal(await checkTranscoder({ ffmpeg: good, ffprobe: good, source: "path" }), undefined);
      assert.equal(
        await checkTranscoder({ ffmpeg: good, ffprobe: bad, source: "path" }),
        `${bad} does not run: exited with 126`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("runTool", () => {
  test("answers standard output; a failing exit is ToolFailed with the error output", async () => {
    assert.equal(await runTool("/bin/sh", ["-c", "echo hi"], { timeoutMs: 5000 }), "hi\n");
    await assert.rejects(
      runTool("/bin/sh", ["-c", "echo broken >&2; exit 3"], { timeoutMs: 5000 }),
      (error: Error) => error instanceof ToolFailed && error.message === "exited with 3" && error.stderr === "broken\n",
    );
  });

  test("a program past its time limit is killed", async () => {
    const started = Date.now();
    await assert.rejects(runTool("/bin/sh", ["-c", "sleep 10"], { timeoutMs: 200, background: true }), /took longer/);
    assert.ok(Date.now() - started < 5000);
  });

  test("a program past its processor time is stopped by the kernel", async () => {
    await assert.rejects(
      runTool("/bin/sh", ["-c", "while :; do :; done"], { timeoutMs: 20_000, cpuSeconds: 1 }),
      /used more than 1 s of processor time/,
    );
  });

  test("a missing program is ToolFailed, not a crash", async () => {
    await assert.rejects(runTool("/nonexistent/ffmpeg", [], { timeoutMs: 1000 }), ToolFailed);
  });
});

describe("parseProbe", () => {
  const probeJson = (streams: unknown[], format: Record<string, unknown> = {}) =>
    JSON.stringify({
      format: { format_name: "mov,mp4,m4a,3gp,3g2,mj2", duration: "2.5", bit_rate: "1000", ...format },
      streams,
    });

  test("video, sound, rotation and frame rate", () => {
    const info = parseProbe(
      probeJson([
        {
          codec_type: "video",
          codec_name: "h264",
          width: 1920,
          height: 1080,
          avg_frame_rate: "30000/1001",
          pix_fmt: "yuv420p",
          tags: { rotate: "90" },
        },
        { codec_type: "audio", codec_name: "aac", sample_rate: "48000", channels: 2, channel_layout: "stereo" },
      ]),
    );
    assert.ok(info?.video && info.audio);
    assert.equal(info.video.frameRate, "30000/1001");
    assert.ok(Math.abs(info.video.fps - 29.97) < 0.01);
    assert.equal(info.video.rotation, 90);
    assert.equal(info.duration, 2.5);
    assert.equal(info.audio.sampleRate, 48000);
  });

  test("an attached picture is cover art, not a video", () => {
    const info = parseProbe(
      probeJson(
        [
          { codec_type: "audio", codec_name: "mp3" },
          { codec_type: "video", codec_name: "png", width: 10, height: 10, disposition: { attached_pic: 1 } },
        ],
        { format_name: "mp3" },
      ),
    );
    assert.equal(info?.video, undefined);
    assert.equal(info?.coverArt, true);
  });

  test("no frame rate average falls back to the stream's rate; missing durations stay unknown", () => {
    const info = parseProbe(
      probeJson(
        [{ codec_type: "video", codec_name: "vp8", width: 4, height: 4, avg_frame_rate: "0/0", r_frame_rate: "25/1" }],
        {
          duration: "N/A",
        },
      ),
    );
    assert.equal(info?.video?.frameRate, "25/1");
    assert.equal(info?.duration, undefined);
  });

  test("not JSON, or no format: undefined", () => {
    assert.equal(parseProbe("nope"), undefined);
    assert.equal(parseProbe("{}"), undefined);
  });
});

describe("untrusted input", { skip: findTranscoder({}) ? false : "no ffmpeg here" }, () => {
  test("a playlist disguised as media opens nothing: ffprobe may use only the media demuxers and local files", async () => {
    const tools = findTranscoder({})!;
    const folder = mkdtempSync(join(tmpdir(), "rookery-playlist-"));
    try {
      // Another local media file, which the playlist names as its segment.
      const other = join(folder, "private.mp4");
      await runTool(
        tools.ffmpeg,
        [
          "-v",
          "error",
          "-f",
          "lavfi",
          "-i",
          "color=c=black:size=16x16:rate=1",
          "-t",
          "1",
          "-pix_fmt",
          "yuv420p",
          other,
        ],
        { timeoutMs: 20_000 },
      );
      const playlist = join(folder, "clip.m3u8");
      writeFileSync(playlist, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${other}\n#EXT-X-ENDLIST\n`);
      // Without the guard, ffprobe reads it as HLS (the extension tells it to) and follows the entry.
      const unguarded = await runTool(tools.ffprobe, ["-v", "error", "-show_format", playlist], {
        timeoutMs: 10_000,
      }).catch(() => "");
      assert.match(unguarded, /format_name=hls/);
      assert.equal(await probe(tools, playlist, { timeoutMs: 10_000 }), undefined);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test("every accepted container is a whitelisted demuxer", () => {
    for (const name of Object.keys(CONTAINERS))
      assert.ok(
        name.split(",").some((part) => (DEMUXERS as readonly string[]).includes(part)),
        name,
      );
  });
});
