/**
 * Idempotency-Key for posting (Mastodon's `with_idempotency`): within an hour, the same key of the
 * same account answers with what the first request made — a status or a scheduled status — and
 * two requests racing with one key make one post (the loser's insert fails on the key).
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { scheduledStatusById, statusById } from "../../db/queries/statuses.ts";
import type { Database, ScheduledStatusRow, StatusRow } from "../../db/schema.ts";

/** How long an Idempotency-Key returns the same post. */
export const IDEMPOTENCY_WINDOW_MS = 60 * 60 * 1000;

/** What posting made: a status now, or a scheduled status. */
export type Posted = { kind: "status"; status: StatusRow } | { kind: "scheduled"; scheduled: ScheduledStatusRow };

/** What a still-valid key of this account made, if it still exists. */
async function earlierPost(db: Kysely<Database>, accountId: string, key: string): Promise<Posted | undefined> {
  const row = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .executeTakeFirst();
  if (!row || Date.parse(row.created_at) + IDEMPOTENCY_WINDOW_MS < Date.now()) return undefined;
  const status = await statusById(db, row.status_id ?? undefined);
  if (status) return { kind: "status", status };
  const scheduled = await scheduledStatusById(db, row.scheduled_status_id ?? undefined);
  return scheduled ? { kind: "scheduled", scheduled } : undefined;
}

/**
 * Runs `post` unless `key` already made a post (then answers with that post). `post` must record
 * the key with `rememberIdempotencyKey` inside its transaction.
 */
export async function withIdempotency(
  ctx: Ctx,
  accountId: string,
  key: string | undefined,
  post: () => Promise<Posted>,
): Promise<Posted> {
  if (!key) return post();
  const earlier = await earlierPost(ctx.db.kysely, accountId, key);
  if (earlier) return earlier;
  try {
    return await post();
  } catch (error) {
    // Two requests with one key at once: the loser answers with the winner's post.
    const winner = await earlierPost(ctx.db.kysely, accountId, key);
    if (winner) return winner;
    throw error;
  }
}

/** Records an Idempotency-Key inside the creating transaction; a concurrent duplicate fails on the key. */
export async function rememberIdempotencyKey(
  db: Kysely<Database>,
  accountId: string,
  key: string,
  target: { statusId?: string; scheduledStatusId?: string },
): Promise<void> {
  const now = new Date().toISOString();
  // An expired key, or one whose status was deleted (or whose scheduled status is gone), may be used again.
  await db
    .deleteFrom("idempotency_keys")
    .where("account_id", "=", accountId)
    .where("key", "=", key)
    .where((eb) =>
      eb.or([
        eb("created_at", "<", new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString()),
        eb.and([
          eb("status_id", "is not", null),
          eb.not(
            eb.exists(
              eb
                .selectFrom("statuses")
                .select("statuses.id")
                .whereRef("statuses.id", "=", "idempotency_keys.status_id"),
            ),
          ),
        ]),
        eb.and([
          eb("scheduled_status_id", "is not", null),
          eb.not(
            eb.exists(
              eb
                .selectFrom("scheduled_statuses")
                .select("scheduled_statuses.id")
                .whereRef("scheduled_statuses.id", "=", "idempotency_keys.scheduled_status_id"),
            ),
          ),
        ]),
      ]),
    )
    .execute();
  await db
    .insertInto("idempotency_keys")
    .values({
      account_id: accountId,
      key,
      status_id: target.statusId ?? null,
      scheduled_status_id: target.scheduledStatusId ?? null,
      created_at: now,
    })
    .execute();
}
