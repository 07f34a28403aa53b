/**
 * Rookery's Fedify federation: the store and the queue on our database and job queue, the origin
 * pinned to the configured domains, the loaders of federation/loaders.ts, deliveries retried the
 * way Mastodon retries them, and the dispatchers — the actors of local accounts with their RSA
 * keys, the instance actor, and the inboxes (federation/inbox/). WebFinger and host-meta are
 * served by Rookery itself (api/wellknown/), to answer exactly as Mastodon does. The queue runs
 * only where job workers run (`manuallyStartQueue`; jobs/handlers.ts starts it).
 */
import { createFederation, type Federation, type RetryPolicy } from "@fedify/fedify";
import { Temporal } from "@js-temporal/polyfill";
import type { Ctx } from "../context.ts";
import { Note, Tombstone } from "@fedify/vocab";
import { serializeStatus } from "../entities/status.ts";
import { fetchableStatus } from "../services/statuses/audience.ts";
import { noteOf } from "./notes.ts";
import { dropGoneFollower } from "../services/accounts/follow.ts";
import { ed25519KeysOf } from "../services/accounts/keys.ts";
import { findLocalAccount } from "../services/accounts/lookup.ts";
import { userAgent } from "../services/http/outbound.ts";
import { ed25519PairOf, keyPairOf, localActor } from "./actors.ts";
import { registerInbox } from "./inbox/inbox.ts";
import { INSTANCE_ACTOR, INSTANCE_ACTOR_PATH, instanceActorOf, instanceKeyPair } from "./instance_actor.ts";
import { registerCollections } from "./collections.ts";
import { registerReplies } from "./replies.ts";
import { installExpansionOnce } from "./expansion.ts";
import { DatabaseKvStore } from "./kv.ts";
import { routeFedifyLogs } from "./logging.ts";
import { FIRST_KNOCK, loaders } from "./loaders.ts";
import { JobMessageQueue } from "./queue.ts";
import { hiddenFromRequester, mayFetch, requesterOf } from "./requester.ts";

/** The path of a local account's actor (its `uri`); the identifier is the username. */
export const ACTOR_PATH = "/users/{identifier}";
export const INBOX_PATH = "/users/{identifier}/inbox";
export const SHARED_INBOX_PATH = "/inbox";
/** A local status's id (its `uri`). */
export const STATUS_PATH = "/users/{identifier}/statuses/{id}";

/**
 * Mastodon's delivery schedule (Sidekiq's backoff, attempt⁴ + 15 s with jitter): 16 attempts over
 * about two and a half days before a delivery is given up.
 */
export const deliveryRetry: RetryPolicy = ({ attempts }) =>
  attempts >= 16
    ? null
    : Temporal.Duration.from({ milliseconds: Math.round((attempts ** 4 + 15) * 1000 * (1 + Math.random() / 2)) });

/** An inbox activity whose handling failed on our side (the database) is tried again a few times. */
const inboxRetry: RetryPolicy = ({ attempts }) =>
  attempts >= 5 ? null : Temporal.Duration.from({ seconds: 10 * 4 ** attempts });

