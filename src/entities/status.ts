import type { Ctx } from "../context.ts";
import type { AccountRow, ApplicationRow, MediaAttachmentRow, PollRow, PreviewCardRow, StatusRow } from "../db/schema.ts";
import { acctOf, accountUrl, serializeAccounts, type Account } from "./account.ts";
import { loadEmojisFor, type CustomEmoji } from "./custom_emoji.ts";
import { serializeMediaAttachment, type MediaAttachment } from "./media_attachment.ts";
import { serializePoll, type Poll } from "./poll.ts";
import { serializePreviewCard } from "./preview_card.ts";

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
  filtered?: unknown[];
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
}

/** Everything a page of statuses needs, loaded with one query per kind. */
interface Loaded {
  accounts: Map<string, Account>;
  media: Map<string, MediaAttachmentRow[]>;
  mentions: Map<string, AccountRow[]>;
  tags: Map<string, string[]>;
  polls: Map<string, PollRow>;
  ownVotes: Map<string, number[]>;
  cards: Map<string, PreviewCardRow>;
  emojis: Map<string, CustomEmoji[]>;
  applications: Map<string, ApplicationRow>;
  favourited: Set<string>;
  reblogged: Set<string>;
  bookmarked: Set<string>;
  pinned: Set<string>;
  mutedConversations: Set<string>;
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

async function load(ctx: Ctx, statuses: readonly StatusRow[], viewer: AccountRow | undefined): Promise<Loaded> {
  const db = ctx.db.kysely;
  const ids = statuses.map((s) => s.id);
  const accountIds = [...new Set(statuses.map((s) => s.account_id))];
  const pollIds = statuses.map((s) => s.poll_id).filter((id): id is string => !!id);
  const appIds = [...new Set(statuses.map((s) => s.application_id).filter((id): id is string => !!id))];
  const conversationIds = [...new Set(statuses.map((s) => s.conversation_id).filter((id): id is string => !!id))];
  const none = Promise.resolve([]);
  const viewerRows = <T>(query: () => Promise<T[]>) => (viewer ? query() : (none as Promise<T[]>));

  const [accountRows, media, mentions, tags, polls, votes, cards, applications, favourites, reblogs, bookmarks, pins, mutes] = await Promise.all([
    db.selectFrom("accounts").selectAll().where("id", "in", accountIds).execute(),
    db.selectFrom("media_attachments").selectAll().where("status_id", "in", ids).orderBy("id").execute(),
    db
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .selectAll("accounts")
      .select("mentions.status_id")
      .where("mentions.status_id", "in", ids)
      .where("mentions.silent", "=", false)
      .orderBy("mentions.id")
      .execute(),
    db.selectFrom("statuses_tags").innerJoin("tags", "tags.id", "statuses_tags.tag_id").select(["statuses_tags.status_id", "tags.name"]).where("statuses_tags.status_id", "in", ids).execute(),
    pollIds.length ? db.selectFrom("polls").selectAll().where("id", "in", pollIds).execute() : none,
    pollIds.length ? viewerRows(() => db.selectFrom("poll_votes").select(["poll_id", "choice"]).where("poll_id", "in", pollIds).where("account_id", "=", viewer!.id).execute()) : none,
    db.selectFrom("preview_cards_statuses").innerJoin("preview_cards", "preview_cards.id", "preview_cards_statuses.preview_card_id").selectAll("preview_cards").select("preview_cards_statuses.status_id").where("preview_cards_statuses.status_id", "in", ids).execute(),
    appIds.length ? db.selectFrom("oauth_applications").selectAll().where("id", "in", appIds).execute() : none,
    viewerRows(() => db.selectFrom("favourites").select("status_id").where("account_id", "=", viewer!.id).where("status_id", "in", ids).execute()),
    viewerRows(() => db.selectFrom("statuses").select("reblog_of_id").where("account_id", "=", viewer!.id).where("reblog_of_id", "in", ids).where("deleted_at", "is", null).execute()),
    viewerRows(() => db.selectFrom("bookmarks").select("status_id").where("account_id", "=", viewer!.id).where("status_id", "in", ids).execute()),
    viewerRows(() => db.selectFrom("status_pins").select("status_id").where("account_id", "=", viewer!.id).where("status_id", "in", ids).execute()),
    conversationIds.length
      ? viewerRows(() => db.selectFrom("conversation_mutes").select("conversation_id").where("account_id", "=", viewer!.id).where("conversation_id", "in", conversationIds).execute())
      : none,
  ]);

  const serializedAccounts = await serializeAccounts(ctx, accountRows);
  const pollRows = polls as PollRow[];
  const emojis = await loadEmojisFor(ctx, [
    ...statuses.map((s) => ({
      key: s.id,
      domain: accountRows.find((a) => a.id === s.account_id)?.domain ?? null,
      texts: [s.content, s.spoiler_text],
    })),
    ...pollRows.map((p) => ({ key: `poll:${p.id}`, domain: accountRows.find((a) => a.id === p.account_id)?.domain ?? null, texts: JSON.parse(p.options) as string[] })),
  ]);
  const ownVotes = new Map<string, number[]>();
  for (const vote of votes as Array<{ poll_id: string; choice: number }>) ownVotes.set(vote.poll_id, [...(ownVotes.get(vote.poll_id) ?? []), vote.choice].sort((a, b) => a - b));

  return {
    accounts: new Map(accountRows.map((row, i) => [row.id, serializedAccounts[i]])),
    media: groupBy(media, (m) => m.status_id!),
    mentions: new Map([...groupBy(mentions, (m) => m.status_id)].map(([k, rows]) => [k, rows as unknown as AccountRow[]])),
    tags: new Map([...groupBy(tags, (t) => t.status_id)].map(([k, rows]) => [k, rows.map((r) => r.name)])),
    polls: new Map(pollRows.map((p) => [p.id, p])),
    ownVotes,
    cards: new Map((cards as Array<PreviewCardRow & { status_id: string }>).map((c) => [c.status_id, c])),
    emojis,
    applications: new Map((applications as ApplicationRow[]).map((a) => [a.id, a])),
    favourited: new Set((favourites as Array<{ status_id: string }>).map((r) => r.status_id)),
    reblogged: new Set((reblogs as Array<{ reblog_of_id: string | null }>).map((r) => r.reblog_of_id!)),
    bookmarked: new Set((bookmarks as Array<{ status_id: string }>).map((r) => r.status_id)),
    pinned: new Set((pins as Array<{ status_id: string }>).map((r) => r.status_id)),
    mutedConversations: new Set((mutes as Array<{ conversation_id: string }>).map((r) => r.conversation_id)),
  };
}

function orderedMedia(status: StatusRow, rows: MediaAttachmentRow[]): MediaAttachmentRow[] {
  if (!status.ordered_media_attachment_ids) return rows;
  const order: string[] = JSON.parse(status.ordered_media_attachment_ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return order.map((id) => byId.get(id)).filter((r): r is MediaAttachmentRow => !!r);
}

function build(ctx: Ctx, status: StatusRow, loaded: Loaded, viewer: AccountRow | undefined, options: SerializeOptions, reblog: Status | null): Status {
  const mentionRows = loaded.mentions.get(status.id) ?? [];
  const poll = status.poll_id ? loaded.polls.get(status.poll_id) : undefined;
  const card = loaded.cards.get(status.id);
  const application = status.application_id ? loaded.applications.get(status.application_id) : undefined;
  const result: Status = {
    id: status.id,
    created_at: status.created_at,
    in_reply_to_id: status.in_reply_to_id,
    in_reply_to_account_id: status.in_reply_to_account_id,
    sensitive: status.sensitive,
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
    account: loaded.accounts.get(status.account_id)!,
    media_attachments: orderedMedia(status, loaded.media.get(status.id) ?? []).map((m) => serializeMediaAttachment(ctx, m)),
    mentions: mentionRows.map((a) => ({ id: a.id, username: a.username, url: accountUrl(ctx, a), acct: acctOf(a) })),
    tags: (loaded.tags.get(status.id) ?? []).map((name) => ({ name: name.toLowerCase(), url: `${ctx.config.baseUrl}/tags/${encodeURIComponent(name.toLowerCase())}` })),
    emojis: loaded.emojis.get(status.id) ?? [],
    card: card ? serializePreviewCard(ctx, card) : null,
    poll: poll ? serializePoll(poll, viewer ? { accountId: viewer.id, ownVotes: loaded.ownVotes.get(poll.id) ?? [] } : undefined, loaded.emojis.get(`poll:${poll.id}`) ?? []) : null,
  };
  if (options.withSourceText) result.text = status.text;
  else result.content = status.content;
  if (viewer) {
    result.favourited = loaded.favourited.has(status.id);
    result.reblogged = loaded.reblogged.has(status.id);
    result.muted = status.conversation_id ? loaded.mutedConversations.has(status.conversation_id) : false;
    result.bookmarked = loaded.bookmarked.has(status.id);
    if (status.account_id === viewer.id && !status.reblog_of_id && status.visibility !== "direct") result.pinned = loaded.pinned.has(status.id);
    result.filtered = [];
  }
  return result;
}

/**
 * Serializes statuses (and the statuses they boost) for a viewer, with a fixed number of queries
 * whatever the page size. Callers pass only statuses the viewer may see.
 */
export async function serializeStatuses(ctx: Ctx, rows: readonly StatusRow[], viewer?: AccountRow, options: SerializeOptions = {}): Promise<Status[]> {
  if (rows.length === 0) return [];
  const reblogIds = [...new Set(rows.map((r) => r.reblog_of_id).filter((id): id is string => !!id))];
  const originals = reblogIds.length ? await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "in", reblogIds).execute() : [];
  const all = [...rows, ...originals.filter((o) => !rows.some((r) => r.id === o.id))];
  const loaded = await load(ctx, all, viewer);
  const originalById = new Map(all.map((s) => [s.id, s]));
  return rows.map((row) => {
    const original = row.reblog_of_id ? originalById.get(row.reblog_of_id) : undefined;
    const reblog = original ? build(ctx, original, loaded, viewer, {}, null) : null;
    return build(ctx, row, loaded, viewer, options, reblog);
  });
}

export async function serializeStatus(ctx: Ctx, row: StatusRow, viewer?: AccountRow, options: SerializeOptions = {}): Promise<Status> {
  return (await serializeStatuses(ctx, [row], viewer, options))[0];
}
