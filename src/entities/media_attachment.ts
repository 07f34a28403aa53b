import type { Ctx } from "../context.ts";
import type { MediaAttachmentRow, MediaType } from "../db/schema.ts";

export interface MediaAttachment {
  id: string;
  type: string;
  url: string | null;
  preview_url: string | null;
  remote_url: string | null;
  preview_remote_url: string | null;
  text_url: string | null;
  meta: Record<string, unknown>;
  description: string | null;
  blurhash: string | null;
}

function fileUrl(ctx: Ctx, key: string | null): string | null {
  return key ? `${ctx.config.baseUrl}/system/${key}` : null;
}

/** Whether this server keeps copies of other servers' media of this type: pictures, and video and audio when it has ffmpeg. */
export function keptWhenRemote(type: MediaType, hasTranscoder: boolean): boolean {
  return type === "image" || (hasTranscoder && (type === "video" || type === "gifv" || type === "audio"));
}

/** The media proxy's address for an attachment of another server (`/media_proxy/:id/original` or `small`). */
export function mediaProxyUrl(ctx: Ctx, id: string, style: "original" | "small"): string {
  return `${ctx.config.baseUrl}/media_proxy/${id}/${style}`;
}

export function serializeMediaAttachment(ctx: Ctx, row: MediaAttachmentRow): MediaAttachment {
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(row.meta) as Record<string, unknown>;
  } catch {
    meta = {};
  }
  if (row.processing === "failed") meta = {};
  if (row.focus_x !== null && row.focus_y !== null) meta = { ...meta, focus: { x: row.focus_x, y: row.focus_y } };
  const done = row.processing === "complete";
  let url = done ? fileUrl(ctx, row.file) : null;
  // A chosen thumbnail (or an audio file's cover art) wins over the generated preview; audio without
  // one has no preview at all, and a video still being converted has only its chosen thumbnail.
  let preview =
    fileUrl(ctx, row.thumbnail_file) ??
    (done ? fileUrl(ctx, row.preview_file) : null) ??
    (row.type === "image" ? url : null);
  if (row.remote_url !== null && row.file === null) {
    // Another server's attachment not kept here (not downloaded yet, or dropped by `media remove`):
    // the media proxy fetches it when asked, as Mastodon's does. What this server never keeps
    // (unknown types; video and audio without ffmpeg) stays a link to the other server.
    const proxied = keptWhenRemote(row.type, ctx.config.transcoder !== undefined);
    url = proxied ? mediaProxyUrl(ctx, row.id, "original") : row.remote_url;
    // Audio has no preview of its own (only cover art, as a thumbnail).
    preview = proxied && row.type !== "audio" ? mediaProxyUrl(ctx, row.id, "small") : null;
  }
  return {
    id: row.id,
    type: row.type,
    url,
    preview_url: preview,
    remote_url: row.remote_url,
    preview_remote_url: null,
    text_url: null,
    meta,
    description: row.description,
    blurhash: row.blurhash,
  };
}
