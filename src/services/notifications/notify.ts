/**
 * Creating one notification, Mastodon's NotifyService: the drop rules first (a receiver who is
 * gone, notifying yourself, blocks, mutes that hide notifications, blocked domains, muted
 * conversations, mentions in posts that involve someone the receiver blocks or mutes), then the
 * receiver's notification policy (accept, filter into a request, or drop), then the group the
 * grouped API shows it in. Repeats of one activity are ignored by the unique index.
 */
import { sql, type Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, Database, NotificationRow, PolicyAction } from "../../db/schema.ts";
import { hasPermission } from "../accounts/roles.ts";
import { defaultPolicy, type PolicySettings } from "./policy.ts";
import { FILTERABLE_TYPES, GROUPABLE_TYPES, type NotificationEvent } from "./types.ts";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** A group keeps its hour bucket while new events come within this many hours of its start. */
const MAXIMUM_GROUP_SPAN_HOURS = 12;
/** How far up a thread a private mention looks for the receiver's own private mention of the sender. */
const RESPONSE_ANCESTORS = 100;

const truthy = (value: unknown) => value === true || Number(value) === 1;

/** What the rules need to know about the receiver, the sender and the status between them. */
interface Facts {
  blocking: boolean;
  mutingNotifications: boolean;
  domainBlocking: boolean;
  following: boolean;
  /** When the sender started following the receiver (null: not a follower). */
  followedSince: string | null;
  permitted: boolean;
  conversationMuted: boolean;
}

async function factsOf(
  db: Kysely<Database>,
  receiverId: string,
  sender: AccountRow,
  conversationId: string | null,
  now: Date,
): Promise<Facts> {
  const r = receiverId;
  const s = sender.id;
  const { rows } = await sql<Record<keyof Facts, unknown>>`SELECT
    EXISTS (SELECT 1 FROM blocks WHERE account_id = ${r} AND target_account_id = ${s}) AS blocking,
    EXISTS (SELECT 1 FROM mutes WHERE account_id = ${r} AND target_account_id = ${s} AND hide_notifications = ${true}
      AND (expires_at IS NULL OR expires_at > ${now.toISOString()})) AS "mutingNotifications",
    EXISTS (SELECT 1 FROM account_domain_blocks WHERE account_id = ${r} AND domain = ${sender.domain ?? ""}) AS "domainBlocking",
    EXISTS (SELECT 1 FROM follows WHERE account_id = ${r} AND target_account_id = ${s}) AS following,
    (SELECT created_at FROM follows WHERE account_id = ${s} AND target_account_id = ${r}) AS "followedSince",
    EXISTS (SELECT 1 FROM notification_permissions WHERE account_id = ${r} AND from_account_id = ${s}) AS permitted,
    EXISTS (SELECT 1 FROM conversation_mutes WHERE account_id = ${r} AND conversation_id = ${conversationId ?? "0"}) AS "conversationMuted"`.execute(
    db,
  );
  const row = rows[0]!;
  return {
    blocking: truthy(row.blocking),
    mutingNotifications: truthy(row.mutingNotifications),
    domainBlocking: sender.domain !== null && truthy(row.domainBlocking),
    following: truthy(row.following),
    followedSince: (row.followedSince as string | null) ?? null,
    permitted: truthy(row.permitted),
    conversationMuted: conversationId !== null && truthy(row.conversationMuted),
  };
}

/** A local sender whose role moderates: their mentions reach everyone who has not gone. */
async function isStaff(db: Kysely<Database>, sender: AccountRow): Promise<boolean> {
  if (sender.domain !== null) return false;
  const role = await db
    .selectFrom("users")
    .innerJoin("user_roles", "user_roles.id", "users.role_id")
    .select("user_roles.permissions")
    .where("users.account_id", "=", sender.id)
    .executeTakeFirst();
  return role !== undefined && (hasPermission(role, "manage_reports") || hasPermission(role, "manage_users"));
}

/**
 * A mention in a post that also mentions, or replies to, someone the receiver blocks or mutes
 * (Mastodon's FeedManager mention filter).
 */
