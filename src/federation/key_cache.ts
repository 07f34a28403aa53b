/**
 * The public keys of other servers' actors, for checking inbox signatures: parsed keys kept in
 * this process's memory in front of the federation store, where they are kept in the form
 * Fedify's own key cache uses (the key's JSON-LD under `_fedify/publicKey/<keyId>`), so a key
 * fetched by any process or by Fedify is found by all. Fedify's cache parses the stored JSON-LD
 * and imports the key again on every request; this one does that once a key. A key that stops
 * verifying is fetched again by Fedify (and replaced here), so a rotated key heals itself.
 */
import type { DocumentLoader, KeyCache, KvStore } from "@fedify/fedify";
import { CryptographicKey, Multikey } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

/** Fedify's prefix for public keys in the store (`FederationKvPrefixes.publicKey`). */
const PREFIX = ["_fedify", "publicKey"] as const;

/** Keys kept in memory, at most; the oldest entries go first. */
const CAPACITY = 10_000;
/** How long a key is trusted from memory before the store is read again (another process may have refetched it). */
const FRESH_MS = 10 * 60_000;
/** How long "this key cannot be fetched" is remembered (Fedify's `unavailableKeyTtl`). */
const UNAVAILABLE_MS = 10 * 60_000;

type Key = CryptographicKey | Multikey;

interface Entry {
  key: Key | null;
  until: number;
}

export class MemoryKeyCache implements KeyCache {
  readonly #kv: KvStore;
  readonly #entries = new Map<string, Entry>();
  readonly #contextLoader: DocumentLoader | undefined;
  readonly #now: () => number;

  constructor(kv: KvStore, options: { contextLoader?: DocumentLoader; now?: () => number } = {}) {
    this.#kv = kv;
    this.#contextLoader = options.contextLoader;
    this.#now = options.now ?? Date.now;
  }

  async get(keyId: URL): Promise<Key | null | undefined> {
    const entry = this.#entries.get(keyId.href);
    if (entry && entry.until > this.#now()) return entry.key;
    this.#entries.delete(keyId.href);
    const stored = await this.#kv.get<unknown>([...PREFIX, keyId.href]);
    if (stored === undefined) return undefined;
    if (stored === null) {
      this.#remember(keyId, null, UNAVAILABLE_MS);
      return null;
    }
    const key = await parse(stored, this.#contextLoader);
    if (!key) {
      await this.#kv.delete([...PREFIX, keyId.href]);
      return undefined;
    }
    this.#remember(keyId, key, FRESH_MS);
    return key;
  }

  async set(keyId: URL, key: Key | null): Promise<void> {
    if (key === null) {
      this.#remember(keyId, null, UNAVAILABLE_MS);
      await this.#kv.set([...PREFIX, keyId.href], null, {
        ttl: Temporal.Duration.from({ milliseconds: UNAVAILABLE_MS }),
      });
      return;
    }
    this.#remember(keyId, key, FRESH_MS);
    await this.#kv.set([...PREFIX, keyId.href], await key.toJsonLd({ contextLoader: this.#contextLoader }));
  }

  #remember(keyId: URL, key: Key | null, ttl: number): void {
    this.#entries.delete(keyId.href);
    this.#entries.set(keyId.href, { key, until: this.#now() + ttl });
    if (this.#entries.size > CAPACITY) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

async function parse(stored: unknown, contextLoader: DocumentLoader | undefined): Promise<Key | undefined> {
  try {
    return await CryptographicKey.fromJsonLd(stored, { contextLoader });
  } catch {
    try {
      return await Multikey.fromJsonLd(stored, { contextLoader });
    } catch {
      return undefined;
    }
  }
}
