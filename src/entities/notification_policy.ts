import type { PolicyAction } from "../db/schema.ts";

/** A receiver's policy as the serializers take it: an action per kind of sender, and what waits. */
export interface Policy {
  settings: Record<
    "for_not_following" | "for_not_followers" | "for_new_accounts" | "for_private_mentions" | "for_limited_accounts",
    PolicyAction
  >;
  summary: { pendingRequests: number; pendingNotifications: number };
}

interface Summary {
  pending_requests_count: number;
  pending_notifications_count: number;
}

/** NotificationPolicy of the v1 API: a boolean per criterion, true unless it accepts. */
export interface NotificationPolicyV1 {
  filter_not_following: boolean;
  filter_not_followers: boolean;
  filter_new_accounts: boolean;
  filter_private_mentions: boolean;
  summary: Summary;
}

/** NotificationPolicy of the v2 API: `accept`, `filter` or `drop` per criterion. */
export interface NotificationPolicyV2 {
  for_not_following: string;
  for_not_followers: string;
  for_new_accounts: string;
  for_private_mentions: string;
  for_limited_accounts: string;
  summary: Summary;
}

function summaryOf(policy: Policy): Summary {
  return {
    pending_requests_count: policy.summary.pendingRequests,
    pending_notifications_count: policy.summary.pendingNotifications,
  };
}

export function serializePolicyV1(policy: Policy): NotificationPolicyV1 {
  const s = policy.settings;
  return {
    filter_not_following: s.for_not_following !== "accept",
    filter_not_followers: s.for_not_followers !== "accept",
    filter_new_accounts: s.for_new_accounts !== "accept",
    filter_private_mentions: s.for_private_mentions !== "accept",
    summary: summaryOf(policy),
  };
}

export function serializePolicyV2(policy: Policy): NotificationPolicyV2 {
  return { ...policy.settings, summary: summaryOf(policy) };
}
