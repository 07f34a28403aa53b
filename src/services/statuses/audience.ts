/**
 * Who hears of a local status on other servers, and what its ActivityPub form links to: the
 * accounts it mentions, the status it replies to, the status a boost boosts, and the author's
 * remote followers (one row each, with the inboxes delivery needs).
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow, PollRow, StatusRow } from "../../db/schema.ts";
import { findVisibleStatuses } from "../visibility/find.ts";
import { conversationUri, remoteConversationUris } from "./threads.ts";

type Inboxes = Pick<AccountRow, "id" | "uri" | "inbox_url" | "shared_inbox_url" | "domain" | "username">;

/** What delivery reads of a recipient account. */
const INBOX_COLUMNS = [
  "accounts.id",
  "accounts.uri",
  "accounts.inbox_url",
  "accounts.shared_inbox_url",
  "accounts.domain",
  "accounts.username",
] as const;

export interface StatusLinks {
  status: StatusRow;
  author: AccountRow;
  /** Mentioned accounts, local and remote. */
  mentioned: AccountRow[];
  /** The status it replies to, with its author's actor id. */
  parent: { uri: string; authorUri: string } | null;
  /** For a boost: the boosted status and its author. */
  reblogOf: { status: StatusRow; author: AccountRow } | null;
  /** Its poll, if it has one. */
  poll: PollRow | null;
  /** How its thread is named to other servers (services/statuses/threads.ts). */
  conversationUri: string | null;
}

export async function statusLinks(ctx: Ctx, statusId: string): Promise<StatusLinks | undefined> {
  return (await statusLinksOf(ctx, [statusId]))[0];
}

/** The links of each of `statusIds` that exists, in their order: a fixed number of queries for any number. */
export async function statusLinksOf(ctx: Ctx, statusIds: readonly string[]): Promise<StatusLinks[]> {
  const db = ctx.db.kysely;
  if (statusIds.length === 0) return [];
  const statuses = await db
    .selectFrom("statuses")
    .selectAll()
    .where("id", "in", [...statusIds])
    .execute();
  const reblogIds = statuses.map((s) => s.reblog_of_id).filter((id): id is string => id !== null);
  const parentIds = statuses.map((s) => s.in_reply_to_id).filter((id): id is string => id !== null);
  const pollIds = statuses.map((s) => s.poll_id).filter((id): id is string => id !== null);
  const conversationIds = statuses.map((s) => s.conversation_id).filter((id): id is string => id !== null);
  const [mentions, parents, reblogged, polls, conversationUris] = await Promise.all([
    db
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .selectAll("accounts")
      .select("mentions.status_id as mentionStatusId")
      .where(
        "mentions.status_id",
        "in",
        statuses.map((s) => s.id),
      )
      .orderBy("mentions.id")
      .execute(),
    parentIds.length
      ? db
          .selectFrom("statuses")
          .innerJoin("accounts", "accounts.id", "statuses.account_id")
          .select(["statuses.id", "statuses.uri", "accounts.uri as authorUri"])
          .where("statuses.id", "in", parentIds)
          .execute()
      : [],
    reblogIds.length ? db.selectFrom("statuses").selectAll().where("id", "in", reblogIds).execute() : [],
    pollIds.length ? db.selectFrom("polls").selectAll().where("id", "in", pollIds).execute() : [],
    remoteConversationUris(db, conversationIds),
  ]);
  const pollsById = new Map(polls.map((p) => [p.id, p]));
  const authorIds = [...new Set([...statuses, ...reblogged].map((s) => s.account_id))];
  const authors = new Map(
    (await db.selectFrom("accounts").selectAll().where("id", "in", authorIds).execute()).map((a) => [a.id, a]),
  );
  const parentsById = new Map(parents.map((p) => [p.id, { uri: p.uri, authorUri: p.authorUri }]));
  const rebloggedById = new Map(reblogged.map((r) => [r.id, r]));
  const byId = new Map(statuses.map((s) => [s.id, s]));
  const mentioned = new Map<string, AccountRow[]>();
  for (const { mentionStatusId, ...account } of mentions)
    mentioned.set(mentionStatusId, [...(mentioned.get(mentionStatusId) ?? []), account as AccountRow]);
  const links: StatusLinks[] = [];
  for (const id of statusIds) {
    const status = byId.get(id);
    const author = status && authors.get(status.account_id);
    if (!status || !author) continue;
    const original = status.reblog_of_id ? rebloggedById.get(status.reblog_of_id) : undefined;
    const originalAuthor = original && authors.get(original.account_id);
    links.push({
      status,
      author,
      mentioned: mentioned.get(status.id) ?? [],
      parent: (status.in_reply_to_id && parentsById.get(status.in_reply_to_id)) || null,
      reblogOf: original && originalAuthor ? { status: original, author: originalAuthor } : null,
      poll: (status.poll_id && pollsById.get(status.poll_id)) || null,
      conversationUri: status.conversation_id
        ? conversationUri(ctx.config.baseUrl, status.conversation_id, conversationUris.get(status.conversation_id))
        : null,
    });
  }
  return links;
}

