import type { UserRow } from "../../db/schema.ts";

export type Visibility = "public" | "unlisted" | "private" | "direct";

/** Per-user preferences kept in `users.settings`. */
export interface UserSettings {
  default_privacy: Visibility;
  default_sensitive: boolean;
  default_language: string | null;
  expand_media: "default" | "show_all" | "hide_all";
  expand_spoilers: boolean;
  autoplay_gifs: boolean;
}

const DEFAULTS: UserSettings = {
  default_privacy: "public",
  default_sensitive: false,
  default_language: null,
  expand_media: "default",
  expand_spoilers: false,
  autoplay_gifs: false,
};

export function userSettings(user: Pick<UserRow, "settings">): UserSettings {
  try {
    const stored: unknown = JSON.parse(user.settings);
    return { ...DEFAULTS, ...(stored && typeof stored === "object" ? (stored as Partial<UserSettings>) : {}) };
  } catch {
    return { ...DEFAULTS };
  }
}
