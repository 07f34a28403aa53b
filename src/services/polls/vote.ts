import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { Kysely } from "kysely";
import type { AccountRow, Database, PollRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { pollOptions, pollTallies } from "../../db/columns.ts";
import { isPollExpired } from "../../entities/poll.ts";
import { findVisibleStatus } from "../visibility/find.ts";

export async function pollById(ctx: Ctx, id: string): Promise<PollRow | undefined> {
  return ctx.db.kysely.selectFrom("polls").selectAll().where("id", "=", id).executeTakeFirst();
}

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

/** The poll's row, locked until `tx` ends (PostgreSQL; SQLite writes one at a time anyway). */
async function lockedPoll(ctx: Ctx, tx: Kysely<Database>, pollId: string): Promise<PollRow> {
  let locked = tx.selectFrom("polls").selectAll().where("id", "=", pollId);
  if (ctx.db.engine === "postgres") locked = locked.forUpdate();
  return locked.executeTakeFirstOrThrow();
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
  return ctx.dispatcher.transaction(async (tx) => {
    const current = await lockedPoll(ctx, tx, poll.id);
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
    await ctx.dispatcher.emit(tx, { type: "poll.voted", pollId: poll.id, accountId: viewer.id, choices: unique });
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
 * A remote account's vote (its Create of a Note named by the option) in a local poll: one choice
 * per activity, as Mastodon sends them. A choice that is no option, a second choice in a
 * single-choice poll, a repeated choice or an ended poll count nothing. True when it counted.
 */
export async function recordRemoteVote(
  ctx: Ctx,
  voter: AccountRow,
  poll: PollRow,
  optionName: string,
): Promise<boolean> {
  const choice = pollOptions(poll).indexOf(optionName.trim());
  if (choice < 0 || isPollExpired(poll) || poll.account_id === voter.id) return false;
  return ctx.dispatcher.transaction(async (tx) => {
    const current = await lockedPoll(ctx, tx, poll.id);
    const earlier = await tx
      .selectFrom("poll_votes")
      .select("choice")
      .where("poll_id", "=", poll.id)
      .where("account_id", "=", voter.id)
      .execute();
    if (earlier.some((v) => v.choice === choice) || (!current.multiple && earlier.length > 0)) return false;
    const now = new Date().toISOString();
    await tx
      .insertInto("poll_votes")
      .values({ id: newId(), poll_id: poll.id, account_id: voter.id, choice, created_at: now })
      .execute();
    const tallies = pollTallies(current);
    tallies[choice] = (tallies[choice] ?? 0) + 1;
    await tx
      .updateTable("polls")
      .set({
        cached_tallies: JSON.stringify(tallies),
        votes_count: current.votes_count + 1,
        voters_count: (current.voters_count ?? 0) + (earlier.length === 0 ? 1 : 0),
        updated_at: now,
      })
      .where("id", "=", poll.id)
      .execute();
    await ctx.dispatcher.emit(tx, { type: "poll.voted", pollId: poll.id, accountId: voter.id, choices: [choice] });
    return true;
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
