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

/**
 * A new follow or follow request: the options given, the defaults for the others. `uri` is the
 * Follow activity's id when the follow crosses servers.
 */
function newFollowRow(
  followerId: string,
  followedId: string,
  options: FollowOptions,
  now: string,
  uri: string | null = null,
) {
  return {
    id: newId(),
    account_id: followerId,
    target_account_id: followedId,
    show_reblogs: options.reblogs ?? true,
    notify: options.notify ?? false,
    languages: encodeLanguages(options.languages) ?? null,
    uri,
    created_at: now,
    updated_at: now,
  };
}

/** The id of the Follow activity a local account sends for request `requestId` (Mastodon-like: under the actor). */
const followActivityUri = (follower: AccountRow, requestId: string) => `${follower.uri}#follows/${requestId}`;

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
  uri: string | null = null,
): Promise<boolean> {
  const row = newFollowRow(followerId, followedId, options, now, uri);
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

/** The follow `followerId` → `targetId`, if there is one. */
function existingFollow(db: Kysely<Database>, followerId: string, targetId: string) {
  return db
    .selectFrom("follows")
    .select("id")
    .where("account_id", "=", followerId)
    .where("target_account_id", "=", targetId)
    .executeTakeFirst();
}

/**
 * `follower` follows `target`: directly, or by a follow request when `target` is locked or on
 * another server (whose answer, an Accept or a Reject, decides it); a follow that exists already
 * only has its settings updated. Yourself: 403; blocked either way or moved: 403.
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
    const following = await existingFollow(tx, follower.id, target.id);
    const remote = target.domain !== null;
    if (following || (!target.locked && !remote)) {
      await insertFollow(ctx, tx, follower.id, target.id, options, now);
      return;
    }
    const request = newFollowRow(follower.id, target.id, options, now);
    if (remote) request.uri = followActivityUri(follower, request.id);
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
  await ctx.dispatcher.transaction(async (tx) => {
    await removeFollow(ctx, tx, follower.id, followed.id);
    await endRequest(ctx, tx, follower.id, followed.id, "withdrawn");
    await leaveLists(tx, follower.id, followed.id);
  });
}

/**
 * Deletes the pending request `followerId` → `followedId` and its notification; `outcome` says
 * why (a withdrawn request to another server is undone there, a declined one is rejected there).
 * `null`: quietly, because the other server decided it.
 */
async function endRequest(
  ctx: Ctx,
  tx: Transaction<Database>,
  followerId: string,
  followedId: string,
  outcome: "withdrawn" | "rejected" | null,
): Promise<void> {
  const ended = await tx
    .deleteFrom("follow_requests")
    .where("account_id", "=", followerId)
    .where("target_account_id", "=", followedId)
    .returning(["id", "uri"])
    .execute();
  await deleteNotificationsOf(
    tx,
    "FollowRequest",
    ended.map((r) => r.id),
  );
  if (outcome)
    for (const request of ended)
      await ctx.dispatcher.emit(tx, {
        type: "follow_request.ended",
        accountId: followerId,
        targetAccountId: followedId,
        uri: request.uri,
        outcome,
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
 * Deletes the follow `followerId` → `followedId` inside `tx` (a dispatcher transaction), moving the
 * counters if there was one; the followed account leaves the follower's lists. The other server
 * hears of it (`follow.removed`) unless `announce` is false: it told us.
 */
export async function removeFollow(
  ctx: Ctx,
  tx: Transaction<Database>,
  followerId: string,
  followedId: string,
  { announce = true } = {},
): Promise<void> {
  const removed = await tx
    .deleteFrom("follows")
    .where("account_id", "=", followerId)
    .where("target_account_id", "=", followedId)
    .returning(["id", "uri"])
    .execute();
  if (announce)
    for (const follow of removed)
      await ctx.dispatcher.emit(tx, {
        type: "follow.removed",
        accountId: followerId,
        targetAccountId: followedId,
        uri: follow.uri,
      });
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
  await ctx.dispatcher.transaction((tx) => removeFollow(ctx, tx, follower.id, owner.id));
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
      request.uri,
    );
  });
}

/** `owner` declines the request of `requester`. */
export async function rejectFollowRequest(ctx: Ctx, owner: AccountRow, requester: AccountRow): Promise<void> {
  await pendingRequest(ctx.db.kysely, requester, owner);
  await ctx.dispatcher.transaction((tx) => endRequest(ctx, tx, requester.id, owner.id, "rejected"));
}

/** What became of a Follow another server sent. */
export type FollowReceived = "followed" | "requested" | "already" | "refused";

/**
 * A remote account's Follow (activity id `uri`) of a local one: a follow at once, or a request
 * when the account is locked; "already" when it follows already (its server is told again that it
 * was accepted); "refused" when either blocks the other or the account moved away.
 */
export async function receiveFollow(
  ctx: Ctx,
  follower: AccountRow,
  target: AccountRow,
  uri: string,
): Promise<FollowReceived> {
  if (
    target.moved_to_account_id ||
    target.suspended_at ||
    (await isBlockedEitherWay(ctx.db.kysely, follower.id, target.id))
  )
    return "refused";
  const now = new Date().toISOString();
  return ctx.dispatcher.transaction(async (tx) => {
    const following = await existingFollow(tx, follower.id, target.id);
    if (following) {
      await tx.updateTable("follows").set({ uri, updated_at: now }).where("id", "=", following.id).execute();
      return "already";
    }
    if (!target.locked) {
      await insertFollow(ctx, tx, follower.id, target.id, {}, now, uri);
      return "followed";
    }
    const request = newFollowRow(follower.id, target.id, {}, now, uri);
    const inserted = await tx
      .insertInto("follow_requests")
      .values(request)
      .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doUpdateSet({ uri, updated_at: now }))
      .returning("id")
      .executeTakeFirstOrThrow();
    if (inserted.id === request.id)
      await ctx.dispatcher.emit(tx, {
        type: "follow_request.created",
        requestId: request.id,
        accountId: follower.id,
        targetAccountId: target.id,
      });
    return "requested";
  });
}

