/**
 * The notification policy (Mastodon 4.3): for each kind of sender — people the receiver does not
 * follow, people who do not follow the receiver (or only for less than three days), accounts
 * younger than 30 days, unsolicited private mentions, limited (silenced) accounts — accept,
 * filter (into notification requests) or drop. Stored only once changed; defaults otherwise.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { PolicyAction } from "../../db/schema.ts";
import type { Policy as EntityPolicy } from "../../entities/notification_policy.ts";

export const POLICY_CRITERIA = [
  "not_following",
  "not_followers",
  "new_accounts",
  "private_mentions",
  "limited_accounts",
] as const;
export type PolicyCriterion = (typeof POLICY_CRITERIA)[number];
export const POLICY_ACTIONS: readonly PolicyAction[] = ["accept", "filter", "drop"];

export type PolicySettings = { [K in PolicyCriterion as `for_${K}`]: PolicyAction };

/** Mastodon's defaults: private mentions and limited accounts are filtered, the rest accepted. */
export function defaultPolicy(): PolicySettings {
  return {
    for_not_following: "accept",
    for_not_followers: "accept",
    for_new_accounts: "accept",
    for_private_mentions: "filter",
    for_limited_accounts: "filter",
  };
}

export interface PolicySummary {
  /** Requests neither accepted nor dismissed. */
  pendingRequests: number;
  /** Filtered notifications of the senders of those requests. */
  pendingNotifications: number;
}

export interface Policy extends EntityPolicy {
  settings: PolicySettings;
  summary: PolicySummary;
}

function settingsOf(row: PolicySettings): PolicySettings {
  const settings = defaultPolicy();
  for (const criterion of POLICY_CRITERIA) settings[`for_${criterion}`] = row[`for_${criterion}`];
  return settings;
}

/** The account's policy and the counts of what waits in its requests. */
export async function policyOf(ctx: Ctx, accountId: string): Promise<Policy> {
  const db = ctx.db.kysely;
  const stored = await db
    .selectFrom("notification_policies")
    .selectAll()
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  const requests = await db
    .selectFrom("notification_requests")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("account_id", "=", accountId)
    .where("dismissed", "=", false)
    .executeTakeFirstOrThrow();
  const notifications = await db
    .selectFrom("notifications")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("account_id", "=", accountId)
    .where("filtered", "=", true)
    .where(
      "from_account_id",
      "in",
      db
        .selectFrom("notification_requests")
        .select("from_account_id")
        .where("account_id", "=", accountId)
        .where("dismissed", "=", false),
    )
    .executeTakeFirstOrThrow();
  return {
    settings: stored ? settingsOf(stored) : defaultPolicy(),
    summary: { pendingRequests: Number(requests.n), pendingNotifications: Number(notifications.n) },
  };
}

/** Changes the criteria given and keeps the others; returns the policy as it now is. */
export async function updatePolicy(ctx: Ctx, accountId: string, changes: Partial<PolicySettings>): Promise<Policy> {
  const now = new Date().toISOString();
  await ctx.db.kysely
    .insertInto("notification_policies")
    .values({ id: newId(), account_id: accountId, ...defaultPolicy(), ...changes, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column("account_id").doUpdateSet({ ...changes, updated_at: now }))
    .execute();
  return policyOf(ctx, accountId);
}
