/**
 * Rookery's Fedify federation: the store and the queue on our database and job queue, the origin
 * pinned to the configured domains, and the dispatchers built so far — the actors of local
 * accounts with their RSA keys. WebFinger and host-meta are served by Rookery itself
 * (api/wellknown/), to answer exactly as Mastodon does. The queue is started only where job
 * workers run (`manuallyStartQueue`).
 */
import { createFederation, type Federation } from "@fedify/fedify";
import type { Ctx } from "../context.ts";
import { serializeAccount } from "../entities/account.ts";
import { findLocalAccount } from "../services/accounts/lookup.ts";
import { actorOf, keyPairOf } from "./actors.ts";
import { DatabaseKvStore } from "./kv.ts";
import { JobMessageQueue } from "./queue.ts";

/** The path of a local account's actor (its `uri`); the identifier is the username. */
export const ACTOR_PATH = "/users/{identifier}";

export function buildFederation(ctx: Ctx): Federation<void> {
  const federation = createFederation<void>({
    kv: new DatabaseKvStore(ctx.db),
    queue: new JobMessageQueue(ctx.jobs),
    manuallyStartQueue: true,
    origin: { handleHost: ctx.config.localDomain, webOrigin: ctx.config.baseUrl },
  });
  federation
    .setActorDispatcher(ACTOR_PATH, async (fedCtx, identifier) => {
      const row = await findLocalAccount(ctx, identifier);
      // Only the exact username names an actor: its id is compared byte for byte by other servers.
      if (!row || row.username !== identifier) return null;
      const [entity, pairs] = await Promise.all([serializeAccount(ctx, row), fedCtx.getActorKeyPairs(identifier)]);
      return actorOf({
        row,
        entity,
        publicKey: pairs[0]?.cryptographicKey ?? null,
        sharedInbox: new URL(`${ctx.config.baseUrl}/inbox`),
      });
    })
    .setKeyPairsDispatcher(async (_fedCtx, identifier) => {
      const row = await findLocalAccount(ctx, identifier);
      const pair = row && (await keyPairOf(row));
      return pair ? [pair] : [];
    });
  return federation;
}
