import { encode as encodeBlurhash } from "blurhash";
import sharp from "sharp";
import type { Ctx } from "../../context.ts";
import { ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { inspectImage } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";

/** An upload's bytes: in memory, or a temporary file the request spooled (video and audio). */
export type UploadSource = Buffer | { path: string; size: number };

export const sizeOf = (source: UploadSource) => (Buffer.isBuffer(source) ? source.length : source.size);
/** What sharp reads: the bytes, or the file's path. */
export const sharpInput = (source: UploadSource) => (Buffer.isBuffer(source) ? source : source.path);

/** Mastodon's image sizes: the original at most 3840×2160 worth of pixels, previews 640×360. Never cropped. */
export const ORIGINAL_PIXELS = 3840 * 2160;
export const SMALL_PIXELS = 640 * 360;

export interface Dimensions {
  width: number;
  height: number;
}

export function fitWithin(info: Dimensions, pixels: number): Dimensions {
  const area = info.width * info.height;
  if (area <= pixels) return { width: info.width, height: info.height };
  const scale = Math.sqrt(pixels / area);
  return { width: Math.max(1, Math.floor(info.width * scale)), height: Math.max(1, Math.floor(info.height * scale)) };
}

/** `meta.original` / `meta.small` of an image or preview. */
export function metaOf(size: Dimensions) {
  return {
    width: size.width,
    height: size.height,
    size: `${size.width}x${size.height}`,
    aspect: size.width / size.height,
  };
}

/** The blurhash clients show while a picture loads (4×3 components of a 32 px copy). */
export async function blurhashOf(data: Buffer | string): Promise<string> {
  const pixels = await sharp(data, { animated: false })
    .rotate()
    .resize(32, 32, { fit: "inside" })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return encodeBlurhash(new Uint8ClampedArray(pixels.data), pixels.info.width, pixels.info.height, 4, 3);
}

export interface StoredThumbnail {
  key: string;
  blurhash: string;
}

/**
 * Stores a chosen thumbnail (or an audio file's cover art): any image the server reads, scaled to
 * the preview size, re-encoded (no EXIF), with its blurhash. It replaces the generated preview.
 */
export async function storeThumbnail(ctx: Ctx, folder: string, data: Buffer): Promise<StoredThumbnail> {
  if (data.length > LIMITS.media.imageSizeLimit)
    throw new ValidationFailed(`Thumbnail file size must be less than ${LIMITS.media.imageSizeLimit / 1024 / 1024} MB`);
  let info;
  try {
    info = await inspectImage(data, "Thumbnail");
  } catch {
    throw new ValidationFailed("Thumbnail content type is invalid");
  }
  if (info.width * info.height > LIMITS.media.imageMatrixLimit)
    throw new ValidationFailed("Thumbnail dimensions are too large");
  const target = fitWithin(info, SMALL_PIXELS);
  const alpha = (await sharp(data).metadata()).hasAlpha === true;
  const image = sharp(data, { animated: false }).rotate().resize(target.width, target.height, { fit: "inside" });
  const encoded = await (alpha ? image.png() : image.jpeg({ quality: 85 })).toBuffer();
  const key = `${folder}/thumbnail/${randomFileName(alpha ? "png" : "jpg")}`;
  await ctx.media.put(key, encoded);
  return { key, blurhash: await blurhashOf(encoded) };
}
