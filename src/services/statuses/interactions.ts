import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { lockAccountRow } from "../../db/queries/accounts.ts";
import type { AccountRow, Database, StatusRow } from "../../db/schema.ts";
import { Forbidden, NotFound, ValidationFailed } from "../../errors.ts";
import { LIMITS } from "../../limits.ts";
import { deleteNotificationsOf } from "../../db/queries/notifications.ts";
import { addToOwnFeed } from "../timelines/feeds.ts";
import { deleteStatus } from "./delete.ts";
import { findVisibleStatus } from "../visibility/find.ts";
import type { Visibility } from "./validate.ts";

/** The status an action applies to: a boost stands for the status it boosts. */
export async function actionTarget(ctx: Ctx, id: string | undefined, viewer: AccountRow): Promise<StatusRow> {
  const status = await findVisibleStatus(ctx, id, viewer.id);
  if (!status.reblog_of_id) return status;
  const original = await ctx.db.kysely
    .selectFrom("statuses")
    .selectAll()
    .where("id", "=", status.reblog_of_id)
    .executeTakeFirst();
  if (!original) throw new NotFound();
  return original;
}

async function reload(ctx: Ctx, id: string): Promise<StatusRow> {
  return ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

type CountedTable = "favourites";

/** Adds the viewer's favourite (idempotent); the count moves only when a row was added. */
export async function favourite(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<StatusRow> {
  const id = newId();
  await ctx.dispatcher.transaction(async (tx) => {
    const inserted = await tx
      .insertInto("favourites" satisfies CountedTable)
      .values({ id, account_id: viewer.id, status_id: status.id, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(["account_id", "status_id"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
      await tx
        .updateTable("statuses")
        .set((eb) => ({ favourites_count: eb("favourites_count", "+", 1) }))
        .where("id", "=", status.id)
        .execute();
      await ctx.dispatcher.emit(tx, {
        type: "favourite.created",
        favouriteId: id,
        accountId: viewer.id,
        statusId: status.id,
      });
    }
  });
  return reload(ctx, status.id);
}

export async function unfavourite(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<StatusRow> {
  await ctx.dispatcher.transaction(async (tx) => {
    const removed = await tx
      .deleteFrom("favourites")
      .where("account_id", "=", viewer.id)
      .where("status_id", "=", status.id)
      .returning("id")
      .execute();
    await deleteNotificationsOf(
      tx,
      "Favourite",
      removed.map((r) => r.id),
    );
    for (const { id } of removed)
      await ctx.dispatcher.emit(tx, {
        type: "favourite.removed",
        favouriteId: id,
        accountId: viewer.id,
        statusId: status.id,
      });
    if (removed.length > 0) {
      await tx
        .updateTable("statuses")
        .set((eb) => ({ favourites_count: eb("favourites_count", "-", 1) }))
        .where("id", "=", status.id)
        .where("favourites_count", ">", 0)
        .execute();
    }
  });
  return reload(ctx, status.id);
}

/** Bookmarks: a flag per account and status, without a counter. */
async function addFlag(ctx: Ctx, table: "bookmarks", viewer: AccountRow, status: StatusRow): Promise<void> {
  await ctx.db.kysely
    .insertInto(table)
    .values({ id: newId(), account_id: viewer.id, status_id: status.id, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(["account_id", "status_id"]).doNothing())
    .execute();
}

async function removeFlag(ctx: Ctx, table: "bookmarks", viewer: AccountRow, status: StatusRow): Promise<void> {
  await ctx.db.kysely
    .deleteFrom(table)
    .where("account_id", "=", viewer.id)
    .where("status_id", "=", status.id)
    .execute();
}

export const bookmark = (ctx: Ctx, viewer: AccountRow, status: StatusRow) => addFlag(ctx, "bookmarks", viewer, status);
export const unbookmark = (ctx: Ctx, viewer: AccountRow, status: StatusRow) =>
  removeFlag(ctx, "bookmarks", viewer, status);

/** Pins one of the viewer's own posts to the profile (at most five; not boosts or direct posts). */
export async function pin(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<void> {
  if (status.account_id !== viewer.id) throw new ValidationFailed("Someone else's post cannot be pinned");
  if (status.reblog_of_id) throw new ValidationFailed("A boost cannot be pinned");
  if (status.visibility === "direct")
    throw new ValidationFailed("Posts that are only visible to mentioned users cannot be pinned");
  await ctx.dispatcher.transaction(async (tx) => {
    // The limit holds under concurrent pins: count and insert under the account's lock.
    await lockAccountRow(tx, ctx.db.engine, viewer.id);
    const pinned = await tx
      .selectFrom("status_pins")
      .select(["status_id"])
      .where("account_id", "=", viewer.id)
      .execute();
    if (pinned.some((p) => p.status_id === status.id)) return;
    if (pinned.length >= LIMITS.accounts.maxPinnedStatuses)
      throw new ValidationFailed("You have already pinned the maximum number of posts");
    await tx
      .insertInto("status_pins")
      .values({ id: newId(), account_id: viewer.id, status_id: status.id, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(["account_id", "status_id"]).doNothing())
      .execute();
    await ctx.dispatcher.emit(tx, { type: "status.pinned", accountId: viewer.id, statusId: status.id });
  });
}

export async function unpin(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<void> {
  await ctx.dispatcher.transaction(async (tx) => {
    const removed = await tx
      .deleteFrom("status_pins")
      .where("account_id", "=", viewer.id)
      .where("status_id", "=", status.id)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) > 0)
      await ctx.dispatcher.emit(tx, { type: "status.unpinned", accountId: viewer.id, statusId: status.id });
  });
}

/**
 * A remote account's pins as its server announces them (Add / Remove to its featured collection):
 * only its own posts, no limit of ours.
 */
export async function setRemotePin(ctx: Ctx, account: AccountRow, status: StatusRow, pinned: boolean): Promise<void> {
  if (status.account_id !== account.id || status.reblog_of_id) return;
  if (pinned)
    await ctx.db.kysely
      .insertInto("status_pins")
      .values({ id: newId(), account_id: account.id, status_id: status.id, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(["account_id", "status_id"]).doNothing())
      .execute();
  else
    await ctx.db.kysely
      .deleteFrom("status_pins")
      .where("account_id", "=", account.id)
      .where("status_id", "=", status.id)
      .execute();
}

/** Mutes the conversation a status belongs to: its notifications stop for the viewer. */
export async function muteConversation(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<void> {
  if (!status.conversation_id) return;
  await ctx.db.kysely
    .insertInto("conversation_mutes")
    .values({ id: newId(), account_id: viewer.id, conversation_id: status.conversation_id })
    .onConflict((oc) => oc.columns(["account_id", "conversation_id"]).doNothing())
    .execute();
  await ctx.dispatcher.emitCommitted({ type: "relations.changed", accountIds: [viewer.id] });
}

export async function unmuteConversation(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<void> {
  if (!status.conversation_id) return;
  await ctx.db.kysely
    .deleteFrom("conversation_mutes")
    .where("account_id", "=", viewer.id)
    .where("conversation_id", "=", status.conversation_id)
    .execute();
  await ctx.dispatcher.emitCommitted({ type: "relations.changed", accountIds: [viewer.id] });
}

const REBLOG_VISIBILITIES = ["public", "unlisted", "private"] as const;

/** A new boost counts: on the boosted status, and among its booster's statuses. */
export async function countBoost(
  tx: Kysely<Database>,
  boostedId: string,
  boosterId: string,
  now: string,
): Promise<void> {
  await tx
    .updateTable("statuses")
    .set((eb) => ({ reblogs_count: eb("reblogs_count", "+", 1) }))
    .where("id", "=", boostedId)
    .execute();
  await tx
    .updateTable("accounts")
    .set((eb) => ({ statuses_count: eb("statuses_count", "+", 1), last_status_at: now }))
    .where("id", "=", boosterId)
    .execute();
}

/**
 * Boosts a status (or returns the viewer's existing boost). Private posts can be boosted only by
 * their author, and stay private; direct posts never.
 */
export async function reblog(
  ctx: Ctx,
  viewer: AccountRow,
  status: StatusRow,
  requested: string | undefined,
): Promise<StatusRow> {
  const own = status.account_id === viewer.id;
  if (status.visibility === "direct" || (status.visibility === "private" && !own)) throw new Forbidden();
  const existing = await ctx.db.kysely
    .selectFrom("statuses")
    .selectAll()
    .where("account_id", "=", viewer.id)
    .where("reblog_of_id", "=", status.id)
    .executeTakeFirst();
  if (existing) return existing;
  let visibility: Visibility = (REBLOG_VISIBILITIES as readonly string[]).includes(requested ?? "")
    ? (requested as Visibility)
    : "public";
  if (status.visibility === "private") visibility = "private";
  if (visibility === "public" && viewer.silenced_at) visibility = "unlisted";
  const now = new Date().toISOString();
  const id = newId();
  const uri = `${ctx.config.baseUrl}/users/${viewer.username}/statuses/${id}/activity`;
  try {
    const boost = await ctx.dispatcher.transaction(async (tx) => {
      const row = await tx
        .insertInto("statuses")
        .values({
          id,
          uri,
          url: uri,
          account_id: viewer.id,
          reblog_of_id: status.id,
          visibility,
          local: true,
          conversation_id: status.conversation_id,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await countBoost(tx, status.id, viewer.id, now);
      await addToOwnFeed(tx, row);
      await ctx.dispatcher.emit(tx, { type: "status.created", statusId: row.id, local: true });
      return row;
    });
    return boost;
  } catch (error) {
    const raced = await ctx.db.kysely
      .selectFrom("statuses")
      .selectAll()
      .where("account_id", "=", viewer.id)
      .where("reblog_of_id", "=", status.id)
      .executeTakeFirst();
    if (raced) return raced;
    throw error;
  }
}

/** Removes the viewer's boost of `status`, if any; returns the boosted status. */
export async function unreblog(ctx: Ctx, viewer: AccountRow, status: StatusRow): Promise<StatusRow> {
  const boosts = await ctx.db.kysely
    .selectFrom("statuses")
    .selectAll()
    .where("account_id", "=", viewer.id)
    .where("reblog_of_id", "=", status.id)
    .execute();
  for (const boost of boosts) {
    try {
      await deleteStatus(ctx, boost);
    } catch (error) {
      // Another request removed it first: the outcome is the same.
      if (!(error instanceof NotFound)) throw error;
    }
  }
  return reload(ctx, status.id);
}
