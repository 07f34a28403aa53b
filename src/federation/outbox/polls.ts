/**
 * Polls across servers, as Mastodon does them: a local vote in a remote poll is sent to the poll's
 * author as a Create of a Note named by the option (one per choice); a vote in a local poll —
 * from anyone — brings the poll's new tallies to the servers that have it, as an Update of the
 * Question, a few seconds later and once for a burst of votes.
 */
import { Create, Note } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import { pollOptions } from "../../db/columns.ts";
import { serializeStatus } from "../../entities/status.ts";
import type { DomainEvent } from "../../events/types.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { pollStatusLinks, remoteFollowersOf, remoteVotersOf, statusLinks } from "../../services/statuses/audience.ts";
import { noteOf, updateOf } from "../notes.ts";
import { send } from "./send.ts";

/** The job that sends a local poll's tallies (unique per poll while it waits). */
export const POLL_UPDATE_JOB = "federation.poll_update";
const POLL_UPDATE_DELAY_MS = 3_000;

export async function deliverVote(ctx: Ctx, event: DomainEvent<"poll.voted">): Promise<void> {
  const links = await pollStatusLinks(ctx, event.pollId);
  if (!links?.poll) return;
  if (links.author.domain === null) {
    await ctx.jobs.enqueue(
      POLL_UPDATE_JOB,
      { statusId: links.status.id },
      { uniqueKey: `${POLL_UPDATE_JOB}:${links.status.id}`, runAt: new Date(Date.now() + POLL_UPDATE_DELAY_MS) },
    );
    return;
  }
  const [voter] = await findAccountsByIds(ctx, [event.accountId]);
  if (!voter || voter.domain !== null) return;
  const options = pollOptions(links.poll);
  for (const choice of event.choices) {
    const id = `${voter.uri}#votes/${event.pollId}/${choice}`;
    const note = new Note({
      id: new URL(id),
      name: options[choice] ?? "",
      attribution: new URL(voter.uri),
      replyTarget: new URL(links.status.uri),
      to: new URL(links.author.uri),
    });
    await send(
      ctx,
      voter,
      [links.author],
      new Create({
        id: new URL(`${id}/activity`),
        actor: new URL(voter.uri),
        to: new URL(links.author.uri),
        object: note,
      }),
      { orderingKey: `${voter.uri} ${links.status.uri}` },
    );
  }
}

/** Sends a local poll's current tallies: Update of its Question to its followers' and voters' servers. */
export async function deliverPollUpdate(ctx: Ctx, statusId: string): Promise<void> {
  const links = await statusLinks(ctx, statusId);
  if (!links?.poll || links.author.domain !== null || links.status.visibility === "direct") return;
  const question = noteOf(links, await serializeStatus(ctx, links.status));
  const audience = [
    ...(await remoteFollowersOf(ctx, links.author.id)),
    ...(await remoteVotersOf(ctx, links.poll.id)),
    ...links.mentioned,
  ];
  const update = updateOf(question, links);
  await send(ctx, links.author, audience, update, { shared: true, orderingKey: links.status.uri });
}
