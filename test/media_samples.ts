/**
 * Real video and audio files made by ffmpeg's own generators (test patterns, tones), and an
 * independent look at what the server stored (ffprobe's JSON read directly, not through the
 * server's parser).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { findTranscoder, type Transcoder } from "../src/media/ffmpeg.ts";

const run = promisify(execFile);

export const tools: Transcoder | undefined = findTranscoder({});
export const noTranscoder = tools ? false : "no ffmpeg/ffprobe here (install the optional npm packages)";

function transcoder(): Transcoder {
  if (!tools) throw new Error("no ffmpeg");
  return tools;
}

/** Runs ffmpeg with `args` (inputs and codecs) writing `<tmp>/out.<extension>`, and answers the file. */
export async function makeMedia(extension: string, args: string[]): Promise<Buffer> {
  const folder = await mkdtemp(join(tmpdir(), "rookery-sample-"));
  try {
    const out = join(folder, `out.${extension}`);
    await run(transcoder().ffmpeg, ["-v", "error", "-y", ...args, out], {
      maxBuffer: 1 << 20,
      timeout: 60_000,
      killSignal: "SIGKILL",
    });
    return await readFile(out);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

const video = (size: string, rate: number, seconds: number) => [
  "-f",
  "lavfi",
  "-i",
  `testsrc=size=${size}:rate=${rate}`,
  "-t",
  String(seconds),
];
const tone = (seconds: number) => ["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=44100`, "-t", String(seconds)];

/** A plain H.264 video at one frame a second, quick to make whatever its length or size. */
const blank = (size: string, seconds: number) =>
  makeMedia("mp4", [
    ..."-f lavfi -i".split(" "),
    `color=c=blue:size=${size}:rate=1`,
    ...`-t ${seconds} -c:v libx264 -preset ultrafast -pix_fmt yuv420p`.split(" "),
  ]);

/** A 320×240 test pattern at 25 fps with a tone, 2 s, as H.264 and AAC. */
const H264_AAC = [
  ...video("320x240", 25, 2),
  ...tone(2),
  ..."-c:v libx264 -pix_fmt yuv420p -c:a aac -shortest".split(" "),
];

/** Runs ffmpeg on files written first (`inputs`, by name), for samples made from other samples. */
async function fromFiles(
  inputs: Record<string, Buffer>,
  extension: string,
  args: (path: (name: string) => string) => string[],
) {
  const folder = await mkdtemp(join(tmpdir(), "rookery-sample-"));
  try {
    for (const [name, data] of Object.entries(inputs)) await writeFile(join(folder, name), data);
    return await makeMedia(
      extension,
      args((name) => join(folder, name)),
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

export const samples: Record<string, () => Promise<Buffer>> = {
  /** H.264 + AAC, 320×240 at 25 fps, 2 s, moov at the end (as cameras write it). */
  mp4: () => makeMedia("mp4", H264_AAC),
  /** A phone video: 320×240 pixels stored with a 90° rotation flag, so it plays as 240×320. */
  rotatedMp4: async () =>
    // ffmpeg 4.1 writes the flag when it copies the streams, not while it encodes them.
    fromFiles({ "in.mp4": await samples.mp4() }, "mp4", (path) => [
      "-i",
      path("in.mp4"),
      ..."-c copy -metadata:s:v:0 rotate=90".split(" "),
    ]),
  /** The same, streamable (moov first): truncating it leaves a file ffprobe still reads. */
  streamableMp4: () => makeMedia("mp4", [...H264_AAC, "-movflags", "+faststart"]),
  /** VP8 + Vorbis, 240×180 at 30 fps, 1.5 s. */
  webm: () =>
    makeMedia("webm", [...video("240x180", 30, 1.5), ...tone(1.5), "-c:v", "libvpx", "-c:a", "libvorbis", "-shortest"]),
  /** A silent H.264 video, 1 s (Mastodon makes it a gifv). */
  silentMp4: () => makeMedia("mp4", [...video("160x120", 20, 1), "-c:v", "libx264", "-pix_fmt", "yuv420p"]),
  /** An animated GIF, 65×49 (odd sizes), 10 frames. */
  gif: () => makeMedia("gif", [...video("65x49", 10, 1)]),
  mp3: () => makeMedia("mp3", [...tone(2), "-c:a", "libmp3lame", "-b:a", "128k"]),
  ogg: () => makeMedia("ogg", [...tone(1.5), "-c:a", "libvorbis"]),
  wav: () => makeMedia("wav", [...tone(1), "-c:a", "pcm_s16le"]),
  flac: () => makeMedia("flac", [...tone(1), "-c:a", "flac"]),
  /** AAC in MP4, as phones record voice memos. */
  m4a: () => makeMedia("m4a", [...tone(1), "-c:a", "aac"]),
  /** An MP3 with an embedded cover picture (ID3 APIC), 200×200 red. */
  mp3WithCover: async () => {
    const sound = await makeMedia("mp3", [...tone(1), "-c:a", "libmp3lame"]);
    const cover = await makeMedia("png", ["-f", "lavfi", "-i", "color=c=red:size=200x200", "-frames:v", "1"]);
    return fromFiles({ "sound.mp3": sound, "cover.png": cover }, "mp3", (path) => [
      "-i",
      path("sound.mp3"),
      "-i",
      path("cover.png"),
      ..."-map 0:a -map 1:v -c copy -disposition:v attached_pic -id3v2_version 3".split(" "),
    ]);
  },
  /** A tiny video of 21 minutes (one frame a second): longer than the 20 allowed. */
  overLong: () => blank("16x16", 1260),
  /** One 4096×2176 frame: more pixels than 3840×2160. */
  tooLarge: () => blank("4096x2176", 1),
  /** 150 frames a second, above the 120 allowed. */
  tooFast: () => makeMedia("mp4", [...video("32x32", 150, 0.2), "-c:v", "libx264", "-pix_fmt", "yuv420p"]),
};

export interface ProbedStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
}

export interface Probed {
  format: { format_name: string; duration: string; bit_rate?: string };
  streams: ProbedStream[];
}

/** ffprobe's own description of a file's bytes. */
export async function ffprobe(data: Buffer): Promise<Probed> {
  const folder = await mkdtemp(join(tmpdir(), "rookery-probe-"));
  try {
    const path = join(folder, "file");
    await writeFile(path, data);
    const { stdout } = await run(transcoder().ffprobe, [
      "-v",
      "error",
      "-print_format",
      "json",
      "-show_format",
      "-show_streams",
      path,
    ]);
    return JSON.parse(stdout) as Probed;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Whether an MP4's index (moov) comes before its data (mdat): playable while it downloads. */
export function isFastStart(data: Buffer): boolean {
  const moov = data.indexOf("moov");
  const mdat = data.indexOf("mdat");
  return moov !== -1 && mdat !== -1 && moov < mdat;
}
