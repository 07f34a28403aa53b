import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeMarkers } from "../../entities/marker.ts";
import { ValidationFailed } from "../../errors.ts";
import { MARKER_TIMELINES, markersOf, saveMarkers, type MarkerTimeline } from "../../services/markers/markers.ts";
import { userOf } from "../auth.ts";
import { toId, toObject, toStringArray, toStringParam } from "../params.ts";

const isTimeline = (name: string): name is MarkerTimeline => (MARKER_TIMELINES as readonly string[]).includes(name);

/** Reading positions in the home and notifications timelines. */
export default async function markerRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v1/markers", { preHandler: app.auth({ scopes: ["read:statuses"], user: true }) }, async (req) => {
    // Unknown timelines are ignored, as Mastodon filters them out.
    const timelines = [...new Set(toStringArray(req.input.timeline))].filter(isTimeline);
    return serializeMarkers(await markersOf(ctx, userOf(req).user.id, timelines));
  });

  app.post("/api/v1/markers", { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) }, async (req) => {
    const positions = new Map<MarkerTimeline, string>();
    for (const timeline of MARKER_TIMELINES) {
      // `home=…` without `[last_read_id]` is not a marker: ignored, as Rails' permit drops it.
      const given = toObject(req.input[timeline]);
      if (given === undefined) continue;
      const raw = toStringParam(given.last_read_id)?.trim();
      if (!raw) throw new ValidationFailed("Last read can't be blank");
      const id = toId(raw);
      if (!id) throw new ValidationFailed("Last read is invalid");
      positions.set(timeline, id);
    }
    return serializeMarkers(await saveMarkers(ctx, userOf(req).user.id, positions));
  });
}
