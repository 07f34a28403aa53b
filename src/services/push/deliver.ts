/**
 * Delivering notifications as Web Push messages: each new (unfiltered) notification enqueues one
 * `push.deliver` job per subscription of its receiver; the job checks the subscription's alert and
 * policy, encrypts the payload for the client (RFC 8291 `aes128gcm` for `standard` subscriptions,
 * the older `aesgcm` Mastodon sends by default), signs with the server's VAPID key (RFC 8292) and
 * posts it to the push service through the SSRF-safe fetch. A push service that answers 404 or 410
 * has forgotten the subscription: it is removed, as is one whose endpoint is an address outbound
 * requests may not reach (private, loopback: the SSRF guard refuses it, and always will). 429, 5xx
 * and transient network failures are retried by the job queue; other failures are logged once.
 */
import webpush from "web-push";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { pushAlerts } from "../../db/columns.ts";
import type { Database, NotificationRow, WebPushSubscriptionRow } from "../../db/schema.ts";
import { serializeAccount } from "../../entities/account.ts";
import { htmlToPlainText } from "../../text/sanitize.ts";
import { DestinationRefused, safeFetch, SafeFetchError, type SafeFetchResponse } from "../http/safe_fetch.ts";
import { vapidKeys } from "./vapid.ts";

/** How long a push service keeps an undelivered message. */
const TTL_SECONDS = 48 * 60 * 60;
const BODY_LIMIT = 140;

export interface PushJob {
  subscriptionId: string;
  notificationId: string;
}

/** A push service refused for a while (429, 5xx): the job is retried. */
export class PushRetry extends Error {
  override name = "PushRetry";
}

/**
 * The pushes of a new notification, one job per subscription of its receiver (each retried on
 * its own, and enqueued once however often this runs): the `push` subscriber of `notification.created`.
 */
export async function enqueuePushes(ctx: Ctx, notificationId: string, receiverId: string): Promise<void> {
  const subscriptions = await ctx.db.kysely
    .selectFrom("web_push_subscriptions")
    .innerJoin("users", "users.id", "web_push_subscriptions.user_id")
    .select("web_push_subscriptions.id")
    .where("users.account_id", "=", receiverId)
    .execute();
  if (subscriptions.length === 0) return;
  await ctx.db.kysely.transaction().execute(async (tx) => {
    for (const { id } of subscriptions) {
      const job: PushJob = { subscriptionId: id, notificationId };
      await ctx.jobs.enqueueWith(tx, "push.deliver", job, {
        maxAttempts: 5,
        uniqueKey: `push:${id}:${notificationId}`,
      });
    }
  });
  ctx.jobs.wake();
}

/** Whether the subscription's policy lets a notification from `senderId` through. */
async function policyAllows(db: Kysely<Database>, sub: WebPushSubscriptionRow, receiverId: string, senderId: string) {
  if (sub.policy === "all") return true;
  if (sub.policy === "none") return false;
  const [follower, followed] = sub.policy === "followed" ? [receiverId, senderId] : [senderId, receiverId];
  const follow = await db
    .selectFrom("follows")
    .select("id")
    .where("account_id", "=", follower)
    .where("target_account_id", "=", followed)
    .executeTakeFirst();
  return follow !== undefined;
}

const TITLES: Record<string, string> = {
  mention: "%{name} mentioned you",
  status: "%{name} just posted",
  reblog: "%{name} boosted your post",
  follow: "%{name} followed you",
  follow_request: "%{name} has requested to follow you",
  favourite: "%{name} favorited your post",
  poll: "A poll you voted in has ended",
  update: "%{name} edited a post",
  "admin.sign_up": "%{name} signed up",
  "admin.report": "%{name} filed a report",
};

