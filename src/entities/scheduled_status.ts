import type { Ctx } from "../context.ts";
import type { ScheduledStatusRow } from "../db/schema.ts";
import { scheduledParams } from "../db/columns.ts";
import { jsonInteger } from "./json.ts";
import { serializeMediaAttachment } from "./media_attachment.ts";

/** ScheduledStatus entities; the media of all of them are loaded with one query. */
export async function serializeScheduledStatuses(ctx: Ctx, rows: readonly ScheduledStatusRow[]) {
  if (rows.length === 0) return [];
  const media = await ctx.db.kysely
    .selectFrom("media_attachments")
    .selectAll()
    .where(
      "scheduled_status_id",
      "in",
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((row) => {
    const stored = scheduledParams(row);
    const { allowed_mentions: _internal, ...shown } = stored;
    const params = {
      ...shown,
      application_id: stored.application_id === null ? null : jsonInteger(stored.application_id),
    };
    const order = params.media_ids ?? [];
    const own = media
      .filter((m) => m.scheduled_status_id === row.id)
      .sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
    return {
      id: row.id,
      scheduled_at: row.scheduled_at,
      params,
      media_attachments: own.map((m) => serializeMediaAttachment(ctx, m)),
    };
  });
}

export async function serializeScheduledStatus(ctx: Ctx, row: ScheduledStatusRow) {
  return (await serializeScheduledStatuses(ctx, [row]))[0];
}
