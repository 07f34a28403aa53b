/**
 * Following (Mastodon's FollowService, UnfollowService, AuthorizeFollowService, RejectFollowService,
 * RemoveFromFollowersService). A locked account is asked first: the follow waits as a follow
 * request until its owner authorizes it. `followers_count` and `following_count` move in the same
 * transaction as the row, and only when a row was really added or removed, so repeated and
 * concurrent requests never count twice.
 */
import type { Kysely, Transaction } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountPageOf, type AccountPage } from "../../db/queries/accounts.ts";
import type { AccountRow, Database, FollowRequestRow } from "../../db/schema.ts";
import { Forbidden, NotFound } from "../../errors.ts";
import { deleteNotificationsOf } from "../../db/queries/notifications.ts";
import { removeFromHome, removeFromList } from "../timelines/feeds.ts";
import { findVisibleAccount } from "./lookup.ts";

/** What a follow asks for; absent options keep an existing follow's settings (new follows: defaults). */
export interface FollowOptions {
  /** Show the account's boosts in the home timeline (default true). */
  reblogs?: boolean;
  /** Notify on each new post of the account (default false). */
  notify?: boolean;
  /** Only posts in these languages (ISO 639-1); null: all languages. */
  languages?: string[] | null;
}

/** The account an action targets: known, shown by the API and not suspended, or 404. */
export async function targetAccount(ctx: Ctx, id: string | undefined): Promise<AccountRow> {
  const account = await findVisibleAccount(ctx, id);
  if (!account || account.suspended_at) throw new NotFound();
  return account;
}

async function isBlockedEitherWay(db: Kysely<Database>, a: string, b: string): Promise<boolean> {
  const row = await db
    .selectFrom("blocks")
    .select("id")
    .where((eb) =>
      eb.or([
        eb.and([eb("account_id", "=", a), eb("target_account_id", "=", b)]),
        eb.and([eb("account_id", "=", b), eb("target_account_id", "=", a)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

function encodeLanguages(languages: string[] | null | undefined): string | null | undefined {
  if (languages === undefined) return undefined;
  const codes = [
    ...new Set((languages ?? []).map((l) => l.trim().toLowerCase()).filter((l) => /^[a-z]{2,3}$/.test(l))),
  ];
  return codes.length ? JSON.stringify(codes) : null;
}

/** A new follow or follow request: the options given, the defaults for the others. */
function newFollowRow(followerId: string, followedId: string, options: FollowOptions, now: string) {
  return {
    id: newId(),
    account_id: followerId,
    target_account_id: followedId,
    show_reblogs: options.reblogs ?? true,
    notify: options.notify ?? false,
    languages: encodeLanguages(options.languages) ?? null,
    uri: null,
    created_at: now,
    updated_at: now,
  };
}

/** The settings an update writes: only the options given. */
function changedSettings(options: FollowOptions) {
  const languages = encodeLanguages(options.languages);
  return {
    ...(options.reblogs !== undefined ? { show_reblogs: options.reblogs } : {}),
    ...(options.notify !== undefined ? { notify: options.notify } : {}),
    ...(languages !== undefined ? { languages } : {}),
  };
}

async function moveCounters(
  tx: Transaction<Database>,
  followerId: string,
  followedId: string,
  by: 1 | -1,
): Promise<void> {
  const op = by === 1 ? "+" : "-";
  await tx
    .updateTable("accounts")
    .set((eb) => ({ following_count: eb("following_count", op, 1) }))
    .where("id", "=", followerId)
    .where("following_count", ">=", by === 1 ? 0 : 1)
    .execute();
  await tx
    .updateTable("accounts")
    .set((eb) => ({ followers_count: eb("followers_count", op, 1) }))
    .where("id", "=", followedId)
    .where("followers_count", ">=", by === 1 ? 0 : 1)
    .execute();
}

/** Adds the follow (or updates its settings); true when a new follow was made. */
async function insertFollow(
  ctx: Ctx,
  tx: Transaction<Database>,
  followerId: string,
  followedId: string,
  options: FollowOptions,
  now: string,
): Promise<boolean> {
  const row = newFollowRow(followerId, followedId, options, now);
  const inserted = await tx
    .insertInto("follows")
    .values(row)
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
    await moveCounters(tx, followerId, followedId, 1);
    await ctx.dispatcher.emit(tx, {
      type: "follow.created",
      followId: row.id,
      accountId: followerId,
      targetAccountId: followedId,
    });
    return true;
  }
  const changes = changedSettings(options);
  if (Object.keys(changes).length > 0) {
    await tx
      .updateTable("follows")
      .set({ ...changes, updated_at: now })
      .where("account_id", "=", followerId)
      .where("target_account_id", "=", followedId)
      .execute();
    if (changes.show_reblogs === false) await removeFromHome(tx, followerId, followedId, "boosts");
  }
  return false;
}

/**
 * `follower` follows `target`: directly, or by a follow request when `target` is locked (a follow
 * that exists already only has its settings updated). Yourself: 403; blocked either way or moved: 403.
 */
export async function followAccount(
  ctx: Ctx,
  follower: AccountRow,
  target: AccountRow,
  options: FollowOptions,
): Promise<void> {
  if (follower.id === target.id) throw new Forbidden("Following your own account is not allowed");
  if (target.moved_to_account_id || (await isBlockedEitherWay(ctx.db.kysely, follower.id, target.id)))
    throw new Forbidden();
  const now = new Date().toISOString();
  await ctx.dispatcher.transaction(async (tx) => {
    const following = await tx
      .selectFrom("follows")
      .select("id")
      .where("account_id", "=", follower.id)
      .where("target_account_id", "=", target.id)
      .executeTakeFirst();
    if (following || !target.locked) {
      await insertFollow(ctx, tx, follower.id, target.id, options, now);
      return;
    }
    const request = newFollowRow(follower.id, target.id, options, now);
    const inserted = await tx
      .insertInto("follow_requests")
      .values(request)
      .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0)
      await ctx.dispatcher.emit(tx, {
        type: "follow_request.created",
        requestId: request.id,
        accountId: follower.id,
        targetAccountId: target.id,
      });
    const changes = changedSettings(options);
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0 && Object.keys(changes).length > 0) {
      await tx
        .updateTable("follow_requests")
        .set({ ...changes, updated_at: now })
        .where("account_id", "=", follower.id)
        .where("target_account_id", "=", target.id)
        .execute();
    }
  });
}

/** Ends a follow of `follower` → `followed` and withdraws a pending request; nothing to end is fine. */
export async function unfollowAccount(ctx: Ctx, follower: AccountRow, followed: AccountRow): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await removeFollow(tx, follower.id, followed.id);
    const withdrawn = await tx
      .deleteFrom("follow_requests")
      .where("account_id", "=", follower.id)
      .where("target_account_id", "=", followed.id)
      .returning("id")
      .execute();
    await deleteNotificationsOf(
      tx,
      "FollowRequest",
      withdrawn.map((r) => r.id),
    );
    await leaveLists(tx, follower.id, followed.id);
  });
}

