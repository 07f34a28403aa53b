/**
 * Domain events: what happened, in the words of the area it happened in. A service emits one in the
 * transaction that makes the change (`ctx.dispatcher.emit(tx, …)`), and the subscriber table
 * (src/subscribers.ts) decides who reacts — fan-out, notifications, streaming, Web Push, and with
 * federation, delivery. A producer never imports its consumers: adding a reaction adds a subscriber.
 *
 * Payloads carry IDs and the few facts a reaction cannot read later (where a deleted status was
 * shown). They are stored as JSON in job rows, so they hold only strings, numbers, booleans and arrays.
 */

/** Where a status was shown, read before it was deleted (its feed entries go with it). */
export interface ShownStatus {
  statusId: string;
  authorId: string;
  /** Whether the author is local (`domain` null). */
  local: boolean;
  visibility: "public" | "unlisted" | "private" | "direct";
  /** On the public timelines: a public original by an unsilenced author that replies to nobody else. */
  onPublicTimelines: boolean;
  hasMedia: boolean;
  /** Lower-case names of its hashtags (public originals only). */
  tags: string[];
  /** Local accounts whose home feed held it, and local accounts it mentioned. */
  homeAccountIds: string[];
  listIds: string[];
}

/** What other servers must hear of a deleted status of a local author (read before it went). */
export interface DeletedStatus {
  uri: string;
  authorId: string;
  visibility: "public" | "unlisted" | "private" | "direct";
  /** Remote accounts it reached besides the author's followers: the mentioned, a boosted post's author. */
  remoteAudienceIds: string[];
  /** For a boost: the boosted status's uri (the deletion is an Undo of the Announce). */
  reblogOfUri: string | null;
}

/** Every event, by type, with its payload. */
export interface EventPayloads {
  /** A status or a boost was published here (posting, boosting, a scheduled post coming due). */
  "status.created": {
    statusId: string;
    /** Whether it was published here (absent in jobs queued before it was recorded: taken as true). */
    local?: boolean;
    /**
     * Whether anyone here may be notified of it: false only when its writer knows that nobody can
     * (another server's post mentioning nobody here, whose author nobody here asked to be notified
     * of; a boost of another server's post). Absent: taken as true.
     */
    notifies?: boolean;
  };
  /** A status was edited; `addedMentionIds` are the accounts the new version mentions first. */
  "status.updated": { statusId: string; addedMentionIds: string[] };
  /** A status and the boosts of it were deleted. */
  "status.deleted": { statuses: ShownStatus[]; federated?: DeletedStatus | null };
  /** A local account pinned or unpinned one of its posts (its featured collection changed). */
  "status.pinned": { accountId: string; statusId: string };
  "status.unpinned": { accountId: string; statusId: string };
  "favourite.created": { favouriteId: string; accountId: string; statusId: string };
  "favourite.removed": { favouriteId: string; accountId: string; statusId: string };
  /** `accountId` follows `targetAccountId` now (followed at once, or a request accepted). */
  "follow.created": { followId: string; accountId: string; targetAccountId: string };
  "follow_request.created": { requestId: string; accountId: string; targetAccountId: string };
  /**
   * A follow of `accountId` → `targetAccountId` ended (unfollowed, removed from followers, a block);
   * `uri` is the Follow activity's id when the follow came over federation.
   */
  "follow.removed": { accountId: string; targetAccountId: string; uri: string | null };
  /** `accountId` blocks `targetAccountId` now. */
  "block.created": { blockId: string; accountId: string; targetAccountId: string };
  "block.removed": { blockId: string; accountId: string; targetAccountId: string };
  /** A follow request ended without becoming a follow: its maker withdrew it, or its target declined it. */
  "follow_request.ended": {
    accountId: string;
    targetAccountId: string;
    uri: string | null;
    outcome: "withdrawn" | "rejected";
  };
  /** `accountId` voted in a poll (`choices`: the option indexes this vote added). */
  "poll.voted": { pollId: string; accountId: string; choices: number[] };
  /** A poll closed (its author and voters hear of it once). */
  "poll.ended": { pollId: string };
  /** A local account's profile changed (its name, bio, fields, pictures, flags, or a suspension): other servers refresh it. */
  "account.updated": { accountId: string };
  /** An account moved to `targetId` (Move); `local`: the account that moved is this server's. */
  "account.moved": { accountId: string; targetId: string; local: boolean };
  /** A local user deleted their account: every server that knows it hears of it. */
  "account.deleted": { accountId: string };
  /** A local user signed up through the API. */
  "account.registered": { accountId: string };
  "report.created": { reportId: string };
  /** A moderator warned a local user (a strike they are told of: in-app as well as by e-mail). */
  "account_warning.created": { warningId: string; targetAccountId: string };
  /** Accounts joined a list: their recent posts join its feed. */
  "list.members_added": { listId: string; accountIds: string[] };
  /** A notification was stored unfiltered (filtered ones wait for their request to be accepted). */
  "notification.created": { notificationId: string; receiverId: string };
  /** Filtered notifications of `accountId` joined the main list (a request accepted). */
  "notifications.merged": { accountId: string };
  "filters.changed": { accountId: string };
  /** What these accounts block or mute changed: what their streams hide must be read again. */
  "relations.changed": { accountIds: string[] };
  /** These accounts' access ended or changed (disabled, suspended, new password, new role): their streams end. */
  "access.changed": { accountIds: string[] };
  "tokens.revoked": { tokenIds: string[] };
  "announcement.published": { announcementId: string };
  "announcement.deleted": { announcementId: string };
  "announcement.reacted": { announcementId: string; name: string };
}

export type EventType = keyof EventPayloads;

/** One event: its `type` and its payload's fields. */
export type DomainEvent<T extends EventType = EventType> = {
  [K in T]: { readonly type: K } & Readonly<EventPayloads[K]>;
}[T];
