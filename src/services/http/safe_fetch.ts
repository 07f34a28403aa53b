/**
 * Outbound HTTP for URLs that come from strangers (link previews, remote media, federation).
 * The host is resolved here and every address checked before anything connects, the connection
 * goes to a checked address (so DNS cannot be re-pointed between check and connect), each redirect
 * is checked again, and time and size are bounded while the body streams in.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { open } from "node:fs/promises";
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import type { Config } from "../../config.ts";
import { isReachableAddress } from "./addresses.ts";
import { resolverFor, userAgent } from "./outbound.ts";

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REDIRECTS = 3;

/** Why an outbound fetch did not produce a response. `transient` failures are worth retrying later. */
export class SafeFetchError extends Error {
  override name = "SafeFetchError";
  readonly url: string;
  readonly transient: boolean;
  constructor(message: string, url: string, transient: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.url = url;
    this.transient = transient;
  }
}

/** The URL is not http(s), or its host is (or resolves to) an address outbound fetches may not reach. */
export class DestinationRefused extends SafeFetchError {
  override name = "DestinationRefused";
  constructor(url: string, reason: string) {
    super(`refused to fetch ${url}: ${reason}`, url, false);
  }
}

export class TooManyRedirects extends SafeFetchError {
  override name = "TooManyRedirects";
  constructor(url: string, limit: number) {
    super(`more than ${limit} redirects from ${url}`, url, false);
  }
}

export class ResponseTooLarge extends SafeFetchError {
  override name = "ResponseTooLarge";
  constructor(url: string, limit: number) {
    super(`response from ${url} is larger than ${limit} bytes`, url, false);
  }
}

export class FetchTimedOut extends SafeFetchError {
  override name = "FetchTimedOut";
  constructor(url: string, ms: number) {
    super(`fetching ${url} took longer than ${ms} ms`, url, true);
  }
}

