import { ffmpegInput, probe, runTool, ToolFailed, type Probe, type Transcoder } from "./ffmpeg.ts";

/** What an upload becomes: a video with sound, a silent looping video (`gifv`), or audio. */
export type TimedKind = "video" | "gifv" | "audio";

/**
 * The containers accepted, by ffprobe's demuxer name, with the MIME types the instance API lists
 * for them (Mastodon's list: MP4/QuickTime/3GPP, WebM/Matroska, Ogg, MP3, WAVE, FLAC, AAC, ASF).
 */
export const CONTAINERS: Record<string, readonly string[]> = {
  "mov,mp4,m4a,3gp,3g2,mj2": ["video/mp4", "video/quicktime", "audio/mp4", "audio/m4a", "audio/x-m4a", "audio/3gpp"],
  "matroska,webm": ["video/webm", "audio/webm"],
  ogg: ["video/ogg", "audio/ogg", "audio/vorbis"],
  mp3: ["audio/mpeg", "audio/mp3"],
  wav: ["audio/wave", "audio/wav", "audio/x-wav", "audio/x-pn-wave", "audio/vnd.wave"],
  flac: ["audio/flac"],
  aac: ["audio/aac"],
  asf: ["video/x-ms-asf"],
};

/** Mastodon's video encoding: H.264 capped at 1300 kbit/s, AAC sound, even dimensions, constant frame rate. */
const VIDEO_BITRATE = "1300K";

export class MediaRejected extends Error {
  override name = "MediaRejected";
}

export interface TimedLimits {
  videoMatrixLimit: number;
  videoFrameRateLimit: number;
  /** Seconds. */
  videoDurationLimit: number;
  audioDurationLimit: number;
}

/**
 * Decides what a probed upload is and whether it may be kept: a moving picture with sound is a
 * video, without sound a `gifv` (Mastodon's rule), sound alone is audio. Throws MediaRejected
 * with the reason a person can act on.
 */
export function classify(info: Probe, limits: TimedLimits): TimedKind {
  if (!CONTAINERS[info.formatName]) throw new MediaRejected("File type of uploaded media could not be verified");
  if (info.video) {
    const { width, height, fps } = info.video;
    if (width * height > limits.videoMatrixLimit)
      throw new MediaRejected(`Validation failed: File dimensions ${width}x${height} are too large`);
    if (fps > limits.videoFrameRateLimit)
      throw new MediaRejected(
        `Validation failed: File frame rate ${Math.round(fps)} is above ${limits.videoFrameRateLimit} frames per second`,
      );
    if (info.duration !== undefined && info.duration > limits.videoDurationLimit)
      throw new MediaRejected(
        `Validation failed: File is too long (maximum is ${formatDuration(limits.videoDurationLimit)})`,
      );
    return info.audio ? "video" : "gifv";
  }
  if (info.audio) {
    if (info.duration !== undefined && info.duration > limits.audioDurationLimit)
      throw new MediaRejected(
        `Validation failed: File is too long (maximum is ${formatDuration(limits.audioDurationLimit)})`,
      );
    return "audio";
  }
  throw new MediaRejected("File type of uploaded media could not be verified");
}

function formatDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

/** Whether the video can be kept as it is, only re-wrapped for streaming (Mastodon's passthrough). */
function canCopy(info: Probe, kind: TimedKind): boolean {
  const video = info.video;
  return (
    video !== undefined &&
    info.formatName.startsWith("mov,mp4") &&
    video.codec === "h264" &&
    video.pixelFormat === "yuv420p" &&
    video.rotation === 0 &&
    video.fps <= 60 &&
    (kind === "gifv" ? info.audio === undefined : info.audio?.codec === "aac")
  );
}

/** Bounds on one output: it is cut after `seconds` and stops growing at `bytes`. */
export interface OutputCaps {
  seconds: number;
  bytes: number;
}

/** The ffmpeg arguments that turn `input` into the stored MP4 (video and gifv) or MP3 (audio). */
export function transcodeArguments(
  info: Probe,
  kind: TimedKind,
  input: string,
  output: string,
  caps: OutputCaps,
): string[] {
  const bounds = ["-t", String(caps.seconds), "-fs", String(caps.bytes)];
  const head = [...ffmpegInput(input), ...bounds, "-map_metadata", "-1", "-sn", "-dn"];
  if (kind === "audio")
    return [...head, "-map", "0:a:0", "-vn", "-c:a", "libmp3lame", "-q:a", "2", "-f", "mp3", output];
  const maps = kind === "video" ? ["-map", "0:v:0", "-map", "0:a:0"] : ["-map", "0:v:0", "-an"];
  const tail = ["-movflags", "+faststart", "-f", "mp4", output];
  if (canCopy(info, kind)) return [...head, ...maps, "-c", "copy", ...tail];
  return [
    ...head,
    ...maps,
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-crf",
    "23",
    "-maxrate",
    VIDEO_BITRATE,
    "-bufsize",
    VIDEO_BITRATE,
    "-pix_fmt",
    "yuv420p",
    "-vf",
    "scale=trunc(iw/2)*2:trunc(ih/2)*2",
    "-vsync",
    "cfr",
    ...(kind === "video" ? ["-c:a", "aac", "-b:a", "192k"] : []),
    ...tail,
  ];
}

