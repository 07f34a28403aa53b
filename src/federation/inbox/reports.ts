/**
 * A Flag from another server: a report about local accounts and posts, stored as a report by its
 * sender (usually that server's instance actor) for our moderators — unless its domain is blocked
 * with `reject_reports`. The reported account is the first local one it names, or the author of
 * the first local post; only that account's posts are attached.
 */
import type { Flag } from "@fedify/vocab";
import type { AccountRow } from "../../db/schema.ts";
import { findAccountsByIds } from "../../services/accounts/lookup.ts";
import { accountByUri } from "../../services/accounts/remote.ts";
import { receiveReport } from "../../services/reports/reports.ts";
import { statusByUri } from "../../services/statuses/remote.ts";
import type { Received } from "./inbox.ts";

/** How many objects of one Flag are looked at. */
const OBJECTS_MAX = 100;

export async function onFlag(received: Received<Flag>): Promise<void> {
  const { ctx, sender, activity } = received;
  let target: AccountRow | undefined;
  const statuses: Array<{ id: string; account_id: string }> = [];
  for (const id of activity.objectIds.slice(0, OBJECTS_MAX)) {
    const account = await accountByUri(ctx, id.href);
    if (account) {
      if (account.domain === null) target ??= account;
      continue;
    }
    const status = await statusByUri(ctx, id.href);
    if (status?.local) {
      statuses.push(status);
      target ??= (await findAccountsByIds(ctx, [status.account_id]))[0];
    }
  }
  if (!target) return;
  const statusIds = statuses.filter((s) => s.account_id === target.id).map((s) => s.id);
  await receiveReport(ctx, sender, target, statusIds, activity.content?.toString() ?? "");
}
