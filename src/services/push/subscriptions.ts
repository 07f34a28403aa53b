/**
 * Web Push subscriptions (Mastodon's `/api/v1/push/subscription`): one per access token, holding
 * the push service's endpoint, the client's P-256 key and auth secret, which notification types
 * to push (`alerts`) and from whom (`policy`: all, accounts the user follows, their followers, none).
 */
import { createPublicKey } from "node:crypto";
import type { Ctx } from "../../context.ts";
import { pushAlerts } from "../../db/columns.ts";
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

/**
 * Base64 in either alphabet, padded or not: browsers send URL-safe keys, Mastodon.py the standard
 * alphabet (Mastodon decodes both). The bytes, or undefined when the text is no base64.
 */
function decodeBase64(text: string): Buffer | undefined {
  const bare = text.replace(/={1,2}$/, "");
  if (!/^[A-Za-z0-9+/_-]*$/.test(bare) || bare.length % 4 === 1) return undefined;
  return Buffer.from(bare.replaceAll("+", "-").replaceAll("/", "_"), "base64url");
}

/** An uncompressed point on P-256 (65 bytes, 0x04, x, y, on the curve). */
function isP256Point(bytes: Buffer): boolean {
  if (bytes.length !== 65 || bytes[0] !== 4) return false;
  const coordinate = (from: number) => bytes.subarray(from, from + 32).toString("base64url");
  try {
    createPublicKey({ key: { kty: "EC", crv: "P-256", x: coordinate(1), y: coordinate(33) }, format: "jwk" });
    return true;
  } catch {
    return false;
  }
}

/** The client's keys, validated and normalized to unpadded URL-safe base64 (what is stored and used). */
function clientKeys(params: SubscriptionParams, problems: string[]): { p256dh: string; auth: string } {
  const p256dhText = params.p256dh?.trim() ?? "";
  const p256dh = decodeBase64(p256dhText);
  if (!p256dhText) problems.push("Key p256dh can't be blank");
  else if (!p256dh || !isP256Point(p256dh)) problems.push("Key p256dh is not a valid P-256 public key");
  const authText = params.auth?.trim() ?? "";
  const auth = decodeBase64(authText);
  if (!authText) problems.push("Key auth can't be blank");
  else if (auth?.length !== 16) problems.push("Key auth must be 16 bytes");
  return { p256dh: p256dh?.toString("base64url") ?? "", auth: auth?.toString("base64url") ?? "" };
}

/** The subscription's problems (each one, in the order of the form) and its normalized keys. */
function validate(params: SubscriptionParams): { problems: string[]; keys: { p256dh: string; auth: string } } {
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
  const keys = clientKeys(params, problems);
  if (params.policy !== undefined && !PUSH_POLICIES.includes(params.policy as PushPolicy))
    problems.push("Policy is not included in the list");
  return { problems, keys };
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
  const { problems, keys } = validate(params);
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
        key_p256dh: keys.p256dh,
        key_auth: keys.auth,
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
      alerts: JSON.stringify(alertsOf(changes.alerts, pushAlerts(current))),
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
