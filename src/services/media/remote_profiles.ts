/**
 * Avatars and headers of other servers' accounts, kept here as Mastodon keeps them. The writer of
 * remote accounts (services/accounts/remote.ts) queues `FETCH_REMOTE_PROFILE_IMAGE_JOB` for a
 * picture whose URL is new or changed, or that is not kept (never downloaded, dropped by `media
 * remove --prune-profiles`): so a dropped picture comes back when the account is next fetched or
 * updates itself, as Mastodon's do. The job downloads it through the SSRF-safe fetch, within the
 * limits of uploaded ones, and processes it as an uploaded one is processed (cropped to 400×400 or
 * 1500×500, a still PNG beside an animation).
 *
 * The client API shows the kept copy, or the default picture (entities/account.ts): nothing makes
 * readers' clients load pictures from the other server. Nothing is downloaded from a domain with
 * `reject_media` or a suspended one, nor for a suspended account; what was kept of them goes.
 */
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { accountById } from "../../db/queries/accounts.ts";
import type { AccountRow, Database, JobRow } from "../../db/schema.ts";
import { LIMITS } from "../../limits.ts";
import { coverResize, EXTENSIONS, inspectImage, staticFrame, type ImageInfo } from "../../media/images.ts";
import { randomFileName } from "../../media/storage.ts";
import { blockFor, onDomain } from "../admin/domain_blocks.ts";
import { PROFILE_IMAGE_LIMIT } from "../accounts/profile.ts";
import { SafeFetchError } from "../http/safe_fetch.ts";
import { downloadRemote, MediaNotKept } from "./remote_download.ts";

/** The job that downloads one avatar or header of a remote account. */
export const FETCH_REMOTE_PROFILE_IMAGE_JOB = "media.fetch_remote_profile";

export type ProfileImage = "avatar" | "header";
const KINDS: readonly ProfileImage[] = ["avatar", "header"];
/** Mastodon's avatar and header sizes, and the types it accepts for them. */
const SIZES: Record<ProfileImage, [number, number]> = { avatar: [400, 400], header: [1500, 500] };
const TYPES = new Set(["jpeg", "png", "gif", "webp"]);

const fileColumn = (kind: ProfileImage) => `${kind}_file` as const;
const staticColumn = (kind: ProfileImage) => `${kind}_static_file` as const;
const urlColumn = (kind: ProfileImage) => `${kind}_remote_url` as const;
const folderOf = (kind: ProfileImage, accountId: string) => `accounts/${kind}s/${accountId}`;

type ProfileImageColumns = Pick<AccountRow, "avatar_remote_url" | "avatar_file" | "header_remote_url" | "header_file">;

/**
 * Which pictures of a remote account stored with `next`'s URLs (over `previous`, undefined for a
 * new account) need the job: a new or changed URL (a removed one too while a copy is kept), and
 * an unchanged one that is not kept.
 */
export function profileImagesToFetch(
  previous: ProfileImageColumns | undefined,
  next: Pick<ProfileImageColumns, "avatar_remote_url" | "header_remote_url">,
): ProfileImage[] {
  return KINDS.filter((kind) => {
    const url = next[urlColumn(kind)];
    const kept = previous?.[fileColumn(kind)] ?? null;
    if (url !== (previous?.[urlColumn(kind)] ?? null)) return url !== null || kept !== null;
    return url !== null && kept === null;
  });
}

/** Queues the job for `kinds` of `accountId` (in the transaction that stored the account); one per picture at a time. */
export async function enqueueProfileImageFetch(
  ctx: Ctx,
  db: Kysely<Database>,
  accountId: string,
  kinds: readonly ProfileImage[],
): Promise<void> {
  const job = FETCH_REMOTE_PROFILE_IMAGE_JOB;
  for (const kind of kinds)
    await ctx.jobs.enqueueWith(
      db,
      job,
      { accountId, kind },
      { maxAttempts: 3, uniqueKey: `${job}:${accountId}:${kind}` },
    );
}

