import type { Kysely } from "kysely";
import type { Database } from "../schema.ts";

/** The record a notification is about (Mastodon's polymorphic `activity`). */
export type ActivityType =
  "Mention" | "Status" | "Favourite" | "Follow" | "FollowRequest" | "Poll" | "Account" | "Report" | "AccountWarning";

/** Deletes the notifications of activities that were undone (an unfavourite, an unfollow, a deleted boost). */
export async function deleteNotificationsOf(
  db: Kysely<Database>,
  activityType: ActivityType,
  activityIds: readonly string[],
): Promise<void> {
  if (activityIds.length === 0) return;
  await db
    .deleteFrom("notifications")
    .where("activity_id", "in", activityIds)
    .where("activity_type", "=", activityType)
    .execute();
}
