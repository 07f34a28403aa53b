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
export function solidPng(width: number, height: number, rgb: readonly [number, number, number], shade?: (x: number, y: number) => number): Buffer {
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
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

/** A head-and-shoulders silhouette on grey, like Mastodon's missing avatar. */
function avatarShade(size: number) {
  return (x: number, y: number) => {
    const cx = size / 2;
    const head = (x - cx) ** 2 + (y - size * 0.38) ** 2 < (size * 0.18) ** 2;
    const body = y > size * 0.62 && (x - cx) ** 2 / (size * 0.34) ** 2 + (y - size * 0.95) ** 2 / (size * 0.36) ** 2 < 1;
    return head || body ? 40 : 0;
  };
}

const IMAGES: Record<string, () => Buffer> = {
  "/avatars/original/missing.png": () => solidPng(400, 400, [0x9b, 0xae, 0xc8], avatarShade(400)),
  "/headers/original/missing.png": () => solidPng(1500, 500, [0x28, 0x2c, 0x37]),
  "/preview.png": () => solidPng(1200, 630, [0x28, 0x2c, 0x37]),
};

/** Serves the default avatar, header and instance thumbnail, drawn once on first request. */
export default async function defaultImageRoutes(app: FastifyInstance) {
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
