/**
 * Search (Mastodon's SearchService, AccountSearchService, TagSearchService) on the database's own
 * full-text search: SQLite FTS5 tables, PostgreSQL GIN indexes (db/migrations/0015_search.ts).
 * - Accounts: every word a prefix of the username, display name or domain; an exact `user` or
 *   `user@domain` first; then the most followed. Suspended, unconfirmed and blocking or blocked
 *   accounts are left out; `following` keeps the ones the viewer follows.
 * - Hashtags: names starting with the query, shortest first. With `excludeUnreviewed`, only
 *   tags a moderator reviewed (the trends review), and the tag named exactly as the query.
 * - Statuses (signed-in viewers only, as in Mastodon): every word in the text or content warning,
 *   among the viewer's own posts, the posts that mention them or that they favourited,
 *   bookmarked or boosted, and public posts of authors who opted in to search (`indexable`);
 *   newest first, minus authors hidden from the viewer.
 * - With `resolve`, a link to a post or profile on this server finds it (remote ones come with
 *   federation).
 */
import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { Ctx } from "../../context.ts";
import { ACCOUNT_VECTOR, STATUS_VECTOR } from "../../db/migrations/0015_search.ts";
import type { AccountRow, StatusRow, TagRow } from "../../db/schema.ts";
import { notHiddenFrom } from "../visibility/exclusions.ts";
import { lookupAccount } from "../accounts/lookup.ts";
import { filterVisible, findVisibleStatuses } from "../visibility/find.ts";

export const SEARCH_TYPES = ["accounts", "hashtags", "statuses"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export interface SearchOptions {
  /** One kind of result only; otherwise all three. */
  type?: SearchType;
  resolve: boolean;
  /** Accounts: only those the viewer follows. */
  following: boolean;
  /** Statuses: only by this account. */
  accountId?: string;
  /** Hashtags: only reviewed ones and the exact match (clients ask for it to suggest trends). */
  excludeUnreviewed?: boolean;
  limit: number;
  offset: number;
}

export interface SearchResults {
  accounts: AccountRow[];
  statuses: StatusRow[];
  hashtags: TagRow[];
}

/** At most this many words of a query are searched for. */
const MAX_WORDS = 10;

/** The words of a query: letters, marks, digits and `_`, lowercased; nothing else reaches SQL. */
export function wordsOf(query: string): string[] {
  return (
    query
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}_]+/gu) ?? []
  ).slice(0, MAX_WORDS);
}

/** An FTS5 query: every word (quoted, so never an operator), each a prefix when asked. */
function fts5Query(words: readonly string[], prefix: boolean): string {
  return words.map((w) => `"${w}"${prefix ? "*" : ""}`).join(" ");
}

/** A PostgreSQL tsquery text: every word, each a prefix when asked. */
function tsQuery(words: readonly string[], prefix: boolean): string {
  return words.map((w) => `'${w}'${prefix ? ":*" : ""}`).join(" & ");
}

/** Accounts the API shows: remote ones, and local ones whose user is confirmed and approved. */
const SHOWN_ACCOUNT = sql<SqlBool>`(accounts.domain IS NOT NULL OR EXISTS (SELECT 1 FROM users
  WHERE users.account_id = accounts.id AND users.confirmed_at IS NOT NULL AND users.approved = ${true} LIMIT 1 OFFSET 0))`;

