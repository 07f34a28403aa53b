/**
 * A loopback fediverse for bench/federation.ts, in the benchmark's own process, under the
 * certificate of test/federation/pki.ts (whose TLS front also carries the traffic to Rookery):
 * - one HTTPS server answering, by Host header, for remote servers with actors (actor documents,
 *   WebFinger, an empty featured collection, inboxes that accept Follows with an Accept, as
 *   Mastodon does for an unlocked account) and for "sink" servers, whose inboxes check nothing,
 *   answer 202 and record when each POST arrived;
 * - Mastodon's way of signing a POST (draft-cavage, rsa-sha256, `(request-target) host date digest
 *   content-type`) and Linked Data signatures (Fedify's signJsonLd, RsaSignature2017);
 * - a keep-alive HTTPS client to Rookery (undici) with a fixed number of connections.
 */
import { createHash, webcrypto } from "node:crypto";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { getDocumentLoader, signJsonLd } from "@fedify/fedify";
import { Pool } from "undici";
import type { Pki } from "../test/federation/pki.ts";

export const AS_PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

// ---------------------------------------------------------------------------------------------
// Keys and signatures

export interface Signer {
  keyId: string;
  privateKey: webcrypto.CryptoKey;
}

export async function rsaKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
}

export async function publicKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const spki = Buffer.from(await webcrypto.subtle.exportKey("spki", key)).toString("base64");
  return `-----BEGIN PUBLIC KEY-----\n${(spki.match(/.{1,64}/g) ?? []).join("\n")}\n-----END PUBLIC KEY-----\n`;
}

