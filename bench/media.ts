/**
 * Media conversion benchmark. Makes test files with ffmpeg's generators (a 10 s 720p video in the
 * forms people upload, an animated GIF, a voice note), uploads each through the upload service and
 * runs the `media.process` job on it, as a worker would, measuring:
 * - the job's wall time (probe, conversion, preview, storage) and ffmpeg's processor time;
 * - the memory peak of ffmpeg (VmHWM of each program the job starts, sampled from /proc) and the
 *   growth of this process's resident set;
 * - the size of what is stored;
 * - the event-loop delay of this process meanwhile (ffmpeg works in its own process).
 * Conversion does not depend on the database engine; the bench uses SQLite in a temporary folder.
 * Writes its section of bench/RESULTS.md (`--no-results` prints it instead).
 *
 * Run `node bench/media.ts --help` for the options.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs, promisify } from "node:util";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { processTimedMedia } from "../src/services/media/timed.ts";
import { uploadMedia } from "../src/services/media/upload.ts";
import { gitCommit, REPO_ROOT } from "./common.ts";
import { replaceMarkedSection } from "./server.ts";

const run = promisify(execFile);

const HELP = `Usage: node bench/media.ts [options]

Measures video, GIF and audio conversion: time, ffmpeg's processor time and memory peak.

Options:
  --runs N        Runs of each file (default 3; the table shows the median time and the highest peak)
  --no-results    Print the section instead of writing bench/RESULTS.md
  --help          Show this help`;

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    results: { type: "boolean", default: true },
    help: { type: "boolean" },
  },
  allowNegative: true,
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error("--runs must be a whole number above 0");
  process.exit(2);
}

const folder = mkdtempSync(join(tmpdir(), "rookery-bench-media-"));
const config = loadConfig({
  ROOKERY_DATA_DIR: folder,
  LOCAL_DOMAIN: "bench.test",
  LOG_LEVEL: "warn",
  PATH: process.env.PATH,
});
const tools = config.transcoder;
if (!tools) {
  console.error("no ffmpeg/ffprobe: install the optional npm packages or set FFMPEG_BINARY");
  process.exit(1);
}

const source720 = [
  "-f",
  "lavfi",
  "-i",
  "testsrc2=size=1280x720:rate=30",
  "-f",
  "lavfi",
  "-i",
  "sine=frequency=300:sample_rate=48000",
  "-t",
  "10",
];
const samples: Array<{ name: string; extension: string; args: string[] }> = [
  {
    name: "10 s 720p30 H.264/AAC MP4 (a phone video: kept, re-wrapped)",
    extension: "mp4",
    args: [...source720, "-c:v", "libx264", "-preset", "fast", "-b:v", "4M", "-pix_fmt", "yuv420p", "-c:a", "aac"],
  },
  {
    name: "10 s 720p30 HEVC/AAC QuickTime (an iPhone video: encoded)",
    extension: "mov",
    args: [
      ...source720,
      "-c:v",
      "libx265",
      "-preset",
      "fast",
      "-x265-params",
      "log-level=error",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
    ],
  },
  {
    name: "10 s 720p30 VP9/Opus WebM (a screen recording: encoded)",
    extension: "webm",
    args: [
      ...source720,
      "-c:v",
      "libvpx-vp9",
      "-deadline",
      "realtime",
      "-cpu-used",
      "8",
      "-b:v",
      "2M",
      "-c:a",
      "libopus",
    ],
  },
  {
    name: "5 s 480×270 animated GIF (gifv)",
    extension: "gif",
    args: ["-f", "lavfi", "-i", "testsrc2=size=480x270:rate=15", "-t", "5"],
  },
  {
    name: "3 min 48 kHz Ogg Vorbis voice note (to MP3)",
    extension: "ogg",
    args: ["-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000", "-t", "180", "-c:a", "libvorbis"],
  },
];

interface Sample {
  peakKiB: number;
  cpuTicks: number;
}

/** Watches this process's children (the ffmpeg and ffprobe the job starts) through /proc. */
function watchChildren(): { stop(): Sample } {
  const seen = new Map<number, Sample>();
  const tick = () => {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (Number(fields[1]) !== process.pid) continue;
        const status = readFileSync(`/proc/${entry}/status`, "utf8");
        const peak = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
        const cpu = Number(fields[11]) + Number(fields[12]);
        const pid = Number(entry);
        const before = seen.get(pid);
        seen.set(pid, {
          peakKiB: Math.max(peak, before?.peakKiB ?? 0),
          cpuTicks: Math.max(cpu, before?.cpuTicks ?? 0),
        });
      } catch {
        // The program ended between the listing and the read.
      }
    }
  };
  const timer = setInterval(tick, 10);
  return {
    stop() {
      clearInterval(timer);
      tick();
      const all = [...seen.values()];
      return {
        peakKiB: Math.max(0, ...all.map((s) => s.peakKiB)),
        cpuTicks: all.reduce((sum, s) => sum + s.cpuTicks, 0),
      };
    },
  };
}