export function buildFederation(ctx: Ctx): Federation<void> {
  void routeFedifyLogs(ctx.log);
  installExpansionOnce();
  const kv = new DatabaseKvStore(ctx.db);
  const federation = createFederation<void>({
    kv,
    queue: new JobMessageQueue(ctx.jobs),
    manuallyStartQueue: true,
    origin: { handleHost: ctx.config.localDomain, webOrigin: ctx.config.baseUrl },
    ...loaders(kv, userAgent(ctx.config)),
    firstKnock: FIRST_KNOCK,
    outboxRetryPolicy: deliveryRetry,
    inboxRetryPolicy: inboxRetry,
    // An inbox that refuses an activity outright will not take it later either.
    permanentFailureStatusCodes: [400, 403, 404, 405, 410, 413, 422],
    onOutboxError: (error, activity) =>
      ctx.log.info({ activity: activity?.id?.href, reason: error.message }, "a delivery failed"),
    // A server that keeps failing is skipped (its activities held, up to a week) until it answers again.
    circuitBreaker: {
      failureThreshold: 10,
      failureWindow: { hours: 12 },
      recoveryDelay: { minutes: 30 },
      heldActivityTtl: { days: 7 },
      onStateChange: (host, from, to) =>
        ctx.log.info(
          { host, from, to },
          to === "open" ? "a server is unavailable: deliveries held" : "a server's deliveries resume",
        ),
      onActivityDrop: (host, drop) =>
        ctx.log.info({ host, activity: drop.activityId }, "an activity held for an unavailable server was dropped"),
    },
  });
  federation.setOutboxPermanentFailureHandler(async (_fedCtx, failure) => {
    ctx.log.info(
      { inbox: failure.inbox.href, status: failure.statusCode, reason: failure.reason },
      "a delivery was refused for good",
    );
    // Gone (410): the followers behind that inbox are gone too.
    if (failure.statusCode === 410) for (const actorId of failure.actorIds) await dropGoneFollower(ctx, actorId.href);
  });
  const sharedInbox = () => new URL(`${ctx.config.baseUrl}${SHARED_INBOX_PATH}`);
  federation
    .setActorDispatcher(ACTOR_PATH, async (fedCtx, identifier) => {
      if (identifier === INSTANCE_ACTOR) {
        const pairs = await fedCtx.getActorKeyPairs(identifier);
        return instanceActorOf(
          ctx.config,
          { id: fedCtx.getActorUri(identifier), inbox: fedCtx.getInboxUri(identifier), sharedInbox: sharedInbox() },
          pairs[0]?.cryptographicKey ?? null,
        );
      }
      const row = await findLocalAccount(ctx, identifier);
      // Only the exact username names an actor: its id is compared byte for byte by other servers.
      if (!row || row.username !== identifier) return null;
      // A deleted account is gone for good: 410 with a Tombstone, as Mastodon answers.
      if (row.deleted_at)
        return new Tombstone({
          id: new URL(row.uri),
          deleted: Temporal.Instant.from(new Date(row.deleted_at).toISOString()),
        });
      return localActor(ctx, fedCtx, row);
    })
    .mapActorAlias(INSTANCE_ACTOR_PATH, INSTANCE_ACTOR)
    // Secure mode: the instance actor stays public, or no server could verify its signed fetches.
    .authorize((fedCtx, identifier) => identifier === INSTANCE_ACTOR || mayFetch(ctx)(fedCtx))
    .setKeyPairsDispatcher(async (_fedCtx, identifier) => {
      if (identifier === INSTANCE_ACTOR) return [await instanceKeyPair(kv)];
      const row = await findLocalAccount(ctx, identifier);
      const rsa = row && (await keyPairOf(row));
      if (!row || !rsa) return [];
      // RSA first (it is `#main-key`, what HTTP signatures use); Ed25519 for object integrity proofs.
      return [rsa, await ed25519PairOf(await ed25519KeysOf(ctx, row.id))];
    });
  federation
    .setObjectDispatcher(Note, STATUS_PATH, async (fedCtx, { identifier, id }) => {
      // A followers-only or direct post goes only to a signed fetch by an account that may see it.
      const signer = async () => (await requesterOf(ctx, fedCtx))?.accountId;
      const links = await fetchableStatus(ctx, identifier, id, signer);
      if (!links || links.author.suspended_at) return null;
      if (await hiddenFromRequester(ctx, fedCtx, links.author.id)) return null;
      return noteOf(links, await serializeStatus(ctx, links.status));
    })
    .authorize(mayFetch(ctx));
  registerCollections(ctx, federation);
  registerReplies(ctx, federation);
  registerInbox(ctx, federation, { inbox: INBOX_PATH, sharedInbox: SHARED_INBOX_PATH });
  return federation;
}
