/**
 * The JSON entities the client API answers with, as tests read them: Mastodon's documented shapes
 * (docs.joinmastodon.org/entities), written here from the contract rather than imported from
 * src/entities, so a serializer that drifts from the contract fails a test instead of changing it.
 * Viewer-only fields are optional: they are absent for anonymous readers.
 */

export type Visibility = "public" | "unlisted" | "private" | "direct";

export interface CustomEmoji {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
  category?: string;
}

export interface AccountField {
  name: string;
  value: string;
  verified_at: string | null;
}

export interface Account {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  locked: boolean;
  bot: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  group: boolean;
  created_at: string;
  note: string;
  url: string;
  uri: string;
  avatar: string;
  avatar_static: string;
  avatar_description: string;
  header: string;
  header_static: string;
  header_description: string;
  followers_count: number;
  following_count: number;
  statuses_count: number;
  last_status_at: string | null;
  hide_collections: boolean | null;
  noindex?: boolean;
  emojis: CustomEmoji[];
  roles?: Array<{ id: string; name: string; color: string }>;
  fields: AccountField[];
  suspended?: true;
  limited?: true;
  memorial?: true;
  /** Only in GET /api/v1/mutes: when the mute ends (null: never). */
  mute_expires_at?: string | null;
}

export interface CredentialAccount extends Account {
  source: {
    privacy: Visibility;
    sensitive: boolean;
    language: string;
    note: string;
    fields: AccountField[];
    follow_requests_count: number;
    hide_collections: boolean | null;
    discoverable: boolean | null;
    indexable: boolean;
  };
  role: { id: string; name: string; permissions: string; color: string; highlighted: boolean };
}

/** The viewer's relationship with an account (GET /api/v1/accounts/relationships, follow, block, mute…). */
export interface Relationship {
  id: string;
  following: boolean;
  showing_reblogs: boolean;
  notifying: boolean;
  languages?: string[] | null;
  followed_by: boolean;
  blocking: boolean;
  blocked_by: boolean;
  muting: boolean;
  muting_notifications: boolean;
  muting_expires_at?: string | null;
  requested: boolean;
  requested_by: boolean;
  domain_blocking: boolean;
  endorsed: boolean;
  note: string;
}

export interface MediaAttachment {
  id: string;
  type: "image" | "gifv" | "video" | "audio" | "unknown";
  url: string | null;
  preview_url: string | null;
  remote_url: string | null;
  preview_remote_url: string | null;
  text_url: string | null;
  meta: {
    original?: {
      width: number;
      height: number;
      size?: string;
      aspect?: number;
      frame_rate?: string;
      duration?: number;
      bitrate?: number;
    };
    small?: { width: number; height: number; size: string; aspect: number };
    focus?: { x: number; y: number };
    length?: string;
    duration?: number;
    fps?: number;
    audio_encode?: string;
    audio_bitrate?: string;
    audio_channels?: string;
  };
  description: string | null;
  blurhash: string | null;
}

export interface PollOption {
  title: string;
  /** null while the totals are hidden. */
  votes_count: number | null;
}

export interface Poll {
  id: string;
  expires_at: string | null;
  expired: boolean;
  multiple: boolean;
  votes_count: number;
  voters_count: number | null;
  voted?: boolean;
  own_votes?: number[];
  options: PollOption[];
  emojis: CustomEmoji[];
}

export interface Mention {
  id: string;
  username: string;
  url: string;
  acct: string;
}

export interface Tag {
  name: string;
  url: string;
}

export interface PreviewCard {
  url: string;
  title: string;
  description: string;
  language: string | null;
  type: "link" | "photo" | "video" | "rich";
  author_name: string;
  author_url: string;
  provider_name: string;
  provider_url: string;
  html: string;
  width: number;
  height: number;
  image: string | null;
  image_description: string;
  embed_url: string;
  blurhash: string | null;
  published_at: string | null;
}

export interface Status {
  id: string;
  created_at: string;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  sensitive: boolean;
  spoiler_text: string;
  visibility: Visibility;
  language: string | null;
  uri: string;
  url: string | null;
  replies_count: number;
  reblogs_count: number;
  favourites_count: number;
  edited_at: string | null;
  /** Absent only in the answer to DELETE, which carries `text` instead. */
  content: string;
  /** Only in the answer to DELETE (the source, for delete-and-redraft). */
  text?: string;
  reblog: Status | null;
  application: { name: string; website: string | null } | null;
  account: Account;
  media_attachments: MediaAttachment[];
  mentions: Mention[];
  tags: Tag[];
  emojis: CustomEmoji[];
  card: PreviewCard | null;
  poll: Poll | null;
  favourited?: boolean;
  reblogged?: boolean;
  muted?: boolean;
  bookmarked?: boolean;
  /** Only shown to the author. */
  pinned?: boolean;
  filtered?: unknown[];
}

export interface StatusEdit {
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  created_at: string;
  account: Account;
  poll: { options: Array<{ title: string }> } | null;
  media_attachments: MediaAttachment[];
  emojis: CustomEmoji[];
}

export interface StatusSource {
  id: string;
  text: string;
  spoiler_text: string;
}

export interface Context {
  ancestors: Status[];
  descendants: Status[];
}

export interface ScheduledStatusParams {
  text: string;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: Visibility | null;
  language: string | null;
  scheduled_at: null;
  poll: { options: string[]; expires_in: number; multiple: boolean; hide_totals: boolean } | null;
  idempotency: string | null;
  in_reply_to_id: string | null;
  /** An integer in Mastodon's JSON. */
  application_id: number | null;
  with_rate_limit: boolean;
}

export interface ScheduledStatus {
  id: string;
  scheduled_at: string;
  params: ScheduledStatusParams;
  media_attachments: MediaAttachment[];
}

/** The body of every error answer. */
export interface ApiError {
  error: string;
  error_description?: string;
}