const TICKS_PER_SECOND = 100;

const ctx = await boot(config, { jobHandlers: false });
const user = await createLocalUser(ctx, { username: "bench", email: "bench@bench.test", password: "benchbench1" });
const rows: string[] = [];
try {
  for (const sample of samples) {
    const input = join(folder, `in.${sample.extension}`);
    await run(tools.ffmpeg, ["-v", "error", "-y", ...sample.args, input], { maxBuffer: 1 << 20 });
    const data = readFileSync(input);
    const times: number[] = [];
    let peakKiB = 0;
    let cpuSeconds = 0;
    let rssGrowth = 0;
    let stored = 0;
    let type = "";
    let loopDelayP99 = 0;
    for (let i = 0; i < runs; i++) {
      const media = await uploadMedia(ctx, user.account, { file: data });
      const rssBefore = process.memoryUsage().rss;
      const watcher = watchChildren();
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const started = performance.now();
      await processTimedMedia(ctx, media.id);
      times.push(performance.now() - started);
      loop.disable();
      loopDelayP99 = Math.max(loopDelayP99, loop.percentile(99) / 1e6);
      const seen = watcher.stop();
      rssGrowth = Math.max(rssGrowth, process.memoryUsage().rss - rssBefore);
      peakKiB = Math.max(peakKiB, seen.peakKiB);
      cpuSeconds = Math.max(cpuSeconds, seen.cpuTicks / TICKS_PER_SECOND);
      const done = await ctx.db.kysely
        .selectFrom("media_attachments")
        .selectAll()
        .where("id", "=", media.id)
        .executeTakeFirstOrThrow();
      if (done.processing !== "complete") throw new Error(`${sample.name}: ${done.processing} ${done.meta}`);
      stored = done.file_size ?? 0;
      type = done.type;
    }
    times.sort((x, y) => x - y);
    const median = times[Math.floor(times.length / 2)];
    const row = `| ${sample.name} | ${(data.length / 1024 / 1024).toFixed(1)} MB | \`${type}\` | ${(median / 1000).toFixed(2)} s | ${cpuSeconds.toFixed(1)} s | ${(peakKiB / 1024).toFixed(0)} MiB | ${(rssGrowth / 1024 / 1024).toFixed(0)} MiB | ${(stored / 1024 / 1024).toFixed(2)} MB | ${loopDelayP99.toFixed(0)} ms |`;
    console.error(row);
    rows.push(row);
  }
} finally {
  await ctx.db.close();
  await ctx.events.close();
  rmSync(folder, { recursive: true, force: true });
}

const section = `## Media conversion

Commit \`${gitCommit()}\`, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ffmpeg from the ${tools.source};
\`node bench/media.ts --runs ${runs}\`. Each file is uploaded through the upload service and converted by
the \`media.process\` job as a worker runs it (ffmpeg at lowered priority). Time: the job's wall time,
median of ${runs} (probe, conversion, preview frame, storage). ffmpeg CPU: processor time of the
programs the job started (all threads). Peak: the largest resident set (VmHWM) of those programs.
Node growth: this process's resident set after the job minus before it. Loop p99: the 99th
percentile of this process's event-loop delay during the job (what a request would wait for it).

| file | upload | becomes | time | ffmpeg CPU | ffmpeg peak | Node growth | stored | loop p99 |
|---|---:|---|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}`;

if (values.results) {
  const path = resolve(REPO_ROOT, "bench/RESULTS.md");
  writeFileSync(path, replaceMarkedSection(readFileSync(path, "utf8"), "media", section));
  console.error("bench/RESULTS.md updated");
} else console.log(section);
