/**
 * Who hears of a local status on other servers, and what its ActivityPub form links to: the
 * accounts it mentions, the status it replies to, the status a boost boosts, and the author's
 * remote followers (one row each, with the inboxes delivery needs).
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";

type Inboxes = Pick<AccountRow, "id" | "uri" | "inbox_url" | "shared_inbox_url" | "domain" | "username">;

export interface StatusLinks {
  status: StatusRow;
  author: AccountRow;
  /** Mentioned accounts, local and remote. */
  mentioned: AccountRow[];
  /** The status it replies to, with its author's actor id. */
  parent: { uri: string; authorUri: string } | null;
  /** For a boost: the boosted status and its author. */
  reblogOf: { status: StatusRow; author: AccountRow } | null;
}

export async function statusLinks(ctx: Ctx, statusId: string): Promise<StatusLinks | undefined> {
  const db = ctx.db.kysely;
  const status = await db.selectFrom("statuses").selectAll().where("id", "=", statusId).executeTakeFirst();
  if (!status) return undefined;
  const [author, mentioned, parent, reblogOf] = await Promise.all([
    db.selectFrom("accounts").selectAll().where("id", "=", status.account_id).executeTakeFirst(),
    db
      .selectFrom("mentions")
      .innerJoin("accounts", "accounts.id", "mentions.account_id")
      .selectAll("accounts")
      .where("mentions.status_id", "=", status.id)
      .execute(),
    status.in_reply_to_id
      ? db
          .selectFrom("statuses")
          .innerJoin("accounts", "accounts.id", "statuses.account_id")
          .select(["statuses.uri", "accounts.uri as authorUri"])
          .where("statuses.id", "=", status.in_reply_to_id)
          .executeTakeFirst()
      : undefined,
    status.reblog_of_id
      ? db.selectFrom("statuses").selectAll().where("id", "=", status.reblog_of_id).executeTakeFirst()
      : undefined,
  ]);
  if (!author) return undefined;
  const reblogAuthor = reblogOf
    ? await db.selectFrom("accounts").selectAll().where("id", "=", reblogOf.account_id).executeTakeFirst()
    : undefined;
  return {
    status,
    author,
    mentioned,
    parent: parent ?? null,
    reblogOf: reblogOf && reblogAuthor ? { status: reblogOf, author: reblogAuthor } : null,
  };
}

/** The remote accounts that follow `accountId`, with their inboxes (delivery dedupes them by inbox). */
export async function remoteFollowersOf(ctx: Ctx, accountId: string): Promise<Inboxes[]> {
  return ctx.db.kysely
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.account_id")
    .select([
      "accounts.id",
      "accounts.uri",
      "accounts.inbox_url",
      "accounts.shared_inbox_url",
      "accounts.domain",
      "accounts.username",
    ])
    .where("follows.target_account_id", "=", accountId)
    .where("accounts.domain", "is not", null)
    .execute();
}

/**
 * A local status anyone may fetch from its id (`/users/:username/statuses/:id`): by that account,
 * public or unlisted, not a boost. Followers-only and direct ones are not served (yet: they need a
 * signed fetch from a follower's server).
 */
export async function fetchableStatus(ctx: Ctx, username: string, id: string): Promise<StatusLinks | undefined> {
  if (!/^\d{1,19}$/.test(id)) return undefined;
  const row = await ctx.db.kysely
    .selectFrom("statuses")
    .innerJoin("accounts", "accounts.id", "statuses.account_id")
    .select(["statuses.id", "statuses.visibility", "statuses.reblog_of_id", "accounts.username", "accounts.domain"])
    .where("statuses.id", "=", id)
    .executeTakeFirst();
  if (!row || row.domain !== null || row.username !== username || row.reblog_of_id) return undefined;
  if (row.visibility !== "public" && row.visibility !== "unlisted") return undefined;
  return statusLinks(ctx, row.id);
}
