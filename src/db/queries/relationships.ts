/**
 * The relations between a viewer and a set of accounts, for the Relationship entity: one query per
 * kind of relation, whatever the number of accounts (Mastodon's AccountRelationshipsPresenter).
 */
import { sql, type Kysely } from "kysely";
import { prepared } from "../prepared.ts";
import type { Database } from "../schema.ts";

/** A follow or pending request of the viewer, with its settings. */
export interface FollowSettings {
  showReblogs: boolean;
  notify: boolean;
  languages: string[] | null;
}

export interface RelationshipFacts {
  following: Map<string, FollowSettings>;
  requested: Map<string, FollowSettings>;
  followedBy: Set<string>;
  requestedBy: Set<string>;
  blocking: Set<string>;
  blockedBy: Set<string>;
  /** Account ID → whether notifications are muted too. */
  muting: Map<string, boolean>;
  domainBlocking: Set<string>;
  endorsed: Set<string>;
  notes: Map<string, string>;
}

function settingsOf(row: {
  target_account_id: string;
  show_reblogs: boolean;
  notify: boolean;
  languages: string | null;
}): [string, FollowSettings] {
  return [
    row.target_account_id,
    {
      showReblogs: row.show_reblogs,
      notify: row.notify,
      languages: row.languages ? (JSON.parse(row.languages) as string[]) : null,
    },
  ];
}

export async function relationshipFacts(
  db: Kysely<Database>,
  viewerId: string,
  accountIds: readonly string[],
): Promise<RelationshipFacts> {
  const ids = [...new Set(accountIds)];
  if (ids.length === 0) {
    return {
      following: new Map(),
      requested: new Map(),
      followedBy: new Set(),
      requestedBy: new Set(),
      blocking: new Set(),
      blockedBy: new Set(),
      muting: new Map(),
      domainBlocking: new Set(),
      endorsed: new Set(),
      notes: new Map(),
    };
  }
  const settings = ["target_account_id", "show_reblogs", "notify", "languages"] as const;
  const [following, requested, followedBy, requestedBy, blocking, blockedBy, muting, domainBlocking, endorsed, notes] =
    await Promise.all([
      db
        .selectFrom("follows")
        .select(settings)
        .where("account_id", "=", viewerId)
        .where("target_account_id", "in", ids)
        .execute(),
      db
        .selectFrom("follow_requests")
        .select(settings)
        .where("account_id", "=", viewerId)
        .where("target_account_id", "in", ids)
        .execute(),
      db
        .selectFrom("follows")
        .select("account_id as id")
        .where("target_account_id", "=", viewerId)
        .where("account_id", "in", ids)
        .execute(),
      db
        .selectFrom("follow_requests")
        .select("account_id as id")
        .where("target_account_id", "=", viewerId)
        .where("account_id", "in", ids)
        .execute(),
      blockedByViewer(db, viewerId, ids),
      blockingViewer(db, viewerId, ids),
      mutedByViewer(db, viewerId, ids),
      domainBlockedByViewer(db, viewerId, ids),
      db
        .selectFrom("account_pins")
        .select("target_account_id as id")
        .where("account_id", "=", viewerId)
        .where("target_account_id", "in", ids)
        .execute(),
      db
        .selectFrom("account_notes")
        .select(["target_account_id as id", "comment"])
        .where("account_id", "=", viewerId)
        .where("target_account_id", "in", ids)
        .execute(),
    ]);
  const ids_ = (rows: Array<{ id: string }>) => new Set(rows.map((r) => r.id));
  return {
    following: new Map(following.map(settingsOf)),
    requested: new Map(requested.map(settingsOf)),
    followedBy: ids_(followedBy),
    requestedBy: ids_(requestedBy),
    blocking,
    blockedBy,
    muting,
    domainBlocking,
    endorsed: ids_(endorsed),
    notes: new Map(notes.map((r) => [r.id, r.comment])),
  };
}

/** How many requests wait for `owner`'s decision (CredentialAccount `source.follow_requests_count`). */
export async function pendingRequestCount(db: Kysely<Database>, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom("follow_requests")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("target_account_id", "=", ownerId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

// ---- One query per kind of relation between a viewer and a set of accounts (shared with
// services/accounts/exclusions.ts, which decides from the same facts whom a viewer does not see).

/** The accounts among `ids` that the viewer blocks. */
export async function blockedByViewer(
  db: Kysely<Database>,
  viewerId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await db
    .selectFrom("blocks")
    .select("target_account_id as id")
    .where("account_id", "=", viewerId)
    .where("target_account_id", "in", ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** The accounts among `ids` that block the viewer. */
export async function blockingViewer(
  db: Kysely<Database>,
  viewerId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await db
    .selectFrom("blocks")
    .select("account_id as id")
    .where("target_account_id", "=", viewerId)
    .where("account_id", "in", ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** The accounts among `ids` the viewer mutes (mutes not yet expired) → whether notifications are muted too. */
export async function mutedByViewer(
  db: Kysely<Database>,
  viewerId: string,
  ids: readonly string[],
): Promise<Map<string, boolean>> {
  const now = new Date().toISOString();
  const rows = await db
    .selectFrom("mutes")
    .select(["target_account_id as id", "hide_notifications"])
    .where("account_id", "=", viewerId)
    .where("target_account_id", "in", ids)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
    .execute();
  return new Map(rows.map((r) => [r.id, r.hide_notifications]));
}

/** The accounts among `ids` on a domain the viewer blocks. */
export async function domainBlockedByViewer(
  db: Kysely<Database>,
  viewerId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await db
    .selectFrom("accounts")
    .innerJoin("account_domain_blocks", "account_domain_blocks.domain", "accounts.domain")
    .select("accounts.id")
    .where("account_domain_blocks.account_id", "=", viewerId)
    .where("accounts.id", "in", ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The local followers of `authorId` who asked to be notified of their posts (the bell), with the
 * languages they follow them in; at most `limit`. Read from the follows that ring a bell (a
 * partial index, migration 0051), not from every follower or every local account: a popular
 * author's post costs the few who ring.
 */
export async function bellRingers(
  db: Kysely<Database>,
  authorId: string,
  limit?: number,
): Promise<{ id: string; account_id: string; languages: string | null }[]> {
  // Built once per limit (db/prepared.ts): it runs for every post, local or not.
  const query = prepared<"author">(
    db,
    `follows.bell.${limit ?? "all"}`,
    (slot) => {
      let query = db
        .selectFrom("follows")
        .select(["follows.id", "follows.account_id", "follows.languages"])
        .where("follows.target_account_id", "=", slot("author") as string)
        // The column itself, as the partial index names it (a bound `true` would not match it).
        .where(sql<boolean>`follows.notify`)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom("accounts")
              .select(sql`1`.as("one"))
              .whereRef("accounts.id", "=", "follows.account_id")
              .where("accounts.domain", "is", null),
          ),
        );
      if (limit !== undefined) query = query.limit(limit);
      return query;
    },
    { author: authorId },
  );
  return (await db.executeQuery<{ id: string; account_id: string; languages: string | null }>(query)).rows;
}
