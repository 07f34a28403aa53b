import { readFileSync } from "node:fs";

/** Rookery's own release, from package.json. */
export const ROOKERY_VERSION: string = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;

/**
 * The Mastodon release whose client API Rookery answers for. Clients gate features on it
 * (reference/gaps.md §12), so it moves up only when that release's features are built; see
 * docs/compatibility.md.
 */
export const MASTODON_COMPATIBLE_VERSION = "4.3.0";

/** `X.Y.Z (compatible; Rookery a.b.c)`, the form GoToSocial and others use. */
export const VERSION_STRING = `${MASTODON_COMPATIBLE_VERSION} (compatible; Rookery ${ROOKERY_VERSION})`;

/**
 * `api_versions`: level 2 (grouped notifications, notification policies and requests) is built;
 * level 3 brings `attribution_domains`, which federation will bring.
 */
export const API_VERSIONS = { mastodon: 2 } as const;
