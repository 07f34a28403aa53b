/**
 * Self-healing and garbage collection, run by recurring jobs:
 * - what must not be lost when its job ran out of attempts or was lost: scheduled statuses past
 *   their time are published, polls past their end are closed (both are safe to repeat: publishing
 *   deletes the scheduled row in its own transaction, closing sets `closed_at` only once), and media
 *   conversions whose job ran out of attempts without recording it are marked failed;
 * - preview cards no status uses any more, with their images;
 * - translations kept longer than their cache period.
 */
import type { Ctx } from "../context.ts";
import { closePoll } from "./polls/vote.ts";
import { publishScheduledStatus } from "./statuses/schedule.ts";
import { failAbandonedMedia } from "./media/timed.ts";

/** Work older than this is overdue: its own job should have run by then. */
export const OVERDUE_MS = 5 * 60 * 1000;
/** A card unused for this long goes (a status being edited may link it again meanwhile). */
export const UNUSED_CARD_MS = 24 * 60 * 60 * 1000;
const BATCH = 100;

export interface Recovered {
  published: number;
  dropped: number;
  pollsClosed: number;
  mediaFailed: number;
}

/**
 * Publishes overdue scheduled statuses, closes overdue polls and fails media conversions whose job
 * is gone, a batch of each per run.
 */
export async function recoverOverdueWork(ctx: Ctx, now = Date.now()): Promise<Recovered> {
  const before = new Date(now - OVERDUE_MS).toISOString();
  const result: Recovered = { published: 0, dropped: 0, pollsClosed: 0, mediaFailed: 0 };
  const scheduled = await ctx.db.kysely
    .selectFrom("scheduled_statuses")
    .select("id")
    .where("scheduled_at", "<", before)
    .orderBy("scheduled_at")
    .limit(BATCH)
    .execute();
  for (const { id } of scheduled) {
    const outcome = await publishScheduledStatus(ctx, id, now);
    if (outcome === "published") result.published++;
    if (outcome === "dropped") result.dropped++;
  }
  const polls = await ctx.db.kysely
    .selectFrom("polls")
    .select("id")
    .where("closed_at", "is", null)
    .where("expires_at", "<", before)
    .orderBy("expires_at")
    .limit(BATCH)
    .execute();
  for (const { id } of polls) if (await closePoll(ctx, id, now)) result.pollsClosed++;
  // Jobs whose every attempt died with its worker are recorded as failed first, so their media count as abandoned.
  await ctx.jobs.failExhausted(new Date(now));
  result.mediaFailed = await failAbandonedMedia(ctx, BATCH);
  return result;
}

/** Deletes preview cards that no status has used for a day, and their stored images. */
export async function removeUnusedCards(ctx: Ctx, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - UNUSED_CARD_MS).toISOString();
  const unused = await ctx.db.kysely
    .selectFrom("preview_cards")
    .select(["id", "image_file"])
    .where("updated_at", "<", cutoff)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("preview_cards_statuses")
            .select("preview_card_id")
            .whereRef("preview_cards_statuses.preview_card_id", "=", "preview_cards.id"),
        ),
      ),
    )
    .limit(BATCH * 10)
    .execute();
  let removed = 0;
  for (const card of unused) {
    // Re-checked in the DELETE: a status may have linked the card meanwhile.
    const gone = await ctx.db.kysely
      .deleteFrom("preview_cards")
      .where("id", "=", card.id)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("preview_cards_statuses")
              .select("preview_card_id")
              .whereRef("preview_cards_statuses.preview_card_id", "=", "preview_cards.id"),
          ),
        ),
      )
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) continue;
    removed++;
    if (card.image_file) await ctx.media.delete(card.image_file);
  }
  return removed;
}
