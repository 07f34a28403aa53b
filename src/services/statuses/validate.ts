import type { Kysely } from "kysely";
import { isIdLike } from "../../db/ids.ts";
import type { Database, MediaAttachmentRow } from "../../db/schema.ts";
import { Unprocessable, ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { countedLength, graphemeLength } from "../../text/entities.ts";
import { isLanguageCode } from "../../text/languages.ts";

/** Raw text longer than this cannot fit the counted limit, whatever it holds. */
export const RAW_LENGTH_LIMIT = 20_000;

export const VISIBILITIES = ["public", "unlisted", "private", "direct"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export interface PollParams {
  options: string[];
  expiresIn: number | undefined;
  multiple: boolean;
  hideTotals: boolean;
}

/** The text parts of a status as the author sent them. */
export interface StatusContent {
  text: string;
  spoilerText: string;
  mediaIds: string[];
  poll: PollParams | undefined;
}

/**
 * A post with only a content warning uses the warning as its text (Mastodon's PostStatusService).
 * `hadWarning` tells whether a warning was given, which makes the post sensitive.
 */
export function effectiveText(
  text: string,
  spoilerText: string,
  mediaIds: readonly string[],
): { text: string; spoilerText: string; hadWarning: boolean } {
  const hadWarning = spoilerText.trim() !== "";
  if (text.trim() === "" && hadWarning && mediaIds.length === 0)
    return { text: spoilerText, spoilerText: "", hadWarning };
  return { text, spoilerText, hadWarning };
}

/** Text, CW, media and poll rules shared by create, edit and scheduling. */
export function checkContent(content: StatusContent): void {
  if (content.poll && content.mediaIds.length > 0)
    throw new ValidationFailed("Poll cannot be combined with media attachments");
  if (content.text.trim() === "" && content.mediaIds.length === 0) throw new ValidationFailed("Text can't be blank");
  // Far beyond any possible count (URLs count 23 however long): refuse before parsing at all.
  if (content.text.length + content.spoilerText.length > RAW_LENGTH_LIMIT)
    throw new ValidationFailed(`Text character limit of ${LIMITS.statuses.maxCharacters} exceeded`);
  // The warning and the text are counted apart, so a warning's last word never joins a URL.
  if (
    graphemeLength(content.spoilerText) + countedLength(content.text, LIMITS.statuses.charactersReservedPerUrl) >
    LIMITS.statuses.maxCharacters
  ) {
    throw new ValidationFailed(`Text character limit of ${LIMITS.statuses.maxCharacters} exceeded`);
  }
  if (content.mediaIds.length > LIMITS.statuses.maxMediaAttachments)
    throw new Unprocessable(`Cannot attach more than ${LIMITS.statuses.maxMediaAttachments} files`);
  if (content.poll) checkPoll(content.poll);
}

export function checkPoll(poll: PollParams): void {
  const { maxOptions, maxCharactersPerOption, minExpiration, maxExpiration } = LIMITS.polls;
  const problems: string[] = [];
  if (poll.options.length < 2) problems.push("Poll options must have more than one item");
  if (poll.options.length > maxOptions) problems.push(`Poll options can't contain more than ${maxOptions} items`);
  if (poll.options.some((o) => o.trim() === "")) problems.push("Poll options can't be blank");
  if (poll.options.some((o) => graphemeLength(o) > maxCharactersPerOption))
    problems.push(`Poll options cannot be longer than ${maxCharactersPerOption} characters each`);
  if (new Set(poll.options.map((o) => o.trim())).size !== poll.options.length)
    problems.push("Poll options contain duplicate items");
  if (poll.expiresIn === undefined) problems.push("Poll expires at can't be blank");
  else if (poll.expiresIn < minExpiration) problems.push("Poll expires at is too soon");
  else if (poll.expiresIn > maxExpiration) problems.push("Poll expires at is too far into the future");
  if (problems.length > 0) throw new ValidationFailed(problems);
}

export function checkVisibility(value: string | undefined): Visibility | undefined {
  if (value === undefined || value === "") return undefined;
  if (!(VISIBILITIES as readonly string[]).includes(value))
    throw new ValidationFailed("Visibility is not included in the list");
  return value as Visibility;
}

/** A language code Mastodon would keep (`en`, `pt-BR` → `pt`); anything else is dropped. */
export function normalizeLanguage(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const code = value.trim().toLowerCase().split(/[-_]/)[0];
  return isLanguageCode(code) ? code : undefined;
}

/**
 * The author's media for a new or edited status: all must exist, belong to the author, be free
 * (or already on the status, or held by the scheduled status being published) and be processed; a video or an
 * audio file cannot be mixed with other files (a gifv can).
 */
export async function loadAttachableMedia(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
  owner: { statusId?: string; scheduledStatusId?: string } = {},
): Promise<MediaAttachmentRow[]> {
  if (ids.length === 0) return [];
  const unique = [...new Set(ids)];
  // Values that cannot be IDs are simply missing (PostgreSQL would refuse them in a bigint comparison).
  const valid = unique.filter(isIdLike);
  const rows = valid.length
    ? await db
        .selectFrom("media_attachments")
        .selectAll()
        .where("id", "in", valid)
        .where("account_id", "=", accountId)
        .execute()
    : [];
  const usable = rows.filter(
    (r) =>
      (r.scheduled_status_id === null || r.scheduled_status_id === owner.scheduledStatusId) &&
      (r.status_id === null || r.status_id === owner.statusId),
  );
  if (usable.length !== unique.length) {
    const missing = unique.filter((id) => !usable.some((r) => r.id === id));
    throw new Unprocessable(`Media ${missing.join(", ")} not found or already attached to another post`);
  }
  const failed = usable.filter((r) => r.processing === "failed");
  if (failed.length > 0)
    throw new Unprocessable(
      `Media ${failed.map((r) => r.id).join(", ")} could not be processed and cannot be attached; upload it again`,
    );
  if (usable.some((r) => r.processing !== "complete"))
    throw new Unprocessable("Cannot attach files that have not finished processing. Try again in a moment!");
  // Mastodon's rule (audio_or_video?): a video or an audio file stands alone; a gifv goes with pictures.
  const moving = usable.filter((r) => r.type === "video" || r.type === "audio");
  if (moving.length > 0 && usable.length > 1)
    throw new Unprocessable("Cannot attach a video to a post that already contains images");
  const byId = new Map(usable.map((r) => [r.id, r]));
  return unique.map((id) => byId.get(id)!);
}