/** A downloaded picture as an uploaded one is stored: cropped, re-encoded, with a still frame beside an animation. */
async function storePicture(ctx: Ctx, accountId: string, kind: ProfileImage, data: Buffer): Promise<string[]> {
  let info: ImageInfo;
  try {
    info = await inspectImage(data, kind);
  } catch {
    throw new MediaNotKept(`the ${kind} is not a picture this server reads`);
  }
  if (!TYPES.has(info.format)) throw new MediaNotKept(`the ${kind} is a ${info.format}, not a type kept for ${kind}s`);
  if (info.width * info.height > LIMITS.media.imageMatrixLimit)
    throw new MediaNotKept(`the ${kind}'s dimensions are too large`);
  const [width, height] = SIZES[kind];
  let resized;
  let still;
  try {
    resized = await coverResize(data, info, width, height);
    if (info.animated) still = await staticFrame(data, width, height);
  } catch {
    throw new MediaNotKept(`the ${kind} could not be processed: the image data is damaged`);
  }
  const folder = folderOf(kind, accountId);
  const keys = [`${folder}/original/${randomFileName(EXTENSIONS[resized.format])}`];
  await ctx.media.put(keys[0]!, resized.data);
  if (still) {
    keys.push(`${folder}/static/${randomFileName("png")}`);
    await ctx.media.put(keys[1]!, still.data);
  }
  return keys;
}

/** Whether this server may keep the pictures of `account` (its domain neither rejects media nor is suspended). */
async function mayKeepPictures(ctx: Ctx, account: AccountRow): Promise<boolean> {
  if (account.domain === null || account.suspended_at !== null) return false;
  const block = await blockFor(ctx.db.kysely, account.domain);
  return !block?.reject_media && block?.severity !== "suspend";
}

/**
 * The `media.fetch_remote_profile` job: downloads the account's current avatar or header and
 * keeps it in place of the copy it had. A picture whose URL went, or that may not be kept
 * (`reject_media`, suspension), is dropped instead. When the URL changes while it downloads, the
 * new one is fetched in turn.
 */
export async function cacheRemoteProfileImage(
  ctx: Ctx,
  accountId: string,
  kind: ProfileImage,
  job?: Pick<JobRow, "attempts" | "max_attempts">,
): Promise<void> {
  if (!KINDS.includes(kind)) return;
  let kept: string | undefined;
  for (let round = 0; round < 3; round++) {
    const account = await accountById(ctx.db.kysely, accountId);
    if (!account || account.domain === null) return;
    const url = account[urlColumn(kind)];
    if (url !== null && url === kept) return;
    if (url === null || !(await mayKeepPictures(ctx, account))) {
      await dropProfileImages(ctx, [account.id], [kind]);
      return;
    }
    let keys: string[];
    try {
      const data = await downloadRemote(ctx, url, {
        maxBytes: PROFILE_IMAGE_LIMIT,
        timeoutMs: 30_000,
        accept: "image/*",
      });
      keys = await storePicture(ctx, account.id, kind, data);
    } catch (error) {
      const lastAttempt = !job || job.attempts >= job.max_attempts;
      if (!(error instanceof MediaNotKept) && !(lastAttempt && error instanceof SafeFetchError)) throw error;
      // The copy of an earlier URL, if any, stays until one of the new URL is kept.
      ctx.log.info({ account: account.id, kind, reason: error.message }, "remote profile picture not kept");
      return;
    }
    const updated = await ctx.db.kysely
      .updateTable("accounts")
      .set({ [fileColumn(kind)]: keys[0], [staticColumn(kind)]: keys[1] ?? null })
      .where("id", "=", account.id)
      .where(urlColumn(kind), "=", url)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      // The account has another picture by now (or is gone): this one goes, the next round fetches that.
      await Promise.all(keys.map((key) => ctx.media.delete(key)));
      continue;
    }
    kept = url;
    for (const old of [account[fileColumn(kind)], account[staticColumn(kind)]]) if (old) await ctx.media.delete(old);
  }
}

