/**
 * What a remote-interaction link names (Mastodon's `/authorize_interaction?uri=…`, reached through
 * the WebFinger subscribe template): a handle (`acct:user@host`, `@user@host`, `user@host`, or a
 * local `user`) or the link of an actor, a profile or a post, here or on another server (fetched
 * and stored the way search with `resolve` does). Policy:
 * - Whatever cannot be used is one NotFound (404, Mastodon's answer) with a message saying why —
 *   nothing given, not a handle nor a link, nothing found there — and a post the viewer may not
 *   see, an unconfirmed local user and a suspended account are "nothing found", so a link cannot
 *   tell them from a missing one.
 * - Local accounts and posts are found too (Mastodon's resolvers find them); following oneself is
 *   what the relation then says no to.
 * - A post stands for its author (a boost for the boosted post): the page offers to follow them.
 */
import type { Ctx } from "../../context.ts";
import { relationshipFacts } from "../../db/queries/relationships.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { NotFound } from "../../errors.ts";
import { findVisibleAccount, lookupAccount } from "../accounts/lookup.ts";
import { findVisibleStatuses } from "../visibility/find.ts";
import { resolveLocalUrl } from "./search.ts";

/** How the viewer stands towards an account they might follow; all but `none` mean no Follow button. */
export type FollowRelation = "none" | "self" | "following" | "requested" | "blocking" | "blocked_by" | "moved";

export interface InteractionTarget {
  /** The account to follow: the one named, or the author of the post named. */
  account: AccountRow;
  /** The post named, as the viewer may see it. */
  status?: StatusRow;
  relation: FollowRelation;
  /** Where a moved account went, when this server knows that account. */
  movedTo?: AccountRow;
}

const NOTHING_GIVEN = "Enter the handle (like user@example.com) or the link of an account or a post.";
const NOT_AN_ADDRESS = "This is neither a handle (like user@example.com) nor a link to an account or a post.";
export const NOTHING_FOUND =
  "No account or post could be found at this address. Check it for typos; the server it names may also be unreachable.";

/** Longer inputs are no address anyone pasted (URLs of posts run to a few hundred characters). */
const MAX_LENGTH = 2048;
/** `user` or `user@host[:port]`, once `acct:` and a leading `@` are gone. */
const HANDLE = /^([\w.-]{1,100})(?:@([^\s@/?#\\]{1,253}))?$/;

function isLocalDomain(ctx: Ctx, domain: string): boolean {
  const { localDomain, webDomain } = ctx.config;
  return [localDomain, webDomain].some((d) => d.toLowerCase() === domain.toLowerCase());
}

/** The account a handle names: known here, or found through WebFinger on its server. */
async function accountOfHandle(
  ctx: Ctx,
  username: string,
  domain: string | undefined,
): Promise<AccountRow | undefined> {
  if (!domain || isLocalDomain(ctx, domain)) return lookupAccount(ctx, username);
  return (await lookupAccount(ctx, `${username}@${domain}`)) ?? (await ctx.remote.account(`${username}@${domain}`));
}

/** What a link names: a profile or post here, or another server's actor or post, fetched and stored. */
async function resourceOfUrl(
  ctx: Ctx,
  viewer: AccountRow,
  url: URL,
): Promise<{ account: AccountRow } | { status: StatusRow } | undefined> {
  const local = await resolveLocalUrl(ctx, viewer, url.href);
  if (local.statuses[0]) return { status: local.statuses[0] };
  if (local.accounts[0]) return { account: local.accounts[0] };
  if (new URL(ctx.config.baseUrl).host === url.host || isLocalDomain(ctx, url.host)) return undefined;
  return ctx.remote.url(url.href);
}

/** The post (a boost: the boosted one) and its author, if the viewer may see both. */
async function visiblePost(
  ctx: Ctx,
  viewer: AccountRow,
  status: StatusRow,
): Promise<{ status: StatusRow; account: AccountRow } | undefined> {
  const [shown] = await findVisibleStatuses(ctx, [status.reblog_of_id ?? status.id], viewer.id);
  const author = shown ? await findVisibleAccount(ctx, shown.account_id) : undefined;
  return shown && author ? { status: shown, account: author } : undefined;
}

/**
 * What `uri` names for `viewer`, with how the viewer stands towards the account to follow.
 * NotFound (with NOTHING_GIVEN, NOT_AN_ADDRESS or NOTHING_FOUND) when it names nothing usable.
 */
export async function findInteractionTarget(ctx: Ctx, viewer: AccountRow, uri: string): Promise<InteractionTarget> {
  const given = uri.trim();
  if (given === "") throw new NotFound(NOTHING_GIVEN);
  if (given.length > MAX_LENGTH) throw new NotFound(NOT_AN_ADDRESS);
  let account: AccountRow | undefined;
  let status: StatusRow | undefined;
  if (/^https?:\/\//i.test(given)) {
    const url = URL.parse(given);
    if (!url || !url.hostname) throw new NotFound(NOT_AN_ADDRESS);
    const found = await resourceOfUrl(ctx, viewer, url);
    if (found && "status" in found) {
      const post = await visiblePost(ctx, viewer, found.status);
      status = post?.status;
      account = post?.account;
    } else account = found?.account;
  } else {
    const handle = HANDLE.exec(given.replace(/^acct:/i, "").replace(/^@/, ""));
    if (!handle) throw new NotFound(NOT_AN_ADDRESS);
    account = await accountOfHandle(ctx, handle[1]!, handle[2]);
  }
  if (!account || account.suspended_at) throw new NotFound(NOTHING_FOUND);
  const relation = await followRelation(ctx, viewer, account);
  const movedTo =
    relation === "moved" && account.moved_to_account_id
      ? await findVisibleAccount(ctx, account.moved_to_account_id)
      : undefined;
  return { account, status, relation, movedTo: movedTo && !movedTo.suspended_at ? movedTo : undefined };
}

/**
 * How `viewer` stands towards `target` for following it, in the order the follow service refuses:
 * oneself, a block either way, a moved account; then an existing follow or pending request.
 */
export async function followRelation(ctx: Ctx, viewer: AccountRow, target: AccountRow): Promise<FollowRelation> {
  if (viewer.id === target.id) return "self";
  const facts = await relationshipFacts(ctx.db.kysely, viewer.id, [target.id]);
  if (facts.blocking.has(target.id)) return "blocking";
  if (facts.blockedBy.has(target.id)) return "blocked_by";
  if (target.moved_to_account_id) return "moved";
  if (facts.following.has(target.id)) return "following";
  if (facts.requested.has(target.id)) return "requested";
  return "none";
}
