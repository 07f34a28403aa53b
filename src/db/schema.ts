import type { ColumnType, Insertable, Selectable, Updateable } from "kysely";

/**
 * Row types of every table. Both engines return the same JavaScript types (normalize.ts for
 * SQLite, type parsers in connect.ts for PostgreSQL):
 * - IDs (`id`, `*_id`) are decimal strings;
 * - timestamps are ISO 8601 strings with milliseconds and `Z`;
 * - flags are booleans; counters are numbers; JSON documents are stored as text.
 */

type Timestamp = string;
type Counter = ColumnType<number, number | undefined, number>;
type Flag = ColumnType<boolean, boolean | undefined, boolean>;

/** Column names that hold booleans; SQLite stores them as 0/1 and normalize.ts turns them back. */
export const BOOLEAN_COLUMNS = new Set([
  "locked",
  "bot",
  "discoverable",
  "indexable",
  "hide_collections",
  "memorial",
  "approved",
  "disabled",
  "highlighted",
  "superapp",
  "sensitive",
  "local",
  "visible_in_picker",
  "filtered",
  "show_reblogs",
  "notify",
  "silent",
  "multiple",
  "hide_totals",
  "hide_notifications",
  "exclusive",
  "dismissed",
  "whole_word",
  "forward",
  "reject_media",
  "reject_reports",
  "obfuscate",
  "standard",
  "all_day",
  "published",
  "overwrite",
  "trendable",
]);

