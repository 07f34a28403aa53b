/**
 * Posting, the whole use case (Mastodon's PostStatusService): the Idempotency-Key, the choice
 * between publishing now and scheduling, and then one of the two.
 */
import type { Ctx } from "../../context.ts";
import { createStatus } from "./create.ts";
import { withIdempotency, type Posted } from "./idempotency.ts";
import { prepareStatus, type Author, type StatusParams } from "./prepare.ts";
import { decideSchedule, scheduleStatus } from "./schedule.ts";

export interface PostParams extends StatusParams {
  /** `scheduled_at`: absent or past publishes now; at least five minutes ahead schedules. */
  scheduledAt?: Date;
}

/** Publishes or schedules a post of `author`; a repeated Idempotency-Key answers the first post. */
export async function postStatus(
  ctx: Ctx,
  author: Author,
  params: PostParams,
  idempotencyKey?: string,
): Promise<Posted> {
  return withIdempotency(ctx, author.account.id, idempotencyKey, async () => {
    const decision = decideSchedule(params.scheduledAt);
    if (decision.kind === "later") {
      return { kind: "scheduled", scheduled: await scheduleStatus(ctx, author, params, decision.at, idempotencyKey) };
    }
    const draft = await prepareStatus(ctx, author, params);
    return { kind: "status", status: await createStatus(ctx, author, draft, { idempotencyKey }) };
  });
}
