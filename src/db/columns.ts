/**
 * Decoders of the JSON held in text columns (both engines store JSON as text). Every reader of
 * these columns goes through here, so a change of encoding is one edit.
 */
import type { PollRow, ScheduledStatusRow, StatusEditRow, StatusRow } from "./schema.ts";

/** The poll's option titles, in order. */
export function pollOptions(row: Pick<PollRow, "options">): string[] {
  return JSON.parse(row.options) as string[];
}

/** Votes per option, parallel to `pollOptions`. */
export function pollTallies(row: Pick<PollRow, "cached_tallies">): number[] {
  return JSON.parse(row.cached_tallies) as number[];
}

/** The IDs of a status's (or a version's) media in the author's order; empty when it has none. */
export function mediaOrder(row: Pick<StatusRow | StatusEditRow, "ordered_media_attachment_ids">): string[] {
  return row.ordered_media_attachment_ids ? (JSON.parse(row.ordered_media_attachment_ids) as string[]) : [];
}

/** Encodes a media order for `ordered_media_attachment_ids` (null when there are no media). */
export function encodeMediaOrder(ids: readonly string[]): string | null {
  return ids.length ? JSON.stringify(ids) : null;
}

/** The media descriptions of an edit-history version, parallel to its media order. */
export function versionMediaDescriptions(row: Pick<StatusEditRow, "media_descriptions">): Array<string | null> {
  return row.media_descriptions ? (JSON.parse(row.media_descriptions) as Array<string | null>) : [];
}

/** The poll options an edit-history version had, or null when it had no poll. */
export function versionPollOptions(row: Pick<StatusEditRow, "poll_options">): string[] | null {
  return row.poll_options ? (JSON.parse(row.poll_options) as string[]) : null;
}

/** The stored parameters of a scheduled status (its shape is `ScheduledParams`). */
export function scheduledParams<T>(row: Pick<ScheduledStatusRow, "params">): T {
  return JSON.parse(row.params) as T;
}
