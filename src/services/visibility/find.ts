import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import { ownStatusById, statusById, statusesByIds } from "../../db/queries/statuses.ts";
import { NotFound } from "../../errors.ts";
import { visibleStatusIds } from "./visibility.ts";

/**
 * The statuses among `rows` that `viewerAccountId` may see; a boost is seen only when the boosted
 * status is too. Order is kept. One batch of queries for the whole list.
 */
export async function filterVisible(
  ctx: Ctx,
  rows: readonly StatusRow[],
  viewerAccountId: string | undefined,
): Promise<StatusRow[]> {
  if (rows.length === 0) return [];
  const originalIds = [...new Set(rows.map((r) => r.reblog_of_id).filter((id): id is string => !!id))];
  const originals = await statusesByIds(ctx.db.kysely, originalIds);
  const visible = await visibleStatusIds(ctx.db.kysely, [...rows, ...originals], viewerAccountId);
  return rows.filter((r) => visible.has(r.id) && (!r.reblog_of_id || visible.has(r.reblog_of_id)));
}

/** A status as it is now, after an action changed it (404 if it went meanwhile). */
export async function reloadStatus(ctx: Ctx, id: string): Promise<StatusRow> {
  const row = await statusById(ctx.db.kysely, id);
  if (!row) throw new NotFound();
  return row;
}

/** A status the viewer may see, or 404 (missing and hidden look the same). */
export async function findVisibleStatus(
  ctx: Ctx,
  id: string | undefined,
  viewerAccountId: string | undefined,
): Promise<StatusRow> {
  const row = await statusById(ctx.db.kysely, id);
  if (!row || (await filterVisible(ctx, [row], viewerAccountId)).length === 0) throw new NotFound();
  return row;
}

/** The visible statuses among `ids`, in the order asked, each once. */
export async function findVisibleStatuses(
  ctx: Ctx,
  ids: readonly string[],
  viewerAccountId: string | undefined,
): Promise<StatusRow[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await statusesByIds(ctx.db.kysely, unique);
  const visible = new Map((await filterVisible(ctx, rows, viewerAccountId)).map((r) => [r.id, r]));
  return unique.map((id) => visible.get(id)).filter((r): r is StatusRow => !!r);
}

/** One of the viewer's own statuses (edit, delete, source), or 404. */
export async function findOwnStatus(ctx: Ctx, id: string | undefined, accountId: string): Promise<StatusRow> {
  const row = await ownStatusById(ctx.db.kysely, id, accountId);
  if (!row) throw new NotFound();
  return row;
}