function notBlockedEitherWay(viewerId: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = ${viewerId} AND blocks.target_account_id = accounts.id LIMIT 1 OFFSET 0)
    AND NOT EXISTS (SELECT 1 FROM blocks WHERE blocks.account_id = accounts.id AND blocks.target_account_id = ${viewerId} LIMIT 1 OFFSET 0))`;
}

/** Accounts matching `query` (see the module comment). */
export async function searchAccounts(
  ctx: Ctx,
  viewer: AccountRow | undefined,
  query: string,
  options: Pick<SearchOptions, "following" | "limit" | "offset">,
): Promise<AccountRow[]> {
  if (options.limit <= 0) return [];
  const acct = query.trim().replace(/^@/, "");
  const exact = /^[\w.-]+(@[\w.-]+(:\d{1,5})?)?$/.test(acct) ? await lookupAccount(ctx, acct) : undefined;
  const words = wordsOf(query);
  if (words.length === 0 && !exact) return [];
  const db = ctx.db.kysely;
  let candidates = db.selectFrom("accounts").selectAll("accounts").where("accounts.suspended_at", "is", null);
  if (ctx.db.engine === "sqlite") {
    candidates = candidates
      .innerJoin(sql<{ rowid: string }>`accounts_search`.as("accounts_search"), (join) =>
        join.onRef(sql.ref("accounts_search.rowid"), "=", "accounts.id"),
      )
      .where(sql<SqlBool>`accounts_search MATCH ${fts5Query(words, true)}`);
  } else {
    candidates = candidates.where(
      sql<SqlBool>`${sql.raw(ACCOUNT_VECTOR)} @@ to_tsquery('simple', ${tsQuery(words, true)})`,
    );
  }
  candidates = candidates.where(SHOWN_ACCOUNT);
  if (viewer) candidates = candidates.where(notBlockedEitherWay(viewer.id));
  if (viewer && options.following)
    candidates = candidates.where(
      sql<SqlBool>`EXISTS (SELECT 1 FROM follows WHERE follows.account_id = ${viewer.id} AND follows.target_account_id = accounts.id LIMIT 1 OFFSET 0)`,
    );
  const exactFits =
    exact && !exact.suspended_at && (!viewer || (await candidatesInclude(ctx, viewer, exact, options.following)));
  // The exact match takes the first place of the first page; the rest follow without it.
  const skipExact = exactFits ? candidates.where("accounts.id", "<>", exact.id) : candidates;
  const limit = exactFits && options.offset === 0 ? options.limit - 1 : options.limit;
  const offset = exactFits && options.offset > 0 ? options.offset - 1 : options.offset;
  const rows =
    words.length === 0 || limit <= 0
      ? []
      : await skipExact
          .orderBy("accounts.followers_count", "desc")
          .orderBy("accounts.id", "desc")
          .limit(limit)
          .offset(offset)
          .execute();
  return exactFits && options.offset === 0 ? [exact, ...rows] : rows;
}

/** Whether the exact match passes the viewer's conditions too (not blocked; followed if asked). */
async function candidatesInclude(
  ctx: Ctx,
  viewer: AccountRow,
  account: AccountRow,
  following: boolean,
): Promise<boolean> {
  const row = await ctx.db.kysely
    .selectFrom("accounts")
    .select("accounts.id")
    .where("accounts.id", "=", account.id)
    .where(notBlockedEitherWay(viewer.id))
    .$if(following, (q) =>
      q.where(
        sql<SqlBool>`EXISTS (SELECT 1 FROM follows WHERE follows.account_id = ${viewer.id} AND follows.target_account_id = accounts.id)`,
      ),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/** Hashtags whose name starts with the query (`#` dropped), shortest first. */
