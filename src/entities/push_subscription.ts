import type { WebPushSubscriptionRow } from "../db/schema.ts";
import { pushAlerts } from "../db/columns.ts";

/** The WebPushSubscription entity. */
export interface WebPushSubscriptionJson {
  /** A string, as the documentation gives it (Mastodon writes a number; Rookery's IDs exceed a double's digits). */
  id: string;
  endpoint: string;
  standard: boolean;
  alerts: Record<string, boolean>;
  server_key: string;
  policy: string;
}

export function serializePushSubscription(row: WebPushSubscriptionRow, serverKey: string): WebPushSubscriptionJson {
  return {
    id: row.id,
    endpoint: row.endpoint,
    standard: row.standard,
    alerts: pushAlerts(row),
    server_key: serverKey,
    policy: row.policy,
  };
}