export interface AccountsTable {
  id: string;
  username: string;
  /** null for local accounts. */
  domain: string | null;
  display_name: ColumnType<string, string | undefined, string>;
  /** Rendered HTML of the bio. */
  note: ColumnType<string, string | undefined, string>;
  /** Plain-text source of a local account's bio. */
  note_text: ColumnType<string, string | undefined, string>;
  /** JSON array of {name, value, verified_at}; values are plain text for local accounts, HTML for remote ones. */
  fields: ColumnType<string, string | undefined, string>;
  /** ActivityPub actor type: Person, Service, Application, Group, Organization. */
  actor_type: ColumnType<string, string | undefined, string>;
  locked: Flag;
  discoverable: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  indexable: Flag;
  hide_collections: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  memorial: Flag;
  avatar_file: string | null;
  avatar_remote_url: string | null;
  avatar_static_file: string | null;
  avatar_description: ColumnType<string, string | undefined, string>;
  header_file: string | null;
  header_remote_url: string | null;
  header_static_file: string | null;
  header_description: ColumnType<string, string | undefined, string>;
  /** ActivityPub actor id. */
  uri: string;
  /** Profile page. */
  url: string | null;
  inbox_url: string | null;
  shared_inbox_url: string | null;
  outbox_url: string | null;
  followers_url: string | null;
  following_url: string | null;
  featured_url: string | null;
  public_key: ColumnType<string, string | undefined, string>;
  /** Only local accounts hold a private key. */
  private_key: string | null;
  suspended_at: Timestamp | null;
  silenced_at: Timestamp | null;
  moved_to_account_id: string | null;
  /** Local accounts: JSON array of the actor ids of its other accounts (`alsoKnownAs`); see db/columns.ts. */
  also_known_as: string | null;
  /** Local accounts their owners deleted: suspended and emptied, the username kept taken. */
  deleted_at: Timestamp | null;
  /** Marked sensitive by a moderator: its media are shown behind a warning. */
  sensitized_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  followers_count: Counter;
  following_count: Counter;
  statuses_count: Counter;
  last_status_at: Timestamp | null;
  fetched_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: string;
  account_id: string;
  email: string;
  encrypted_password: string | null;
  /** null means the default role (everyone). */
  role_id: string | null;
  confirmed_at: Timestamp | null;
  confirmation_token: string | null;
  confirmation_sent_at: Timestamp | null;
  unconfirmed_email: string | null;
  approved: Flag;
  disabled: Flag;
  locale: string | null;
  created_by_application_id: string | null;
  sign_up_ip: string | null;
  /** Text of the sign-up request when registrations need approval. */
  reason: string | null;
  /** JSON object of user preferences (default privacy, sensitive, language, …). */
  settings: ColumnType<string, string | undefined, string>;
  current_sign_in_at: Timestamp | null;
  last_sign_in_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserRolesTable {
  id: string;
  name: string;
  color: ColumnType<string, string | undefined, string>;
  /** Bit set of permissions (see services/accounts/roles.ts). */
  permissions: Counter;
  /** Higher positions outrank lower ones. */
  position: Counter;
  highlighted: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OauthApplicationsTable {
  id: string;
  name: string;
  website: string | null;
  /** Registered redirect URIs joined by "\n". */
  redirect_uri: string;
  /** Space-separated registered scopes. */
  scopes: string;
  client_id: string;
  client_secret: string;
  superapp: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OauthAccessTokensTable {
  id: string;
  /** SHA-256 (hex) of the bearer token; the token itself is never stored. */
  token_digest: string;
  application_id: string | null;
  /** The user the token acts for; null for an app token (client_credentials). */
  user_id: string | null;
  scopes: string;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface OauthAccessGrantsTable {
  id: string;
  code_digest: string;
  application_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export interface InstanceSettingsTable {
  key: string;
  /** JSON value. */
  value: string;
  updated_at: Timestamp;
}

export interface StatusesTable {
  id: string;
  uri: string;
  url: string | null;
  account_id: string;
  /** Plain-text source (local statuses). */
  text: ColumnType<string, string | undefined, string>;
  /** Sanitized HTML. */
  content: ColumnType<string, string | undefined, string>;
  spoiler_text: ColumnType<string, string | undefined, string>;
  sensitive: Flag;
  visibility: "public" | "unlisted" | "private" | "direct";
  language: string | null;
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  reblog_of_id: string | null;
  conversation_id: string | null;
  application_id: string | null;
  local: Flag;
  replies_count: Counter;
  reblogs_count: Counter;
  favourites_count: Counter;
  /** JSON array of media attachment IDs in display order. */
  ordered_media_attachment_ids: string | null;
  poll_id: string | null;
  edited_at: Timestamp | null;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CustomEmojisTable {
  id: string;
  shortcode: string;
  /** null for local emoji. */
  domain: string | null;
  uri: string | null;
  image_file: string | null;
  image_remote_url: string | null;
  image_static_file: string | null;
  disabled: Flag;
  visible_in_picker: Flag;
  category: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface JobsTable {
  id: string;
  /** Name of the registered job handler. */
  name: string;
  /** JSON payload. */
  payload: string;
  run_at: Timestamp;
  attempts: Counter;
  max_attempts: Counter;
  /** Set while a worker holds the job; a job whose lock expired is claimed again. */
  locked_until: Timestamp | null;
  locked_by: string | null;
  last_error: string | null;
  /** Set when the job used up its attempts; it stays for inspection and is not run again. */
  failed_at: Timestamp | null;
  /** Jobs sharing a key exist once at a time (while not failed); recurring jobs use their name. */
  unique_key: string | null;
  /** Jobs sharing an ordering key run one at a time, in the order of their IDs. */
  ordering_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

/** A process running job workers; it refreshes `heartbeat_at` while it lives and removes its row when it stops. */
export interface JobWorkersTable {
  /** What the worker writes into `jobs.locked_by`. */
  id: string;
  /** os.hostname() of its process. */
  host: string;
  pid: number;
  /** The PID namespace of its process (Linux; null elsewhere): a PID means the same process only within one. */
  pid_namespace: string | null;
  /** The boot of its machine (Linux's boot ID; null elsewhere): with host and namespace, where its PID means something. */
  boot_id: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: Timestamp;
  /** By the database's clock, so hosts whose clocks differ judge it alike. */
  heartbeat_at: Timestamp;
}

export interface UserActivityDaysTable {
  user_id: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
}

export interface WebSessionsTable {
  id: string;
  /** SHA-256 (hex) of the session cookie's value. */
  session_digest: string;
  user_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface NotificationsTable {
  id: string;
  /** The receiver. */
  account_id: string;
  from_account_id: string;
  type: string;
  status_id: string | null;
  activity_type: string | null;
  activity_id: string | null;
  group_key: string | null;
  filtered: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An announcement of the server's staff. */
export interface AnnouncementsTable {
  id: string;
  text: string;
  content: string;
  mention_ids: ColumnType<string, string | undefined, string>;
  tag_names: ColumnType<string, string | undefined, string>;
  status_ids: ColumnType<string, string | undefined, string>;
  all_day: Flag;
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  published: Flag;
  scheduled_at: Timestamp | null;
  published_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AnnouncementReadsTable {
  id: string;
  account_id: string;
  announcement_id: string;
  created_at: Timestamp;
}

export interface AnnouncementReactionsTable {
  id: string;
  account_id: string;
  announcement_id: string;
  /** A Unicode emoji, or a local custom emoji's shortcode. */
  name: string;
  custom_emoji_id: string | null;
  created_at: Timestamp;
}

/** A key pair of the server itself (`vapid`). */
export interface ServerKeysTable {
  name: string;
  public_key: string;
  private_key: string;
  created_at: Timestamp;
}

/** A signal to streaming connections on another process (see src/realtime/signals.ts). */
export interface StreamSignalsTable {
  id: string;
  channel: string;
  message: string;
  origin: string;
}

/** The parameters of a scheduled status, as stored (JSON in `scheduled_statuses.params`). */
export interface ScheduledParams {
  text: string;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: string | null;
  language: string | null;
  scheduled_at: null;
  poll: { options: string[]; expires_in: number; multiple: boolean; hide_totals: boolean } | null;
  idempotency: string | null;
  in_reply_to_id: string | null;
  /** Stored as a decimal string; the API writes it as a JSON number with every digit. */
  application_id: string | null;
  with_rate_limit: boolean;
  /** Mastodon's mention safeguard, checked again when the post is published. */
  allowed_mentions?: string[];
}

/** The visibility of a status. */
export type Visibility = "public" | "unlisted" | "private" | "direct";

/** Per-user preferences kept in `users.settings` (JSON). */
export interface UserSettings {
  default_privacy: Visibility;
  default_sensitive: boolean;
  default_language: string | null;
  expand_media: "default" | "show_all" | "hide_all";
  expand_spoilers: boolean;
  autoplay_gifs: boolean;
}

/** Settings of the instance (the `settings` table), decoded. */
export interface InstanceRule {
  text: string;
  hint: string;
}

export type RegistrationsMode = "open" | "approved" | "none";

/** Instance settings an admin changes at run time (`rookery settings set KEY VALUE`), Mastodon's names. */
export interface InstanceSettings {
  site_title: string;
  site_short_description: string;
  site_extended_description: string;
  site_contact_email: string;
  site_contact_username: string;
  registrations_mode: RegistrationsMode;
  closed_registrations_message: string;
  require_invite_text: boolean;
  timeline_preview: boolean;
  peers_api_enabled: boolean;
  activity_api_enabled: boolean;
  rules: InstanceRule[];
  show_domain_blocks: DomainBlocksVisibility;
  show_domain_blocks_rationale: DomainBlocksVisibility;
  /** Whether tags, posts and links trend before a moderator approved them (Mastodon's setting). */
  trendable_by_default: boolean;
}

/** Who may read the list of blocked servers (and their public reasons): nobody, users, everyone. */
export type DomainBlocksVisibility = "disabled" | "users" | "all";

/** One entry of Fedify's key–value store (src/federation/kv.ts). */
export interface AccountKeysTable {
  account_id: string;
  ed25519_private_key: string;
  ed25519_public_key: string;
  created_at: Timestamp;
}

export interface FederationKvTable {
  /** The key's segments, percent-encoded, joined with `/`. */
  key: string;
  /** JSON. */
  value: string;
  expires_at: Timestamp | null;
}

export type PushPolicy = "all" | "followed" | "follower" | "none";

/** Where to push one access token's notifications. */
export interface WebPushSubscriptionsTable {
  id: string;
  access_token_id: string;
  user_id: string;
  endpoint: string;
  /** base64url P-256 public key of the subscriber. */
  key_p256dh: string;
  /** base64url 16-byte authentication secret. */
  key_auth: string;
  standard: Flag;
  /** JSON object: notification type → boolean. */
  alerts: string;
  policy: PushPolicy;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DomainBlockSeverity = "silence" | "suspend" | "noop";

/** The server's block of another server. */
export interface DomainBlocksTable {
  id: string;
  /** Lowercase, ASCII (punycode); covers its subdomains. */
  domain: string;
  severity: DomainBlockSeverity;
  reject_media: Flag;
  reject_reports: Flag;
  private_comment: string | null;
  public_comment: string | null;
  /** Shown partly starred in the public list. */
  obfuscate: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccountArchivesTable {
  id: string;
  user_id: string;
  account_id: string;
  state: "pending" | "done" | "failed";
  /** Where the ZIP is in media storage (under `archives/`, never served by /system). */
  file_key: string | null;
  /** Bytes (PostgreSQL's int8 arrives as a string). */
  file_size: number | string | null;
  error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface AdminActionLogsTable {
  id: string;
  /** The moderator's account. */
  account_id: string;
  action: string;
  target_type: string;
  target_id: string | null;
  human_identifier: string | null;
  detail: string | null;
  created_at: Timestamp;
}

/** A moderator's action on an account, as its owner sees it (Mastodon's AccountWarning, a strike). */
export interface AccountWarningsTable {
  id: string;
  /** The moderator; null once their account is gone. */
  account_id: string | null;
  target_account_id: string;
  /** none, disable, mark_statuses_as_sensitive, delete_statuses, sensitive, silence, suspend. */
  action: string;
  text: ColumnType<string, string | undefined, string>;
  report_id: string | null;
  /** JSON array of status IDs, or null. */
  status_ids: string | null;
  /** When an appeal was granted. */
  overruled_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A moderator's note on an account, for other staff only (Mastodon's AccountModerationNote). */
export interface AccountModerationNotesTable {
  id: string;
  /** The moderator who wrote it. */
  account_id: string;
  target_account_id: string;
  content: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A user's appeal of a strike (Mastodon's Appeal): one per warning, decided once by a moderator. */
export interface AppealsTable {
  id: string;
  /** The appealing account (the warning's target). */
  account_id: string;
  account_warning_id: string;
  text: ColumnType<string, string | undefined, string>;
  approved_at: Timestamp | null;
  approved_by_account_id: string | null;
  rejected_at: Timestamp | null;
  rejected_by_account_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A suspended account whose data goes once the request is old enough (Mastodon's AccountDeletionRequest). */
export interface AccountDeletionRequestsTable {
  account_id: string;
  created_at: Timestamp;
}

/** A text moderators reuse in warnings (Mastodon's AccountWarningPreset). */
export interface AccountWarningPresetsTable {
  id: string;
  title: ColumnType<string, string | undefined, string>;
  text: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DomainAllowsTable {
  id: string;
  /** Lowercase, ASCII (punycode), without a port; matched exactly. */
  domain: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ReportCategory = "spam" | "legal" | "violation" | "other";

/** A report of an account to the moderators. */
export interface ReportsTable {
  id: string;
  /** The reporter. */
  account_id: string;
  target_account_id: string;
  /** JSON array of status IDs, or null. */
  status_ids: string | null;
  /** JSON array of rule IDs, or null. */
  rule_ids: string | null;
  comment: ColumnType<string, string | undefined, string>;
  category: ColumnType<ReportCategory, ReportCategory | undefined, ReportCategory>;
  forward: Flag;
  /** JSON array of domains, or null. */
  forward_to_domains: string | null;
  action_taken_at: Timestamp | null;
  /** The moderator who resolved it (null while unresolved). */
  action_taken_by_account_id: string | null;
  /** The moderator handling the report, if one took it. */
  assigned_account_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A moderator's note on a report, for other staff only (Mastodon's ReportNote). */
export interface ReportNotesTable {
  id: string;
  report_id: string;
  /** The moderator who wrote it. */
  account_id: string;
  content: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Where a filter applies; `home` covers lists. */
export type FilterContext = "home" | "notifications" | "public" | "thread" | "account";
/** What a matching filter does: hide the status, or show it behind a warning (or blurred). */
export type FilterAction = "warn" | "hide" | "blur";

export interface CustomFiltersTable {
  id: string;
  account_id: string;
  title: string;
  /** JSON array of FilterContext. */
  context: string;
  action: FilterAction;
  /** Kept after this time, but no longer applied. */
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CustomFilterKeywordsTable {
  id: string;
  custom_filter_id: string;
  keyword: string;
  whole_word: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CustomFilterStatusesTable {
  id: string;
  custom_filter_id: string;
  status_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** What the notification policy does with one kind of sender. */
export type PolicyAction = "accept" | "filter" | "drop";

/** A receiver's notification policy; absent: the defaults. */
export interface NotificationPoliciesTable {
  id: string;
  account_id: string;
  for_not_following: PolicyAction;
  for_not_followers: PolicyAction;
  for_new_accounts: PolicyAction;
  for_private_mentions: PolicyAction;
  for_limited_accounts: PolicyAction;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A sender whose notifications the receiver accepted (an accepted request): never filtered. */
export interface NotificationPermissionsTable {
  id: string;
  account_id: string;
  from_account_id: string;
  created_at: Timestamp;
}

/** The filtered mentions of one sender, waiting for the receiver to accept or dismiss them. */
export interface NotificationRequestsTable {
  id: string;
  account_id: string;
  from_account_id: string;
  last_status_id: string | null;
  dismissed: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EmailDomainBlocksTable {
  id: string;
  domain: string;
  /** The block this one was made for (a mail server of its domain); removed with it. */
  parent_id: string | null;
  created_at: Timestamp;
}

/** A sign-up refused by an e-mail domain block (its history). */
export interface EmailDomainBlockAttemptsTable {
  id: string;
  email_domain_block_id: string;
  ip: string | null;
  created_at: Timestamp;
}

export type IpBlockSeverity = "sign_up_requires_approval" | "sign_up_block" | "no_access";

/** A network whose sign-ups need approval or are refused, or that may not reach the server at all. */
export interface IpBlocksTable {
  id: string;
  /** CIDR with the host bits cleared: `192.0.2.0/24`, `203.0.113.7/32`, `2001:db8::/32`. */
  ip: string;
  severity: IpBlockSeverity;
  comment: string;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A blocked e-mail address, kept as the SHA-256 of its canonical form. */
export interface CanonicalEmailBlocksTable {
  id: string;
  canonical_email_hash: string;
  reference_account_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FollowsTable {
  id: string;
  account_id: string;
  target_account_id: string;
  show_reblogs: Flag;
  notify: Flag;
  /** JSON array of ISO 639-1 codes, or null for all languages. */
  languages: string | null;
  uri: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BlocksTable {
  id: string;
  account_id: string;
  target_account_id: string;
  uri: string | null;
  created_at: Timestamp;
}

export interface MutesTable {
  id: string;
  account_id: string;
  target_account_id: string;
  /** Notifications from the muted account are hidden too. */
  hide_notifications: Flag;
  /** The mute ends by itself at this time (null: never). */
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A follow waiting for a locked account's approval (same settings as the follow it becomes). */
export interface FollowRequestsTable {
  id: string;
  account_id: string;
  target_account_id: string;
  show_reblogs: Flag;
  notify: Flag;
  languages: string | null;
  uri: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** account_pins (endorsements) and follow_recommendation_suppressions. */
export interface AccountPairTable {
  id: string;
  account_id: string;
  target_account_id: string;
  created_at: Timestamp;
}

export interface AccountNotesTable {
  id: string;
  account_id: string;
  target_account_id: string;
  comment: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A user's own block of a whole domain. */
export interface AccountDomainBlocksTable {
  id: string;
  account_id: string;
  domain: string;
  created_at: Timestamp;
}

export interface ListsTable {
  id: string;
  account_id: string;
  title: string;
  /** `followed`, `list` or `none`. */
  replies_policy: ColumnType<string, string | undefined, string>;
  /** Members' posts stay out of the home timeline. */
  exclusive: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ListAccountsTable {
  id: string;
  list_id: string;
  account_id: string;
  created_at: Timestamp;
}

/** A home feed's statuses (services/timelines/feeds.ts). */
export interface HomeFeedEntriesTable {
  account_id: string;
  status_id: string;
  /** The boosted status for a boost, else the status itself. */
  group_id: string;
}

/** A list feed's statuses. */
export interface ListFeedEntriesTable {
  list_id: string;
  status_id: string;
  group_id: string;
}

/** A direct-message thread as one participant sees it. */
export interface AccountConversationsTable {
  id: string;
  account_id: string;
  conversation_id: string;
  /** JSON array of the other participants' account IDs (strings), sorted. */
  participant_account_ids: string;
  /** JSON array of the thread's status IDs (strings) this account has, oldest first. */
  status_ids: string;
  last_status_id: string;
  unread: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A user's reading position in a timeline. */
export interface MarkersTable {
  id: string;
  user_id: string;
  timeline: "home" | "notifications";
  last_read_id: string;
  /** Advances by one on every update; an update names the version it read (optimistic lock). */
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One place of a ranking computed by the trends job. */
export interface TrendsTable {
  kind: "tags" | "statuses" | "links" | "accounts";
  position: number;
  item_id: string;
  score: number;
  computed_at: Timestamp;
}

/** A moderator's review of a trending tag, status or link (Mastodon's `trendable`, `reviewed_at`). */
export interface TrendReviewsTable {
  kind: "tags" | "statuses" | "links";
  item_id: string;
  /** Approved (true) or rejected (false). */
  trendable: boolean;
  reviewed_at: Timestamp;
}

/** A publisher of links (Mastodon's PreviewCardProvider): its review covers its links. */
export interface PreviewCardProvidersTable {
  id: string;
  domain: string;
  trendable: boolean | null;
  reviewed_at: Timestamp | null;
  requested_review_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** tag_follows and featured_tags. */
export interface AccountTagTable {
  id: string;
  account_id: string;
  tag_id: string;
  created_at: Timestamp;
}

export interface MentionsTable {
  id: string;
  status_id: string;
  account_id: string;
  silent: Flag;
  created_at: Timestamp;
}

export interface TagsTable {
  id: string;
  /** As first typed; unique case-insensitively. */
  name: string;
  display_name: string | null;
  last_status_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface StatusesTagsTable {
  status_id: string;
  tag_id: string;
}

/** favourites, bookmarks, status_pins. */
export interface AccountStatusTable {
  id: string;
  account_id: string;
  status_id: string;
  created_at: Timestamp;
}

/** A thread as other servers name it (`conversation` / `context`); threads begun here have none. */
export interface ConversationsTable {
  /** The `conversation_id` of its statuses. */
  id: string;
  uri: string;
  created_at: Timestamp;
}

export interface ConversationMutesTable {
  id: string;
  account_id: string;
  conversation_id: string;
}

export interface StatusEditsTable {
  id: string;
  status_id: string;
  account_id: string;
  text: string;
  content: string;
  spoiler_text: string;
  sensitive: boolean;
  language: string | null;
  ordered_media_attachment_ids: string | null;
  /** JSON array of descriptions, parallel to ordered_media_attachment_ids. */
  media_descriptions: string | null;
  /** JSON array of option titles, or null without a poll. */
  poll_options: string | null;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  status_id: string | null;
  scheduled_status_id: string | null;
  created_at: Timestamp;
}

export type MediaType = "image" | "gifv" | "video" | "audio" | "unknown";
export type MediaProcessing = "queued" | "in_progress" | "complete" | "failed";

export interface MediaAttachmentsTable {
  id: string;
  account_id: string;
  status_id: string | null;
  scheduled_status_id: string | null;
  type: MediaType;
  file: string | null;
  file_content_type: string | null;
  file_size: number | null;
  preview_file: string | null;
  thumbnail_file: string | null;
  remote_url: string | null;
  description: string | null;
  focus_x: number | null;
  focus_y: number | null;
  blurhash: string | null;
  /** JSON: {original: {width, height, size, aspect}, small: {…}}. */
  meta: ColumnType<string, string | undefined, string>;
  processing: ColumnType<MediaProcessing, MediaProcessing | undefined, MediaProcessing>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PollsTable {
  id: string;
  account_id: string;
  status_id: string | null;
  expires_at: Timestamp | null;
  /** JSON array of option titles. */
  options: string;
  /** JSON array of vote counts per option. */
  cached_tallies: string;
  multiple: Flag;
  hide_totals: Flag;
  votes_count: Counter;
  voters_count: number | null;
  /** Set by the job that ends the poll (notifications go out once). */
  closed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PollVotesTable {
  id: string;
  poll_id: string;
  account_id: string;
  choice: number;
  created_at: Timestamp;
}

export interface ScheduledStatusesTable {
  id: string;
  account_id: string;
  scheduled_at: Timestamp;
  /** JSON of the creation parameters. */
  params: string;
  created_at: Timestamp;
}

export interface PreviewCardsTable {
  id: string;
  url: string;
  title: ColumnType<string, string | undefined, string>;
  description: ColumnType<string, string | undefined, string>;
  type: ColumnType<string, string | undefined, string>;
  author_name: ColumnType<string, string | undefined, string>;
  author_url: ColumnType<string, string | undefined, string>;
  provider_name: ColumnType<string, string | undefined, string>;
  provider_url: ColumnType<string, string | undefined, string>;
  html: ColumnType<string, string | undefined, string>;
  width: Counter;
  height: Counter;
  image_file: string | null;
  image_description: ColumnType<string, string | undefined, string>;
  embed_url: ColumnType<string, string | undefined, string>;
  blurhash: string | null;
  language: string | null;
  published_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A translation kept for reuse: one per status and target language, for one version of the status. */
export interface StatusTranslationsTable {
  id: string;
  status_id: string;
  language: string;
  provider: string;
  /** The status's edited_at (or created_at) when translated; another version is translated afresh. */
  version: string;
  /** The Translation entity as JSON. */
  translation: string;
  created_at: Timestamp;
}

export interface PreviewCardsStatusesTable {
  status_id: string;
  preview_card_id: string;
  url: string | null;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  user_roles: UserRolesTable;
  oauth_applications: OauthApplicationsTable;
  oauth_access_tokens: OauthAccessTokensTable;
  oauth_access_grants: OauthAccessGrantsTable;
  instance_settings: InstanceSettingsTable;
  statuses: StatusesTable;
  custom_emojis: CustomEmojisTable;
  jobs: JobsTable;
  job_workers: JobWorkersTable;
  user_activity_days: UserActivityDaysTable;
  web_sessions: WebSessionsTable;
  notifications: NotificationsTable;
  email_domain_blocks: EmailDomainBlocksTable;
  email_domain_block_attempts: EmailDomainBlockAttemptsTable;
  ip_blocks: IpBlocksTable;
  canonical_email_blocks: CanonicalEmailBlocksTable;
  follows: FollowsTable;
  blocks: BlocksTable;
  mutes: MutesTable;
  follow_requests: FollowRequestsTable;
  account_pins: AccountPairTable;
  account_notes: AccountNotesTable;
  account_domain_blocks: AccountDomainBlocksTable;
  follow_recommendation_suppressions: AccountPairTable;
  lists: ListsTable;
  list_accounts: ListAccountsTable;
  tag_follows: AccountTagTable;
  featured_tags: AccountTagTable;
  mentions: MentionsTable;
  tags: TagsTable;
  statuses_tags: StatusesTagsTable;
  favourites: AccountStatusTable;
  bookmarks: AccountStatusTable;
  status_pins: AccountStatusTable;
  conversations: ConversationsTable;
  conversation_mutes: ConversationMutesTable;
  status_edits: StatusEditsTable;
  idempotency_keys: IdempotencyKeysTable;
  media_attachments: MediaAttachmentsTable;
  polls: PollsTable;
  poll_votes: PollVotesTable;
  scheduled_statuses: ScheduledStatusesTable;
  preview_cards: PreviewCardsTable;
  preview_cards_statuses: PreviewCardsStatusesTable;
  status_translations: StatusTranslationsTable;
  home_feed_entries: HomeFeedEntriesTable;
  list_feed_entries: ListFeedEntriesTable;
  account_conversations: AccountConversationsTable;
  markers: MarkersTable;
  trends: TrendsTable;
  trend_reviews: TrendReviewsTable;
  preview_card_providers: PreviewCardProvidersTable;
  notification_policies: NotificationPoliciesTable;
  notification_permissions: NotificationPermissionsTable;
  notification_requests: NotificationRequestsTable;
  custom_filters: CustomFiltersTable;
  custom_filter_keywords: CustomFilterKeywordsTable;
  custom_filter_statuses: CustomFilterStatusesTable;
  reports: ReportsTable;
  report_notes: ReportNotesTable;
  domain_blocks: DomainBlocksTable;
  domain_allows: DomainAllowsTable;
  account_archives: AccountArchivesTable;
  admin_action_logs: AdminActionLogsTable;
  account_warnings: AccountWarningsTable;
  account_warning_presets: AccountWarningPresetsTable;
  appeals: AppealsTable;
  account_deletion_requests: AccountDeletionRequestsTable;
  account_moderation_notes: AccountModerationNotesTable;
  server_keys: ServerKeysTable;
  stream_signals: StreamSignalsTable;
  federation_kv: FederationKvTable;
  account_keys: AccountKeysTable;
  web_push_subscriptions: WebPushSubscriptionsTable;
  announcements: AnnouncementsTable;
  announcement_reads: AnnouncementReadsTable;
  announcement_reactions: AnnouncementReactionsTable;
  bulk_imports: BulkImportsTable;
  bulk_import_rows: BulkImportRowsTable;
}

/** A CSV import of a user's (Mastodon's BulkImport); services/portability/. */
export interface BulkImportsTable {
  id: string;
  account_id: string;
  /** `following`, `blocking`, `muting`, `domain_blocking`, `bookmarks` or `lists` (Mastodon's names). */
  type: string;
  /** Whatever the file does not list is removed first. */
  overwrite: Flag;
  /** `scheduled` (overwrite not yet done), `in_progress` or `finished`. */
  state: string;
  original_filename: ColumnType<string, string | undefined, string>;
  total_items: Counter;
  processed_items: Counter;
  imported_items: Counter;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

/** A row of an import still to apply, or one that failed (applied rows are deleted). */
export interface BulkImportRowsTable {
  id: string;
  bulk_import_id: string;
  /** The line of the file the row starts on. */
  line: number;
  /** JSON object with Mastodon's keys: acct, show_reblogs, notify, languages, hide_notifications, domain, uri, list_name. */
  data: string;
  /** Why the row could not be imported; null while it waits. */
  failure: string | null;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;
export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserRoleRow = Selectable<UserRolesTable>;
export type ApplicationRow = Selectable<OauthApplicationsTable>;
export type AccessTokenRow = Selectable<OauthAccessTokensTable>;
export type StatusRow = Selectable<StatusesTable>;
export type CustomEmojiRow = Selectable<CustomEmojisTable>;
export type JobRow = Selectable<JobsTable>;
export type JobWorkerRow = Selectable<JobWorkersTable>;
export type MediaAttachmentRow = Selectable<MediaAttachmentsTable>;
export type PollRow = Selectable<PollsTable>;
export type ScheduledStatusRow = Selectable<ScheduledStatusesTable>;
export type PreviewCardRow = Selectable<PreviewCardsTable>;
export type TagRow = Selectable<TagsTable>;
export type TrendReviewRow = Selectable<TrendReviewsTable>;
export type PreviewCardProviderRow = Selectable<PreviewCardProvidersTable>;
export type StatusEditRow = Selectable<StatusEditsTable>;
export type WebSessionRow = Selectable<WebSessionsTable>;
export type NotificationRow = Selectable<NotificationsTable>;
export type FollowRow = Selectable<FollowsTable>;
export type FollowRequestRow = Selectable<FollowRequestsTable>;
export type MuteRow = Selectable<MutesTable>;
export type ListRow = Selectable<ListsTable>;
export type AccountConversationRow = Selectable<AccountConversationsTable>;
export type MarkerRow = Selectable<MarkersTable>;
export type NotificationPolicyRow = Selectable<NotificationPoliciesTable>;
export type NotificationRequestRow = Selectable<NotificationRequestsTable>;
export type CustomFilterRow = Selectable<CustomFiltersTable>;
export type ReportRow = Selectable<ReportsTable>;
export type ReportNoteRow = Selectable<ReportNotesTable>;
export type DomainBlockRow = Selectable<DomainBlocksTable>;
export type DomainAllowRow = Selectable<DomainAllowsTable>;
export type AccountArchiveRow = Selectable<AccountArchivesTable>;
export type AdminActionLogRow = Selectable<AdminActionLogsTable>;
export type AccountWarningRow = Selectable<AccountWarningsTable>;
export type AccountWarningPresetRow = Selectable<AccountWarningPresetsTable>;
export type AppealRow = Selectable<AppealsTable>;
export type AccountModerationNoteRow = Selectable<AccountModerationNotesTable>;
export type EmailDomainBlockRow = Selectable<EmailDomainBlocksTable>;
export type IpBlockRow = Selectable<IpBlocksTable>;
export type CanonicalEmailBlockRow = Selectable<CanonicalEmailBlocksTable>;
export type WebPushSubscriptionRow = Selectable<WebPushSubscriptionsTable>;
export type AnnouncementRow = Selectable<AnnouncementsTable>;
export type CustomFilterKeywordRow = Selectable<CustomFilterKeywordsTable>;
export type CustomFilterStatusRow = Selectable<CustomFilterStatusesTable>;
