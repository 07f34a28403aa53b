/**
 * Mastodon's media proxy (MediaProxyController): `/media_proxy/:id/original` and `/small` are
 * the addresses clients get for another server's attachment that this server has not kept (not
 * downloaded yet, or dropped by `rookery media remove`). Asked for one, the server has it
 * downloaded now — by the job that downloads on arrival, under the same rules — waits for it a
 * while, and answers where the kept copy is.
 *
 * Abuse it is guarded against:
 * - it fetches only the `remote_url` of an attachment of a stored post of another server, never
 *   a URL given in the request, and only for a reader who may see that post (Mastodon authorizes
 *   the status); detached attachments, local ones and hidden posts are 404, the same as missing;
 * - nothing of a domain with `reject_media` or a suspended one (404: nothing of it is shown here,
 *   where Mastodon redirects to a missing file);
 * - one download per attachment at a time (the job's unique key), whoever asks, and a file that
 *   could not be kept is not asked for again for an hour (remote_download.ts);
 * - the wait ends after 20 s (503 with Retry-After: a long video may take longer to convert) or
 *   when the client hangs up; the route is throttled per address (Mastodon's 30 per 10 minutes).
 */
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import type { MediaAttachmentRow } from "../../db/schema.ts";
import { keptWhenRemote } from "../../entities/media_attachment.ts";
import { NotFound, ServiceUnavailable } from "../../errors.ts";
import { findVisibleStatus } from "../visibility/find.ts";
import { domainKeepsMedia, enqueueRemoteMediaFetch } from "./remote.ts";
import { notKeptLately } from "./remote_download.ts";

export type ProxyStyle = "original" | "small";

/** How long a request waits for a download before answering 503. */
const WAIT_MS = 20_000;
const RETRY_AFTER_S = 30;

type Kept = Pick<MediaAttachmentRow, "type" | "file" | "preview_file" | "thumbnail_file">;

function keptLocation(ctx: Ctx, row: Kept, style: ProxyStyle): string {
  const key =
    style === "original"
      ? row.file
      : (row.preview_file ?? row.thumbnail_file ?? (row.type === "image" ? row.file : null));
  // A kept audio file without cover art has no small picture (Mastodon redirects to a missing one).
  if (!key) throw new NotFound();
  return `${ctx.config.baseUrl}/system/${key}`;
}

function keptColumns(ctx: Ctx, id: string) {
  return ctx.db.kysely
    .selectFrom("media_attachments")
    .select(["type", "file", "preview_file", "thumbnail_file"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Waits until attachment `id` is kept (its row), or known not to be keepable (undefined), or the time is up (503). */
async function waitUntilKept(ctx: Ctx, id: string, signal: AbortSignal | undefined): Promise<Kept | undefined> {
  const deadline = Date.now() + WAIT_MS;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (signal?.aborted) return undefined;
    const row = await keptColumns(ctx, id);
    if (!row) return undefined;
    if (row.file) return row;
    if (await notKeptLately(ctx, id)) return undefined;
    if (Date.now() >= deadline)
      throw new ServiceUnavailable("The file is still being fetched from its server; try again later", RETRY_AFTER_S);
  }
}

/**
 * Where the kept copy of remote attachment `id` is (style `original` or `small`), downloaded now
 * when it is not kept; NotFound when it cannot be served from here, ServiceUnavailable when the
 * download is not done in time.
 */
export async function proxiedMediaLocation(
  ctx: Ctx,
  id: string | undefined,
  style: ProxyStyle,
  viewerAccountId: string | undefined,
  signal?: AbortSignal,
): Promise<string> {
  if (!id || !isIdLike(id)) throw new NotFound();
  const row = await ctx.db.kysely
    .selectFrom("media_attachments")
    .innerJoin("accounts", "accounts.id", "media_attachments.account_id")
    .select([
      "media_attachments.id",
      "media_attachments.type",
      "media_attachments.status_id",
      "media_attachments.remote_url",
      "media_attachments.file",
      "media_attachments.preview_file",
      "media_attachments.thumbnail_file",
      "accounts.domain",
    ])
    .where("media_attachments.id", "=", id)
    .executeTakeFirst();
  if (!row || row.remote_url === null || row.status_id === null || row.domain === null) throw new NotFound();
  await findVisibleStatus(ctx, row.status_id, viewerAccountId);
  if (!(await domainKeepsMedia(ctx, row.domain))) throw new NotFound();
  if (row.file) return keptLocation(ctx, row, style);
  if (!keptWhenRemote(row.type, ctx.config.transcoder !== undefined) || (await notKeptLately(ctx, row.id)))
    throw new NotFound();
  await enqueueRemoteMediaFetch(ctx, ctx.db.kysely, row);
  ctx.jobs.wake();
  const kept = await waitUntilKept(ctx, row.id, signal);
  if (!kept) throw new NotFound();
  return keptLocation(ctx, kept, style);
}
