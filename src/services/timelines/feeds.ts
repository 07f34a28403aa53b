/**
 * Stored home and list feeds, written on posting (fan-out on write). See docs/architecture.md,
 * "Home and list feeds":
 * - a new status goes at once to its author's own feed (in the posting transaction) and, by the
 *   `status.created:feeds` job, to the feeds of local followers, followers of its hashtags and
 *   lists that hold its author, in batches of followers, each batch one INSERT … SELECT applying
 *   the rules of feed_rules.ts; re-running a batch is harmless (the primary key ignores repeats).
 *   Another server's post whose author has less than a batch of followers and of list
 *   memberships here is written to the feeds in its own transaction instead (no job);
 * - following an account merges its recent statuses (`feeds.merge`), unfollowing (and blocking,
 *   which unfollows) removes them in the same transaction, so the next page is right;
 * - feeds keep `FEED_RETENTION_DAYS` of statuses; older pages are read from `statuses` directly
 *   (timelines/home.ts), so a returning user never sees an empty or partial home.
 */
import { sql, type Kysely, type QueryResult, type SelectQueryBuilder } from "kysely";
import type { Ctx } from "../../context.ts";
import { idFloorForTime } from "../../db/ids.ts";
import { prepared, rowWhere } from "../../db/prepared.ts";
import type { Database, StatusRow } from "../../db/schema.ts";
import { homeRules, listColumns, listRules, recentDuplicate, type FeedTable } from "./feed_rules.ts";

/** How long stored feeds keep a status; older pages are assembled from `statuses` on reading. */
export const FEED_RETENTION_DAYS = 14;
/** Followers (or list memberships) written per statement of a fan-out. */
export const FANOUT_BATCH = 1000;
/** At most this many statuses of a newly followed account are merged into a feed. */
export const MERGE_LIMIT = 400;

const DAY = 24 * 60 * 60 * 1000;

/** The smallest status ID stored feeds still answer for; below it pages come from `statuses`. */
export function feedCutoffId(now: number = Date.now()): string {
  return idFloorForTime(new Date(now - FEED_RETENTION_DAYS * DAY));
}

/**
 * Puts a status its author just posted or boosted into the author's own home feed, inside the
 * posting transaction (a boost of something already near the top of it is left out).
 */
