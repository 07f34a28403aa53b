import { ServiceUnavailable } from "../../errors.ts";
import { fetch } from "undici";
import { ROOKERY_VERSION } from "../../version.ts";
import { OPERATOR_AGENT } from "../http/outbound.ts";

/**
 * A translation provider failed: unreachable, too slow, refusing (quota, key) or answering
 * something unexpected. Clients see Mastodon's 503 `Service Unavailable`; `reason` is for the log.
 */
export class TranslationUnavailable extends ServiceUnavailable {
  readonly reason: string;
  constructor(reason: string) {
    super();
    this.reason = reason;
  }
}

/** How long a provider may take to answer, unless its client is told otherwise. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** How long a provider's language list is kept. */
export const DEFAULT_LANGUAGES_TTL_MS = 60 * 60 * 1000;
/** A translation of one status is small; anything larger than this is not a real answer. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface JsonRequest {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  timeoutMs: number;
}

async function readLimited(res: Response, limit: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`response larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function describe(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return "timed out";
  return error instanceof Error ? error.message : String(error);
}

/**
 * One request to a provider, answered with parsed JSON. Every failure (network, timeout, non-2xx
 * status, oversized or non-JSON body) becomes TranslationUnavailable naming `provider`.
 */
export async function requestJson(provider: string, url: string, request: JsonRequest): Promise<unknown> {
  const headers: Record<string, string> = {
    accept: "application/json",
    "user-agent": `Rookery/${ROOKERY_VERSION}`,
    ...request.headers,
  };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  let text: string;
  let status: number;
  try {
    const res = await fetch(url, {
      // The operator's own endpoint, which may be on this machine: not the rules for strangers' URLs.
      dispatcher: OPERATOR_AGENT,
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      // The timeout covers reading the body too: the signal aborts the stream.
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    status = res.status;
    if (!res.ok) {
      await res.body?.cancel();
      throw new TranslationUnavailable(`${provider} answered ${res.status}`);
    }
    text = await readLimited(res, MAX_RESPONSE_BYTES);
  } catch (error) {
    if (error instanceof TranslationUnavailable) throw error;
    throw new TranslationUnavailable(`${provider} request failed: ${describe(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new TranslationUnavailable(`${provider} answered ${status} with a body that is not JSON`);
  }
}

/** The ISO 639 code inside a provider's or a client's tag (`EN-GB` → `en`, `zh-Hans` → `zh`), or undefined. */
export function primaryLanguage(tag: string | null | undefined): string | undefined {
  const code = tag?.trim().toLowerCase().split(/[-_]/)[0];
  return code && /^[a-z]{2,3}$/.test(code) ? code : undefined;
}

/** A value loaded on demand and kept for `ttlMs`; concurrent callers share one load; failures are not kept. */
export class ExpiringValue<T> {
  readonly #ttlMs: number;
  readonly #load: () => Promise<T>;
  #value: { data: T; expiresAt: number } | undefined;
  #pending: Promise<T> | undefined;

  constructor(ttlMs: number, load: () => Promise<T>) {
    this.#ttlMs = ttlMs;
    this.#load = load;
  }

  get(): Promise<T> {
    if (this.#value && Date.now() < this.#value.expiresAt) return Promise.resolve(this.#value.data);
    this.#pending ??= this.#load()
      .then((data) => {
        this.#value = { data, expiresAt: Date.now() + this.#ttlMs };
        return data;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }
}