async function involvesHidden(db: Kysely<Database>, receiverId: string, statusId: string, now: Date): Promise<boolean> {
  const unexpired = sql`(expires_at IS NULL OR expires_at > ${now.toISOString()})`;
  const { rows } = await sql<{ hidden: unknown }>`SELECT EXISTS (
      SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.in_reply_to_account_id IS NOT NULL
        AND s.in_reply_to_account_id <> ${receiverId} AND (
          EXISTS (SELECT 1 FROM blocks WHERE account_id = ${receiverId} AND target_account_id = s.in_reply_to_account_id)
          OR EXISTS (SELECT 1 FROM mutes WHERE account_id = ${receiverId} AND target_account_id = s.in_reply_to_account_id
            AND ${unexpired}))
    ) OR EXISTS (
      SELECT 1 FROM mentions m WHERE m.status_id = ${statusId} AND m.account_id <> ${receiverId} AND (
        EXISTS (SELECT 1 FROM blocks WHERE account_id = ${receiverId} AND target_account_id = m.account_id)
        OR EXISTS (SELECT 1 FROM mutes WHERE account_id = ${receiverId} AND target_account_id = m.account_id
          AND ${unexpired}))
    ) AS hidden`.execute(db);
  return truthy(rows[0]?.hidden);
}

/**
 * Whether a private mention answers the receiver: one of the status's ancestors (up to 100) is a
 * direct post of the receiver that mentions the sender.
 */
async function answersReceiver(
  db: Kysely<Database>,
  receiverId: string,
  senderId: string,
  inReplyToId: string | null,
): Promise<boolean> {
  let next = inReplyToId;
  for (let depth = 0; next && depth < RESPONSE_ANCESTORS; depth++) {
    const parent = await db
      .selectFrom("statuses")
      .select(["id", "account_id", "visibility", "in_reply_to_id"])
      .where("id", "=", next)
      .executeTakeFirst();
    if (!parent) return false;
    if (parent.account_id === receiverId && parent.visibility === "direct") {
      const mentioned = await db
        .selectFrom("mentions")
        .select("id")
        .where("status_id", "=", parent.id)
        .where("account_id", "=", senderId)
        .executeTakeFirst();
      if (mentioned) return true;
    }
    next = parent.in_reply_to_id;
  }
  return false;
}

type StatusFacts = { id: string; conversation_id: string | null; visibility: string; in_reply_to_id: string | null };

/** What the policy does with this notification: the strictest action among the criteria it meets. */
async function policyAction(
  db: Kysely<Database>,
  event: NotificationEvent,
  sender: AccountRow,
  status: StatusFacts | undefined,
  facts: Facts,
  now: Date,
): Promise<PolicyAction> {
  if (!FILTERABLE_TYPES.has(event.type) || facts.permitted) return "accept";
  const stored = await db
    .selectFrom("notification_policies")
    .selectAll()
    .where("account_id", "=", event.receiverId)
    .executeTakeFirst();
  const policy: PolicySettings = stored ?? defaultPolicy();
  const notFollowing = !facts.following;
  const notFollower = facts.followedSince === null || now.getTime() - Date.parse(facts.followedSince) < 3 * DAY;
  const newAccount = now.getTime() - Date.parse(sender.created_at) < 30 * DAY;
  const applies: PolicyAction[] = [];
  if (notFollowing) applies.push(policy.for_not_following);
  if (notFollower) applies.push(policy.for_not_followers);
  if (newAccount && notFollowing) applies.push(policy.for_new_accounts);
  if (sender.silenced_at && notFollowing) applies.push(policy.for_limited_accounts);
  if (
    event.type === "mention" &&
    notFollowing &&
    status?.visibility === "direct" &&
    !(await answersReceiver(db, event.receiverId, sender.id, status.in_reply_to_id))
  )
    applies.push(policy.for_private_mentions);
  if (applies.includes("drop")) return "drop";
  return applies.includes("filter") ? "filter" : "accept";
}

/**
 * The group of a groupable notification: `<type>[-<status>]-<hour bucket>`, reusing the newest
 * bucket of the same prefix while it started less than 12 hours before this one.
 */
async function groupKeyFor(db: Kysely<Database>, event: NotificationEvent, at: Date): Promise<string | null> {
  if (!GROUPABLE_TYPES.includes(event.type)) return null;
  const prefix = event.type === "favourite" || event.type === "reblog" ? `${event.type}-${event.statusId}` : event.type;
  const bucket = Math.floor(at.getTime() / HOUR);
  const candidates = Array.from({ length: MAXIMUM_GROUP_SPAN_HOURS }, (_, i) => `${prefix}-${bucket - i}`);
  const previous = await db
    .selectFrom("notifications")
    .select("group_key")
    .where("account_id", "=", event.receiverId)
    .where("group_key", "in", candidates)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return previous?.group_key ?? `${prefix}-${bucket}`;
}

