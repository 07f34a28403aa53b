import type { ActivityType } from "../../db/queries/notifications.ts";

/** The kinds of notification (Mastodon's `Notification::TYPES` that Rookery creates). */
export const NOTIFICATION_TYPES = [
  "mention",
  "status",
  "reblog",
  "follow",
  "follow_request",
  "favourite",
  "poll",
  "update",
  "admin.sign_up",
  "admin.report",
  "moderation_warning",
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export const isNotificationType = (name: string): name is NotificationType =>
  (NOTIFICATION_TYPES as readonly string[]).includes(name);

/** Types the grouped API folds together by default (Mastodon's `GROUPABLE_NOTIFICATION_TYPES`). */
export const GROUPABLE_TYPES: readonly NotificationType[] = ["favourite", "reblog", "follow", "admin.sign_up"];

/** Types the notification policy may filter or drop; the others always arrive. */
export const FILTERABLE_TYPES: ReadonlySet<NotificationType> = new Set([
  "mention",
  "reblog",
  "follow",
  "follow_request",
  "favourite",
]);

/** Types whose notification shows a status. */
export const STATUS_TYPES: ReadonlySet<NotificationType> = new Set([
  "mention",
  "status",
  "reblog",
  "favourite",
  "poll",
  "update",
]);

export type { ActivityType };

/** One notification to create, before the drop and policy rules decide its fate. */
export interface NotificationEvent {
  type: NotificationType;
  /** The local account notified. */
  receiverId: string;
  /** The account that caused it. */
  fromId: string;
  activityType: ActivityType;
  activityId: string;
  /** The status shown with it (for a boost: the boosted status). */
  statusId?: string | null;
  /** When the activity happened (the group's hour bucket); now when absent. */
  at?: Date;
}