/** Takes `memberId` off the lists of `ownerId` (who no longer follows them). */
async function leaveLists(tx: Transaction<Database>, ownerId: string, memberId: string): Promise<void> {
  const left = await tx
    .deleteFrom("list_accounts")
    .where("account_id", "=", memberId)
    .where("list_id", "in", tx.selectFrom("lists").select("id").where("account_id", "=", ownerId))
    .returning("list_id")
    .execute();
  for (const { list_id } of left) await removeFromList(tx, list_id, memberId);
}

/**
 * Deletes the follow `followerId` → `followedId` inside `tx`, moving the counters if there was one;
 * the followed account leaves the follower's lists.
 */
export async function removeFollow(tx: Transaction<Database>, followerId: string, followedId: string): Promise<void> {
  const removed = await tx
    .deleteFrom("follows")
    .where("account_id", "=", followerId)
    .where("target_account_id", "=", followedId)
    .returning("id")
    .execute();
  await deleteNotificationsOf(
    tx,
    "Follow",
    removed.map((r) => r.id),
  );
  if (removed.length > 0) {
    await moveCounters(tx, followerId, followedId, -1);
    await leaveLists(tx, followerId, followedId);
    await removeFromHome(tx, followerId, followedId);
  }
}

/** `owner` makes `follower` stop following them (remove_from_followers). */
export async function removeFromFollowers(ctx: Ctx, owner: AccountRow, follower: AccountRow): Promise<void> {
  await ctx.db.kysely.transaction().execute((tx) => removeFollow(tx, follower.id, owner.id));
}

async function pendingRequest(db: Kysely<Database>, from: AccountRow, to: AccountRow): Promise<FollowRequestRow> {
  const request = await db
    .selectFrom("follow_requests")
    .selectAll()
    .where("account_id", "=", from.id)
    .where("target_account_id", "=", to.id)
    .executeTakeFirst();
  if (!request) throw new NotFound();
  return request;
}

/** `owner` accepts the request of `requester`: it becomes a follow with the settings asked for. */
export async function authorizeFollowRequest(ctx: Ctx, owner: AccountRow, requester: AccountRow): Promise<void> {
  const request = await pendingRequest(ctx.db.kysely, requester, owner);
  const languages = request.languages ? (JSON.parse(request.languages) as string[]) : null;
  await ctx.dispatcher.transaction(async (tx) => {
    const claimed = await tx.deleteFrom("follow_requests").where("id", "=", request.id).executeTakeFirst();
    if (Number(claimed.numDeletedRows) === 0) throw new NotFound();
    await deleteNotificationsOf(tx, "FollowRequest", [request.id]);
    await insertFollow(
      ctx,
      tx,
      requester.id,
      owner.id,
      { reblogs: request.show_reblogs, notify: request.notify, languages },
      new Date().toISOString(),
    );
  });
}

/** `owner` declines the request of `requester`. */
export async function rejectFollowRequest(ctx: Ctx, owner: AccountRow, requester: AccountRow): Promise<void> {
  const request = await pendingRequest(ctx.db.kysely, requester, owner);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx.deleteFrom("follow_requests").where("id", "=", request.id).execute();
    await deleteNotificationsOf(tx, "FollowRequest", [request.id]);
  });
}

/** A page of the requests waiting for `owner`, newest first, paged by the request rows' IDs. */
export async function followRequestsFor(ctx: Ctx, owner: AccountRow, page: PageParams): Promise<AccountPage> {
  const query = ctx.db.kysely
    .selectFrom("follow_requests")
    .select(["id", "account_id"])
    .where("target_account_id", "=", owner.id);
  return accountPageOf(ctx.db.kysely, await fetchPage(query, "id", page), (r) => r.account_id);
}
