/**
 * Finding remote accounts: by handle through WebFinger (our own client, over safeFetch, since
 * Fedify's refuses names that only OUTBOUND_HOSTS knows), by actor URL through the actor document
 * (fetched signed by the instance actor, for servers that want signed fetches), stored by the one
 * writer of remote accounts. The domain of a handle is what WebFinger says only when WebFinger at
 * that domain points back to the same actor (Mastodon's loop-back check): a server cannot claim
 * handles of another; otherwise the actor's own host is the domain.
 */
import type { Context } from "@fedify/fedify";
import { isActor, type Actor } from "@fedify/vocab";
import type { Ctx, RemoteResolver } from "../context.ts";
import type { AccountRow, StatusRow } from "../db/schema.ts";
import { findLocalAccount } from "../services/accounts/lookup.ts";
import { blockFor } from "../services/admin/domain_blocks.ts";
import { isAllowedDomain } from "../services/admin/domain_allows.ts";
import { accountByUri, accountByUrl, DomainSuspended, storeRemoteAccount } from "../services/accounts/remote.ts";
import { statusByUri, statusByUrl } from "../services/statuses/remote.ts";
import { ValidationFailed } from "../errors.ts";
import { safeFetch, SafeFetchError } from "../services/http/safe_fetch.ts";
import { ActorRefused, remoteAccountData } from "./actor_rows.ts";
import { INSTANCE_ACTOR } from "./instance_actor.ts";
import { actorEmojis, fetchPost, isPost } from "./note_rows.ts";
import { storeRemoteEmojis } from "../services/emoji/remote.ts";

const ACTIVITY_TYPES = new Set([
  "application/activity+json",
  'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
]);

/** What a WebFinger answer says: the canonical handle and the actor id. */
export interface Finger {
  username: string;
  domain: string;
  actorUri: string;
}

/** `user@domain` from `acct:user@domain`, `@user@domain` or `user@domain`; undefined if it is none. */
export function parseHandle(query: string): { username: string; domain: string } | undefined {
  const match = /^(?:acct:)?@?([^@\s/]+)@([^@\s/]+)$/i.exec(query.trim());
  if (!match) return undefined;
  return { username: match[1]!, domain: match[2]!.toLowerCase() };
}