export async function searchHashtags(
  ctx: Ctx,
  query: string,
  options: Pick<SearchOptions, "excludeUnreviewed" | "limit" | "offset">,
): Promise<TagRow[]> {
  const prefix = query
    .trim()
    .replace(/^[#＃]/, "")
    .normalize("NFKC")
    .toLowerCase();
  if (!prefix || options.limit <= 0 || !/^[\p{L}\p{M}\p{N}_·・\u200c]+$/u.test(prefix)) return [];
  let tags = ctx.db.kysely.selectFrom("tags").selectAll();
  if (options.excludeUnreviewed) {
    // Mastodon's: the exact name, or names a moderator reviewed (trends review), among the matches.
    tags = tags.where(
      sql<SqlBool>`(lower(name) = ${prefix} OR EXISTS (SELECT 1 FROM trend_reviews r WHERE r.kind = 'tags' AND r.item_id = tags.id))`,
    );
  }
  if (ctx.db.engine === "sqlite") {
    // A range on the lower(name) index: every name with the prefix, and only those (binary order).
    const next = prefix.slice(0, -1) + String.fromCodePoint(prefix.codePointAt(prefix.length - 1)! + 1);
    tags = tags
      .where(sql<SqlBool>`lower(name) >= ${prefix}`)
      .where(sql<SqlBool>`lower(name) < ${next}`)
      .where(sql<SqlBool>`substr(lower(name), 1, ${prefix.length}) = ${prefix}`);
  } else {
    tags = tags.where(sql<SqlBool>`lower(name) LIKE ${prefix.replace(/_/g, "\\_") + "%"}`);
  }
  return tags
    .orderBy(sql`length(name)`)
    .orderBy(sql`lower(name)`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

/** Statuses the viewer may find (see the module comment), newest first. */
export async function searchStatuses(
  ctx: Ctx,
  viewer: AccountRow,
  query: string,
  options: Pick<SearchOptions, "accountId" | "limit" | "offset">,
): Promise<StatusRow[]> {
  const words = wordsOf(query);
  if (words.length === 0 || options.limit <= 0) return [];
  const db = ctx.db.kysely;
  const v = viewer.id;
  let statuses = db
    .selectFrom("statuses")
    .selectAll("statuses")
    .where("statuses.deleted_at", "is", null)
    .where("statuses.reblog_of_id", "is", null)
    .where(
      sql<SqlBool>`(statuses.account_id = ${v}
        OR (statuses.visibility = 'public' AND EXISTS (SELECT 1 FROM accounts author WHERE author.id = statuses.account_id
          AND author.indexable = ${true} LIMIT 1 OFFSET 0))
        OR EXISTS (SELECT 1 FROM mentions WHERE mentions.status_id = statuses.id AND mentions.account_id = ${v} LIMIT 1 OFFSET 0)
        OR EXISTS (SELECT 1 FROM favourites WHERE favourites.status_id = statuses.id AND favourites.account_id = ${v} LIMIT 1 OFFSET 0)
        OR EXISTS (SELECT 1 FROM bookmarks WHERE bookmarks.status_id = statuses.id AND bookmarks.account_id = ${v} LIMIT 1 OFFSET 0)
        OR EXISTS (SELECT 1 FROM statuses boost WHERE boost.reblog_of_id = statuses.id AND boost.account_id = ${v} LIMIT 1 OFFSET 0))`,
    )
    .where(notHiddenFrom(v, "statuses.account_id"));
  if (options.accountId) statuses = statuses.where("statuses.account_id", "=", options.accountId);
  let rows: StatusRow[];
  if (ctx.db.engine === "sqlite") {
    rows = await statuses
      .innerJoin(sql<{ rowid: string }>`statuses_search`.as("statuses_search"), (join) =>
        join.onRef(sql.ref("statuses_search.rowid"), "=", "statuses.id"),
      )
      .where(sql<SqlBool>`statuses_search MATCH ${fts5Query(words, false)}`)
      .orderBy(sql`statuses_search.rowid`, "desc")
      .limit(options.limit)
      .offset(options.offset)
      .execute();
  } else {
    rows = await statuses
      .where(sql<SqlBool>`${sql.raw(STATUS_VECTOR)} @@ to_tsquery('simple', ${tsQuery(words, false)})`)
      .orderBy("statuses.id", "desc")
      .limit(options.limit)
      .offset(options.offset)
      .execute();
  }
  return filterVisible(ctx, rows, v);
}

/**
 * A link to a status or profile on this server (`/@user/123`, `/users/user/statuses/123`,
 * `/@user`, `/users/user`), as the viewer may see it.
 */
export async function resolveLocalUrl(
  ctx: Ctx,
  viewer: AccountRow | undefined,
  query: string,
): Promise<Pick<SearchResults, "accounts" | "statuses">> {
  let url: URL;
  try {
    url = new URL(query.trim());
  } catch {
    return { accounts: [], statuses: [] };
  }
  const base = new URL(ctx.config.baseUrl);
  if (url.host !== base.host || !/^https?:$/.test(url.protocol)) return { accounts: [], statuses: [] };
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).replace(/\/+$/, "");
  } catch {
    // Broken percent-encoding (`/@%E0`) names nothing here.
    return { accounts: [], statuses: [] };
  }
  const status = /^\/(?:@[\w.-]+|users\/[\w.-]+\/statuses)\/(\d{1,19})$/.exec(path);
  if (status) return { accounts: [], statuses: await findVisibleStatuses(ctx, [status[1]!], viewer?.id) };
  const profile = /^\/(?:@|users\/)([\w.-]+)$/.exec(path);
  if (profile) {
    const account = await lookupAccount(ctx, profile[1]!);
    return { accounts: account && !account.suspended_at ? [account] : [], statuses: [] };
  }
  return { accounts: [], statuses: [] };
}

/**
 * What a handle (`@user@domain`) or a link to another server names when this server did not know
 * it yet: the account, or the post (fetched and stored now, then shown as the viewer may see it);
 * undefined for anything else, which the ordinary search finds.
 */
async function resolveRemote(
  ctx: Ctx,
  viewer: AccountRow,
  query: string,
): Promise<Pick<SearchResults, "accounts" | "statuses"> | undefined> {
  const text = query.trim();
  const isHandle = /^@?[^@\s/]+@[^@\s/]+$/.test(text);
  const isUrl = /^https?:\/\//i.test(text);
  if (isHandle) {
    if (await lookupAccount(ctx, text)) return undefined;
    const found = await ctx.remote.account(text);
    return found && !found.suspended_at ? { accounts: [found], statuses: [] } : undefined;
  }
  if (!isUrl || URL.parse(text)?.host === new URL(ctx.config.baseUrl).host) return undefined;
  const found = await ctx.remote.url(text);
  if (!found) return undefined;
  if ("account" in found) return found.account.suspended_at ? undefined : { accounts: [found.account], statuses: [] };
  return { accounts: [], statuses: await findVisibleStatuses(ctx, [found.status.id], viewer.id) };
}

/** GET /api/v2/search: each kind of result asked for, `limit` of each. */
export async function search(
  ctx: Ctx,
  viewer: AccountRow | undefined,
  query: string,
  options: SearchOptions,
): Promise<SearchResults> {
  const wants = (type: SearchType) => !options.type || options.type === type;
  if (options.resolve && /^https?:\/\//i.test(query.trim())) {
    const found = await resolveLocalUrl(ctx, viewer, query);
    if (found.accounts.length + found.statuses.length > 0)
      return {
        accounts: wants("accounts") ? found.accounts : [],
        statuses: wants("statuses") ? found.statuses : [],
        hashtags: [],
      };
  }
  const offset = options.type ? options.offset : 0;
  // A handle (`user@domain`) looks for accounts only, as Mastodon does.
  const handle = query.includes("@") && !query.trim().includes(" ");
  // Resolving reaches other servers: only for a signed-in user, as Mastodon allows it.
  if (options.resolve && viewer && offset === 0) {
    const remote = await resolveRemote(ctx, viewer, query);
    if (remote && remote.accounts.length + remote.statuses.length > 0)
      return {
        accounts: wants("accounts") ? remote.accounts : [],
        statuses: wants("statuses") ? remote.statuses : [],
        hashtags: [],
      };
  }
  const [accounts, hashtags, statuses] = await Promise.all([
    wants("accounts") ? searchAccounts(ctx, viewer, query, { ...options, offset }) : [],
    wants("hashtags") && !handle ? searchHashtags(ctx, query, { ...options, offset }) : [],
    wants("statuses") && viewer && !handle ? searchStatuses(ctx, viewer, query, { ...options, offset }) : [],
  ]);
  return { accounts, hashtags, statuses };
}
