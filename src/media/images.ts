import sharp, { type Metadata, type Sharp } from "sharp";
import { Unprocessable, ValidationFailed } from "../errors.ts";

export type ImageFormat = "jpeg" | "png" | "gif" | "webp" | "avif";

const FORMAT_BY_SHARP: Record<string, ImageFormat> = {
  jpeg: "jpeg",
  png: "png",
  gif: "gif",
  webp: "webp",
  heif: "avif",
};

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
};

export const EXTENSIONS: Record<ImageFormat, string> = {
  jpeg: "jpg",
  png: "png",
  gif: "gif",
  webp: "webp",
  avif: "avif",
};

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
  animated: boolean;
}

/** Identifies an image by its content (never by the name or type the client claims): bytes, or a file's path. */
export async function inspectImage(data: Buffer | string, label: string): Promise<ImageInfo> {
  let metadata: Metadata;
  try {
    metadata = await sharp(data, { animated: true, limitInputPixels: 8000 * 8000 }).metadata();
  } catch {
    throw new Unprocessable(`Validation failed: ${label} could not be processed: the file is not a readable image`);
  }
  const format = FORMAT_BY_SHARP[metadata.format ?? ""];
  if (!format || !metadata.width || !metadata.height) throw new ValidationFailed(`${label} content type is invalid`);
  const pages = metadata.pages ?? 1;
  return { format, width: metadata.width, height: metadata.pageHeight ?? metadata.height, animated: pages > 1 };
}

export interface ResizedImage {
  data: Buffer;
  format: ImageFormat;
  width: number;
  height: number;
}

/** Crops to fill `width`×`height` (avatars and headers), keeping animation and the format. */
export async function coverResize(data: Buffer, info: ImageInfo, width: number, height: number): Promise<ResizedImage> {
  const image = sharp(data, { animated: info.animated })
    .rotate()
    .resize(width, height, { fit: "cover", withoutEnlargement: true });
  const output = await encode(image, info.format).toBuffer({ resolveWithObject: true });
  return {
    data: output.data,
    format: info.format,
    width: output.info.width,
    height: output.info.pageHeight ?? output.info.height,
  };
}

/** The first frame as a PNG, for the `*_static` variants of animated images. */
export async function staticFrame(data: Buffer, width: number, height: number): Promise<ResizedImage> {
  const output = await sharp(data, { animated: false })
    .rotate()
    .resize(width, height, { fit: "cover", withoutEnlargement: true })
    .png()
    .toBuffer({ resolveWithObject: true });
  return { data: output.data, format: "png", width: output.info.width, height: output.info.height };
}

function encode(image: Sharp, format: ImageFormat): Sharp {
  switch (format) {
    case "jpeg":
      return image.jpeg({ quality: 90, mozjpeg: true });
    case "png":
      return image.png();
    case "gif":
      return image.gif();
    case "webp":
      return image.webp({ quality: 90 });
    case "avif":
      return image.avif({ quality: 70 });
  }
}
