import type { Ctx } from "../context.ts";
import { mediaOrder, pollOptions } from "../db/columns.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import { statusesByIds } from "../db/queries/statuses.ts";
import type {
  AccountRow,
  ApplicationRow,
  FilterContext,
  MediaAttachmentRow,
  PollRow,
  PreviewCardRow,
  StatusRow,
} from "../db/schema.ts";
import { acctOf, accountUrl, serializeAccounts, type Account } from "./account.ts";
import { loadEmojisFor, type CustomEmoji } from "./custom_emoji.ts";
import { serializeMediaAttachment, type MediaAttachment } from "./media_attachment.ts";
import { serializePoll, type Poll } from "./poll.ts";
import { serializePreviewCard } from "./preview_card.ts";
import { FilterSet, hiddenBy, type FilterResultJson } from "./filter.ts";
import { activeFiltersOf } from "../db/queries/filters.ts";

export interface Status {
  id: string;
  created_at: string;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  sensitive: boolean;
  spoiler_text: string;
  visibility: string;
  language: string | null;
  uri: string;
  url: string | null;
  replies_count: number;
  reblogs_count: number;
  favourites_count: number;
  edited_at: string | null;
  favourited?: boolean;
  reblogged?: boolean;
  muted?: boolean;
  bookmarked?: boolean;
  pinned?: boolean;
  filtered?: FilterResultJson[];
  content?: string;
  text?: string;
  reblog: Status | null;
  application: { name: string; website: string | null } | null;
  account: Account;
  media_attachments: MediaAttachment[];
  mentions: Array<{ id: string; username: string; url: string; acct: string }>;
  tags: Array<{ name: string; url: string }>;
  emojis: CustomEmoji[];
  card: ReturnType<typeof serializePreviewCard> | null;
  poll: Poll | null;
}

export interface SerializeOptions {
  /** DELETE answers with the source `text` instead of `content`, for delete-and-redraft. */
  withSourceText?: boolean;
  /**
   * Where the statuses are shown: `filtered` then holds only the viewer's filters for that
   * context (without it, every filter in force that matches, as Mastodon lists them).
   */
  filterContext?: FilterContext;
}

type MentionedAccount = Pick<AccountRow, "id" | "username" | "domain" | "url" | "uri">;

/** What a page of statuses shows to everyone: one query per kind, whatever the page size. */
interface PageContent {
  accounts: Map<string, Account>;
  /** Authors a moderator marked sensitive: their posts are shown as sensitive to everyone else. */
  sensitized: Set<string>;
  media: Map<string, MediaAttachmentRow[]>;
  mentions: Map<string, MentionedAccount[]>;
  tags: Map<string, string[]>;
  polls: Map<string, PollRow>;
  cards: Map<string, PreviewCardRow>;
  emojis: Map<string, CustomEmoji[]>;
  applications: Map<string, ApplicationRow>;
}

/**
 * What one viewer's flags on a page need (favourited, reblogged, bookmarked, pinned, muted, own
 * poll votes). Kept apart from the content so a page can be assembled from cached content plus
 * these few viewer-specific queries.
 */
