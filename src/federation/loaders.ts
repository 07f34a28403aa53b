/**
 * How Fedify fetches remote documents here. The built-in loaders are used, cached in our key–value
 * store, but without Fedify's own address check: that check resolves names through the system
 * before connecting (a window for DNS rebinding, and blind to OUTBOUND_HOSTS), while the outbound
 * agent (services/http/outbound.ts) checks every address as the socket connects. Signed fetches
 * remember per server which signature format it accepted (double-knocking once per server).
 */
import {
  getAuthenticatedDocumentLoader,
  getDocumentLoader,
  kvCache,
  type DocumentLoader,
  type HttpMessageSignaturesSpec,
  type HttpMessageSignaturesSpecDeterminer,
  type KvStore,
} from "@fedify/fedify";

/** Mastodon 4.4 and older, GoToSocial, Misskey and Akkoma speak draft-cavage; RFC 9421 is tried second. */
export const FIRST_KNOCK: HttpMessageSignaturesSpec = "draft-cavage-http-signatures-12";

const SPEC_PREFIX = ["_fedify", "httpMessageSignaturesSpec"] as const;

/** Remembers in the key–value store which signature format each server accepted. */
export function specDeterminer(kv: KvStore): HttpMessageSignaturesSpecDeterminer {
  return {
    async determineSpec(origin) {
      return (await kv.get<HttpMessageSignaturesSpec>([...SPEC_PREFIX, origin])) ?? FIRST_KNOCK;
    },
    async rememberSpec(origin, spec) {
      await kv.set([...SPEC_PREFIX, origin], spec);
    },
  };
}

export interface Loaders {
  documentLoaderFactory: () => DocumentLoader;
  contextLoaderFactory: () => DocumentLoader;
  authenticatedDocumentLoaderFactory: (
    identity: Parameters<typeof getAuthenticatedDocumentLoader>[0],
  ) => DocumentLoader;
}

export function loaders(kv: KvStore, userAgent: string): Loaders {
  // Made once: Fedify asks the factories for a loader with every context it makes (every inbox
  // job, every delivery), and making one compiles a URL pattern (a few percent of an inbox's CPU).
  const cached = kvCache({
    loader: getDocumentLoader({ allowPrivateAddress: true, userAgent }),
    kv,
    prefix: ["_fedify", "remoteDocument"],
  });
  const determiner = specDeterminer(kv);
  return {
    documentLoaderFactory: () => cached,
    contextLoaderFactory: () => cached,
    authenticatedDocumentLoaderFactory: (identity) =>
      getAuthenticatedDocumentLoader(identity, { allowPrivateAddress: true, userAgent, specDeterminer: determiner }),
  };
}
