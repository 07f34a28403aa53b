/**
 * The one preparation of a post, shared by posting now, scheduling and publishing a scheduled
 * post (and, for its content part, by editing): every rule is checked and everything the insert
 * needs is loaded before any row is written, so a refused post leaves nothing behind.
 */
import type { Ctx } from "../../context.ts";
import { statusById } from "../../db/queries/statuses.ts";
import type { AccountRow, MediaAttachmentRow, StatusRow, UserRow } from "../../db/schema.ts";
import { formatText, type FormattedText } from "../text/format.ts";
import { userSettings } from "../../db/columns.ts";
import { ReplyTargetNotFound, UnexpectedMentions } from "./errors.ts";
import {
  checkContent,
  checkVisibility,
  effectiveText,
  loadAttachableMedia,
  normalizeLanguage,
  type PollParams,
  type Visibility,
} from "./validate.ts";
import { isStatusVisible } from "../visibility/visibility.ts";

/** Who posts: the account, its user (for defaults) and the app the token belongs to. */
export interface Author {
  account: AccountRow;
  user: UserRow;
  applicationId: string | null;
}

/** A post as the client asked for it (already parsed, not yet checked). */
export interface StatusParams {
  text: string;
  mediaIds: string[];
  poll?: PollParams;
  /** The status replied to; a value that was not an ID is refused when parsing. */
  inReplyToId?: string;
  sensitive?: boolean;
  spoilerText: string;
  visibility?: string;
  language?: string;
  /** Mastodon's mention safeguard: when given, mentioning anyone else refuses the post. */
  allowedMentions?: string[];
}

/** The text, warning, media and poll of a post, checked, with the text rendered. */
export interface PreparedContent {
  text: string;
  spoilerText: string;
  /** A warning was given, which makes the post sensitive. */
  hadWarning: boolean;
  media: MediaAttachmentRow[];
  poll: PollParams | undefined;
  formatted: FormattedText;
}

/** A post that passed every rule: what `createStatus` stores. */
export interface StatusDraft extends PreparedContent {
  visibility: Visibility;
  sensitive: boolean;
  language: string | null;
  parent: StatusRow | undefined;
}

/** Which row may already hold the media: the status being edited or the scheduled status being published. */
export interface MediaOwner {
  statusId?: string;
  scheduledStatusId?: string;
}

interface ContentParams {
  text: string;
  spoilerText: string;
  mediaIds: string[];
  poll: PollParams | undefined;
}

type CheckedContent = ContentParams & { hadWarning: boolean };

/** The rules that need no database: a warning alone becomes the text; length, media count, poll. */
function checkedContent(content: ContentParams): CheckedContent {
  const { text, spoilerText, hadWarning } = effectiveText(content.text, content.spoilerText, content.mediaIds);
  checkContent({ text, spoilerText, mediaIds: content.mediaIds, poll: content.poll });
  return { text, spoilerText, hadWarning, mediaIds: content.mediaIds, poll: content.poll };
}

async function loadContent(
  ctx: Ctx,
  accountId: string,
  content: CheckedContent,
  owner: MediaOwner,
): Promise<PreparedContent> {
  const media = await loadAttachableMedia(ctx.db.kysely, accountId, content.mediaIds, owner);
  const formatted = await formatText(ctx, content.text, { multiline: true }, { resolveRemote: true });
  const { text, spoilerText, hadWarning, poll } = content;
  return { text, spoilerText, hadWarning, media, poll, formatted };
}

/** Checks and renders the content part of a post (text, warning, media, poll). */
export async function prepareContent(
  ctx: Ctx,
  accountId: string,
  content: ContentParams,
  owner: MediaOwner = {},
): Promise<PreparedContent> {
  return loadContent(ctx, accountId, checkedContent(content), owner);
}

/** The status replied to, which the author must be able to see (and which is not a boost). */
export async function replyTarget(
  ctx: Ctx,
  author: AccountRow,
  id: string | undefined,
): Promise<StatusRow | undefined> {
  if (id === undefined) return undefined;
  const parent = await statusById(ctx.db.kysely, id);
  if (!parent || parent.reblog_of_id || !(await isStatusVisible(ctx.db.kysely, parent, author.id)))
    throw new ReplyTargetNotFound();
  return parent;
}

/**
 * Prepares a new post of `author`: content rules, visibility (the author's default when none is
 * asked; a silenced account's public posts become unlisted), reply target, mention safeguard,
 * sensitivity and language.
 */
export async function prepareStatus(
  ctx: Ctx,
  author: Author,
  params: StatusParams,
  owner: MediaOwner = {},
): Promise<StatusDraft> {
  const settings = userSettings(author.user);
  const checked = checkedContent({ ...params, poll: params.poll });
  let visibility: Visibility = checkVisibility(params.visibility) ?? settings.default_privacy;
  if (visibility === "public" && author.account.silenced_at) visibility = "unlisted";
  const parent = await replyTarget(ctx, author.account, params.inReplyToId);
  const content = await loadContent(ctx, author.account.id, checked, owner);
  if (params.allowedMentions) {
    const allowed = new Set(params.allowedMentions);
    const unexpected = content.formatted.mentions.filter((account) => !allowed.has(account.id));
    if (unexpected.length > 0) throw new UnexpectedMentions(unexpected);
  }
  return {
    ...content,
    visibility,
    sensitive: (params.sensitive ?? settings.default_sensitive) || content.hadWarning,
    language: normalizeLanguage(params.language) ?? settings.default_language ?? null,
    parent,
  };
}
