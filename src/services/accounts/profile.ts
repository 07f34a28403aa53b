import type { Ctx } from "../../context.ts";
import type { AccountRow, UserRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { coverResize, EXTENSIONS, inspectImage, staticFrame, type ResizedImage } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";
import { countedLength, graphemeLength } from "../../text/entities.ts";
import { RAW_LENGTH_LIMIT } from "../statuses/validate.ts";
import { formatText } from "../text/format.ts";
import { isLanguageCode } from "../../text/languages.ts";
import { storedFields } from "../../entities/account.ts";
import { userSettings } from "../../db/columns.ts";
import type { UserSettings } from "../../db/schema.ts";

/** Avatars and headers: at most 8 MB each, as Mastodon's default, in these types. */
export const PROFILE_IMAGE_LIMIT = 8 * 1024 * 1024;
const PROFILE_IMAGE_TYPES = new Set(["jpeg", "png", "gif", "webp"]);
const SIZES = { avatar: [400, 400], header: [1500, 500] } as const;

export interface ProfileImageUpload {
  data: Buffer;
}

export interface ProfileUpdate {
  displayName?: string;
  note?: string;
  avatar?: ProfileImageUpload;
  header?: ProfileImageUpload;
  avatarDescription?: string;
  headerDescription?: string;
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  hideCollections?: boolean;
  indexable?: boolean;
  /** Name/value pairs in the order given; replaces all fields. */
  fields?: Array<{ name: string; value: string }>;
  privacy?: string;
  sensitive?: boolean;
  language?: string;
}

/** A field as stored: the plain source and its rendered HTML. */
export interface StoredField {
  name: string;
  value: string;
  value_html: string;
  verified_at: string | null;
}

type Kind = keyof typeof SIZES;

interface StoredImage {
  file: string;
  staticFile: string | null;
}

async function storeProfileImage(
  ctx: Ctx,
  account: AccountRow,
  kind: Kind,
  upload: ProfileImageUpload,
): Promise<StoredImage> {
  const label = kind === "avatar" ? "Avatar" : "Header";
  if (upload.data.length > PROFILE_IMAGE_LIMIT)
    throw new ValidationFailed(`${label} file size must be less than ${PROFILE_IMAGE_LIMIT / 1024 / 1024} MB`);
  const info = await inspectImage(upload.data, label);
  if (!PROFILE_IMAGE_TYPES.has(info.format)) throw new ValidationFailed(`${label} content type is invalid`);
  if (info.width * info.height > LIMITS.media.imageMatrixLimit)
    throw new ValidationFailed(`${label} dimensions are too large`);
  const [width, height] = SIZES[kind];
  let resized: ResizedImage;
  let still: ResizedImage | undefined;
  try {
    resized = await coverResize(upload.data, info, width, height);
    if (info.animated) still = await staticFrame(upload.data, width, height);
  } catch {
    // The header was readable but the image data is not (truncated or corrupt file).
    throw new ValidationFailed(`${label} could not be processed: the image data is damaged`);
  }
  const folder = `accounts/${kind}s/${account.id}`;
  const file = `${folder}/original/${randomFileName(EXTENSIONS[resized.format])}`;
  await ctx.media.put(file, resized.data);
  let staticFile: string | null = null;
  if (still) {
    staticFile = `${folder}/static/${randomFileName("png")}`;
    await ctx.media.put(staticFile, still.data);
  }
  return { file, staticFile };
}

function tooLong(label: string, max: number): string {
  return `${label} is too long (maximum is ${max} characters)`;
}

function checkTexts(update: ProfileUpdate): string[] {
  const problems: string[] = [];
  const limits = LIMITS.accounts;
  if (update.displayName !== undefined && graphemeLength(update.displayName) > limits.maxDisplayNameLength)
    problems.push(tooLong("Display name", limits.maxDisplayNameLength));
  // Bios are counted like posts: a URL is 23 characters, a remote mention only its @username.
  if (
    update.note !== undefined &&
    (update.note.length > RAW_LENGTH_LIMIT ||
      countedLength(update.note, LIMITS.statuses.charactersReservedPerUrl) > limits.maxNoteLength)
  ) {
    problems.push(tooLong("Note", limits.maxNoteLength));
  }
  if (
    update.avatarDescription !== undefined &&
    graphemeLength(update.avatarDescription) > limits.maxAvatarDescriptionLength
  )
    problems.push(tooLong("Avatar description", limits.maxAvatarDescriptionLength));
  if (
    update.headerDescription !== undefined &&
    graphemeLength(update.headerDescription) > limits.maxHeaderDescriptionLength
  )
    problems.push(tooLong("Header description", limits.maxHeaderDescriptionLength));
  if (update.fields) {
    if (update.fields.length > limits.maxProfileFields)
      problems.push(`Fields is too long (maximum is ${limits.maxProfileFields} fields)`);
    if (update.fields.some((f) => graphemeLength(f.name) > limits.profileFieldNameLimit))
      problems.push(tooLong("Fields name", limits.profileFieldNameLimit));
    if (update.fields.some((f) => graphemeLength(f.value) > limits.profileFieldValueLimit))
      problems.push(tooLong("Fields value", limits.profileFieldValueLimit));
    if (update.fields.some((f) => f.name.trim() === "" && f.value.trim() !== ""))
      problems.push("Fields with values missing labels");
  }
  if (update.privacy !== undefined && !["public", "unlisted", "private"].includes(update.privacy))
    problems.push("Setting default privacy is not included in the list");
  if (update.language !== undefined && update.language !== "" && !isLanguageCode(update.language))
    problems.push("Setting default language is not included in the list");
  return problems;
}

/**
 * Applies update_credentials: validates everything first (nothing is stored when one part is
 * refused), renders the bio and field values to HTML, processes images, then writes one update.
 */
export async function updateProfile(
  ctx: Ctx,
  account: AccountRow,
  user: UserRow,
  given: ProfileUpdate,
): Promise<{ account: AccountRow; user: UserRow }> {
  // Surrounding whitespace does not count and is not kept, as Mastodon strips it before validating.
  const update: ProfileUpdate = { ...given, displayName: given.displayName?.trim(), note: given.note?.trim() };
  const problems = checkTexts(update);
  if (problems.length > 0) throw new ValidationFailed(problems);

  const changes: Record<string, unknown> = {};
  if (update.displayName !== undefined) changes.display_name = update.displayName;
  if (update.note !== undefined) {
    changes.note_text = update.note;
    changes.note = (await formatText(ctx, update.note, { multiline: true })).html;
  }
  if (update.fields !== undefined) {
    // A verified link stays verified while its value is unchanged, even when the label changes.
    const previous = new Map(storedFields(account).map((f) => [f.value, f.verified_at ?? null]));
    const fields: StoredField[] = [];
    for (const field of update.fields) {
      if (field.name.trim() === "" && field.value.trim() === "") continue;
      const rendered = await formatText(ctx, field.value, { multiline: false, rel: "me" });
      fields.push({
        name: field.name,
        value: field.value,
        value_html: rendered.html,
        verified_at: previous.get(field.value) ?? null,
      });
    }
    changes.fields = JSON.stringify(fields);
  }
  if (update.locked !== undefined) changes.locked = update.locked;
  if (update.bot !== undefined) changes.actor_type = update.bot ? "Service" : "Person";
  if (update.discoverable !== undefined) changes.discoverable = update.discoverable;
  if (update.hideCollections !== undefined) changes.hide_collections = update.hideCollections;
  if (update.indexable !== undefined) changes.indexable = update.indexable;
  if (update.avatarDescription !== undefined) changes.avatar_description = update.avatarDescription;
  if (update.headerDescription !== undefined) changes.header_description = update.headerDescription;

  const replaced: string[] = [];
  for (const kind of ["avatar", "header"] as const) {
    const upload = update[kind];
    if (!upload) continue;
    const stored = await storeProfileImage(ctx, account, kind, upload);
    changes[`${kind}_file`] = stored.file;
    changes[`${kind}_static_file`] = stored.staticFile;
    changes[`${kind}_remote_url`] = null;
    for (const old of [account[`${kind}_file`], account[`${kind}_static_file`]]) if (old) replaced.push(old);
  }

  let settings: UserSettings | undefined;
  if (update.privacy !== undefined || update.sensitive !== undefined || update.language !== undefined) {
    settings = userSettings(user);
    if (update.privacy !== undefined) settings.default_privacy = update.privacy as UserSettings["default_privacy"];
    if (update.sensitive !== undefined) settings.default_sensitive = update.sensitive;
    if (update.language !== undefined) settings.default_language = update.language || null;
  }

  const now = new Date().toISOString();
  const result = await ctx.dispatcher.transaction(async (tx) => {
    const updatedAccount = await tx
      .updateTable("accounts")
      .set({ ...changes, updated_at: now })
      .where("id", "=", account.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const updatedUser = settings
      ? await tx
          .updateTable("users")
          .set({ settings: JSON.stringify(settings), updated_at: now })
          .where("id", "=", user.id)
          .returningAll()
          .executeTakeFirstOrThrow()
      : user;
    if (Object.keys(changes).length > 0)
      await ctx.dispatcher.emit(tx, { type: "account.updated", accountId: account.id });
    return { account: updatedAccount, user: updatedUser };
  });
  await Promise.all(replaced.map((key) => ctx.media.delete(key)));
  return result;
}

/** Removes the avatar or header, back to the default image. */
export async function removeProfileImage(ctx: Ctx, account: AccountRow, kind: Kind): Promise<AccountRow> {
  const row = await ctx.db.kysely
    .updateTable("accounts")
    .set({
      [`${kind}_file`]: null,
      [`${kind}_static_file`]: null,
      [`${kind}_remote_url`]: null,
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", account.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await ctx.dispatcher.emitCommitted({ type: "account.updated", accountId: account.id });
  await Promise.all(
    [account[`${kind}_file`], account[`${kind}_static_file`]]
      .filter((k): k is string => !!k)
      .map((key) => ctx.media.delete(key)),
  );
  return row;
}