/** The remote accounts that follow `accountId`, with their inboxes (delivery dedupes them by inbox). */
export async function remoteFollowersOf(ctx: Ctx, accountId: string): Promise<Inboxes[]> {
  return ctx.db.kysely
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.account_id")
    .select(INBOX_COLUMNS)
    .where("follows.target_account_id", "=", accountId)
    .where("accounts.domain", "is not", null)
    .execute();
}

/**
 * One account of each server this one knows (not suspended), with its inboxes: for what every
 * server must hear, such as a deleted actor. Reads every remote account once; rare by design.
 */
export async function knownServers(ctx: Ctx): Promise<Inboxes[]> {
  const db = ctx.db.kysely;
  const one = db
    .selectFrom("accounts")
    .select((eb) => eb.fn.min<string>("id").as("id"))
    .where("domain", "is not", null)
    .where("suspended_at", "is", null)
    .where("inbox_url", "is not", null)
    .groupBy((eb) => eb.fn.coalesce("shared_inbox_url", "inbox_url"));
  return db.selectFrom("accounts").select(INBOX_COLUMNS).where("accounts.id", "in", one).execute();
}

/**
 * A local status as another server may fetch it from its id (`/users/:username/statuses/:id`): by
 * that account, not a boost, public or unlisted for anyone; followers-only and direct ones only
 * for `signerId`, the account that signed the fetch, when it may see them here (a follower, a
 * mentioned account). `signerId` is asked for only when needed.
 */
export async function fetchableStatus(
  ctx: Ctx,
  username: string,
  id: string,
  signerId: () => Promise<string | undefined>,
): Promise<StatusLinks | undefined> {
  if (!/^\d{1,19}$/.test(id)) return undefined;
  const row = await ctx.db.kysely
    .selectFrom("statuses")
    .innerJoin("accounts", "accounts.id", "statuses.account_id")
    .select(["statuses.id", "statuses.visibility", "statuses.reblog_of_id", "accounts.username", "accounts.domain"])
    .where("statuses.id", "=", id)
    .executeTakeFirst();
  if (!row || row.domain !== null || row.username !== username || row.reblog_of_id) return undefined;
  if (row.visibility !== "public" && row.visibility !== "unlisted") {
    const signer = await signerId();
    if (!signer || (await findVisibleStatuses(ctx, [row.id], signer)).length === 0) return undefined;
  }
  return statusLinks(ctx, row.id);
}

/** The links of the status a poll belongs to. */
export async function pollStatusLinks(ctx: Ctx, pollId: string): Promise<StatusLinks | undefined> {
  const poll = await ctx.db.kysely.selectFrom("polls").select("status_id").where("id", "=", pollId).executeTakeFirst();
  return poll?.status_id ? statusLinks(ctx, poll.status_id) : undefined;
}

/** The remote accounts that voted in a poll (they hear of its tallies). */
export async function remoteVotersOf(ctx: Ctx, pollId: string): Promise<Inboxes[]> {
  return ctx.db.kysely
    .selectFrom("poll_votes")
    .innerJoin("accounts", "accounts.id", "poll_votes.account_id")
    .select(INBOX_COLUMNS)
    .distinct()
    .where("poll_votes.poll_id", "=", pollId)
    .where("accounts.domain", "is not", null)
    .execute();
}