export async function addToOwnFeed(tx: Kysely<Database>, status: StatusRow): Promise<void> {
  if (!status.reblog_of_id) {
    await tx
      .insertInto("home_feed_entries")
      .values({ account_id: status.account_id, status_id: status.id, group_id: status.id })
      .onConflict((oc) => oc.doNothing())
      .execute();
    return;
  }
  await sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
    SELECT s.account_id, s.id, s.reblog_of_id FROM statuses s
    WHERE s.id = ${status.id} AND NOT ${recentDuplicate("home_feed_entries", sql.ref("s.account_id"), sql.ref("s.reblog_of_id"))}
    ON CONFLICT DO NOTHING`.execute(tx);
}

/**
 * Runs `write(ids)` for consecutive batches of `FANOUT_BATCH` IDs that `ids(owner)` selects (a
 * query of one ID column), in ascending order, so no statement touches more than a batch. With
 * `oneBatch` it writes nothing and answers false when there is a full batch or more; true once all
 * is written. The batch statement is built once per `key` (db/prepared.ts): a fan-out runs two for
 * every post.
 */
async function inBatches(
  db: Kysely<Database>,
  key: string,
  ids: (owner: string) => SelectQueryBuilder<Database, keyof Database, { id: string }>,
  owner: string | null,
  write: (batch: string[]) => Promise<void>,
  oneBatch = false,
): Promise<boolean> {
  let after = "-1";
  for (;;) {
    const page = prepared<"owner" | "after">(
      db,
      `feeds.batches.${key}`,
      (slot) =>
        ids(slot("owner") as string)
          .where(sql.ref("id"), ">", slot("after"))
          .orderBy(sql.ref("id"))
          .limit(FANOUT_BATCH),
      { owner, after },
    );
    const rows = (await db.executeQuery<{ id: string }>(page)).rows;
    if (rows.length === 0) return true;
    if (oneBatch && rows.length === FANOUT_BATCH) return false;
    await write(rows.map((r) => r.id));
    if (rows.length < FANOUT_BATCH) return true;
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * `ids` repeated at the end up to a power of two: an `IN` list is the same with repeats, and
 * statements of a few lengths are prepared instead of one per follower count.
 */
function padded(ids: string[]): string[] {
  let size = 1;
  while (size < ids.length) size *= 2;
  return [...ids, ...Array<string>(size - ids.length).fill(ids.at(-1)!)];
}

/** The recipient `column` is a local account that is not suspended (a primary-key probe). */
function localRecipient(column: string) {
  return sql`EXISTS (SELECT 1 FROM accounts recipient WHERE recipient.id = ${sql.ref(column)}
    AND recipient.domain IS NULL AND recipient.suspended_at IS NULL LIMIT 1 OFFSET 0)`;
}

/** Rows an INSERT, UPDATE or DELETE run through `sql` wrote. */
function written(result: QueryResult<unknown>): number {
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Writes a status into the feeds of everyone local who follows its author, its hashtags or a list
 * holding its author; returns how many feed entries it wrote.
 *
 * With `oneBatch` (a fan-out inside the transaction that stored the status, `db` being that
 * transaction) it gives up, answering undefined, when its author has a full batch of followers
 * or of list memberships: that fan-out is a job's. What it wrote until then stays, and the job
 * writing it again is harmless.
 */
export async function fanOutStatus(
  ctx: Ctx,
  statusId: string,
  { db = ctx.db.kysely, oneBatch = false }: { db?: Kysely<Database>; oneBatch?: boolean } = {},
): Promise<number | undefined> {
  const status = await rowWhere(db, "statuses", "id", statusId);
  if (!status || status.deleted_at) return 0;
  const author = (
    await db.executeQuery<{ id: string; silenced_at: string | null; suspended_at: string | null }>(
      prepared<"id">(
        db,
        "feeds.author",
        (slot) =>
          db
            .selectFrom("accounts")
            .select(["id", "silenced_at", "suspended_at"])
            .where("id", "=", slot("id") as string),
        { id: status.account_id },
      ),
    )
  ).rows[0];
  if (!author || author.suspended_at) return 0;
  let entries = 0;
  // The statements below run for every post, built once each (db/prepared.ts): their rules are long.
  const values = {
    group: status.reblog_of_id ?? status.id,
    status: status.id,
    author: author.id,
    now: new Date().toISOString(),
  };
  type Slot = keyof typeof values | `id${number}`;
  const ids = (batch: string[], slot: (name: Slot) => unknown) => sql.join(batch.map((_, i) => slot(`id${i}`)));
  const withIds = (batch: string[]) => ({ ...values, ...Object.fromEntries(batch.map((id, i) => [`id${i}`, id])) });
  const followers = await inBatches(
    db,
    "followers",
    (owner) => db.selectFrom("follows").select("follows.id as id").where("follows.target_account_id", "=", owner),
    author.id,
    async (rows) => {
      const batch = padded(rows);
      // The batch's follow rows by primary key, the status by primary key, then per-row probes.
      const insert = prepared<Slot>(
        db,
        `feeds.fanout.home.${batch.length}`,
        (slot) => sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
          SELECT f.account_id, s.id, CAST(${slot("group")} AS bigint) FROM follows f
          JOIN statuses s ON s.id = ${slot("status")}
          WHERE f.id IN (${ids(batch, slot)}) AND f.target_account_id = ${slot("author")}
            AND ${localRecipient("f.account_id")}
            AND ${homeRules(sql.ref("f.account_id"), "s", {
              dedupe: { table: "home_feed_entries", owner: sql.ref("f.account_id") },
              exclusiveLists: true,
              now: slot("now"),
            })}
          ON CONFLICT DO NOTHING`,
        withIds(batch),
      );
      entries += written(await db.executeQuery(insert));
    },
    oneBatch,
  );
  if (!followers) return undefined;

  // Followers of its hashtags: public original posts of authors who are not silenced.
  if (status.visibility === "public" && !status.reblog_of_id && !author.silenced_at) {
    const insert = prepared<Slot>(
      db,
      "feeds.fanout.tags",
      (slot) => sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
        SELECT DISTINCT tf.account_id, s.id, s.id FROM tag_follows tf
        JOIN statuses s ON s.id = ${slot("status")}
        WHERE tf.tag_id IN (SELECT st.tag_id FROM statuses_tags st WHERE st.status_id = ${slot("status")})
          AND tf.account_id <> s.account_id
          AND ${homeRules(sql.ref("tf.account_id"), "s", { exclusiveLists: true, now: slot("now") })}
        ON CONFLICT DO NOTHING`,
      values,
    );
    entries += written(await db.executeQuery(insert));
  }

  const lists = await inBatches(
    db,
    "list_memberships",
    (owner) =>
      db.selectFrom("list_accounts").select("list_accounts.id as id").where("list_accounts.account_id", "=", owner),
    author.id,
    async (rows) => {
      const batch = padded(rows);
      const insert = prepared<Slot>(
        db,
        `feeds.fanout.lists.${batch.length}`,
        (slot) => sql`INSERT INTO list_feed_entries (list_id, status_id, group_id)
          SELECT l.id, s.id, CAST(${slot("group")} AS bigint) FROM list_accounts la
          JOIN lists l ON l.id = la.list_id
          JOIN statuses s ON s.id = ${slot("status")}
          WHERE la.id IN (${ids(batch, slot)}) AND la.account_id = ${slot("author")}
            AND ${localRecipient("l.account_id")} AND ${listRules(listColumns("l"), "s")}
            AND ${homeRules(sql.ref("l.account_id"), "s", {
              dedupe: { table: "list_feed_entries", owner: sql.ref("l.id") },
              exclusiveLists: false,
              now: slot("now"),
            })}
          ON CONFLICT DO NOTHING`,
        withIds(batch),
      );
      entries += written(await db.executeQuery(insert));
    },
    oneBatch,
  );
  return lists ? entries : undefined;
}

/**
 * Merges the recent statuses of `targetId` (newest `MERGE_LIMIT` within the retention) into the
 * home feed of `accountId`, who now follows them; their own statuses when they are the same.
 * Returns how many entries it wrote.
 */
export async function mergeIntoHome(
  ctx: Ctx,
  accountId: string,
  targetId: string,
  db: Kysely<Database> = ctx.db.kysely,
): Promise<number> {
  const recipient = sql.val(accountId);
  const rules =
    accountId === targetId
      ? sql`TRUE`
      : sql`EXISTS (SELECT 1 FROM follows mf WHERE mf.account_id = ${accountId} AND mf.target_account_id = ${targetId})
          AND ${homeRules(recipient, "s", { exclusiveLists: true })}`;
  const result = await sql`INSERT INTO home_feed_entries (account_id, status_id, group_id)
    SELECT CAST(${accountId} AS bigint), s.id, COALESCE(s.reblog_of_id, s.id) FROM statuses s
    WHERE s.account_id = ${targetId} AND s.id >= ${feedCutoffId()} AND s.deleted_at IS NULL AND ${rules}
    ORDER BY s.id DESC LIMIT ${MERGE_LIMIT}
    ON CONFLICT DO NOTHING`.execute(db);
  return written(result);
}

/** Merges the recent statuses of a new member `accountId` of the list `listId` into its feed; returns the entries written. */
export async function mergeIntoList(ctx: Ctx, listId: string, accountId: string): Promise<number> {
  const db = ctx.db.kysely;
  const list = await db.selectFrom("lists").select(["id", "account_id"]).where("id", "=", listId).executeTakeFirst();
  if (!list) return 0;
  const result = await sql`INSERT INTO list_feed_entries (list_id, status_id, group_id)
    SELECT l.id, s.id, COALESCE(s.reblog_of_id, s.id) FROM statuses s
    JOIN lists l ON l.id = ${listId}
    WHERE s.account_id = ${accountId} AND s.id >= ${feedCutoffId()} AND s.deleted_at IS NULL
      AND EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = l.id AND la.account_id = s.account_id)
      AND ${listRules(listColumns("l"), "s")} AND ${homeRules(sql.ref("l.account_id"), "s", { exclusiveLists: false })}
    ORDER BY s.id DESC LIMIT ${MERGE_LIMIT}
    ON CONFLICT DO NOTHING`.execute(db);
  return written(result);
}

/**
 * Takes the statuses (or only the boosts) of `targetId` out of the home feed of `accountId`:
 * after an unfollow, a block, or hiding their boosts. Runs inside the transaction that made the
 * change, so the next page already reflects it.
 */
export async function removeFromHome(
  tx: Kysely<Database>,
  accountId: string,
  targetId: string,
  only: "all" | "boosts" = "all",
): Promise<void> {
  let theirs = tx
    .selectFrom("statuses")
    .select("statuses.id")
    .where("statuses.account_id", "=", targetId)
    .where("statuses.id", ">=", feedCutoffId());
  if (only === "boosts") theirs = theirs.where("statuses.reblog_of_id", "is not", null);
  await tx
    .deleteFrom("home_feed_entries")
    .where("account_id", "=", accountId)
    .where("status_id", "in", theirs)
    .execute();
}

/** Takes the statuses of `accountId` out of the feed of the list `listId` (they left it). */
export async function removeFromList(tx: Kysely<Database>, listId: string, accountId: string): Promise<void> {
  await tx
    .deleteFrom("list_feed_entries")
    .where("list_id", "=", listId)
    .where(
      "status_id",
      "in",
      tx
        .selectFrom("statuses")
        .select("statuses.id")
        .where("statuses.account_id", "=", accountId)
        .where("statuses.id", ">=", feedCutoffId()),
    )
    .execute();
}

/**
 * Builds the home feed of `accountId` from scratch: their own statuses and those of everyone they
 * follow, within the retention (after an upgrade that introduced stored feeds). Returns the
 * entries written, home and lists.
 */
export async function rebuildHome(ctx: Ctx, accountId: string): Promise<number> {
  let entries = await mergeIntoHome(ctx, accountId, accountId);
  const db = ctx.db.kysely;
  await inBatches(
    db,
    "followed",
    (owner) => db.selectFrom("follows").select("follows.id as id").where("follows.account_id", "=", owner),
    accountId,
    async (batch) => {
      const targets = await db.selectFrom("follows").select("target_account_id").where("id", "in", batch).execute();
      for (const { target_account_id } of targets) entries += await mergeIntoHome(ctx, accountId, target_account_id);
    },
  );
  const lists = await db.selectFrom("lists").select("id").where("account_id", "=", accountId).execute();
  for (const list of lists) {
    const members = await db.selectFrom("list_accounts").select("account_id").where("list_id", "=", list.id).execute();
    for (const member of members) entries += await mergeIntoList(ctx, list.id, member.account_id);
  }
  return entries;
}

/** Enqueues a rebuild of every local account's feeds; returns how many were enqueued. */
export async function rebuildAllFeeds(ctx: Ctx): Promise<number> {
  const db = ctx.db.kysely;
  let count = 0;
  await inBatches(
    db,
    "local_accounts",
    () => db.selectFrom("accounts").select("accounts.id as id").where("accounts.domain", "is", null),
    null,
    async (batch) => {
      for (const accountId of batch) {
        await ctx.jobs.enqueue("feeds.rebuild", { accountId }, { uniqueKey: `feeds.rebuild:${accountId}` });
        count++;
      }
    },
  );
  return count;
}

/** Deletes feed entries older than the retention, a batch at a time; returns how many went. */
export async function trimFeeds(ctx: Ctx, now: number = Date.now()): Promise<number> {
  const db = ctx.db.kysely;
  const cutoff = feedCutoffId(now);
  let removed = 0;
  for (const table of ["home_feed_entries", "list_feed_entries"] as FeedTable[]) {
    for (;;) {
      // The bound of the next batch: the 5,000th oldest entry, or the cutoff itself.
      const edge = await db
        .selectFrom(table)
        .select("status_id")
        .where("status_id", "<", cutoff)
        .orderBy("status_id")
        .limit(1)
        .offset(5000)
        .executeTakeFirst();
      const bound = edge?.status_id ?? cutoff;
      const result = await db.deleteFrom(table).where("status_id", "<", bound).executeTakeFirst();
      removed += Number(result.numDeletedRows);
      if (!edge) break;
    }
  }
  return removed;
}
