/**
 * Local statuses as ActivityStreams objects, the way Mastodon serves them (reference/federation.md
 * §3–§4): a Note with its HTML `content` (and `contentMap` in its language), the content warning
 * as `summary`, `sensitive`, `inReplyTo`, its thread as `context` and `conversation`, attachments
 * as Documents with their alt text, size, blurhash and focal point, Mention, Hashtag and Emoji
 * tags, and the audience of its visibility:
 *
 * | visibility | to                 | cc                        |
 * |------------|--------------------|---------------------------|
 * | public     | Public             | followers, mentioned      |
 * | unlisted   | followers          | Public, mentioned         |
 * | private    | followers          | mentioned                 |
 * | direct     | mentioned          | –                         |
 *
 * Boosts are Announces of the boosted status's id, addressed the same way. What Fedify's vocabulary
 * lacks (blurhash, focal point, conversation) is written by the classes of mastodon_terms.ts.
 */
import { LanguageString } from "@fedify/fedify";
import {
  Announce,
  Collection,
  Delete,
  Emoji,
  Hashtag,
  Image,
  Mention,
  Note,
  PUBLIC_COLLECTION,
  Tombstone,
  type Question,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { pollOptions, pollTallies } from "../db/columns.ts";
import type { AccountRow, PollRow } from "../db/schema.ts";
import { isPollExpired } from "../entities/poll.ts";
import { mediaTypeOfName } from "../media/types.ts";
import type { Status } from "../entities/status.ts";
import type { StatusLinks } from "../services/statuses/audience.ts";
import { MediaDocument, PostCreate, PostUpdate, ThreadedNote, ThreadedQuestion } from "./mastodon_terms.ts";

const instant = (iso: string) => Temporal.Instant.from(new Date(iso).toISOString());

/** `to` and `cc` of a status by `author` with `visibility`, mentioning `mentioned`. */
export function addressing(
  author: Pick<AccountRow, "followers_url">,
  visibility: string,
  mentioned: readonly Pick<AccountRow, "uri">[],
): { tos: URL[]; ccs: URL[] } {
  const followers = author.followers_url ? [new URL(author.followers_url)] : [];
  const mentions = mentioned.map((account) => new URL(account.uri));
  switch (visibility) {
    case "public":
      return { tos: [PUBLIC_COLLECTION], ccs: [...followers, ...mentions] };
    case "unlisted":
      return { tos: followers, ccs: [PUBLIC_COLLECTION, ...mentions] };
    case "private":
      return { tos: followers, ccs: mentions };
    default:
      return { tos: mentions, ccs: [] };
  }
}

function attachmentOf(media: Status["media_attachments"][number]): MediaDocument | null {
  if (!media.url) return null;
  const { original, focus } = media.meta as {
    original?: { width?: unknown; height?: unknown };
    focus?: { x?: unknown; y?: unknown };
  };
  return new MediaDocument({
    url: new URL(media.url),
    mediaType: mediaTypeOfName(new URL(media.url).pathname) ?? null,
    name: media.description || null,
    width: typeof original?.width === "number" ? original.width : null,
    height: typeof original?.height === "number" ? original.height : null,
    blurhash: media.blurhash,
    focalPoint: typeof focus?.x === "number" && typeof focus.y === "number" ? [focus.x, focus.y] : null,
  });
}

/** A thread's name as `context`: only a web URL (an OStatus `tag:` is Mastodon's `conversation` alone). */
function contextOf(conversationUri: string | null): URL[] {
  const url = conversationUri ? URL.parse(conversationUri) : null;
  return url && (url.protocol === "https:" || url.protocol === "http:") ? [url] : [];
}

/** A poll's options as Mastodon sends them: Notes named by the option, their votes as `replies`. */
function pollFields(poll: PollRow) {
  const tallies = pollTallies(poll);
  const options = pollOptions(poll).map(
    (title, i) => new Note({ name: title, replies: new Collection({ totalItems: tallies[i] ?? 0 }) }),
  );
  const endTime = poll.expires_at ? instant(poll.expires_at) : null;
  const closed = poll.closed_at ? instant(poll.closed_at) : poll.expires_at && isPollExpired(poll) ? endTime : null;
  return {
    ...(poll.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
    endTime,
    closed,
    voters: poll.voters_count ?? 0,
  };
}

/**
 * The Note of a local status (not a boost) — a Question when it has a poll; `entity` is its API
 * form, seen by nobody in particular.
 */
export function noteOf(links: StatusLinks, entity: Status): Note | Question {
  const { status, author, mentioned, parent, conversationUri } = links;
  const content = entity.content ?? "";
  const values = {
    id: new URL(status.uri),
    url: status.url ? new URL(status.url) : null,
    attribution: new URL(author.uri),
    ...addressing(author, status.visibility, mentioned),
    published: instant(status.created_at),
    updated: status.edited_at ? instant(status.edited_at) : null,
    summary: status.spoiler_text || null,
    // The API form's flag: a sensitized author's posts are sensitive elsewhere too (Mastodon's NoteSerializer).
    sensitive: entity.sensitive,
    contents: status.language ? [content, new LanguageString(content, status.language)] : [content],
    replyTarget: parent ? new URL(parent.uri) : null,
    // The thread: `conversation` for Mastodon; `context` (a URL, so not an OStatus tag) for Akkoma.
    conversation: conversationUri,
    contexts: contextOf(conversationUri),
    replies:
      status.visibility === "public" || status.visibility === "unlisted" ? new URL(`${status.uri}/replies`) : null,
    attachments: entity.media_attachments.map(attachmentOf).filter((d): d is MediaDocument => d !== null),
    tags: [
      ...mentioned.map(
        (account) =>
          new Mention({
            href: new URL(account.uri),
            name: `@${account.username}${account.domain ? `@${account.domain}` : ""}`,
          }),
      ),
      ...entity.tags.map((tag) => new Hashtag({ href: new URL(tag.url), name: `#${tag.name}` })),
      ...entity.emojis.map(
        (emoji) =>
          new Emoji({
            id: new URL(emoji.url),
            name: `:${emoji.shortcode}:`,
            icon: new Image({ url: new URL(emoji.url) }),
          }),
      ),
    ],
  };
  return links.poll ? new ThreadedQuestion({ ...values, ...pollFields(links.poll) }) : new ThreadedNote(values);
}

/** The Create that publishes a status (`/activity` beside it, as Mastodon names it). */
export function createOf(note: Note | Question, links: StatusLinks): PostCreate {
  return new PostCreate({
    id: new URL(`${links.status.uri}/activity`),
    actor: new URL(links.author.uri),
    tos: note.toIds,
    ccs: note.ccIds,
    published: note.published,
    object: note,
  });
}

/** The Update that carries an edited status. */
export function updateOf(note: Note | Question, links: StatusLinks): PostUpdate {
  return new PostUpdate({
    id: new URL(`${links.status.uri}#updates/${Date.parse(links.status.edited_at ?? links.status.updated_at)}`),
    actor: new URL(links.author.uri),
    tos: note.toIds,
    ccs: note.ccIds,
    updated: note.updated,
    object: note,
  });
}

/** A boost: the Announce of the boosted status, its id the boost's uri. */
export function announceOf(links: StatusLinks): Announce | null {
  const { status, author, reblogOf } = links;
  if (!reblogOf) return null;
  return new Announce({
    id: new URL(status.uri),
    actor: new URL(author.uri),
    ...addressing(author, status.visibility, [reblogOf.author]),
    published: instant(status.created_at),
    object: new URL(reblogOf.status.uri),
  });
}

/** The Delete of a status, with a Tombstone in its place (addressed to Public whatever it was, as Mastodon does). */
export function deleteOf(authorUri: string, statusUri: string): Delete {
  return new Delete({
    id: new URL(`${statusUri}#delete`),
    actor: new URL(authorUri),
    to: PUBLIC_COLLECTION,
    object: new Tombstone({ id: new URL(statusUri) }),
  });
}
