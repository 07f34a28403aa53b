import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, PollRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { pollOptions, pollTallies } from "../../db/columns.ts";
import { isPollExpired } from "../../entities/poll.ts";
import { findVisibleStatus } from "../visibility/find.ts";

/** A poll whose status the viewer may see, or 404. */
export async function findVisiblePoll(
  ctx: Ctx,
  id: string | undefined,
  viewerAccountId: string | undefined,
): Promise<PollRow> {
  const poll = id
    ? await ctx.db.kysely.selectFrom("polls").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!poll?.status_id) throw new NotFound();
  await findVisibleStatus(ctx, poll.status_id, viewerAccountId);
  return poll;
}

/** Casts the viewer's vote (Mastodon's rules and texts); tallies change in the same transaction. */
export async function votePoll(ctx: Ctx, viewer: AccountRow, poll: PollRow, choices: number[]): Promise<PollRow> {
  if (poll.account_id === viewer.id) throw new ValidationFailed("You cannot vote in your own polls");
  if (isPollExpired(poll)) throw new ValidationFailed("The poll has already ended");
  const count = pollOptions(poll).length;
  const unique = [...new Set(choices)];
  if (unique.length === 0 || unique.some((c) => !Number.isInteger(c) || c < 0 || c >= count))
    throw new ValidationFailed("The chosen vote option does not exist");
  if (!poll.multiple && unique.length > 1) throw new ValidationFailed("You have already voted on this poll");
  return ctx.db.kysely.transaction().execute(async (tx) => {
    let locked = tx.selectFrom("polls").selectAll().where("id", "=", poll.id);
    if (ctx.db.engine === "postgres") locked = locked.forUpdate();
    const current = await locked.executeTakeFirstOrThrow();
    const earlier = await tx
      .selectFrom("poll_votes")
      .select("id")
      .where("poll_id", "=", poll.id)
      .where("account_id", "=", viewer.id)
      .limit(1)
      .execute();
    if (earlier.length > 0) throw new ValidationFailed("You have already voted on this poll");
    const now = new Date().toISOString();
    await tx
      .insertInto("poll_votes")
      .values(
        unique.map((choice) => ({ id: newId(), poll_id: poll.id, account_id: viewer.id, choice, created_at: now })),
      )
      .execute();
    const tallies = pollTallies(current);
    for (const choice of unique) tallies[choice] = (tallies[choice] ?? 0) + 1;
    return tx
      .updateTable("polls")
      .set({
        cached_tallies: JSON.stringify(tallies),
        votes_count: current.votes_count + unique.length,
        voters_count: (current.voters_count ?? 0) + 1,
        updated_at: now,
      })
      .where("id", "=", poll.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/**
 * Ends a poll at its expiry (the `polls.close` job). Runs once per poll: `closed_at` marks it, and
 * the job that notifies its author and voters is enqueued with the mark, so they hear of it once.
 */
export async function closePoll(ctx: Ctx, pollId: string, now = Date.now()): Promise<boolean> {
  const poll = await ctx.db.kysely.selectFrom("polls").selectAll().where("id", "=", pollId).executeTakeFirst();
  if (!poll || poll.closed_at || !isPollExpired(poll, now)) return false;
  return ctx.dispatcher.transaction(async (tx) => {
    const result = await tx
      .updateTable("polls")
      .set({ closed_at: new Date(now).toISOString() })
      .where("id", "=", pollId)
      .where("closed_at", "is", null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    // Its author and its voters learn of the end: once, with the closing.
    await ctx.dispatcher.emit(tx, { type: "poll.ended", pollId });
    return true;
  });
}