/** Drops the kept `kinds` of the remote accounts `accountIds`; answers how many accounts had any. */
async function dropProfileImages(
  ctx: Ctx,
  accountIds: readonly string[],
  kinds: readonly ProfileImage[],
): Promise<number> {
  if (accountIds.length === 0) return 0;
  const rows = await ctx.db.kysely
    .selectFrom("accounts")
    .select(["id", "avatar_file", "avatar_static_file", "header_file", "header_static_file"])
    .where("id", "in", accountIds)
    .where("domain", "is not", null)
    .execute();
  let touched = 0;
  for (const row of rows) {
    const held = kinds.filter((kind) => row[fileColumn(kind)] !== null);
    if (held.length === 0) continue;
    const cleared: Record<string, null> = {};
    for (const kind of held) cleared[fileColumn(kind)] = cleared[staticColumn(kind)] = null;
    await ctx.db.kysely.updateTable("accounts").set(cleared).where("id", "=", row.id).execute();
    for (const kind of held) await ctx.media.deleteUnder(folderOf(kind, row.id), []);
    touched++;
  }
  return touched;
}

const BATCH = 500;
/** Accounts `media remove --prune-profiles` reads at a time (each costs a few file deletions). */
const PRUNE_BATCH = 100;

/** Drops the avatars and headers kept of a domain's accounts (`reject_media`, suspension); returns how many accounts. */
export async function purgeDomainProfileImages(ctx: Ctx, domain: string): Promise<number> {
  let done = 0;
  for (;;) {
    const rows = await ctx.db.kysely
      .selectFrom("accounts")
      .select("id")
      .where(onDomain(domain))
      .where((eb) => eb.or([eb("avatar_file", "is not", null), eb("header_file", "is not", null)]))
      .limit(BATCH)
      .execute();
    if (rows.length === 0) return done;
    done += await dropProfileImages(
      ctx,
      rows.map((r) => r.id),
      KINDS,
    );
  }
}

export interface ProfilePruneOptions {
  /** Only headers go (`--remove-headers`); otherwise avatars and headers (`--prune-profiles`). */
  headersOnly?: boolean;
  /** Accounts followed by or following local ones go too; by default they keep their pictures. */
  includeFollows?: boolean;
  /** Counts what would go without removing anything. */
  dryRun?: boolean;
  onProgress?: (done: number) => void;
}

/**
 * Drops the kept avatars and headers of remote accounts not fetched nor updated since `olderThan`
 * (Mastodon's `media remove --prune-profiles` / `--remove-headers`); answers how many accounts had
 * any. They show the default pictures until fetched again.
 */
export async function pruneRemoteProfileImages(
  ctx: Ctx,
  olderThan: Date,
  options: ProfilePruneOptions = {},
): Promise<number> {
  const cutoff = olderThan.toISOString();
  const kinds: readonly ProfileImage[] = options.headersOnly ? ["header"] : KINDS;
  let done = 0;
  let after: { fetched_at: string; id: string } | undefined;
  for (;;) {
    let query = ctx.db.kysely
      .selectFrom("accounts")
      .select(["id", "fetched_at"])
      // Written out as the partial index's predicate (index_accounts_kept_remote_pictures).
      .where(sql<boolean>`domain IS NOT NULL AND (avatar_file IS NOT NULL OR header_file IS NOT NULL)`)
      .where("fetched_at", "<", cutoff)
      .where("updated_at", "<", cutoff);
    if (options.headersOnly) query = query.where("header_file", "is not", null);
    if (!options.includeFollows)
      for (const side of ["follows.account_id", "follows.target_account_id"] as const)
        query = query.where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("follows").select("follows.id").whereRef(side, "=", "accounts.id").limit(1).offset(0))),
        );
    if (after) {
      const { fetched_at, id } = after;
      query = query.where((eb) => eb(eb.refTuple("fetched_at", "id"), ">", eb.tuple(fetched_at, id)));
    }
    const rows = await query.orderBy("fetched_at").orderBy("id").limit(PRUNE_BATCH).execute();
    if (rows.length === 0) return done;
    done += options.dryRun
      ? rows.length
      : await dropProfileImages(
          ctx,
          rows.map((r) => r.id),
          kinds,
        );
    const last = rows[rows.length - 1]!;
    after = { fetched_at: last.fetched_at!, id: last.id };
    options.onProgress?.(done);
  }
}
