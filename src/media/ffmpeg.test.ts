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
import { defaultProgramLimit, ProgramsBusy, ProgramSlots } from "./program_slots.ts";
import { CONTAINERS } from "./transcode.ts";

const slots = new ProgramSlots({ limit: 2 });

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
    assert.deepEqual([found?.ffmpeg, found?.ffprobe, found?.source], [ffmpegOnPath, ffprobeOnPath, "environment"]);
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
    const found = findTranscoder({ PATH: bin });
    assert.deepEqual([found?.ffmpeg, found?.ffprobe, found?.source], [ffmpegOnPath, ffprobeOnPath, "path"]);
  });

  test("the pair comes with the process's program slots: as many as asked, else the default for its cores", () => {
    assert.equal(findTranscoder({ PATH: bin }, { limit: 3 })?.slots.limit, 3);
    assert.equal(findTranscoder({ PATH: bin })?.slots.limit, defaultProgramLimit());
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
      assert.equal(await checkTranscoder({ ffmpeg: good, ffprobe: good, source: "path", slots }), undefined);
      assert.equal(
        await checkTranscoder({ ffmpeg: good, ffprobe: bad, source: "path", slots }),
        `${bad} does not run: exited with 126`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("runTool", () => {
  test("answers standard output; a failing exit is ToolFailed with the error output", async () => {
    assert.equal(await runTool("/bin/sh", ["-c", "echo hi"], { timeoutMs: 5000, slots }), "hi\n");
    await assert.rejects(
      runTool("/bin/sh", ["-c", "echo broken >&2; exit 3"], { timeoutMs: 5000, slots }),
      (error: Error) => error instanceof ToolFailed && error.message === "exited with 3" && error.stderr === "broken\n",
    );
  });

  test("a program past its time limit is killed", async () => {
    const started = Date.now();
    await assert.rejects(
      runTool("/bin/sh", ["-c", "sleep 10"], { timeoutMs: 200, background: true, slots }),
      /took longer/,
    );
    assert.ok(Date.now() - started < 5000);
  });

  test("a program past its processor time is stopped by the kernel", async () => {
    await assert.rejects(
      runTool("/bin/sh", ["-c", "while :; do :; done"], { timeoutMs: 20_000, cpuSeconds: 1, slots }),
      /used more than 1 s of processor time/,
    );
  });

  test("a missing program is ToolFailed, not a crash", async () => {
    await assert.rejects(runTool("/nonexistent/ffmpeg", [], { timeoutMs: 1000, slots }), ToolFailed);
  });
});

describe("runTool in the process's program slots", () => {
  test("programs started together run at most `limit` at once; the others wait their turn", async () => {
    const two = new ProgramSlots({ limit: 2, queue: 8 });
    // Each program marks itself alive in the folder and prints how many are (itself included).
    const alive = mkdtempSync(join(tmpdir(), "rookery-alive-"));
    const script = 'touch "$0/$$"; ls "$0" | wc -l; sleep 0.05; rm "$0/$$"';
    try {
      const outputs = await Promise.all(
        [1, 2, 3, 4, 5, 6].map(() => runTool("/bin/sh", ["-c", script, alive], { timeoutMs: 10_000, slots: two })),
      );
      assert.ok(Math.max(...outputs.map(Number)) <= 2, outputs.join(" "));
      assert.deepEqual([two.running, two.waiting], [0, 0]);
    } finally {
      rmSync(alive, { recursive: true, force: true });
    }
  });

  test("a program that crashes, fails to start or is killed past its time gives its slot back", async () => {
    const one = new ProgramSlots({ limit: 1, queue: 0 });
    await assert.rejects(runTool("/bin/sh", ["-c", "kill -SEGV $$"], { timeoutMs: 5000, slots: one }), ToolFailed);
    assert.equal(one.running, 0);
    await assert.rejects(runTool("/nonexistent/ffprobe", [], { timeoutMs: 5000, slots: one }), ToolFailed);
    assert.equal(one.running, 0);
    // The call fails at its timeout; the slot follows once the killed program has exited.
    await assert.rejects(runTool("/bin/sh", ["-c", "sleep 10"], { timeoutMs: 100, slots: one }), /took longer/);
    assert.equal(
      await runTool("/bin/sh", ["-c", "echo next"], { timeoutMs: 5000, slots: one, background: true }),
      "next\n",
    );
    assert.equal(one.running, 0);
  });

  test("a request refused for want of a slot is ProgramsBusy, from probe too, and nothing runs", async () => {
    const one = new ProgramSlots({ limit: 1, queue: 0 });
    const held = await one.take();
    await assert.rejects(runTool("/bin/sh", ["-c", "echo hi"], { timeoutMs: 5000, slots: one }), ProgramsBusy);
    const tools = { ffmpeg: "/bin/sh", ffprobe: "/bin/sh", source: "path" as const, slots: one };
    await assert.rejects(probe(tools, "/dev/null", { timeoutMs: 5000 }), ProgramsBusy);
    assert.equal(one.running, 1);
    held();
  });

  test("a signal that fires while the program waits for its slot: ToolFailed, and it never starts", async () => {
    const one = new ProgramSlots({ limit: 1, queue: 4 });
    const held = await one.take();
    const stop = new AbortController();
    const waiting = runTool("/bin/sh", ["-c", "echo hi"], { timeoutMs: 5000, slots: one, signal: stop.signal });
    stop.abort();
    await assert.rejects(waiting, /was stopped before it started/);
    assert.deepEqual([one.waiting, one.running], [0, 1]);
    held();
    assert.equal(one.running, 0);
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
        { timeoutMs: 20_000, slots: tools.slots },
      );
      const playlist = join(folder, "clip.m3u8");
      writeFileSync(playlist, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${other}\n#EXT-X-ENDLIST\n`);
      // Without the guard, ffprobe reads it as HLS (the extension tells it to) and follows the entry.
      const unguarded = await runTool(tools.ffprobe, ["-v", "error", "-show_format", playlist], {
        timeoutMs: 10_000,
        slots: tools.slots,
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
