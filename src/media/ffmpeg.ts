import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { setPriority } from "node:os";
import type { Readable } from "node:stream";
import { ProgramsBusy, ProgramSlots, type SlotLimits } from "./program_slots.ts";

/** The two programs video and audio need; found once at start (`findTranscoder`). */
export interface Transcoder {
  ffmpeg: string;
  ffprobe: string;
  /** Where they came from, for the start-up log. */
  source: "environment" | "path" | "npm package";
  /** The process's limit on programs running at once, shared by uploads and conversions (`runTool` takes it). */
  slots: ProgramSlots;
}

type Env = Record<string, string | undefined>;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: Env): string | undefined {
  for (const folder of (env.PATH ?? "").split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The binary an npm package (an optional dependency) ships, when it is installed for this platform. */
function fromPackage(name: "ffmpeg" | "ffprobe"): string | undefined {
  const require = createRequire(import.meta.url);
  const packageName = `@${name}-installer/${process.platform}-${process.arch}`;
  try {
    const folder = dirname(require.resolve(`${packageName}/package.json`));
    const binary = join(folder, process.platform === "win32" ? `${name}.exe` : name);
    return isExecutable(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

export class TranscoderConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Finds ffmpeg and ffprobe the way Mastodon finds ffmpeg: `FFMPEG_BINARY` / `FFPROBE_BINARY` when
 * set (a bad value is a start-up error), else both on the PATH, else the static builds the optional
 * npm dependencies install. Without them the server accepts images only and says so in the
 * instance API. `limits` bound how many of them run at once (`program_slots.ts`).
 */
export function findTranscoder(env: Env, limits: Partial<SlotLimits> = {}): Transcoder | undefined {
  const ffmpegSetting = env.FFMPEG_BINARY?.trim();
  const ffprobeSetting = env.FFPROBE_BINARY?.trim();
  if (ffmpegSetting || ffprobeSetting) {
    const resolveSetting = (name: string, value: string | undefined, fallback: string): string => {
      const chosen = value || fallback;
      const path = isAbsolute(chosen) || chosen.includes("/") ? chosen : onPath(chosen, env);
      if (!path || !isExecutable(path))
        throw new TranscoderConfigError(`${name} must name an executable program, got "${chosen}"`);
      return path;
    };
    // With only FFMPEG_BINARY set, ffprobe is looked for beside it (Mastodon derives it the same way).
    const ffmpeg = resolveSetting("FFMPEG_BINARY", ffmpegSetting, "ffmpeg");
    const sibling = join(dirname(ffmpeg), "ffprobe");
    const ffprobe = resolveSetting(
      "FFPROBE_BINARY",
      ffprobeSetting,
      isExecutable(sibling) ? sibling : (onPath("ffprobe", env) ?? "ffprobe"),
    );
    return { ffmpeg, ffprobe, source: "environment", slots: new ProgramSlots(limits) };
  }
  const ffmpegOnPath = onPath("ffmpeg", env);
  const ffprobeOnPath = onPath("ffprobe", env);
  if (ffmpegOnPath && ffprobeOnPath)
    return { ffmpeg: ffmpegOnPath, ffprobe: ffprobeOnPath, source: "path", slots: new ProgramSlots(limits) };
  const ffmpeg = fromPackage("ffmpeg");
  const ffprobe = fromPackage("ffprobe");
  if (ffmpeg && ffprobe) return { ffmpeg, ffprobe, source: "npm package", slots: new ProgramSlots(limits) };
  return undefined;
}

/**
 * Whether the programs found really run here (a package built for another system, a broken
 * install): answers what is wrong, or undefined when both print their version.
 */
export async function checkTranscoder(tools: Transcoder): Promise<string | undefined> {
  for (const program of [tools.ffmpeg, tools.ffprobe]) {
    try {
      const output = await runTool(program, ["-version"], { timeoutMs: 10_000, slots: tools.slots });
      if (!/version/i.test(output)) return `${program} -version printed no version`;
    } catch (error) {
      return `${program} does not run: ${(error as Error).message}`;
    }
  }
  return undefined;
}

export class ToolFailed extends Error {
  override name = "ToolFailed";
  readonly stderr: string;
  constructor(message: string, stderr: string) {
    super(message);
    this.stderr = stderr;
  }
}

export interface RunOptions {
  /** The slot the program runs in (waited for first; see `program_slots.ts`). */
  slots: ProgramSlots;
  /** Wall-clock limit from the start of the program (not counting the wait for a slot); it is killed past it. */
  timeoutMs: number;
  /** Stops the wait for a slot, or the program. */
  signal?: AbortSignal;
  /**
   * Work for a job rather than a waiting client: the wait for a slot is never refused, and the
   * program's CPU priority is lowered so requests keep being answered while it works.
   */
  background?: boolean;
  /** Processor seconds the program may use (RLIMIT_CPU, set by /bin/sh's `ulimit -t`); the kernel stops it past them. */
  cpuSeconds?: number;
}

const STDERR_KEPT = 8 * 1024;

/**
 * Runs the program under RLIMIT_CPU: SIGXCPU at the soft limit (ffmpeg catches it and stops
 * cleanly), SIGKILL five processor-seconds later at the hard limit if it has not.
 */
const LIMITED_EXEC = 'ulimit -H -t "$1" 2>/dev/null; ulimit -S -t "$0" 2>/dev/null; shift; exec "$@"';

/** Programs still running; killed when this process exits, so no ffmpeg outlives the server. */
const running = new Set<ChildProcess>();
let exitHook = false;
let peakRunning = 0;

/**
 * Programs of this process running now, and the most that ran at once since the last
 * `resetPeakPrograms()`: counted from start to exit, apart from the slots, so tests can check the limit.
 */
export function runningPrograms(): { now: number; peak: number } {
  return { now: running.size, peak: peakRunning };
}

export function resetPeakPrograms(): void {
  peakRunning = running.size;
}

/** Calls `done` once, when the program has exited, or could not be started (no `exit` comes then). */
function onceEnded(child: ChildProcess, done: () => void): void {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    done();
  };
  child.once("exit", end);
  child.once("close", end);
  // An abort also arrives as `error`, while the program still runs: only a program without a process has ended.
  child.on("error", () => {
    if (child.pid === undefined) end();
  });
}

function track(child: ChildProcess): void {
  running.add(child);
  peakRunning = Math.max(peakRunning, running.size);
  onceEnded(child, () => running.delete(child));
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const program of running) program.kill("SIGKILL");
  });
}
const STDOUT_LIMIT = 4 * 1024 * 1024;

/**
 * Runs ffmpeg or ffprobe without a shell, in one of `options.slots` (waited for first, given back
 * when the program has exited); answers its standard output. A non-zero exit, a timeout or an
 * abort raises ToolFailed with the end of its error output; a request that gets no slot,
 * ProgramsBusy.
 */
export async function runTool(program: string, args: readonly string[], options: RunOptions): Promise<string> {
  let release: () => void;
  try {
    release = await options.slots.take({ background: options.background, signal: options.signal });
  } catch (error) {
    if (error instanceof ProgramsBusy) throw error;
    throw new ToolFailed(`${program} was stopped before it started`, "");
  }
  return new Promise((resolve, reject) => {
    const cpu = process.platform === "win32" ? undefined : options.cpuSeconds;
    const limited = cpu !== undefined;
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = limited
        ? spawn("/bin/sh", ["-c", LIMITED_EXEC, String(cpu), String(cpu + 5), program, ...args], {
            stdio: ["ignore", "pipe", "pipe"],
            signal: options.signal,
          })
        : spawn(program, args, { stdio: ["ignore", "pipe", "pipe"], signal: options.signal });
    } catch (error) {
      release();
      throw error;
    }
    track(child);
    // Given back once the program has exited (a killed one too), not when this call gives up on it.
    onceEnded(child, release);
    if (options.background && child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not permitted here: it runs at normal priority.
      }
    }
    let stdout = "";
    let stderr = "";
    let stdoutTooLong = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length + chunk.length > STDOUT_LIMIT) {
        stdoutTooLong = true;
        child.kill("SIGKILL");
      } else stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT);
    });
    let settled = false;
    const fail = (error: ToolFailed) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
    };
    // Past the limit the program is killed and the call fails at once, whatever its pipes still hold.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new ToolFailed(`took longer than ${Math.round(options.timeoutMs / 1000)} s`, stderr));
    }, options.timeoutMs);
    child.on("error", (error) => fail(new ToolFailed(`${program} could not run: ${error.message}`, stderr)));
    child.on("close", (code, signal) => {
      if (settled) return;
      if (stdoutTooLong) fail(new ToolFailed("printed more than expected", stderr));
      else if (limited && overProcessorTime(code, signal))
        fail(new ToolFailed(`used more than ${options.cpuSeconds} s of processor time`, stderr));
      else if (signal === "SIGKILL")
        fail(new ToolFailed("was killed (out of memory, or past its processor-time limit)", stderr));
      else if (code !== 0) fail(new ToolFailed(`exited with ${signal ?? code}`, stderr));
      else {
        settled = true;
        clearTimeout(timer);
        resolve(stdout);
      }
    });
  });
}

