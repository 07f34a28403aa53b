/**
 * Markers: where a user stopped reading their home and notifications timelines, so another client
 * (or the same one later) resumes there. Each update advances the marker's version; an update
 * that finds the version changed since it read it (another writer came first) is refused with
 * 409, as Mastodon's optimistic lock does, so no acknowledged position is silently overwritten.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { MarkerRow } from "../../db/schema.ts";
import { Conflict } from "../../errors.ts";

export const MARKER_TIMELINES = ["home", "notifications"] as const;
export type MarkerTimeline = (typeof MARKER_TIMELINES)[number];

/** The user's markers among `timelines`; timelines never marked are absent. */
export async function markersOf(ctx: Ctx, userId: string, timelines: readonly MarkerTimeline[]): Promise<MarkerRow[]> {
  if (timelines.length === 0) return [];
  return ctx.db.kysely
    .selectFrom("markers")
    .selectAll()
    .where("user_id", "=", userId)
    .where("timeline", "in", timelines)
    .execute();
}

/**
 * Sets the last read ID of each timeline in `positions`, in one transaction: all are saved or,
 * when another update of one of them came in between, none (409).
 */
export async function saveMarkers(
  ctx: Ctx,
  userId: string,
  positions: ReadonlyMap<MarkerTimeline, string>,
): Promise<MarkerRow[]> {
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const saved: MarkerRow[] = [];
    for (const [timeline, lastReadId] of positions) {
      const now = new Date().toISOString();
      const current = await tx
        .selectFrom("markers")
        .selectAll()
        .where("user_id", "=", userId)
        .where("timeline", "=", timeline)
        .executeTakeFirst();
      if (!current) {
        const created = await tx
          .insertInto("markers")
          .values({
            id: newId(),
            user_id: userId,
            timeline,
            last_read_id: lastReadId,
            version: 0,
            created_at: now,
            updated_at: now,
          })
          .onConflict((oc) => oc.columns(["user_id", "timeline"]).doNothing())
          .returningAll()
          .executeTakeFirst();
        // Another request created it first.
        if (!created) throw new Conflict();
        saved.push(created);
        continue;
      }
      const updated = await tx
        .updateTable("markers")
        .set({ last_read_id: lastReadId, version: current.version + 1, updated_at: now })
        .where("id", "=", current.id)
        .where("version", "=", current.version)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw new Conflict();
      saved.push(updated);
    }
    return saved;
  });
}
