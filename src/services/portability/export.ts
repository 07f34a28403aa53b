/**
 * A user's follows, blocks, mutes, domain blocks, lists and bookmarks as Mastodon's CSV exports
 * (its Export model): the same columns and header lines, accounts as `user@domain` — this
 * server's domain included for local ones, so the file means the same on any server — and
 * bookmarks as the posts' ActivityPub ids. Each file is produced in batches of rows, newest
 * first as Mastodon orders them, so a large account's export never sits in memory whole.
 */
import type { Ctx } from "../../context.ts";
import { fetchPage } from "../../db/paging.ts";
import type { AccountRow } from "../../db/schema.ts";
import { csvLine } from "./csv.ts";
import { HEADERS } from "./formats.ts";

/** The exports, by the last part of their paths (Mastodon's /settings/exports/<kind>.csv). */
export const EXPORT_KINDS = ["follows", "lists", "blocks", "mutes", "domain_blocks", "bookmarks"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** The name a downloaded file gets, Mastodon's (its controllers' names). */
export const EXPORT_FILENAMES: Record<ExportKind, string> = {
  follows: "following_accounts.csv",
  lists: "lists.csv",
  blocks: "blocked_accounts.csv",
  mutes: "muted_accounts.csv",
  domain_blocks: "blocked_domains.csv",
  bookmarks: "bookmarks.csv",
};

export const EXPORT_LABELS: Record<ExportKind, string> = {
  follows: "Follows",
  lists: "Lists",
  blocks: "You block",
  mutes: "You mute",
  domain_blocks: "Domain blocks",
  bookmarks: "Bookmarks",
};

/** Rows read from the database at a time. */
const BATCH = 1000;

type Handle = Pick<AccountRow, "username" | "domain">;

/** `user@domain` for everyone, this server's accounts included (Mastodon's local_username_and_domain). */
function addressOf(ctx: Ctx, account: Handle): string {
  return `${account.username}@${account.domain ?? ctx.config.localDomain}`;
}

function decodeLanguages(value: string | null): string[] | undefined {
  if (!value) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((l): l is string => typeof l === "string") : undefined;
  } catch {
    return undefined;
  }
}

/** How many rows each export holds (the export page's counts). */
export async function exportCounts(ctx: Ctx, owner: AccountRow): Promise<Record<ExportKind, number>> {
  const db = ctx.db.kysely;
  const count = async (
    table: "follows" | "blocks" | "account_domain_blocks" | "bookmarks" | "lists",
  ): Promise<number> => {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("account_id", "=", owner.id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return {
    follows: await count("follows"),
    lists: await count("lists"),
    blocks: await count("blocks"),
    mutes: await countMutes(ctx, owner),
    domain_blocks: await count("account_domain_blocks"),
    bookmarks: await count("bookmarks"),
  };
}

/** Mutes that have not ended (an ending mute is exported until it ends, as the API lists it). */
async function countMutes(ctx: Ctx, owner: AccountRow): Promise<number> {
  const now = new Date().toISOString();
  const row = await ctx.db.kysely
    .selectFrom("mutes")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("account_id", "=", owner.id)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Pages through an ID-ordered query newest first, `BATCH` rows at a time. */
async function* batches<R extends { id: string }>(page: (maxId: string | undefined) => Promise<R[]>) {
  let maxId: string | undefined;
  for (;;) {
    const rows = await page(maxId);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < BATCH) return;
    maxId = rows[rows.length - 1]!.id;
  }
}

async function* follows(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  yield csvLine(HEADERS.following);
  const query = ctx.db.kysely
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.target_account_id")
    .select(["follows.id", "accounts.username", "accounts.domain", "show_reblogs", "notify", "languages"])
    .where("follows.account_id", "=", owner.id);
  for await (const rows of batches((maxId) => fetchPage(query, "follows.id", { maxId, limit: BATCH })))
    yield rows
      .map((r) => csvLine([addressOf(ctx, r), r.show_reblogs, r.notify, decodeLanguages(r.languages)?.join(", ")]))
      .join("");
}

async function* blocks(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  const query = ctx.db.kysely
    .selectFrom("blocks")
    .innerJoin("accounts", "accounts.id", "blocks.target_account_id")
    .select(["blocks.id", "accounts.username", "accounts.domain"])
    .where("blocks.account_id", "=", owner.id);
  for await (const rows of batches((maxId) => fetchPage(query, "blocks.id", { maxId, limit: BATCH })))
    yield rows.map((r) => csvLine([addressOf(ctx, r)])).join("");
}

async function* mutes(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  yield csvLine(HEADERS.muting);
  const now = new Date().toISOString();
  const query = ctx.db.kysely
    .selectFrom("mutes")
    .innerJoin("accounts", "accounts.id", "mutes.target_account_id")
    .select(["mutes.id", "accounts.username", "accounts.domain", "hide_notifications"])
    .where("mutes.account_id", "=", owner.id)
    .where((eb) => eb.or([eb("mutes.expires_at", "is", null), eb("mutes.expires_at", ">", now)]));
  for await (const rows of batches((maxId) => fetchPage(query, "mutes.id", { maxId, limit: BATCH })))
    yield rows.map((r) => csvLine([addressOf(ctx, r), r.hide_notifications])).join("");
}

async function* domainBlocks(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  const query = ctx.db.kysely
    .selectFrom("account_domain_blocks")
    .select(["id", "domain"])
    .where("account_id", "=", owner.id);
  for await (const rows of batches((maxId) => fetchPage(query, "id", { maxId, limit: BATCH })))
    yield rows.map((r) => csvLine([r.domain])).join("");
}

async function* lists(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  const owned = await ctx.db.kysely
    .selectFrom("lists")
    .select(["id", "title"])
    .where("account_id", "=", owner.id)
    .orderBy("id")
    .execute();
  for (const list of owned) {
    const query = ctx.db.kysely
      .selectFrom("list_accounts")
      .innerJoin("accounts", "accounts.id", "list_accounts.account_id")
      .select(["list_accounts.id", "accounts.username", "accounts.domain"])
      .where("list_accounts.list_id", "=", list.id);
    for await (const rows of batches((maxId) => fetchPage(query, "list_accounts.id", { maxId, limit: BATCH })))
      yield rows.map((r) => csvLine([list.title, addressOf(ctx, r)])).join("");
  }
}

async function* bookmarks(ctx: Ctx, owner: AccountRow): AsyncGenerator<string> {
  const query = ctx.db.kysely
    .selectFrom("bookmarks")
    .innerJoin("statuses", "statuses.id", "bookmarks.status_id")
    .select(["bookmarks.id", "statuses.uri"])
    .where("bookmarks.account_id", "=", owner.id);
  for await (const rows of batches((maxId) => fetchPage(query, "bookmarks.id", { maxId, limit: BATCH })))
    yield rows.map((r) => csvLine([r.uri])).join("");
}

const WRITERS: Record<ExportKind, (ctx: Ctx, owner: AccountRow) => AsyncGenerator<string>> = {
  follows,
  lists,
  blocks,
  mutes,
  domain_blocks: domainBlocks,
  bookmarks,
};

/** The CSV text of one of `owner`'s exports, in chunks of up to a thousand lines. */
export function exportCsv(ctx: Ctx, owner: AccountRow, kind: ExportKind): AsyncGenerator<string> {
  return WRITERS[kind](ctx, owner);
}
