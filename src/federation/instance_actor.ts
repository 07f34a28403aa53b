/**
 * The instance actor, as Mastodon serves it at `/actor`: an Application named after the domain,
 * which signs the fetches the server makes on no user's behalf (actors, keys, threads), so servers
 * that want signed fetches (GoToSocial, AUTHORIZED_FETCH Mastodon) answer them. Its RSA key pair is
 * made on first use and kept in the federation store, shared by every process.
 */
import { webcrypto } from "node:crypto";
import { exportJwk, importJwk, type DocumentLoader, type Federation, type KvStore } from "@fedify/fedify";
import { Application, Endpoints, type CryptographicKey } from "@fedify/vocab";
import type { Config } from "../config.ts";

/** The identifier Fedify knows the instance actor by; no username can be it (`~` is not allowed). */
export const INSTANCE_ACTOR = "~instance";
export const INSTANCE_ACTOR_PATH = "/actor";

const KEYS = ["rookery", "instanceActorKeys"] as const;

interface StoredPair {
  privateKey: webcrypto.JsonWebKey;
  publicKey: webcrypto.JsonWebKey;
}

async function generate(): Promise<StoredPair> {
  const pair = await webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
  return { privateKey: await exportJwk(pair.privateKey), publicKey: await exportJwk(pair.publicKey) };
}

export interface InstanceLoaders {
  /** Fetches signed by the instance actor. */
  documentLoader: DocumentLoader;
  contextLoader: DocumentLoader;
}

/** The loaders, made once a process. */
const loadersOf = new WeakMap<Federation<void>, Promise<InstanceLoaders>>();

/**
 * The loaders of work done for no user (activities taken into an inbox, what they link to):
 * documents are fetched signed by the instance actor, as Fedify's shared inbox does.
 */
export function instanceLoaders(federation: Federation<void>, base: URL): Promise<InstanceLoaders> {
  let made = loadersOf.get(federation);
  if (!made) {
    const fedCtx = federation.createContext(base, undefined);
    made = fedCtx
      .getDocumentLoader({ identifier: INSTANCE_ACTOR })
      .then((documentLoader) => ({ documentLoader, contextLoader: fedCtx.contextLoader }));
    // A failure (the store) is not kept: the next call tries again.
    made.catch(() => loadersOf.delete(federation));
    loadersOf.set(federation, made);
  }
  return made;
}

/** The pair once read and imported, per store: it never changes once stored. */
const pairs = new WeakMap<KvStore, Promise<webcrypto.CryptoKeyPair>>();

/**
 * The instance actor's key pair: the stored one, or a new one stored by whichever process came
 * first. Read and imported once a process (it signs every fetch the server makes for nobody, and
 * Fedify asks for it for every activity taken into the shared inbox).
 */
export function instanceKeyPair(kv: KvStore): Promise<webcrypto.CryptoKeyPair> {
  let pair = pairs.get(kv);
  if (!pair) {
    pair = readOrMakePair(kv);
    // A failure (the store) is not kept: the next call tries again.
    pair.catch(() => pairs.delete(kv));
    pairs.set(kv, pair);
  }
  return pair;
}

async function readOrMakePair(kv: KvStore): Promise<webcrypto.CryptoKeyPair> {
  let stored = await kv.get<StoredPair>(KEYS);
  if (!stored) {
    const made = await generate();
    // Two processes starting together: one pair wins, both use it.
    const won = kv.cas ? await kv.cas(KEYS, undefined, made) : (await kv.set(KEYS, made), true);
    stored = won ? made : await kv.get<StoredPair>(KEYS);
    if (!stored) throw new Error("the instance actor's key pair could not be stored");
  }
  return {
    privateKey: await importJwk(stored.privateKey, "private"),
    publicKey: await importJwk(stored.publicKey, "public"),
  };
}

/** The instance actor's document. */
export function instanceActorOf(
  config: Pick<Config, "baseUrl" | "localDomain">,
  ids: { id: URL; inbox: URL; sharedInbox: URL },
  publicKey: CryptographicKey | null,
): Application {
  return new Application({
    id: ids.id,
    // The domain (without a development port: a handle cannot hold a colon).
    preferredUsername: config.localDomain.replace(/:\d+$/, ""),
    inbox: ids.inbox,
    endpoints: new Endpoints({ sharedInbox: ids.sharedInbox }),
    url: new URL(`${config.baseUrl}/about/more?instance_actor=true`),
    manuallyApprovesFollowers: true,
    publicKey,
  });
}
