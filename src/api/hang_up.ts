import type { FastifyReply } from "fastify";

/**
 * Fires when the client hangs up before its answer is sent, so long work done for that answer
 * alone (waiting on a media conversion or a download) stops waiting.
 */
export function hangUpSignal(reply: FastifyReply): AbortSignal {
  const hangUp = new AbortController();
  if (reply.raw.destroyed) hangUp.abort();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) hangUp.abort();
  });
  return hangUp.signal;
}