interface ViewerState {
  favourited: Set<string>;
  reblogged: Set<string>;
  bookmarked: Set<string>;
  pinned: Set<string>;
  mutedConversations: Set<string>;
  ownVotes: Map<string, number[]>;
  filters: FilterSet;
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

function unique<T>(values: ReadonlyArray<T | null | undefined>): T[] {
  return [...new Set(values.filter((v): v is T => v !== null && v !== undefined))];
}

/** Runs `query` only when there is something to look up. */
async function whenAny<K, T>(keys: readonly K[], query: (keys: readonly K[]) => Promise<T[]>): Promise<T[]> {
  return keys.length > 0 ? query(keys) : [];
}

async function loadContent(ctx: Ctx, statuses: readonly StatusRow[]): Promise<PageContent> {
  const db = ctx.db.kysely;
  const ids = statuses.map((s) => s.id);
  const [accountRows, media, mentions, tags, polls, cards, applications] = await Promise.all([
    accountsByIds(db, unique(statuses.map((s) => s.account_id))),
    db.selectFrom("media_attachments").selectAll().where("status_id", "in", ids).orderBy("id").execute(),
    db
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .select([
        "accounts.id",
        "accounts.username",
        "accounts.domain",
        "accounts.url",
        "accounts.uri",
        "mentions.status_id",
      ])
      .where("mentions.status_id", "in", ids)
      .where("mentions.silent", "=", false)
      .orderBy("mentions.id")
      .execute(),
    db
      .selectFrom("statuses_tags")
      .innerJoin("tags", "tags.id", "statuses_tags.tag_id")
      .select(["statuses_tags.status_id", "tags.name"])
      .where("statuses_tags.status_id", "in", ids)
      .execute(),
    whenAny(unique(statuses.map((s) => s.poll_id)), (pollIds) =>
      db.selectFrom("polls").selectAll().where("id", "in", pollIds).execute(),
    ),
    db
      .selectFrom("preview_cards_statuses")
      .innerJoin("preview_cards", "preview_cards.id", "preview_cards_statuses.preview_card_id")
      .selectAll("preview_cards")
      .select("preview_cards_statuses.status_id")
      .where("preview_cards_statuses.status_id", "in", ids)
      .execute(),
    whenAny(unique(statuses.map((s) => s.application_id)), (appIds) =>
      db.selectFrom("oauth_applications").selectAll().where("id", "in", appIds).execute(),
    ),
  ]);

  const accountById = new Map(accountRows.map((row) => [row.id, row]));
  const domainOf = (accountId: string) => accountById.get(accountId)?.domain ?? null;
  const [serializedAccounts, emojis] = await Promise.all([
    serializeAccounts(ctx, accountRows),
    loadEmojisFor(ctx, [
      ...statuses.map((s) => ({ key: s.id, domain: domainOf(s.account_id), texts: [s.content, s.spoiler_text] })),
      ...polls.map((p) => ({ key: `poll:${p.id}`, domain: domainOf(p.account_id), texts: pollOptions(p) })),
    ]),
  ]);

  return {
    accounts: new Map(accountRows.map((row, i) => [row.id, serializedAccounts[i]])),
    sensitized: new Set(accountRows.filter((row) => row.sensitized_at).map((row) => row.id)),
    media: groupBy(media, (m) => m.status_id ?? ""),
    mentions: groupBy(mentions, (m) => m.status_id),
    tags: new Map([...groupBy(tags, (t) => t.status_id)].map(([k, rows]) => [k, rows.map((r) => r.name)])),
    polls: new Map(polls.map((p) => [p.id, p])),
    cards: new Map(cards.map((c) => [c.status_id, c])),
    emojis,
    applications: new Map(applications.map((a) => [a.id, a])),
  };
}

async function loadViewerState(ctx: Ctx, statuses: readonly StatusRow[], viewer: AccountRow): Promise<ViewerState> {
  const db = ctx.db.kysely;
  const ids = statuses.map((s) => s.id);
  const [favourites, reblogs, bookmarks, pins, mutes, votes, filters] = await Promise.all([
    db
      .selectFrom("favourites")
      .select("status_id")
      .where("account_id", "=", viewer.id)
      .where("status_id", "in", ids)
      .execute(),
    db
      .selectFrom("statuses")
      .select("reblog_of_id")
      .where("account_id", "=", viewer.id)
      .where("reblog_of_id", "in", ids)
      .where("deleted_at", "is", null)
      .execute(),
    db
      .selectFrom("bookmarks")
      .select("status_id")
      .where("account_id", "=", viewer.id)
      .where("status_id", "in", ids)
      .execute(),
    db
      .selectFrom("status_pins")
      .select("status_id")
      .where("account_id", "=", viewer.id)
      .where("status_id", "in", ids)
      .execute(),
    whenAny(unique(statuses.map((s) => s.conversation_id)), (conversationIds) =>
      db
        .selectFrom("conversation_mutes")
        .select("conversation_id")
        .where("account_id", "=", viewer.id)
        .where("conversation_id", "in", conversationIds)
        .execute(),
    ),
    whenAny(unique(statuses.map((s) => s.poll_id)), (pollIds) =>
      db
        .selectFrom("poll_votes")
        .select(["poll_id", "choice"])
        .where("poll_id", "in", pollIds)
        .where("account_id", "=", viewer.id)
        .execute(),
    ),
    activeFiltersOf(db, viewer.id),
  ]);
  const ownVotes = new Map<string, number[]>();
  for (const [pollId, rows] of groupBy(votes, (v) => v.poll_id))
    ownVotes.set(
      pollId,
      rows.map((r) => r.choice).sort((a, b) => a - b),
    );
  return {
    favourited: new Set(favourites.map((r) => r.status_id)),
    reblogged: new Set(unique(reblogs.map((r) => r.reblog_of_id))),
    bookmarked: new Set(bookmarks.map((r) => r.status_id)),
    pinned: new Set(pins.map((r) => r.status_id)),
    mutedConversations: new Set(mutes.map((r) => r.conversation_id)),
    ownVotes,
    filters: new FilterSet(filters),
  };
}

function orderedMedia(status: StatusRow, rows: MediaAttachmentRow[]): MediaAttachmentRow[] {
  if (!status.ordered_media_attachment_ids) return rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return mediaOrder(status)
    .map((id) => byId.get(id))
    .filter((r): r is MediaAttachmentRow => !!r);
}

function tagsOf(ctx: Ctx, names: readonly string[]): Status["tags"] {
  return names.map((name) => {
    const lower = name.toLowerCase();
    return { name: lower, url: `${ctx.config.baseUrl}/tags/${encodeURIComponent(lower)}` };
  });
}

/** The part of a Status that is the same for every viewer. */
function renderContent(
  ctx: Ctx,
  status: StatusRow,
  page: PageContent,
  options: SerializeOptions,
  reblog: Status | null,
): Status {
  const poll = status.poll_id ? page.polls.get(status.poll_id) : undefined;
  const card = page.cards.get(status.id);
  const application = status.application_id ? page.applications.get(status.application_id) : undefined;
  const account = page.accounts.get(status.account_id);
  if (!account) throw new Error(`Status ${status.id}: author ${status.account_id} not loaded`);
  const result: Status = {
    id: status.id,
    created_at: status.created_at,
    in_reply_to_id: status.in_reply_to_id,
    in_reply_to_account_id: status.in_reply_to_account_id,
    // As Mastodon: a sensitized author's posts are sensitive for everyone but the author.
    sensitive: status.sensitive || page.sensitized.has(status.account_id),
    spoiler_text: status.spoiler_text,
    visibility: status.visibility,
    language: status.language,
    uri: status.uri,
    url: status.url,
    replies_count: status.replies_count,
    reblogs_count: status.reblogs_count,
    favourites_count: status.favourites_count,
    edited_at: status.edited_at,
    reblog,
    application: application ? { name: application.name, website: application.website || null } : null,
    account,
    media_attachments: orderedMedia(status, page.media.get(status.id) ?? []).map((m) =>
      serializeMediaAttachment(ctx, m),
    ),
    mentions: (page.mentions.get(status.id) ?? []).map((a) => ({
      id: a.id,
      username: a.username,
      url: accountUrl(ctx, a),
      acct: acctOf(a),
    })),
    tags: tagsOf(ctx, page.tags.get(status.id) ?? []),
    emojis: page.emojis.get(status.id) ?? [],
    card: card ? serializePreviewCard(ctx, card) : null,
    poll: poll ? serializePoll(poll, undefined, page.emojis.get(`poll:${poll.id}`) ?? []) : null,
  };
  if (options.withSourceText) result.text = status.text;
  else result.content = status.content;
  return result;
}

/**
 * Adds one viewer's flags. A boost carries the flags of the status it boosts (Mastodon answers
 * `reblogged?`/`favourited?` on the proper status), except `pinned`: a boost cannot be pinned.
 */
function applyViewerState(
  status: StatusRow,
  proper: StatusRow,
  result: Status,
  page: PageContent,
  state: ViewerState,
  viewer: AccountRow,
  context: FilterContext | undefined,
): void {
  result.favourited = state.favourited.has(proper.id);
  result.reblogged = state.reblogged.has(proper.id);
  result.muted = proper.conversation_id ? state.mutedConversations.has(proper.conversation_id) : false;
  result.bookmarked = state.bookmarked.has(proper.id);
  if (status.account_id === viewer.id) result.sensitive = status.sensitive;
  if (status.account_id === viewer.id && !status.reblog_of_id && status.visibility !== "direct")
    result.pinned = state.pinned.has(status.id);
  const shown = result.reblog ?? result;
  result.filtered = state.filters.empty
    ? []
    : state.filters.resultsFor(
        status.reblog_of_id ? [status.id, status.reblog_of_id] : [status.id],
        {
          spoilerText: shown.spoiler_text,
          html: shown.content ?? "",
          pollOptions: shown.poll?.options.map((o) => o.title) ?? [],
          mediaDescriptions: shown.media_attachments.map((m) => m.description),
        },
        context,
      );
  const poll = status.poll_id ? page.polls.get(status.poll_id) : undefined;
  if (poll && result.poll) {
    result.poll = serializePoll(
      poll,
      { accountId: viewer.id, ownVotes: state.ownVotes.get(poll.id) ?? [] },
      result.poll.emojis,
    );
  }
}

/**
 * Serializes statuses (and the statuses they boost) for a viewer, with a fixed number of queries
 * whatever the page size: one query per kind of content, then one per kind of viewer state.
 * Callers pass only statuses the viewer may see.
 */
export async function serializeStatuses(
  ctx: Ctx,
  rows: readonly StatusRow[],
  viewer?: AccountRow,
  options: SerializeOptions = {},
): Promise<Status[]> {
  if (rows.length === 0) return [];
  const given = new Set(rows.map((r) => r.id));
  const originals = await statusesByIds(
    ctx.db.kysely,
    unique(rows.map((r) => r.reblog_of_id)).filter((id) => !given.has(id)),
  );
  const all = [...rows, ...originals];
  const byId = new Map(all.map((s) => [s.id, s]));
  const [page, state] = await Promise.all([
    loadContent(ctx, all),
    viewer ? loadViewerState(ctx, all, viewer) : undefined,
  ]);
  const render = (status: StatusRow, renderOptions: SerializeOptions, reblog: Status | null, proper: StatusRow) => {
    const result = renderContent(ctx, status, page, renderOptions, reblog);
    if (viewer && state) applyViewerState(status, proper, result, page, state, viewer, options.filterContext);
    return result;
  };
  return rows.map((row) => {
    const original = row.reblog_of_id ? byId.get(row.reblog_of_id) : undefined;
    const reblog = original ? render(original, {}, null, original) : null;
    return render(row, options, reblog, original ?? row);
  });
}

/**
 * A page of statuses shown in `context` (a timeline, a thread, notifications): serialized with
 * the viewer's filters for that context, and without the statuses a `hide` filter matches.
 */
export async function serializeStatusPage(
  ctx: Ctx,
  rows: readonly StatusRow[],
  viewer: AccountRow | undefined,
  context: FilterContext,
): Promise<Status[]> {
  const statuses = await serializeStatuses(ctx, rows, viewer, { filterContext: context });
  return viewer ? statuses.filter((s) => !hiddenBy(s.filtered)) : statuses;
}

export async function serializeStatus(
  ctx: Ctx,
  row: StatusRow,
  viewer?: AccountRow,
  options: SerializeOptions = {},
): Promise<Status> {
  return (await serializeStatuses(ctx, [row], viewer, options))[0];
}
