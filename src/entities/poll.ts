import { pollOptions, pollTallies } from "../db/columns.ts";
import type { Ctx } from "../context.ts";
import type { AccountRow, PollRow } from "../db/schema.ts";
import type { CustomEmoji } from "./custom_emoji.ts";

export interface Poll {
  id: string;
  expires_at: string | null;
  expired: boolean;
  multiple: boolean;
  votes_count: number;
  voters_count: number | null;
  voted?: boolean;
  own_votes?: number[];
  options: Array<{ title: string; votes_count: number | null }>;
  emojis: CustomEmoji[];
}

export function isPollExpired(row: Pick<PollRow, "expires_at">, now = Date.now()): boolean {
  return row.expires_at !== null && Date.parse(row.expires_at) <= now;
}

/**
 * A poll for a viewer. Totals stay hidden (`votes_count: null` per option) while `hide_totals` is
 * set and the poll runs, except for its author. `voted`/`own_votes` appear only for a signed-in viewer.
 */
export function serializePoll(
  row: PollRow,
  viewer: { accountId: string; ownVotes: number[] } | undefined,
  emojis: CustomEmoji[] = [],
): Poll {
  const expired = isPollExpired(row);
  const hidden = row.hide_totals && !expired && viewer?.accountId !== row.account_id;
  const tallies = pollTallies(row);
  const poll: Poll = {
    id: row.id,
    expires_at: row.expires_at,
    expired,
    multiple: row.multiple,
    votes_count: row.votes_count,
    voters_count: row.multiple ? row.voters_count : (row.voters_count ?? row.votes_count),
    options: pollOptions(row).map((title, i) => ({ title, votes_count: hidden ? null : (tallies[i] ?? 0) })),
    emojis,
  };
  if (viewer) {
    poll.voted = viewer.accountId === row.account_id || viewer.ownVotes.length > 0;
    poll.own_votes = viewer.ownVotes;
  }
  return poll;
}

/** One poll for a viewer (GET /api/v1/polls/:id): loads the viewer's own votes. */
export async function serializePollFor(ctx: Ctx, row: PollRow, viewer: AccountRow | undefined): Promise<Poll> {
  if (!viewer) return serializePoll(row, undefined);
  const votes = await ctx.db.kysely
    .selectFrom("poll_votes")
    .select("choice")
    .where("poll_id", "=", row.id)
    .where("account_id", "=", viewer.id)
    .execute();
  return serializePoll(row, { accountId: viewer.id, ownVotes: votes.map((v) => v.choice).sort((a, b) => a - b) });
}