/** A POST ready to send: the path, the headers (Host included) and the body. */
export interface SignedPost {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Signs a POST of `body` to `url` as Mastodon does (draft-cavage, rsa-sha256). */
export async function signCavage(url: URL, body: string, signer: Signer, date = new Date()): Promise<SignedPost> {
  const headers: Record<string, string> = {
    host: url.host,
    date: date.toUTCString(),
    digest: `SHA-256=${createHash("sha256").update(body).digest("base64")}`,
    "content-type": "application/activity+json",
  };
  const names = ["(request-target)", "host", "date", "digest", "content-type"];
  const text = names
    .map((name) => (name === "(request-target)" ? `${name}: post ${url.pathname}` : `${name}: ${headers[name]}`))
    .join("\n");
  const signature = await webcrypto.subtle.sign("RSASSA-PKCS1-v1_5", signer.privateKey, new TextEncoder().encode(text));
  headers.signature = `keyId="${signer.keyId}",algorithm="rsa-sha256",headers="${names.join(" ")}",signature="${Buffer.from(signature).toString("base64")}"`;
  headers.accept = "application/activity+json, application/ld+json";
  headers["user-agent"] = "http.rb/5.2.0 (Mastodon/4.3.0; +https://bench.example/)";
  return { path: url.pathname, headers, body };
}

const contextLoader = getDocumentLoader();

/** `activity` with a Linked Data signature (RsaSignature2017), as Mastodon signs public activities. */
export async function ldSign(activity: Record<string, unknown>, signer: Signer): Promise<Record<string, unknown>> {
  return (await signJsonLd(activity, signer.privateKey, new URL(signer.keyId), {
    contextLoader,
  })) as unknown as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// The client to Rookery

export interface Answer {
  status: number;
  body: string;
}

/** Keep-alive HTTPS connections to Rookery's TLS front, naming `host` (TLS and the Host header). */
export class RookeryClient {
  readonly pool: Pool;
  readonly #host: string;

  constructor(pki: Pki, frontPort: number, host: string, connections: number) {
    this.#host = host;
    this.pool = new Pool(`https://127.0.0.1:${frontPort}`, {
      connections,
      pipelining: 1,
      connect: { ca: [pki.caPem], servername: host },
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
  }

  async post(signed: SignedPost): Promise<Answer> {
    const response = await this.pool.request({
      method: "POST",
      path: signed.path,
      headers: { ...signed.headers, host: signed.headers.host ?? this.#host },
      body: signed.body,
    });
    return { status: response.statusCode, body: await response.body.text() };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The remote servers and the sink

export interface RemoteActor {
  host: string;
  username: string;
  /** `https://HOST:PORT`. */
  origin: string;
  id: string;
  keyId: string;
  inbox: string;
  sharedInbox: string;
  followers: string;
  privateKey: webcrypto.CryptoKey;
  publicKeyPem: string;
}

/** A POST a sink inbox received. */
export interface Arrival {
  host: string;
  path: string;
  /** performance.now() of this process when the body had arrived. */
  at: number;
  type: string | undefined;
  /** The id of the activity's object (embedded or linked). */
  objectId: string | undefined;
}

export interface FediverseOptions {
  pki: Pki;
  /** Host names whose actors are served (remote servers with posters). */
  actorHosts: string[];
  /** Host names whose inboxes only record (the followers' servers). */
  sinkHosts: string[];
  /** Sends an Accept of a Follow (a signed POST to the follower's inbox). */
  accept: (post: SignedPost) => Promise<Answer>;
}

export interface Fediverse {
  port: number;
  origin(host: string): string;
  actors: RemoteActor[];
  /** Makes an actor on `host` with a fresh RSA key and serves its document and WebFinger. */
  addActor(host: string, username: string): Promise<RemoteActor>;
  /** POSTs the sink hosts received, oldest first. */
  readonly arrivals: Arrival[];
  /** Requests to the actor hosts: GETs by path kind, POSTs by activity type. */
  readonly remoteRequests: Map<string, number>;
  /** GETs or other non-POST requests the sink hosts received (Rookery should send none). */
  readonly sinkOtherRequests: number;
  /** Follows accepted, and Accepts that Rookery did not answer with 202. */
  readonly follows: { accepted: number; failed: string[] };
  /** Each sink POST waits this long before its answer (a slow server); 0 by default. */
  sinkDelayMs: number;
  close(): Promise<void>;
}

let acceptCounter = 0;

export async function startFediverse(options: FediverseOptions): Promise<Fediverse> {
  const actorHosts = new Set(options.actorHosts);
  const sinkHosts = new Set(options.sinkHosts);
  const actors: RemoteActor[] = [];
  const byId = new Map<string, RemoteActor>();
  const documents = new Map<string, string>();
  const arrivals: Arrival[] = [];
  const remoteRequests = new Map<string, number>();
  const follows = { accepted: 0, failed: [] as string[] };
  let sinkOther = 0;
  let port = 0;
  const count = (key: string) => remoteRequests.set(key, (remoteRequests.get(key) ?? 0) + 1);

  const server = https.createServer({ key: options.pki.key, cert: options.pki.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const host = String(req.headers.host ?? "")
        .replace(/:\d+$/, "")
        .toLowerCase();
      const path = req.url ?? "/";
      if (sinkHosts.has(host)) {
        if (req.method !== "POST") {
          sinkOther++;
          res.writeHead(404).end();
          return;
        }
        const at = performance.now();
        let type: string | undefined;
        let objectId: string | undefined;
        try {
          const json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type?: unknown; object?: unknown };
          type = typeof json.type === "string" ? json.type : undefined;
          const object = json.object as { id?: unknown } | string | undefined;
          const id = typeof object === "string" ? object : object?.id;
          objectId = typeof id === "string" ? id : undefined;
        } catch {
          // not JSON
        }
        arrivals.push({ host, path, at, type, objectId });
        if (fediverse.sinkDelayMs > 0) setTimeout(() => res.writeHead(202).end(), fediverse.sinkDelayMs);
        else res.writeHead(202).end();
        return;
      }
      if (!actorHosts.has(host)) {
        count(`unknown host ${host}`);
        res.writeHead(421).end();
        return;
      }
      const url = new URL(path, `https://${host}:${port}`);
      if (req.method === "POST") {
        let activity: { type?: unknown; id?: unknown; actor?: unknown; object?: unknown } = {};
        try {
          activity = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof activity;
        } catch {
          // not JSON
        }
        count(`POST ${String(activity.type)}`);
        res.writeHead(202).end();
        const target = typeof activity.object === "string" ? byId.get(activity.object) : undefined;
        if (activity.type === "Follow" && target && typeof activity.actor === "string")
          void sendAccept(target, activity as { id: string; actor: string });
        return;
      }
      if (url.pathname === "/.well-known/webfinger") {
        count("GET webfinger");
        const resource = (url.searchParams.get("resource") ?? "").toLowerCase();
        const found = actors.find(
          (actor) =>
            actor.host === host &&
            (resource === `acct:${actor.username}@${host}:${port}` || resource === actor.id.toLowerCase()),
        );
        if (!found) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { "content-type": "application/jrd+json; charset=utf-8" }).end(
          JSON.stringify({
            subject: `acct:${found.username}@${host}:${port}`,
            aliases: [found.id, `${found.origin}/@${found.username}`],
            links: [
              {
                rel: "http://webfinger.net/rel/profile-page",
                type: "text/html",
                href: `${found.origin}/@${found.username}`,
              },
              { rel: "self", type: "application/activity+json", href: found.id },
            ],
          }),
        );
        return;
      }
      const document = documents.get(`${url.origin}${url.pathname}`);
      count(`GET ${document ? url.pathname.replace(/^\/users\/[^/]+/, "/users/:name") : "404"}`);
      if (!document) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/activity+json; charset=utf-8" }).end(document);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  const origin = (host: string) => `https://${host}:${port}`;

  /** As Mastodon answers a Follow of an unlocked account: an Accept to the follower's own inbox. */
  async function sendAccept(target: RemoteActor, follow: { id: string; actor: string }): Promise<void> {
    const accept = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${target.id}#accepts/follows/${++acceptCounter}`,
      type: "Accept",
      actor: target.id,
      object: { id: follow.id, type: "Follow", actor: follow.actor, object: target.id },
    };
    try {
      const signed = await signCavage(new URL(`${follow.actor}/inbox`), JSON.stringify(accept), target);
      const answer = await options.accept(signed);
      if (answer.status === 202) follows.accepted++;
      else follows.failed.push(`${answer.status} ${answer.body.slice(0, 200)}`);
    } catch (error) {
      follows.failed.push(String(error));
    }
  }

  async function addActor(host: string, username: string): Promise<RemoteActor> {
    const keys = await rsaKeyPair();
    const pem = await publicKeyPem(keys.publicKey);
    const base = origin(host);
    const id = `${base}/users/${username}`;
    const actor: RemoteActor = {
      host,
      username,
      origin: base,
      id,
      keyId: `${id}#main-key`,
      inbox: `${id}/inbox`,
      sharedInbox: `${base}/inbox`,
      followers: `${id}/followers`,
      privateKey: keys.privateKey,
      publicKeyPem: pem,
    };
    // What Mastodon 4.3 serves for an account (without avatar and header, which would be downloaded).
    documents.set(
      id,
      JSON.stringify({
        "@context": [
          "https://www.w3.org/ns/activitystreams",
          "https://w3id.org/security/v1",
          {
            manuallyApprovesFollowers: "as:manuallyApprovesFollowers",
            toot: "http://joinmastodon.org/ns#",
            featured: { "@id": "toot:featured", "@type": "@id" },
            featuredTags: { "@id": "toot:featuredTags", "@type": "@id" },
            discoverable: "toot:discoverable",
            indexable: "toot:indexable",
            memorial: "toot:memorial",
          },
        ],
        id,
        type: "Person",
        following: `${id}/following`,
        followers: actor.followers,
        inbox: actor.inbox,
        outbox: `${id}/outbox`,
        featured: `${id}/collections/featured`,
        featuredTags: `${id}/collections/tags`,
        preferredUsername: username,
        name: `Poster ${username}`,
        summary: "<p>A remote account of the federation benchmark.</p>",
        url: `${base}/@${username}`,
        manuallyApprovesFollowers: false,
        discoverable: true,
        indexable: true,
        memorial: false,
        published: "2024-01-01T00:00:00Z",
        publicKey: { id: actor.keyId, owner: id, publicKeyPem: pem },
        tag: [],
        attachment: [],
        endpoints: { sharedInbox: actor.sharedInbox },
      }),
    );
    documents.set(
      `${id}/collections/featured`,
      JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${id}/collections/featured`,
        type: "OrderedCollection",
        totalItems: 0,
        orderedItems: [],
      }),
    );
    actors.push(actor);
    byId.set(id, actor);
    return actor;
  }

  const fediverse: Fediverse = {
    port,
    origin,
    actors,
    addActor,
    arrivals,
    remoteRequests,
    get sinkOtherRequests() {
      return sinkOther;
    },
    follows,
    sinkDelayMs: 0,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fediverse;
}

// ---------------------------------------------------------------------------------------------
// Activities

let noteCounter = 0;

/** A public post as Mastodon 4.3 sends it to a shared inbox: Create(Note), to Public, cc followers; published `at`. */
export function createNote(
  actor: RemoteActor,
  text: string,
  tag: string,
  at: Date = new Date(),
): Record<string, unknown> {
  const n = `${at.getTime()}${String(++noteCounter).padStart(6, "0")}`;
  // Mastodon's timestamps are to the second.
  const published = at.toISOString().replace(/\.\d+Z$/, "Z");
  const noteId = `${actor.id}/statuses/${n}`;
  const content = `<p>${text} <a href="${actor.origin}/tags/${tag}" class="mention hashtag" rel="tag">#<span>${tag}</span></a></p>`;
  return {
    "@context": [
      "https://www.w3.org/ns/activitystreams",
      {
        ostatus: "http://ostatus.org#",
        atomUri: "ostatus:atomUri",
        inReplyToAtomUri: "ostatus:inReplyToAtomUri",
        conversation: "ostatus:conversation",
        sensitive: "as:sensitive",
        toot: "http://joinmastodon.org/ns#",
        votersCount: "toot:votersCount",
        Hashtag: "as:Hashtag",
      },
    ],
    id: `${noteId}/activity`,
    type: "Create",
    actor: actor.id,
    published,
    to: [AS_PUBLIC],
    cc: [actor.followers],
    object: {
      id: noteId,
      type: "Note",
      summary: null,
      inReplyTo: null,
      published,
      url: `${actor.origin}/@${actor.username}/${n}`,
      attributedTo: actor.id,
      to: [AS_PUBLIC],
      cc: [actor.followers],
      sensitive: false,
      atomUri: noteId,
      inReplyToAtomUri: null,
      conversation: `tag:${actor.host},2025-01-01:objectId=${n}:objectType=Conversation`,
      content,
      contentMap: { en: content },
      attachment: [],
      tag: [{ type: "Hashtag", href: `${actor.origin}/tags/${tag}`, name: `#${tag}` }],
      replies: {
        id: `${noteId}/replies`,
        type: "Collection",
        first: {
          type: "CollectionPage",
          next: `${noteId}/replies?only_other_accounts=true&page=true`,
          partOf: `${noteId}/replies`,
          items: [],
        },
      },
    },
  };
}
