/**
 * Downloads of other servers' media (attachments, avatars, headers), by one set of rules: through
 * the SSRF-safe fetch (public addresses only, each redirect checked, time and size bounded), and
 * only a 200 counts.
 *
 * Which failures retry: the other server's 5xx, 408 and 429, timeouts and broken connections are
 * transient — the job runs again later. A 4xx, an address that may not be reached, a file over
 * the limit or one that is no media this server reads are final (`MediaNotKept`). A final failure
 * (or the last attempt of a transient one) is remembered for an hour, so that readers asking for
 * the file meanwhile (the media proxy) do not make this server fetch it again and again.
 */
import type { Ctx } from "../../context.ts";
import { kvDelete, kvGet, kvSet } from "../../db/queries/federation_kv.ts";
import { safeFetch, SafeFetchError } from "../http/safe_fetch.ts";

/** The file cannot be kept here, and asking again soon will not change that. */
export class MediaNotKept extends Error {
  override name = "MediaNotKept";
}

export interface DownloadOptions {
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** For the whole download, redirects included. */
  timeoutMs: number;
  /** What the request's Accept header asks for. */
  accept: string;
  /** Streams the file here instead of answering it in memory (video and audio). */
  saveTo?: string;
  /** Stops the download (the workers are stopping). */
  signal?: AbortSignal;
}

/**
 * Downloads `url`: its bytes (empty when `saveTo` took them). Throws MediaNotKept on a final
 * failure, a transient SafeFetchError otherwise.
 */
export async function downloadRemote(ctx: Ctx, url: string, options: DownloadOptions): Promise<Buffer> {
  let response;
  try {
    response = await safeFetch(ctx, url, {
      maxBytes: options.maxBytes,
      timeoutMs: options.timeoutMs,
      headers: { accept: options.accept },
      saveTo: options.saveTo,
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof SafeFetchError && !error.transient) throw new MediaNotKept(error.message);
    throw error;
  }
  if (response.status === 200) return response.body;
  if (response.status >= 500 || response.status === 408 || response.status === 429)
    throw new SafeFetchError(`${url} answered ${response.status}`, url, true);
  throw new MediaNotKept(`${url} answered ${response.status}`);
}

/** How long a file that could not be kept is not asked for again. */
const NOT_KEPT_MEMORY_MS = 60 * 60 * 1000;
const notKeptKey = (what: string) => `remote-media-not-kept\n${what}`;

/** Remembers that `what` (an attachment's ID) could not be kept, and why. */
export async function rememberNotKept(ctx: Ctx, what: string, reason: string): Promise<void> {
  await kvSet(ctx.db.kysely, notKeptKey(what), reason, new Date(Date.now() + NOT_KEPT_MEMORY_MS));
}

/** Why `what` could not be kept lately, if it could not. */
export async function notKeptLately(ctx: Ctx, what: string): Promise<string | undefined> {
  const reason = await kvGet(ctx.db.kysely, notKeptKey(what));
  return typeof reason === "string" ? reason : undefined;
}

/** Forgets a failure once the file was kept after all. */
export async function forgetNotKept(ctx: Ctx, what: string): Promise<void> {
  await kvDelete(ctx.db.kysely, notKeptKey(what));
}
