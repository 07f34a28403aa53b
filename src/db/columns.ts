/**
 * Decoders of the JSON held in text columns (both engines store JSON as text). Every reader of
 * these columns goes through here, so a change of encoding is one edit.
 */
import type {
  AccountRow,
  PollRow,
  ScheduledParams,
  ScheduledStatusRow,
  StatusEditRow,
  StatusRow,
  UserRow,
  UserSettings,
  WebPushSubscriptionRow,
} from "./schema.ts";

/** A local account's aliases (actor ids of its accounts elsewhere); empty when it has none. */
export function accountAliases(row: Pick<AccountRow, "also_known_as">): string[] {
  return row.also_known_as ? (JSON.parse(row.also_known_as) as string[]) : [];
}

/** Encodes aliases for `also_known_as` (null when there are none). */
export function encodeAccountAliases(uris: readonly string[]): string | null {
  return uris.length ? JSON.stringify(uris) : null;
}

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

/** The stored parameters of a scheduled status. */
export function scheduledParams(row: Pick<ScheduledStatusRow, "params">): ScheduledParams {
  return JSON.parse(row.params) as ScheduledParams;
}

/** A Web Push subscription's alerts: notification type → pushed or not. */
export function pushAlerts(row: Pick<WebPushSubscriptionRow, "alerts">): Record<string, boolean> {
  return JSON.parse(row.alerts) as Record<string, boolean>;
}

const DEFAULT_USER_SETTINGS: UserSettings = {
  default_privacy: "public",
  default_sensitive: false,
  default_language: null,
  expand_media: "default",
  expand_spoilers: false,
  autoplay_gifs: false,
};

/** A user's preferences (`users.settings`), with defaults for what was never set. */
export function userSettings(user: Pick<UserRow, "settings">): UserSettings {
  try {
    const stored: unknown = JSON.parse(user.settings);
    return {
      ...DEFAULT_USER_SETTINGS,
      ...(stored && typeof stored === "object" ? (stored as Partial<UserSettings>) : {}),
    };
  } catch {
    return { ...DEFAULT_USER_SETTINGS };
  }
}

/** An application's or token's scopes (stored space-separated). */
export function scopeList(row: { scopes: string }): string[] {
  return row.scopes.split(/[\s+]+/).filter(Boolean);
}
