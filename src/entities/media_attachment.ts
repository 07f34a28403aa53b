import type { Ctx } from "../context.ts";
import type { MediaAttachmentRow } from "../db/schema.ts";

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
  const url = done ? (fileUrl(ctx, row.file) ?? row.remote_url) : null;
  // A chosen thumbnail (or an audio file's cover art) wins over the generated preview; audio without
  // one has no preview at all, and a video still being converted has only its chosen thumbnail.
  const preview =
    fileUrl(ctx, row.thumbnail_file) ??
    (done ? fileUrl(ctx, row.preview_file) : null) ??
    (row.type === "image" ? url : null);
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