/**
 * The remote account `target` accepted the request of the local `follower`: it becomes a follow
 * with the settings asked for. False when there was no such request (an Accept of nothing).
 */
export async function followAccepted(ctx: Ctx, follower: AccountRow, target: AccountRow): Promise<boolean> {
  return ctx.dispatcher.transaction(async (tx) => {
    const request = await tx
      .deleteFrom("follow_requests")
      .where("account_id", "=", follower.id)
      .where("target_account_id", "=", target.id)
      .returningAll()
      .executeTakeFirst();
    if (!request) return false;
    const languages = request.languages ? (JSON.parse(request.languages) as string[]) : null;
    await insertFollow(
      ctx,
      tx,
      follower.id,
      target.id,
      { reblogs: request.show_reblogs, notify: request.notify, languages },
      new Date().toISOString(),
      request.uri,
    );
    return true;
  });
}

/**
 * The follow (or request) `follower` → `target` ended on the other server's word: a Reject from
 * the followed account's server, an Undo from the follower's. Nothing is sent back.
 */
export async function followEndedRemotely(ctx: Ctx, follower: AccountRow, target: AccountRow): Promise<void> {
  await ctx.dispatcher.transaction(async (tx) => {
    await removeFollow(ctx, tx, follower.id, target.id, { announce: false });
    await endRequest(ctx, tx, follower.id, target.id, null);
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

/** The follow or follow request whose Follow activity is `uri`, with its follower. */
export async function followByUri(
  ctx: Ctx,
  uri: string,
): Promise<{ follower: AccountRow; target_account_id: string } | undefined> {
  for (const table of ["follow_requests", "follows"] as const) {
    const row = await ctx.db.kysely
      .selectFrom(table)
      .innerJoin("accounts", "accounts.id", `${table}.account_id`)
      .selectAll("accounts")
      .select(`${table}.target_account_id`)
      .where(`${table}.uri`, "=", uri)
      .executeTakeFirst();
    if (row) {
      const { target_account_id, ...follower } = row;
      return { follower: follower as AccountRow, target_account_id };
    }
  }
  return undefined;
}

/** The Follow activity's id of a follow or request (null: it never crossed servers). */
export async function followUriOf(
  ctx: Ctx,
  table: "follows" | "follow_requests",
  id: string,
): Promise<string | null | undefined> {
  const row = await ctx.db.kysely.selectFrom(table).select("uri").where("id", "=", id).executeTakeFirst();
  return row?.uri;
}

/**
 * The remote actor `uri` is gone for good (its inbox answered 410): its follows of local accounts
 * end, quietly, so nothing more is sent to it. Returns how many ended.
 */
export async function dropGoneFollower(ctx: Ctx, uri: string): Promise<number> {
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .select("id")
    .where("uri", "=", uri)
    .where("domain", "is not", null)
    .executeTakeFirst();
  if (!account) return 0;
  const follows = await ctx.db.kysely
    .selectFrom("follows")
    .select("target_account_id")
    .where("account_id", "=", account.id)
    .execute();
  await ctx.dispatcher.transaction(async (tx) => {
    for (const follow of follows)
      await removeFollow(ctx, tx, account.id, follow.target_account_id, { announce: false });
  });
  return follows.length;
}