/**
 * The kernel's SIGXCPU at the limit: a program that does not catch it dies of it; ffmpeg catches
 * it, stops, and exits with 255, its code for "stopped by a signal" (nothing else signals it here:
 * timeouts kill it and are reported before).
 */
function overProcessorTime(code: number | null, signal: NodeJS.Signals | null): boolean {
  return signal === "SIGXCPU" || code === 255;
}

/**
 * The only demuxers ffmpeg and ffprobe may use on an upload, and the only protocol (local files):
 * a playlist (HLS, concat) disguised as a video would otherwise make them open other files or URLs.
 * Names as ffmpeg matches them: `mov` stands for `mov,mp4,m4a,3gp,3g2,mj2`.
 */
export const DEMUXERS = ["mov", "matroska", "ogg", "mp3", "wav", "flac", "aac", "asf", "gif"] as const;

/** Options placed before every `-i` of an untrusted file. */
export const INPUT_GUARD = ["-format_whitelist", DEMUXERS.join(","), "-protocol_whitelist", "file"] as const;

/** The start of an ffmpeg command reading `path` (no prompts, errors only, overwrite, guarded input). */
export function ffmpegInput(path: string): string[] {
  return ["-nostdin", "-v", "error", "-y", ...INPUT_GUARD, "-i", `file:${path}`];
}

