import type { FastifyInstance } from "fastify";
import { deflateSync } from "node:zlib";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of one colour (RGB), drawn by `shade(x, y)` returning a brightness offset. */
export function solidPng(
  width: number,
  height: number,
  rgb: readonly [number, number, number],
  shade?: (x: number, y: number) => number,
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const row = width * 3 + 1;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const offset = shade ? shade(x, y) : 0;
      const at = y * row + 1 + x * 3;
      raw[at] = Math.max(0, Math.min(255, rgb[0] + offset));
      raw[at + 1] = Math.max(0, Math.min(255, rgb[1] + offset));
      raw[at + 2] = Math.max(0, Math.min(255, rgb[2] + offset));
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A head-and-shoulders silhouette on grey, like Mastodon's missing avatar. */
function avatarShade(size: number) {
  return (x: number, y: number) => {
    const cx = size / 2;
    const head = (x - cx) ** 2 + (y - size * 0.38) ** 2 < (size * 0.18) ** 2;
    const body =
      y > size * 0.62 && (x - cx) ** 2 / (size * 0.34) ** 2 + (y - size * 0.95) ** 2 / (size * 0.36) ** 2 < 1;
    return head || body ? 40 : 0;
  };
}

/** Inside the triangle a-b-c (by the signs of the three edge cross products). */
function inTriangle(x: number, y: number, [a, b, c]: Array<[number, number]>): boolean {
  const side = (p: [number, number], q: [number, number]) => (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
  const [d1, d2, d3] = [side(a, b), side(b, c), side(c, a)];
  return !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0));
}

/** A white bird (body, head, beak, tail) with a dark eye, on a 32-unit grid scaled to `size`. */
function birdShade(size: number) {
  return (px: number, py: number) => {
    const [x, y] = [((px + 0.5) * 32) / size, ((py + 0.5) * 32) / size];
    if ((x - 22) ** 2 + (y - 11) ** 2 < 1.6 ** 2) return -200;
    const body = ((x - 15) / 9.5) ** 2 + ((y - 19.5) / 7) ** 2 < 1;
    const head = (x - 21.5) ** 2 + (y - 11.5) ** 2 < 5.5 ** 2;
    const beak = inTriangle(x, y, [
      [25.5, 9],
      [25.5, 14],
      [30.5, 11.5],
    ]);
    const tail = inTriangle(x, y, [
      [8, 16],
      [8, 23],
      [1.5, 25.5],
    ]);
    return body || head || beak || tail ? 255 : 0;
  };
}

/** Channels per PNG colour type (grey, RGB, palette, grey+alpha, RGBA). */
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** An ICO file holding PNG images (every browser since 2007 reads PNG entries). */
function icoOfPngs(images: Array<{ size: number; png: Buffer }>): Buffer {
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach(({ size, png }, i) => {
    const at = 6 + 16 * i;
    header[at] = size >= 256 ? 0 : size;
    header[at + 1] = size >= 256 ? 0 : size;
    header.writeUInt16LE(1, at + 4); // colour planes
    header.writeUInt16LE(png[24] * (PNG_CHANNELS[png[25]] ?? 4), at + 6); // bits per pixel, from the IHDR chunk
    header.writeUInt32LE(png.length, at + 8);
    header.writeUInt32LE(offset, at + 12);
    offset += png.length;
  });
  return Buffer.concat([header, ...images.map((image) => image.png)]);
}

const ACCENT = [0x55, 0x62, 0xe8] as const;

/** The site icon: the bird on the pages' accent colour, at 16 and 32 pixels. */
function favicon(): Buffer {
  return icoOfPngs([16, 32].map((size) => ({ size, png: solidPng(size, size, ACCENT, birdShade(size)) })));
}

const IMAGES: Record<string, () => Buffer> = {
  "/avatars/original/missing.png": () => solidPng(400, 400, [0x9b, 0xae, 0xc8], avatarShade(400)),
  "/headers/original/missing.png": () => solidPng(1500, 500, [0x28, 0x2c, 0x37]),
  "/preview.png": () => solidPng(1200, 630, [0x28, 0x2c, 0x37]),
};

/** Serves the default avatar, header and instance thumbnail, and the favicon, drawn once on first request. */
export default async function defaultImageRoutes(app: FastifyInstance) {
  let icon: Buffer | undefined;
  app.get("/favicon.ico", async (_req, reply) => {
    icon ??= favicon();
    // Not immutable: the address is fixed, so a new icon must be able to replace a cached one.
    reply.header("Cache-Control", "public, max-age=86400");
    reply.header("X-Content-Type-Options", "nosniff");
    return reply.type("image/x-icon").send(icon);
  });
  const cache = new Map<string, Buffer>();
  for (const [path, draw] of Object.entries(IMAGES)) {
    app.get(path, async (_req, reply) => {
      let png = cache.get(path);
      if (!png) cache.set(path, (png = draw()));
      reply.header("Cache-Control", "public, max-age=604800, immutable");
      return reply.type("image/png").send(png);
    });
  }
}
