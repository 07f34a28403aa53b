import type { MarkerRow } from "../db/schema.ts";

/** The Marker entity. */
export interface MarkerJson {
  last_read_id: string;
  version: number;
  updated_at: string;
}

/** Markers keyed by their timeline, as GET and POST /api/v1/markers answer. */
export function serializeMarkers(rows: readonly MarkerRow[]): Record<string, MarkerJson> {
  const out: Record<string, MarkerJson> = {};
  for (const row of rows)
    out[row.timeline] = {
      last_read_id: String(row.last_read_id),
      version: Number(row.version),
      updated_at: row.updated_at,
    };
  return out;
}