export class Resolver implements RemoteResolver {
  readonly #ctx: Ctx;

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
  }

  /** A Fedify context outside any request, for fetches signed by the instance actor. */
  context(): Context<void> {
    return this.#ctx.federation.createContext(new URL(this.#ctx.config.baseUrl), undefined);
  }

  #isLocal(domain: string): boolean {
    const { localDomain, webDomain } = this.#ctx.config;
    return domain === localDomain.toLowerCase() || domain === webDomain.toLowerCase();
  }

  /** Servers this one does not talk to: suspended ones, and in limited federation mode those not allowed. */
  async #refuses(host: string): Promise<boolean> {
    if ((await blockFor(this.#ctx.db.kysely, host))?.severity === "suspend") return true;
    return !(await isAllowedDomain(this.#ctx, host));
  }

  async account(query: string): Promise<AccountRow | undefined> {
    const handle = parseHandle(query);
    if (handle) {
      if (this.#isLocal(handle.domain)) return findLocalAccount(this.#ctx, handle.username);
      if (await this.#refuses(handle.domain)) return undefined;
      const finger = await this.finger(`acct:${handle.username}@${handle.domain}`, handle.domain);
      return finger ? this.accountByUri(finger.actorUri) : undefined;
    }
    if (/^https?:\/\//i.test(query.trim())) return this.accountByUri(query.trim());
    return undefined;
  }

  async url(raw: string): Promise<{ account: AccountRow } | { status: StatusRow } | undefined> {
    const url = URL.parse(raw.trim());
    if (!url || !/^https?:$/.test(url.protocol) || this.#isLocal(url.host.toLowerCase())) return undefined;
    if (await this.#refuses(url.host)) return undefined;
    const known = (await accountByUri(this.#ctx, url.href)) ?? (await accountByUrl(this.#ctx, url.href));
    if (known) return { account: known };
    const stored = (await statusByUri(this.#ctx, url.href)) ?? (await statusByUrl(this.#ctx, url.href));
    if (stored) return { status: stored };
    let object: unknown;
    try {
      object = await this.fetchObject(url);
    } catch (error) {
      this.#ctx.log.info({ err: error, url: url.href }, "could not resolve a URL");
      return undefined;
    }
    if (isActor(object)) {
      const account = await this.storeActor(object);
      return account ? { account } : undefined;
    }
    if (isPost(object) && object.id) {
      // Stored from its id (the page URL may differ), fetched again so that its origin is its own.
      const status = await fetchPost({ ctx: this.#ctx, resolver: this, fedCtx: this.context() }, object.id);
      return status ? { status } : undefined;
    }
    return undefined;
  }

  /** The account of actor `uri`: the stored one, or fetched and stored. */
  async accountByUri(uri: string, options: { refresh?: boolean } = {}): Promise<AccountRow | undefined> {
    if (!options.refresh) {
      const known = await accountByUri(this.#ctx, uri);
      if (known) return known;
    }
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return undefined;
    }
    if (this.#isLocal(url.host.toLowerCase())) return undefined;
    // A suspended (or, in limited federation mode, not allowed) domain is not even asked.
    if (await this.#refuses(url.host)) return undefined;
    const actor = await this.fetchActor(url);
    return actor ? this.storeActor(actor) : undefined;
  }

  async currentAliases(uri: string): Promise<string[] | undefined> {
    const url = URL.parse(uri);
    if (!url || this.#isLocal(url.host.toLowerCase())) return undefined;
    const actor = await this.fetchActor(url);
    return actor?.aliasIds.map((alias) => alias.href);
  }

  /** The account of actor `uri` if this server knows it (no fetch). */
  async knownAccount(uri: string): Promise<AccountRow | undefined> {
    return accountByUri(this.#ctx, uri);
  }

  /** Fetches any object, signed by the instance actor (throws when it cannot). */
  async fetchObject(url: URL): Promise<unknown> {
    if (await this.#refuses(url.host)) throw new Error(`${url.host} does not federate with this server`);
    const fedCtx = this.context();
    const documentLoader = await fedCtx.getDocumentLoader({ identifier: INSTANCE_ACTOR });
    return fedCtx.lookupObject(url.href, { documentLoader });
  }

  /** Fetches an actor document, signed by the instance actor; undefined when it is none or unreachable. */
  async fetchActor(url: URL): Promise<Actor | undefined> {
    const fedCtx = this.context();
    try {
      const documentLoader = await fedCtx.getDocumentLoader({ identifier: INSTANCE_ACTOR });
      const object = await fedCtx.lookupObject(url.href, { documentLoader });
      return isActor(object) && object.id?.href === url.href ? object : undefined;
    } catch (error) {
      this.#ctx.log.info({ err: error, url: url.href }, "could not fetch a remote actor");
      return undefined;
    }
  }

  /**
   * Stores an actor document (one just fetched, or an activity's signer): its handle's domain is
   * the one WebFinger confirms for it. Refused actors (a suspended domain, no key of their own)
   * give undefined.
   */
  async storeActor(actor: Actor): Promise<AccountRow | undefined> {
    const id = actor.id;
    const username = actor.preferredUsername?.toString();
    if (!id || !username) return undefined;
    const known = await accountByUri(this.#ctx, id.href);
    const domain = known?.domain ?? (await this.confirmedDomain(username, id));
    const fedCtx = this.context();
    try {
      const data = await remoteAccountData(actor, {
        documentLoader: fedCtx.documentLoader,
        contextLoader: fedCtx.contextLoader,
        domain,
      });
      const account = await storeRemoteAccount(this.#ctx, data);
      // Met for the first time: its pinned posts are read in the background.
      if (!known && account.featured_url)
        await this.#ctx.jobs.enqueue(
          "federation.featured_sync" /* FEATURED_SYNC_JOB */,
          { accountId: account.id },
          { maxAttempts: 2 },
        );
      const emojis = await actorEmojis(actor, {
        documentLoader: fedCtx.documentLoader,
        contextLoader: fedCtx.contextLoader,
      });
      if (emojis.length > 0 && account.domain) await storeRemoteEmojis(this.#ctx, account.domain, emojis);
      return account;
    } catch (error) {
      if (error instanceof ActorRefused || error instanceof DomainSuspended || error instanceof ValidationFailed) {
        this.#ctx.log.info({ actor: id.href, reason: error.message }, "remote actor refused");
        return undefined;
      }
      throw error;
    }
  }

  /** The domain of `username`'s handle: WebFinger's, when it points back to `actorId`; else the actor's host. */
  async confirmedDomain(username: string, actorId: URL): Promise<string> {
    const host = actorId.host.toLowerCase();
    const first = await this.finger(`acct:${username}@${host}`, host);
    if (!first || first.actorUri !== actorId.href) return host;
    if (first.domain === host) return host;
    // The handle lives on another domain (LOCAL_DOMAIN ≠ WEB_DOMAIN): that domain must agree.
    const second = await this.finger(`acct:${first.username}@${first.domain}`, first.domain);
    return second?.actorUri === actorId.href && second.domain === first.domain ? first.domain : host;
  }

  /** Asks `host`'s WebFinger about `resource`; undefined when it does not answer usefully. */
  async finger(resource: string, host: string): Promise<Finger | undefined> {
    const url = `https://${host}/.well-known/webfinger?resource=${encodeURIComponent(resource)}`;
    try {
      const response = await safeFetch(this.#ctx, url, {
        headers: { accept: "application/jrd+json, application/json" },
        maxBytes: 64 * 1024,
      });
      if (response.status !== 200) return undefined;
      const jrd = JSON.parse(response.body.toString("utf8")) as {
        subject?: unknown;
        links?: Array<{ rel?: unknown; type?: unknown; href?: unknown }>;
      };
      const handle = typeof jrd.subject === "string" ? parseHandle(jrd.subject) : undefined;
      const self = (Array.isArray(jrd.links) ? jrd.links : []).find(
        (link) => link?.rel === "self" && typeof link.type === "string" && ACTIVITY_TYPES.has(link.type),
      );
      if (!handle || typeof self?.href !== "string" || !/^https?:\/\//.test(self.href)) return undefined;
      return { ...handle, actorUri: self.href };
    } catch (error) {
      if (error instanceof SafeFetchError || error instanceof SyntaxError) {
        this.#ctx.log.info({ resource, reason: error.message }, "WebFinger lookup failed");
        return undefined;
      }
      throw error;
    }
  }
}
