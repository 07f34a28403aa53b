/**
 * Archives of an account (Mastodon's "Request your archive", BackupService): a ZIP with the
 * account's posts as its ActivityPub outbox, its actor, likes, bookmarks and media, made by a job
 * (federation/archive.ts writes the ActivityPub parts) and downloaded by its owner from the
 * settings. One request every 6 days, as Mastodon allows; an archive is kept 7 days.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountArchiveRow, AccountRow, UserRow } from "../../db/schema.ts";

export const ARCHIVE_JOB = "archives.build";
export const ARCHIVE_PRUNE_JOB = "archives.prune";

/** A new archive was asked for too soon after the last one. */
export class ArchiveTooSoon extends Error {
  constructor() {
    super("You can ask for an archive once every 6 days.");
  }
}
/** How often one may ask (Mastodon's BackupPolicy: 6 days). */
export const ARCHIVE_INTERVAL_MS = 6 * 24 * 3600 * 1000;
/** How long a finished archive is kept (Mastodon's backups vacuum: 7 days). */
export const ARCHIVE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** Asks for a new archive of `account`; refused while the last one is less than 6 days old. */
export async function requestArchive(ctx: Ctx, user: UserRow, account: AccountRow): Promise<AccountArchiveRow> {
  const since = new Date(Date.now() - ARCHIVE_INTERVAL_MS).toISOString();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const recent = await tx
      .selectFrom("account_archives")
      .select("id")
      .where("user_id", "=", user.id)
      .where("created_at", ">", since)
      .executeTakeFirst();
    if (recent) throw new ArchiveTooSoon();
    const row = await tx
      .insertInto("account_archives")
      .values({
        id: newId(),
        user_id: user.id,
        account_id: account.id,
        state: "pending",
        created_at: new Date().toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.jobs.enqueueWith(tx, ARCHIVE_JOB, { archiveId: row.id });
    return row;
  });
}

/** The user's archives, newest first. */
export function archivesOf(ctx: Ctx, userId: string): Promise<AccountArchiveRow[]> {
  return ctx.db.kysely
    .selectFrom("account_archives")
    .selectAll()
    .where("user_id", "=", userId)
    .orderBy("id", "desc")
    .limit(10)
    .execute();
}

/** A finished archive of the user's, for download; undefined for anyone else's or an unfinished one. */
export async function downloadableArchive(
  ctx: Ctx,
  userId: string,
  id: string | undefined,
): Promise<AccountArchiveRow | undefined> {
  if (!id) return undefined;
  return ctx.db.kysely
    .selectFrom("account_archives")
    .selectAll()
    .where("id", "=", id)
    .where("user_id", "=", userId)
    .where("state", "=", "done")
    .executeTakeFirst();
}

export async function pendingArchive(ctx: Ctx, id: string): Promise<AccountArchiveRow | undefined> {
  return ctx.db.kysely
    .selectFrom("account_archives")
    .selectAll()
    .where("id", "=", id)
    .where("state", "=", "pending")
    .executeTakeFirst();
}

export async function archiveFinished(ctx: Ctx, id: string, fileKey: string, size: number): Promise<void> {
  await ctx.db.kysely
    .updateTable("account_archives")
    .set({ state: "done", file_key: fileKey, file_size: size, finished_at: new Date().toISOString() })
    .where("id", "=", id)
    .execute();
}

export async function archiveFailed(ctx: Ctx, id: string, error: string): Promise<void> {
  await ctx.db.kysely
    .updateTable("account_archives")
    .set({ state: "failed", error: error.slice(0, 500), finished_at: new Date().toISOString() })
    .where("id", "=", id)
    .execute();
}

/** Removes archives older than their lifetime (files and rows); returns how many went. */
export async function pruneArchives(ctx: Ctx, now = Date.now()): Promise<number> {
  const before = new Date(now - ARCHIVE_LIFETIME_MS).toISOString();
  const old = await ctx.db.kysely
    .selectFrom("account_archives")
    .select(["id", "file_key"])
    .where("created_at", "<", before)
    .limit(100)
    .execute();
  for (const row of old) {
    if (row.file_key) await ctx.media.delete(row.file_key);
    await ctx.db.kysely.deleteFrom("account_archives").where("id", "=", row.id).execute();
  }
  return old.length;
}

/** The storage keys of the original files of these media attachments (those kept here). */
export async function mediaFilesOf(ctx: Ctx, mediaIds: readonly string[]): Promise<string[]> {
  if (mediaIds.length === 0) return [];
  const rows = await ctx.db.kysely
    .selectFrom("media_attachments")
    .select("file")
    .where("id", "in", [...mediaIds])
    .where("file", "is not", null)
    .execute();
  return rows.map((r) => r.file!);
}

/** The ids (URIs) of the statuses the account favourited or bookmarked, oldest first. */
export async function statusUrisKeptBy(
  ctx: Ctx,
  accountId: string,
  table: "favourites" | "bookmarks",
): Promise<string[]> {
  const rows = await ctx.db.kysely
    .selectFrom(table)
    .innerJoin("statuses", "statuses.id", `${table}.status_id`)
    .select("statuses.uri")
    .where(`${table}.account_id`, "=", accountId)
    .orderBy(`${table}.id`)
    .execute();
  return rows.map((r) => r.uri);
}
