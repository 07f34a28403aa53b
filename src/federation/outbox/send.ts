/**
 * Sending one activity from a local account to remote ones, through Fedify's queue (signed,
 * retried on Mastodon's schedule). Recipients are accounts as stored: their inbox, or the shared
 * inbox of their server when the activity goes to many.
 */
import type { Context } from "@fedify/fedify";
import type { Activity, Recipient } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { suspendedAmong } from "../../services/admin/domain_blocks.ts";
import { unallowedAmong } from "../../services/admin/domain_allows.ts";
import { INSTANCE_ACTOR } from "../instance_actor.ts";
import { carriesMastodonTerms } from "../mastodon_terms.ts";

/** A Fedify context outside any request. */
export const fedContext = (ctx: Ctx): Context<void> =>
  ctx.federation.createContext(new URL(ctx.config.baseUrl), undefined);

/** What delivery needs of an account. */
export type Addressee = Pick<AccountRow, "uri" | "inbox_url" | "shared_inbox_url" | "domain">;

export function recipientOf(account: Addressee): Recipient {
  return {
    id: new URL(account.uri),
    inboxId: account.inbox_url ? new URL(account.inbox_url) : null,
    endpoints: account.shared_inbox_url ? { sharedInbox: new URL(account.shared_inbox_url) } : null,
  };
}

export interface SendOptions {
  /** Deliver to shared inboxes where the recipients' servers have one (posts to many). */
  shared?: boolean;
  /** Activities with the same key reach each server in the order they were sent. */
  orderingKey?: string;
}

/**
 * Queues `activity` from the local account `sender` — or from the instance actor (reports) — to
 * the remote `recipients` (local ones are skipped).
 */
export async function send(
  ctx: Ctx,
  sender: AccountRow | "instance",
  recipients: readonly Addressee[],
  activity: Activity,
  options: SendOptions = {},
): Promise<void> {
  if (sender !== "instance" && (sender.domain !== null || sender.suspended_at)) return;
  const remote = recipients.filter((account) => account.domain !== null && account.inbox_url);
  if (remote.length === 0) return;
  // Nothing goes to a suspended domain, whichever host its inboxes are on.
  const hosts = (account: Addressee) => [
    account.domain!,
    new URL(account.inbox_url!).hostname,
    ...(account.shared_inbox_url ? [new URL(account.shared_inbox_url).hostname] : []),
  ];
  const suspended = await suspendedAmong(ctx.db.kysely, remote.flatMap(hosts));
  // In limited federation mode, only to allowed servers.
  const unallowed = await unallowedAmong(ctx, remote.flatMap(hosts));
  const refused = (host: string) => suspended.has(host.replace(/:\d+$/, "")) || unallowed.has(host);
  const allowed = remote.filter((account) => !hosts(account).some(refused));
  if (allowed.length === 0) return;
  const identifier = sender === "instance" ? INSTANCE_ACTOR : sender.username;
  await fedContext(ctx).sendActivity({ identifier }, allowed.map(recipientOf), activity, {
    preferSharedInbox: options.shared ?? false,
    orderingKey: options.orderingKey,
    // Fedify's fan-out parses the activity and serializes it again, which drops what Fedify has
    // no field for (and breaks the proof made over it): such activities go per inbox from here.
    fanout: carriesMastodonTerms(activity) ? "skip" : "auto",
  });
}