export interface VideoStream {
  codec: string;
  width: number;
  height: number;
  /** `num/den` as ffprobe prints it, e.g. `30000/1001`. */
  frameRate: string;
  fps: number;
  pixelFormat: string | undefined;
  /** Degrees the player must turn the picture (phone videos). */
  rotation: number;
}

export interface AudioStream {
  codec: string;
  sampleRate: number | undefined;
  channels: number | undefined;
  channelLayout: string | undefined;
}

export interface Probe {
  /** ffprobe's demuxer names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  formatName: string;
  duration: number | undefined;
  bitrate: number | undefined;
  video: VideoStream | undefined;
  /** An embedded picture, such as the cover art of an MP3. */
  coverArt: boolean;
  audio: AudioStream | undefined;
}

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  pix_fmt?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string };
  side_data_list?: Array<{ rotation?: number }>;
}

function ratio(value: string | undefined): number {
  if (!value) return 0;
  const [num, den] = value.split("/").map(Number);
  if (!Number.isFinite(num) || !den || !Number.isFinite(den)) return 0;
  return num / den;
}

function positive(value: unknown): number | undefined {
  const number = Number(value);
  return Number.isFinite(number) && number > 0 ? number : undefined;
}

/** Reads ffprobe's JSON description of a file (containers, streams, duration); undefined when ffprobe cannot. */
export function parseProbe(json: string): Probe | undefined {
  let data: { format?: { format_name?: string; duration?: string; bit_rate?: string }; streams?: RawStream[] };
  try {
    data = JSON.parse(json) as typeof data;
  } catch {
    return undefined;
  }
  if (!data.format?.format_name) return undefined;
  const streams = data.streams ?? [];
  const pictures = streams.filter((s) => s.codec_type === "video");
  const moving = pictures.find((s) => s.disposition?.attached_pic !== 1);
  const sound = streams.find((s) => s.codec_type === "audio");
  let video: VideoStream | undefined;
  if (moving && moving.width && moving.height) {
    const frameRate =
      ratio(moving.avg_frame_rate) > 0
        ? moving.avg_frame_rate!
        : (moving.r_frame_rate ?? moving.avg_frame_rate ?? "0/0");
    const rotation = Number(moving.tags?.rotate ?? moving.side_data_list?.find((d) => d.rotation)?.rotation ?? 0);
    video = {
      codec: moving.codec_name ?? "unknown",
      width: moving.width,
      height: moving.height,
      frameRate,
      fps: ratio(frameRate),
      pixelFormat: moving.pix_fmt,
      rotation: Number.isFinite(rotation) ? rotation : 0,
    };
  }
  return {
    formatName: data.format.format_name,
    duration: positive(data.format.duration),
    bitrate: positive(data.format.bit_rate),
    video,
    coverArt: pictures.some((s) => s.disposition?.attached_pic === 1),
    audio: sound
      ? {
          codec: sound.codec_name ?? "unknown",
          sampleRate: positive(sound.sample_rate),
          channels: sound.channels,
          channelLayout: sound.channel_layout,
        }
      : undefined,
  };
}

/** Describes a file with ffprobe; undefined when it is no media file ffprobe can read. */
export async function probe(
  tools: Transcoder,
  path: string,
  options: Omit<RunOptions, "slots">,
): Promise<Probe | undefined> {
  let output: string;
  try {
    output = await runTool(
      tools.ffprobe,
      ["-v", "error", ...INPUT_GUARD, "-print_format", "json", "-show_format", "-show_streams", `file:${path}`],
      { ...options, slots: tools.slots },
    );
  } catch (error) {
    if (options.signal?.aborted || error instanceof ProgramsBusy) throw error;
    return undefined;
  }
  return parseProbe(output);
}