export interface TranscodeOptions {
  timeoutMs: number;
  /** Processor seconds ffmpeg may use (all its threads together). */
  cpuSeconds?: number;
  signal?: AbortSignal;
}

/**
 * Transcodes (as background work: see `program_slots.ts`) and checks the result: a file that stops well before the duration its header states
 * (a truncated upload) is refused instead of being kept shorter than its author thinks.
 */
export async function transcode(
  tools: Transcoder,
  info: Probe,
  kind: TimedKind,
  input: string,
  output: string,
  caps: OutputCaps,
  options: TranscodeOptions,
): Promise<Probe> {
  try {
    await runTool(tools.ffmpeg, transcodeArguments(info, kind, input, output, caps), {
      ...options,
      background: true,
      slots: tools.slots,
    });
  } catch (error) {
    if (error instanceof ToolFailed) throw new MediaRejected(`the file could not be converted: ${firstLine(error)}`);
    throw error;
  }
  const result = await probe(tools, output, { timeoutMs: 30_000, signal: options.signal, background: true });
  if (!result || (kind === "audio" ? !result.audio : !result.video))
    throw new MediaRejected("the file could not be converted: nothing playable came out");
  if (info.duration !== undefined && result.duration !== undefined && result.duration < info.duration * 0.9 - 0.5)
    throw new MediaRejected(
      `the file is truncated or corrupt: it plays ${result.duration.toFixed(1)} s of the ${info.duration.toFixed(1)} s it announces`,
    );
  return result;
}

function firstLine(error: ToolFailed): string {
  const line = error.stderr
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  return line ? `${error.message} (${line.slice(0, 200)})` : error.message;
}

/** Writes one still picture as PNG: the first frame of a video, or the cover art of an audio file. */
export async function extractPicture(
  tools: Transcoder,
  input: string,
  output: string,
  options: TranscodeOptions,
): Promise<void> {
  await runTool(
    tools.ffmpeg,
    [
      "-nostdin",
      "-v",
      "error",
      "-y",
      "-i",
      input,
      "-map",
      "0:v:0",
      "-frames:v",
      "1",
      "-c:v",
      "png",
      "-f",
      "image2",
      output,
    ],
    { ...options, background: true, slots: tools.slots },
  );
}

/**
 * Mastodon's `meta` for timed media: top-level `length`, `duration`, `fps`, size and sound
 * description, and `original` with `width`, `height`, `frame_rate`, `duration`, `bitrate`.
 */
export function timedMeta(result: Probe): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const original: Record<string, unknown> = {};
  if (result.duration !== undefined) {
    meta.length = clock(result.duration);
    meta.duration = round(result.duration);
    original.duration = round(result.duration);
  }
  if (result.bitrate !== undefined) original.bitrate = Math.round(result.bitrate);
  if (result.video) {
    const { width, height, frameRate, fps } = result.video;
    Object.assign(meta, { fps: Math.round(fps), size: `${width}x${height}`, width, height, aspect: width / height });
    Object.assign(original, { width, height, frame_rate: frameRate });
  }
  if (result.audio) {
    meta.audio_encode = result.audio.codec;
    if (result.audio.sampleRate !== undefined) meta.audio_bitrate = `${result.audio.sampleRate} Hz`;
    if (result.audio.channelLayout ?? result.audio.channels)
      meta.audio_channels = result.audio.channelLayout ?? String(result.audio.channels);
  }
  meta.original = original;
  return meta;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** `H:MM:SS.ss`, as Mastodon writes `meta.length`. */
function clock(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = (seconds % 60).toFixed(2).padStart(5, "0");
  return `${hours}:${String(minutes).padStart(2, "0")}:${rest}`;
}

/** Every MIME type the server accepts: images always, video and audio when ffmpeg is there. */
export function supportedMimeTypes(imageTypes: readonly string[], tools: Transcoder | undefined): string[] {
  return tools ? [...imageTypes, ...Object.values(CONTAINERS).flat()] : [...imageTypes];
}