/** The message a client shows (Mastodon's Web::NotificationSerializer, without the access token). */
async function payloadOf(ctx: Ctx, notification: NotificationRow) {
  const db = ctx.db.kysely;
  const senderRow = await db
    .selectFrom("accounts")
    .selectAll()
    .where("id", "=", notification.from_account_id)
    .executeTakeFirst();
  const sender = senderRow ? await serializeAccount(ctx, senderRow) : undefined;
  const receiver = await db
    .selectFrom("users")
    .select(["locale"])
    .where("account_id", "=", notification.account_id)
    .executeTakeFirst();
  const status = notification.status_id
    ? await db
        .selectFrom("statuses")
        .select(["content", "spoiler_text", "account_id"])
        .where("id", "=", notification.status_id)
        .executeTakeFirst()
    : undefined;
  const name = sender ? sender.display_name || sender.username : "Someone";
  let title = (TITLES[notification.type] ?? "%{name}").replace("%{name}", name);
  if (notification.type === "poll" && status?.account_id === notification.account_id) title = "Your poll has ended";
  const text = status ? status.spoiler_text || htmlToPlainText(status.content) : `@${sender?.acct ?? ""}`;
  const body = [...text].length > BODY_LIMIT ? `${[...text].slice(0, BODY_LIMIT - 1).join("")}…` : text;
  return {
    notification_id: notification.id,
    notification_type: notification.type,
    preferred_locale: receiver?.locale ?? "en",
    icon: sender?.avatar_static ?? null,
    title,
    body,
  };
}

/** The VAPID subject: the server's https address, or a mailto: address on a development machine. */
function vapidSubject(ctx: Ctx): string {
  return ctx.config.baseUrl.startsWith("https:")
    ? ctx.config.baseUrl
    : `mailto:notifications@${ctx.config.localDomain.split(":")[0]}`;
}

async function removeSubscription(ctx: Ctx, id: string, endpoint: string, why: string): Promise<void> {
  await ctx.db.kysely.deleteFrom("web_push_subscriptions").where("id", "=", id).execute();
  ctx.log.info({ endpoint }, `${why}; subscription removed`);
}

/** The `push.deliver` job. */
export async function deliverPush(ctx: Ctx, job: PushJob): Promise<void> {
  const db = ctx.db.kysely;
  const sub = await db
    .selectFrom("web_push_subscriptions")
    .innerJoin("oauth_access_tokens", "oauth_access_tokens.id", "web_push_subscriptions.access_token_id")
    .selectAll("web_push_subscriptions")
    .select("oauth_access_tokens.revoked_at")
    .where("web_push_subscriptions.id", "=", job.subscriptionId)
    .executeTakeFirst();
  if (!sub || sub.revoked_at) return;
  const notification = await db
    .selectFrom("notifications")
    .selectAll()
    .where("id", "=", job.notificationId)
    .executeTakeFirst();
  if (!notification || notification.filtered) return;
  if (!pushAlerts(sub)[notification.type]) return;
  if (!(await policyAllows(db, sub, notification.account_id, notification.from_account_id))) return;

  const keys = await vapidKeys(ctx);
  const details = webpush.generateRequestDetails(
    { endpoint: sub.endpoint, keys: { p256dh: sub.key_p256dh, auth: sub.key_auth } },
    JSON.stringify(await payloadOf(ctx, notification)),
    {
      vapidDetails: { subject: vapidSubject(ctx), publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: TTL_SECONDS,
      contentEncoding: sub.standard ? "aes128gcm" : "aesgcm",
      urgency: "normal",
    },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) headers[name.toLowerCase()] = String(value);
  const endpointHost = new URL(sub.endpoint).host;
  let response: SafeFetchResponse;
  try {
    response = await safeFetch(ctx, details.endpoint, {
      method: "POST",
      headers,
      body: details.body ?? undefined,
      maxRedirects: 0,
      maxBytes: 64 * 1024,
    });
  } catch (error) {
    if (!(error instanceof SafeFetchError) || error.transient) throw error;
    // An address outbound requests may never reach will not become reachable: the subscription goes.
    if (error instanceof DestinationRefused) {
      await removeSubscription(ctx, sub.id, endpointHost, "push endpoint refused by the outbound address rules");
      return;
    }
    ctx.log.warn({ endpoint: endpointHost, reason: error.message }, "push not delivered");
    return;
  }
  if (response.status === 404 || response.status === 410) {
    await removeSubscription(ctx, sub.id, endpointHost, "push subscription gone");
    return;
  }
  if (response.status === 429 || response.status >= 500)
    throw new PushRetry(`push service answered ${response.status}`);
  if (response.status >= 300)
    ctx.log.warn({ status: response.status, endpoint: endpointHost }, "push refused by the push service");
}
