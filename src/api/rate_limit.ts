import type { FastifyReply, FastifyRequest } from "fastify";
import { TooManyRequests } from "../errors.ts";
import type { Viewer } from "../services/auth/viewer.ts";

/** One throttle: at most `limit` requests per `period` (ms) for each key it derives from a request. */
export interface Throttle {
  name: string;
  limit: number;
  period: number;
  /** The bucket a request falls in, or undefined when the throttle does not apply. */
  key(req: FastifyRequest, viewer: Viewer | undefined): string | undefined;
}

/** Counts hits in fixed windows; in-process now, shared (Redis) when processes scale out. */
export interface RateLimitStore {
  /** Counts one hit in the window holding `now`; returns the count in that window. */
  hit(key: string, windowStart: number, period: number): Promise<number>;
}

export class MemoryRateLimitStore implements RateLimitStore {
  readonly #counts = new Map<string, { windowStart: number; count: number }>();

  async hit(key: string, windowStart: number, period: number): Promise<number> {
    const entry = this.#counts.get(key);
    if (entry && entry.windowStart === windowStart) return ++entry.count;
    this.#counts.set(key, { windowStart, count: 1 });
    if (this.#counts.size > 50_000) this.#sweep(windowStart, period);
    return 1;
  }

  #sweep(now: number, period: number): void {
    for (const [key, entry] of this.#counts) if (entry.windowStart + period < now) this.#counts.delete(key);
  }
}

const MINUTE = 60_000;

/** Whether a request comes from this machine; Mastodon exempts loopback from every throttle. */
export function isLoopback(ip: string): boolean {
  return ip === "127.0.0.1" || ip === "::1" || ip === "::ffff:127.0.0.1";
}

/** IPv6 clients share a limit per /64, as Mastodon masks them. */
function clientKey(ip: string | undefined): string {
  // A client that reset its connection has no address any more; its requests share one bucket.
  if (!ip) return "unknown";
  if (!ip.includes(":") || ip.startsWith("::ffff:")) return ip;
  return ip.split(":").slice(0, 4).join(":");
}

const isApi = (req: FastifyRequest) => req.url.startsWith("/api/");
const hasCursor = (req: FastifyRequest) =>
  ["max_id", "since_id", "min_id", "page"].some((k) => req.input?.[k] !== undefined);

/** Mastodon's throttles for the client API (reference/gaps.md §10). */
export const API_THROTTLES: readonly Throttle[] = [
  {
    name: "authenticated_api",
    limit: 1500,
    period: 5 * MINUTE,
    key: (req, v) => (isApi(req) && v?.user ? `user:${v.user.id}` : undefined),
  },
  {
    name: "per_token_api",
    limit: 300,
    period: 5 * MINUTE,
    key: (req, v) => (isApi(req) && v ? `token:${v.tokenId}` : undefined),
  },
  {
    name: "unauthenticated_api",
    limit: 300,
    period: 5 * MINUTE,
    key: (req, v) => (isApi(req) && !v ? `ip:${clientKey(req.ip)}` : undefined),
  },
  {
    name: "paging",
    limit: 300,
    period: 15 * MINUTE,
    key: (req, v) =>
      isApi(req) && hasCursor(req) ? (v?.user ? `user:${v.user.id}` : `ip:${clientKey(req.ip)}`) : undefined,
  },
];

/** Throttles for particular endpoints, named in a route's `config.throttles`. */
export const ENDPOINT_THROTTLES = {
  sign_up: { name: "sign_up", limit: 5, period: 30 * MINUTE, key: (req) => `ip:${clientKey(req.ip)}` },
  apps: { name: "apps", limit: 5, period: 10 * MINUTE, key: (req) => `ip:${clientKey(req.ip)}` },
  media: {
    name: "media",
    limit: 30,
    period: 30 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
  status_deletion: {
    name: "status_deletion",
    limit: 30,
    period: 30 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
  confirmation_resend_user: {
    name: "confirmation_resend_user",
    limit: 5,
    period: 30 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
  confirmation_resend_ip: {
    name: "confirmation_resend_ip",
    limit: 25,
    period: 5 * MINUTE,
    key: (req) => `ip:${clientKey(req.ip)}`,
  },
  sign_in: { name: "sign_in", limit: 25, period: 5 * MINUTE, key: (req) => `ip:${clientKey(req.ip)}` },
  /** The media proxy, which may fetch from other servers for whoever asks. */
  media_proxy: { name: "media_proxy", limit: 30, period: 10 * MINUTE, key: (req) => `ip:${clientKey(req.ip)}` },
  /** Mastodon's model-level families: posting and editing statuses, following accounts and tags, reporting. */
  statuses: {
    name: "statuses",
    limit: 300,
    period: 3 * 60 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
  follows: {
    name: "follows",
    limit: 400,
    period: 24 * 60 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
  reports: {
    name: "reports",
    limit: 400,
    period: 24 * 60 * MINUTE,
    key: (_req, v) => (v?.user ? `user:${v.user.id}` : undefined),
  },
} satisfies Record<string, Throttle>;

export type EndpointThrottle = keyof typeof ENDPOINT_THROTTLES;

declare module "fastify" {
  interface FastifyContextConfig {
    /** Endpoint throttles that apply to this route besides the general API ones. */
    throttles?: readonly EndpointThrottle[];
  }
}

/** `2024-05-01T12:35:00.000000Z`: Mastodon's reset time, with six fractional digits. */
function resetTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * Counts the request against every throttle that applies, sets `X-RateLimit-*` from the one with
 * the fewest requests left, and refuses with 429 when any is exhausted.
 */
export async function applyThrottles(
  store: RateLimitStore,
  throttles: readonly Throttle[],
  req: FastifyRequest,
  reply: FastifyReply,
  viewer: Viewer | undefined,
  now = Date.now(),
): Promise<void> {
  if (isLoopback(req.ip)) return;
  let tightest: { limit: number; remaining: number; reset: number } | undefined;
  let exceeded = false;
  for (const throttle of throttles) {
    const key = throttle.key(req, viewer);
    if (key === undefined) continue;
    const windowStart = now - (now % throttle.period);
    const count = await store.hit(`${throttle.name}:${key}`, windowStart, throttle.period);
    const remaining = Math.max(0, throttle.limit - count);
    if (count > throttle.limit) exceeded = true;
    if (!tightest || remaining < tightest.remaining)
      tightest = { limit: throttle.limit, remaining, reset: windowStart + throttle.period };
  }
  if (!tightest) return;
  const headers = {
    "X-RateLimit-Limit": String(tightest.limit),
    "X-RateLimit-Remaining": String(tightest.remaining),
    "X-RateLimit-Reset": resetTimestamp(tightest.reset),
  };
  if (exceeded) throw new TooManyRequests(headers);
  reply.headers(headers);
}