/**
 * Creates the notification `event` describes, unless a drop rule or the policy discards it.
 * Filtered mentions also open (or update) the sender's notification request. Returns the stored
 * row, or undefined when nothing was stored (dropped, or a repeat).
 */
export async function notify(ctx: Ctx, event: NotificationEvent): Promise<NotificationRow | undefined> {
  const db = ctx.db.kysely;
  const now = new Date();
  const receiver = await db
    .selectFrom("accounts")
    .innerJoin("users", "users.account_id", "accounts.id")
    .select(["accounts.id", "accounts.suspended_at"])
    .where("accounts.id", "=", event.receiverId)
    .where("accounts.domain", "is", null)
    .executeTakeFirst();
  if (!receiver || receiver.suspended_at) return undefined;
  // A strike has no sender: its notification comes "from" its receiver, as in Mastodon.
  if (event.fromId === event.receiverId && event.type !== "poll" && event.type !== "moderation_warning")
    return undefined;
  const sender = await db.selectFrom("accounts").selectAll().where("id", "=", event.fromId).executeTakeFirst();
  if (!sender || sender.suspended_at) return undefined;
  const status = event.statusId
    ? await db
        .selectFrom("statuses")
        .select(["id", "conversation_id", "visibility", "in_reply_to_id"])
        .where("id", "=", event.statusId)
        .executeTakeFirst()
    : undefined;
  if (event.statusId && !status) return undefined;

  const facts = await factsOf(db, receiver.id, sender, status?.conversation_id ?? null, now);
  const staffMessage = event.type === "mention" && (await isStaff(db, sender));
  if (!staffMessage) {
    if (facts.domainBlocking && !facts.following) return undefined;
    if (facts.blocking || facts.mutingNotifications || facts.conversationMuted) return undefined;
    if (event.type === "mention" && status && (await involvesHidden(db, receiver.id, status.id, now))) return undefined;
  }
  const action = staffMessage ? "accept" : await policyAction(db, event, sender, status, facts, now);
  if (action === "drop") return undefined;
  const filtered = action === "filter";
  const at = event.at ?? now;
  const groupKey = filtered ? null : await groupKeyFor(db, event, at);

  const stored = await ctx.dispatcher.transaction(async (tx) => {
    if (event.type === "update") {
      // The newest edit replaces the notification of an earlier one.
      await tx
        .deleteFrom("notifications")
        .where("account_id", "=", receiver.id)
        .where("activity_type", "=", event.activityType)
        .where("activity_id", "=", event.activityId)
        .where("type", "=", "update")
        .execute();
    }
    const nowIso = now.toISOString();
    const row = await tx
      .insertInto("notifications")
      .values({
        id: newId(now.getTime()),
        account_id: receiver.id,
        from_account_id: sender.id,
        type: event.type,
        status_id: event.statusId ?? null,
        activity_type: event.activityType,
        activity_id: event.activityId,
        group_key: groupKey,
        filtered,
        created_at: nowIso,
        updated_at: nowIso,
      })
      .onConflict((oc) => oc.columns(["account_id", "activity_type", "activity_id", "type"]).doNothing())
      .returningAll()
      .executeTakeFirst();
    // Streamed and pushed only when not filtered, as Mastodon does.
    if (row && !filtered)
      await ctx.dispatcher.emit(tx, { type: "notification.created", notificationId: row.id, receiverId: receiver.id });
    if (row && filtered && event.type === "mention") {
      await tx
        .insertInto("notification_requests")
        .values({
          id: newId(now.getTime()),
          account_id: receiver.id,
          from_account_id: sender.id,
          last_status_id: event.statusId ?? null,
          created_at: nowIso,
          updated_at: nowIso,
        })
        .onConflict((oc) =>
          oc
            .columns(["account_id", "from_account_id"])
            .doUpdateSet({ last_status_id: event.statusId ?? null, updated_at: nowIso }),
        )
        .execute();
    }
    return row;
  });
  return stored;
}