/** The connection or the exchange failed (DNS, refused, reset, TLS). */
export class FetchFailed extends SafeFetchError {
  override name = "FetchFailed";
  readonly code: string | undefined;
  constructor(url: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `fetching ${url} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      url,
      !PERMANENT_ERROR_CODES.has(code ?? ""),
      { cause },
    );
    this.code = code;
  }
}

/** Failures that will not go away by trying again soon: no such name, a wrong certificate, a broken answer. */
const PERMANENT_ERROR_CODES = new Set([
  "ENOTFOUND",
  "ENODATA",
  "ERR_INVALID_URL",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "HPE_INVALID_CONSTANT",
  "Z_DATA_ERROR",
  "HPE_INVALID_HEADER_TOKEN",
]);

export interface SafeFetchRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export interface SafeFetchOptions {
  method?: "GET" | "HEAD" | "POST" | "PUT" | "DELETE";
  /** Header names are case-insensitive; these override the defaults (User-Agent, Accept, Accept-Encoding). */
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Largest (decompressed) body accepted, in bytes; 1 MiB by default. */
  maxBytes?: number;
  /** For the whole exchange, redirects included; 10 s by default. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Aborts the fetch from outside (the abort reason is rethrown). */
  signal?: AbortSignal;
  /**
   * Called before each hop (the first request and every redirect) with what is about to be sent;
   * returns the headers to send. Federation signs each hop here, since a signature covers one URL.
   */
  beforeRequest?: (request: SafeFetchRequest) => Record<string, string> | Promise<Record<string, string>>;
  /** Resolves a host name to addresses (OUTBOUND_HOSTS, then dns.lookup, by default); tests map names to loopback. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /**
   * Writes the body of the final answer to this file instead of memory (video and audio of other
   * servers); the response's `body` is then empty. The file may hold a part when the fetch fails.
   */
  saveTo?: string;
}

export interface SafeFetchResponse {
  status: number;
  /** As received, except that content-encoding and content-length are dropped once the body is decompressed. */
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

/** The media type of a response, lower-case and without parameters (`text/html`), or "". */
export function mediaTypeOf(headers: IncomingHttpHeaders): string {
  return (headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
}

/** Resolves and checks the URL's host; every address must be reachable, or the URL is refused. */
async function checkedAddresses(
  url: URL,
  config: Pick<Config, "allowedPrivateAddresses" | "outboundHosts">,
  resolve: SafeFetchOptions["resolve"],
): Promise<LookupAddress[]> {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: LookupAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (resolve ?? resolverFor(config))(host);
    } catch (error) {
      throw new FetchFailed(url.href, error);
    }
    if (addresses.length === 0)
      throw new FetchFailed(url.href, Object.assign(new Error(`${host} has no addresses`), { code: "ENODATA" }));
  }
  for (const { address } of addresses) {
    if (!isReachableAddress(address, config.allowedPrivateAddresses)) {
      throw new DestinationRefused(url.href, `${host} resolves to ${address}, a non-public address`);
    }
  }
  return addresses;
}

function parseDestination(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefused(String(raw), "not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new DestinationRefused(url.href, `${url.protocol} URLs are not fetched`);
  if (url.username || url.password) throw new DestinationRefused(url.href, "URLs with credentials are not fetched");
  return url;
}

/** A `lookup` for http.request that answers only with addresses already checked. */
function pinnedLookup(addresses: LookupAddress[]): typeof dnsLookup {
  const pinned = (_hostname: string, options: unknown, callback?: unknown) => {
    const done = (typeof options === "function" ? options : callback) as (
      error: Error | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    const opts = (typeof options === "object" && options !== null ? options : {}) as {
      all?: boolean;
      family?: number | string;
    };
    const family = opts.family === "IPv4" ? 4 : opts.family === "IPv6" ? 6 : Number(opts.family ?? 0);
    const matching = family ? addresses.filter((a) => a.family === family) : addresses;
    if (matching.length === 0) {
      done(
        Object.assign(new Error("no checked address of the requested family"), { code: "ENOTFOUND" }),
        "",
        undefined,
      );
      return;
    }
    if (opts.all) done(null, matching);
    else done(null, matching[0].address, matching[0].family);
  };
  return pinned as unknown as typeof dnsLookup;
}

const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

function lowerCaseKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

interface Hop {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

function send(hop: Hop, addresses: LookupAddress[], signal: AbortSignal): Promise<IncomingMessage> {
  const client = hop.url.protocol === "https:" ? https : http;
  const host = hop.url.hostname.startsWith("[") ? hop.url.hostname.slice(1, -1) : hop.url.hostname;
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        method: hop.method,
        hostname: host,
        port: hop.url.port || undefined,
        path: `${hop.url.pathname}${hop.url.search}`,
        headers: hop.body ? { ...hop.headers, "content-length": String(hop.body.length) } : hop.headers,
        lookup: pinnedLookup(addresses),
        // A socket of its own: no pooled connection outlives the check that allowed it.
        agent: false,
        signal,
      },
      resolve,
    );
    request.on("error", reject);
    request.end(hop.body);
  });
}

function decoded(response: IncomingMessage, headers: IncomingHttpHeaders): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  delete headers["content-encoding"];
  delete headers["content-length"];
  response.on("error", (error) => decoder.destroy(error));
  return response.pipe(decoder);
}

/** Reads the body (into memory, or into the file `saveTo`), counting decompressed bytes, and stops as soon as it passes `maxBytes`. */
async function readBody(
  response: IncomingMessage,
  url: string,
  maxBytes: number,
  headers: IncomingHttpHeaders,
  saveTo: string | undefined,
): Promise<Buffer> {
  const declared = Number(response.headers["content-length"]);
  if (!response.headers["content-encoding"] && Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw new ResponseTooLarge(url, maxBytes);
  }
  const stream = decoded(response, headers);
  const chunks: Buffer[] = [];
  const file = saveTo ? await open(saveTo, "w") : undefined;
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) throw new ResponseTooLarge(url, maxBytes);
      // Awaiting each write holds the stream back while the disk is slower than the network.
      if (file) await file.write(chunk as Buffer);
      else chunks.push(chunk as Buffer);
    }
  } finally {
    await file?.close();
    if (size > maxBytes || !response.complete) {
      response.destroy();
      stream.destroy();
    }
  }
  return Buffer.concat(chunks);
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The next hop of a redirect, following the rules browsers follow for the method and body. */
function redirectHop(hop: Hop, status: number, location: URL): Hop {
  const toGet =
    (status === 303 && hop.method !== "HEAD") || ((status === 301 || status === 302) && hop.method === "POST");
  const headers = { ...hop.headers };
  if (toGet) {
    delete headers["content-type"];
    delete headers["content-length"];
  }
  if (location.origin !== hop.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
  return { method: toGet ? "GET" : hop.method, url: location, headers, body: toGet ? undefined : hop.body };
}

/**
 * Fetches an untrusted http(s) URL: refuses non-public destinations (unless listed in
 * `config.allowedPrivateAddresses`) on every hop, follows at most `maxRedirects` redirects, and
 * bounds the whole exchange in time and the body in size. Answers of any status are returned;
 * failures throw a SafeFetchError subclass.
 */
export async function safeFetch(
  ctx: { config: Pick<Config, "allowedPrivateAddresses" | "outboundHosts" | "baseUrl"> },
  target: string | URL,
  options: SafeFetchOptions = {},
): Promise<SafeFetchResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const first = parseDestination(target);
  let hop: Hop = {
    method: options.method ?? "GET",
    url: first,
    headers: {
      "user-agent": userAgent(ctx.config),
      accept: "*/*",
      "accept-encoding": "gzip, deflate, br",
      ...lowerCaseKeys(options.headers),
    },
    body: typeof options.body === "string" ? Buffer.from(options.body) : options.body,
  };

  const failure = (error: unknown): never => {
    if (timeout.aborted) throw new FetchTimedOut(hop.url.href, timeoutMs);
    if (options.signal?.aborted) throw options.signal.reason;
    if (error instanceof SafeFetchError) throw error;
    throw new FetchFailed(hop.url.href, error);
  };
  // DNS lookups cannot be cancelled; the race keeps the deadline anyway.
  const withinDeadline = <T>(work: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });

  for (let redirects = 0; ; redirects++) {
    try {
      const addresses = await withinDeadline(checkedAddresses(hop.url, ctx.config, options.resolve));
      if (options.beforeRequest) {
        hop.headers = lowerCaseKeys(
          await withinDeadline(
            Promise.resolve(
              options.beforeRequest({
                method: hop.method,
                url: new URL(hop.url),
                headers: { ...hop.headers },
                body: hop.body,
              }),
            ),
          ),
        );
      }
      const response = await send(hop, addresses, signal);
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(response.statusCode ?? 0) && location) {
        response.resume();
        response.destroy();
        if (redirects >= maxRedirects) throw new TooManyRedirects(first.href, maxRedirects);
        let next: URL;
        try {
          next = parseDestination(new URL(location, hop.url));
        } catch (error) {
          if (error instanceof DestinationRefused) throw error;
          throw new DestinationRefused(location, "not a valid redirect target");
        }
        hop = redirectHop(hop, response.statusCode!, next);
        continue;
      }
      const headers = { ...response.headers };
      let body: Buffer = Buffer.alloc(0);
      if (hop.method === "HEAD") response.destroy();
      else body = await readBody(response, hop.url.href, maxBytes, headers, options.saveTo);
      return { status: response.statusCode ?? 0, headers, body, url: hop.url.href };
    } catch (error) {
      if (error instanceof SafeFetchError) throw error;
      return failure(error);
    }
  }
}
