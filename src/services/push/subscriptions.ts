/**
 * Web Push subscriptions (Mastodon's `/api/v1/push/subscription`): one per access token, holding
 * the push service's endpoint, the client's P-256 key and auth secret, which notification types
 * to push (`alerts`) and from whom (`policy`: all, accounts the user follows, their followers, none).
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { PushPolicy, WebPushSubscriptionRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";

/** Alert names clients set (Mastodon's, including types Rookery does not create yet, kept as given). */
export const ALERT_TYPES = [
  "mention",
  "quote",
  "status",
  "reblog",
  "follow",
  "follow_request",
  "favourite",
  "poll",
  "update",
  "quoted_update",
  "admin.sign_up",
  "admin.report",
] as const;
export const PUSH_POLICIES: readonly PushPolicy[] = ["all", "followed", "follower", "none"];

export interface SubscriptionParams {
  endpoint?: string;
  p256dh?: string;
  auth?: string;
  standard?: boolean;
  alerts: Partial<Record<string, boolean>>;
  policy?: string;
}

const base64url = (text: string) => /^[A-Za-z0-9_-]+={0,2}$/.test(text);
const decodedLength = (text: string) => Buffer.from(text.replace(/=+$/, ""), "base64url").length;

function problemsOf(params: SubscriptionParams): string[] {
  const problems: string[] = [];
  const endpoint = params.endpoint?.trim() ?? "";
  if (!endpoint) problems.push("Endpoint can't be blank");
  else {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) problems.push("Endpoint is not a valid URL");
  }
  const p256dh = params.p256dh?.trim() ?? "";
  if (!p256dh) problems.push("Key p256dh can't be blank");
  // An uncompressed P-256 point: 65 bytes starting with 0x04.
  else if (!base64url(p256dh) || decodedLength(p256dh) !== 65 || Buffer.from(p256dh, "base64url")[0] !== 4)
    problems.push("Key p256dh is not a valid P-256 public key");
  const auth = params.auth?.trim() ?? "";
  if (!auth) problems.push("Key auth can't be blank");
  else if (!base64url(auth) || decodedLength(auth) !== 16) problems.push("Key auth must be 16 bytes");
  if (params.policy !== undefined && !PUSH_POLICIES.includes(params.policy as PushPolicy))
    problems.push("Policy is not included in the list");
  return problems;
}

/** The alerts as stored: every known type, true or false. */
function alertsOf(
  given: Partial<Record<string, boolean>>,
  before: Record<string, boolean> = {},
): Record<string, boolean> {
  const alerts: Record<string, boolean> = {};
  for (const type of ALERT_TYPES) alerts[type] = given[type] ?? before[type] ?? false;
  return alerts;
}

export const storedAlerts = (row: Pick<WebPushSubscriptionRow, "alerts">) =>
  JSON.parse(row.alerts) as Record<string, boolean>;

/** The subscription of a token, if any. */
export async function subscriptionOf(ctx: Ctx, tokenId: string): Promise<WebPushSubscriptionRow | undefined> {
  return ctx.db.kysely
    .selectFrom("web_push_subscriptions")
    .selectAll()
    .where("access_token_id", "=", tokenId)
    .executeTakeFirst();
}

/** Subscribes a token, replacing its earlier subscription. */
export async function subscribe(
  ctx: Ctx,
  tokenId: string,
  userId: string,
  params: SubscriptionParams,
): Promise<WebPushSubscriptionRow> {
  const problems = problemsOf(params);
  if (problems.length > 0) throw new ValidationFailed(problems);
  const now = new Date().toISOString();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    await tx.deleteFrom("web_push_subscriptions").where("access_token_id", "=", tokenId).execute();
    return tx
      .insertInto("web_push_subscriptions")
      .values({
        id: newId(),
        access_token_id: tokenId,
        user_id: userId,
        endpoint: params.endpoint!.trim(),
        key_p256dh: params.p256dh!.trim(),
        key_auth: params.auth!.trim(),
        standard: params.standard ?? false,
        alerts: JSON.stringify(alertsOf(params.alerts)),
        policy: (params.policy as PushPolicy | undefined) ?? "all",
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** Changes the alerts and policy of a token's subscription (404 `Not Found` without one). */
export async function updateSubscription(
  ctx: Ctx,
  tokenId: string,
  changes: Pick<SubscriptionParams, "alerts" | "policy">,
): Promise<WebPushSubscriptionRow> {
  const current = await subscriptionOf(ctx, tokenId);
  if (!current) throw new NotFound("Not Found");
  if (changes.policy !== undefined && !PUSH_POLICIES.includes(changes.policy as PushPolicy))
    throw new ValidationFailed("Policy is not included in the list");
  const updated = await ctx.db.kysely
    .updateTable("web_push_subscriptions")
    .set({
      alerts: JSON.stringify(alertsOf(changes.alerts, storedAlerts(current))),
      ...(changes.policy !== undefined ? { policy: changes.policy as PushPolicy } : {}),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", current.id)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new NotFound("Not Found");
  return updated;
}

export async function unsubscribe(ctx: Ctx, tokenId: string): Promise<void> {
  await ctx.db.kysely.deleteFrom("web_push_subscriptions").where("access_token_id", "=", tokenId).execute();
}
