/**
 * The rules for every outbound connection, in one place: which addresses a host name resolves to
 * (OUTBOUND_HOSTS first, then the system's resolver), which of them may be reached (public ones,
 * plus ALLOWED_PRIVATE_ADDRESSES), how long a request may take, how large an answer may be, and the
 * User-Agent we announce. `safeFetch` applies them to the requests Rookery makes itself; the
 * agent installed here applies them to everything else that uses the global `fetch` — Fedify's
 * deliveries, document and key fetches, which have no address check, timeout or size limit of
 * their own. The check happens when the socket connects, so DNS cannot be re-pointed in between.
 */
import { lookup as dnsLookup, promises as dns, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector, setGlobalDispatcher, type Dispatcher } from "undici";
import type { Config } from "../../config.ts";
import { ROOKERY_VERSION } from "../../version.ts";
import { isReachableAddress } from "./addresses.ts";

type OutboundConfig = Pick<Config, "allowedPrivateAddresses" | "outboundHosts" | "baseUrl">;

/** `Rookery/<version> (+https://<web domain>/)`, the form Mastodon uses so that site owners can find us. */
export function userAgent(config: Pick<Config, "baseUrl">): string {
  return `Rookery/${ROOKERY_VERSION} (+${config.baseUrl}/)`;
}

/** Resolves a host name to all its addresses: OUTBOUND_HOSTS when it names the host, else the system. */
export function resolverFor(config: Pick<Config, "outboundHosts">): (hostname: string) => Promise<LookupAddress[]> {
  return async (hostname) => {
    const fixed = config.outboundHosts[hostname.toLowerCase()];
    if (fixed) return fixed.map((address) => ({ address, family: isIP(address) }));
    return dns.lookup(hostname, { all: true, verbatim: true });
  };
}

/** The error a refused connection fails with (its `code` tells it from network failures). */
export class AddressRefused extends Error {
  override name = "AddressRefused";
  readonly code = "ERR_ADDRESS_REFUSED";
  constructor(host: string, address: string) {
    super(`refused to connect to ${host}: ${address} is not a public address`);
  }
}

export interface AgentLimits {
  connectTimeoutMs?: number;
  /** Time to the response's headers, and between two chunks of its body. */
  responseTimeoutMs?: number;
  maxResponseBytes?: number;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici agent that connects only to addresses the configuration allows, with time and size
 * limits, and that sends Rookery's User-Agent when a request names none (Fedify's deliveries).
 */
export function createOutboundAgent(config: OutboundConfig, limits: AgentLimits = {}): Dispatcher {
  const resolve = resolverFor(config);
  const allowed = config.allowedPrivateAddresses;
  // net/tls.connect call this for host names; IP literals never reach it (see `connect` below).
  const checkedLookup = (hostname: string, options: unknown, callback?: unknown) => {
    const done = (typeof options === "function" ? options : callback) as LookupCallback;
    const opts = (typeof options === "object" && options !== null ? options : {}) as {
      all?: boolean;
      family?: number | string;
    };
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find((a) => !isReachableAddress(a.address, allowed));
        if (refused) return done(new AddressRefused(hostname, refused.address), "");
        const family = opts.family === "IPv4" ? 4 : opts.family === "IPv6" ? 6 : Number(opts.family ?? 0);
        const matching = family ? addresses.filter((a) => a.family === family) : addresses;
        if (matching.length === 0)
          return done(Object.assign(new Error(`${hostname} has no addresses`), { code: "ENOTFOUND" }), "");
        if (opts.all) done(null, matching);
        else done(null, matching[0].address, matching[0].family);
      },
      (error: Error) => done(error, ""),
    );
  };
  const connector = buildConnector({
    lookup: checkedLookup as unknown as typeof dnsLookup,
    timeout: limits.connectTimeoutMs ?? 5_000,
  });
  const agent = new Agent({
    headersTimeout: limits.responseTimeoutMs ?? 10_000,
    bodyTimeout: limits.responseTimeoutMs ?? 10_000,
    maxResponseSize: limits.maxResponseBytes ?? 1024 * 1024,
    connect: (options, callback) => {
      const host = options.hostname.startsWith("[") ? options.hostname.slice(1, -1) : options.hostname;
      if (isIP(host) && !isReachableAddress(host, allowed)) return callback(new AddressRefused(host, host), null);
      return connector(options, callback);
    },
  });
  const agentName = userAgent(config);
  return agent.compose((dispatch) => (options, handler) => {
    const headers = options.headers;
    if (Array.isArray(headers)) {
      const names = headers.filter((_, i) => i % 2 === 0).map((name) => String(name).toLowerCase());
      if (!names.includes("user-agent")) options = { ...options, headers: [...headers, "user-agent", agentName] };
    } else if (headers && typeof headers === "object") {
      const named = Object.keys(headers).some((name) => name.toLowerCase() === "user-agent");
      if (!named) options = { ...options, headers: { ...headers, "user-agent": agentName } };
    } else if (!headers) {
      options = { ...options, headers: { "user-agent": agentName } };
    }
    return dispatch(options, handler);
  });
}

/**
 * Makes the outbound agent the process's global dispatcher, so that every `fetch()` of ours and of
 * the libraries we use follows the rules. Clients of services the operator configured (a
 * translation server on this machine) pass a dispatcher of their own.
 */
export function installOutboundAgent(config: OutboundConfig, limits?: AgentLimits): void {
  setGlobalDispatcher(createOutboundAgent(config, limits));
}

/** A plain agent for endpoints the operator configured, which may be private (LIBRE_TRANSLATE_ENDPOINT). */
export const OPERATOR_AGENT: Dispatcher = new Agent();
