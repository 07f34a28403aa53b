import sharp, { type Sharp } from "sharp";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { CustomEmojiRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { EXTENSIONS, inspectImage, type ImageFormat, type ImageInfo } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";

/** Mastodon's limit for a local emoji's image file. */
export const EMOJI_SIZE_LIMIT = 256 * 1024;
/** Emoji are drawn at text size; a larger image only costs bandwidth. */
export const EMOJI_MAX_SIZE = 128;
const EMOJI_FORMATS: ReadonlySet<ImageFormat> = new Set(["png", "gif", "webp"]);
const SHORTCODE = /^[a-zA-Z0-9_]{2,}$/;

export interface AddCustomEmojiParams {
  shortcode: string;
  /** The image file: PNG, GIF or WebP, static or animated. */
  data: Buffer;
  category?: string | null;
  /** False keeps the emoji out of clients' pickers (it still renders). Default true. */
  visibleInPicker?: boolean;
}

function shortcodeErrors(shortcode: string): string[] {
  const errors: string[] = [];
  if (!SHORTCODE.test(shortcode)) errors.push("Shortcode is invalid");
  if ([...shortcode].length < 2) errors.push("Shortcode is too short (minimum is 2 characters)");
  return errors;
}

async function findLocalEmoji(ctx: Ctx, shortcode: string): Promise<CustomEmojiRow | undefined> {
  return ctx.db.kysely
    .selectFrom("custom_emojis")
    .selectAll()
    .where("domain", "is", null)
    .where("shortcode", "=", shortcode)
    .executeTakeFirst();
}

function encode(image: Sharp, format: ImageFormat): Sharp {
  if (format === "gif") return image.gif();
  if (format === "webp") return image.webp({ quality: 90 });
  return image.png();
}

/** Fits the image into 128×128 (keeping every frame) and, unless it already is a still PNG, makes a PNG of its first frame. */
async function processEmojiImage(
  data: Buffer,
  info: ImageInfo,
): Promise<{ original: Buffer; still: Buffer | undefined }> {
  const fit = { fit: "inside", withoutEnlargement: true } as const;
  const original = await encode(
    sharp(data, { animated: info.animated }).resize(EMOJI_MAX_SIZE, EMOJI_MAX_SIZE, fit),
    info.format,
  ).toBuffer();
  const needsStill = info.animated || info.format !== "png";
  const still = needsStill
    ? await sharp(data, { animated: false }).resize(EMOJI_MAX_SIZE, EMOJI_MAX_SIZE, fit).png().toBuffer()
    : undefined;
  return { original, still };
}

/**
 * Adds a local custom emoji from an image file. Throws ValidationFailed (422) for a malformed or
 * taken shortcode (compared case-sensitively, like Mastodon), a file over 256 KB, or a file that is
 * not a PNG, GIF or WebP image.
 */
export async function addCustomEmoji(ctx: Ctx, params: AddCustomEmojiParams): Promise<CustomEmojiRow> {
  const shortcode = params.shortcode;
  const errors = shortcodeErrors(shortcode);
  if (errors.length === 0 && (await findLocalEmoji(ctx, shortcode))) errors.push("Shortcode has already been taken");
  if (params.data.length > EMOJI_SIZE_LIMIT)
    errors.push(`Image file size must be less than ${EMOJI_SIZE_LIMIT / 1024} KB`);
  if (errors.length > 0) throw new ValidationFailed(errors);

  let info: ImageInfo | undefined;
  try {
    info = await inspectImage(params.data, "Image");
  } catch {
    info = undefined;
  }
  if (!info || !EMOJI_FORMATS.has(info.format)) throw new ValidationFailed("Image content type is invalid");
  let processed: Awaited<ReturnType<typeof processEmojiImage>>;
  try {
    processed = await processEmojiImage(params.data, info);
  } catch (error) {
    // The header was readable but the pixels are not (a truncated or corrupt file).
    ctx.log.warn({ err: error }, "custom emoji processing failed");
    throw new ValidationFailed("Image could not be processed: the file is not a readable image");
  }
  const { original, still } = processed;

  const id = newId();
  const folder = `custom_emojis/images/${id}`;
  const imageFile = `${folder}/original/${randomFileName(EXTENSIONS[info.format])}`;
  const staticFile = still ? `${folder}/static/${randomFileName("png")}` : null;
  await ctx.media.put(imageFile, original);
  if (staticFile && still) await ctx.media.put(staticFile, still);
  const now = new Date().toISOString();
  try {
    return await ctx.db.kysely
      .insertInto("custom_emojis")
      .values({
        id,
        shortcode,
        domain: null,
        uri: null,
        image_file: imageFile,
        image_remote_url: null,
        image_static_file: staticFile,
        disabled: false,
        visible_in_picker: params.visibleInPicker ?? true,
        category: params.category?.trim() || null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    await deleteFiles(ctx, { image_file: imageFile, image_static_file: staticFile });
    // Another process added the same shortcode since the check above (the unique index caught it).
    if (await findLocalEmoji(ctx, shortcode)) throw new ValidationFailed("Shortcode has already been taken");
    throw error;
  }
}

async function deleteFiles(ctx: Ctx, row: Pick<CustomEmojiRow, "image_file" | "image_static_file">): Promise<void> {
  for (const key of [row.image_file, row.image_static_file]) if (key) await ctx.media.delete(key);
}

async function requireLocalEmoji(ctx: Ctx, shortcode: string): Promise<CustomEmojiRow> {
  const row = await findLocalEmoji(ctx, shortcode);
  if (!row) throw new NotFound();
  return row;
}

/** Deletes a local emoji and its files; NotFound when there is none with that shortcode. */
export async function removeCustomEmoji(ctx: Ctx, shortcode: string): Promise<CustomEmojiRow> {
  const row = await requireLocalEmoji(ctx, shortcode);
  await ctx.db.kysely.deleteFrom("custom_emojis").where("id", "=", row.id).execute();
  await deleteFiles(ctx, row);
  return row;
}

/** The local emoji, disabled ones included, by shortcode (code point order on every engine). */
export async function listCustomEmojis(ctx: Ctx): Promise<CustomEmojiRow[]> {
  const rows = await ctx.db.kysely.selectFrom("custom_emojis").selectAll().where("domain", "is", null).execute();
  return rows.sort((a, b) => (a.shortcode < b.shortcode ? -1 : a.shortcode > b.shortcode ? 1 : 0));
}

/** The emoji a client's picker offers (GET /api/v1/custom_emojis): local and enabled, by shortcode. */
export async function listEnabledCustomEmojis(ctx: Ctx): Promise<CustomEmojiRow[]> {
  return ctx.db.kysely
    .selectFrom("custom_emojis")
    .selectAll()
    .where("domain", "is", null)
    .where("disabled", "=", false)
    .orderBy("shortcode")
    .execute();
}

/** A disabled emoji is neither listed nor rendered; its files stay, so enabling it again is instant. */
export async function setEmojiDisabled(ctx: Ctx, shortcode: string, disabled: boolean): Promise<CustomEmojiRow> {
  const row = await requireLocalEmoji(ctx, shortcode);
  return ctx.db.kysely
    .updateTable("custom_emojis")
    .set({ disabled, updated_at: new Date().toISOString() })
    .where("id", "=", row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
