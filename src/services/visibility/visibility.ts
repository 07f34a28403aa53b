import type { Kysely } from "kysely";
import type { Database, StatusRow } from "../../db/schema.ts";

type StatusFacts = Pick<StatusRow, "id" | "account_id" | "visibility" | "deleted_at">;

/**
 * Who may see a status (Mastodon's StatusPolicy#show?):
 * - public and unlisted: everyone but the accounts the author blocks;
 * - private: the author, the author's followers and the accounts it mentions;
 * - direct: the author and the accounts it mentions.
 * Deleted statuses and statuses of suspended authors are seen by nobody.
 * Works on a batch with a fixed number of queries.
 */
export async function visibleStatusIds(
  db: Kysely<Database>,
  statuses: readonly StatusFacts[],
  viewerAccountId: string | undefined,
): Promise<Set<string>> {
  const live = statuses.filter((s) => !s.deleted_at);
  if (live.length === 0) return new Set();
  const authorIds = [...new Set(live.map((s) => s.account_id))];
  const suspended = new Set(
    (
      await db
        .selectFrom("accounts")
        .select("id")
        .where("id", "in", authorIds)
        .where("suspended_at", "is not", null)
        .execute()
    ).map((r) => r.id),
  );
  const candidates = live.filter((s) => !suspended.has(s.account_id));
  if (!viewerAccountId)
    return new Set(candidates.filter((s) => s.visibility === "public" || s.visibility === "unlisted").map((s) => s.id));

  const others = candidates.filter((s) => s.account_id !== viewerAccountId);
  const otherAuthors = [...new Set(others.map((s) => s.account_id))];
  const restricted = others.filter((s) => s.visibility === "private" || s.visibility === "direct").map((s) => s.id);
  const [blockedBy, following, mentioned] = await Promise.all([
    otherAuthors.length === 0
      ? []
      : db
          .selectFrom("blocks")
          .select("account_id")
          .where("account_id", "in", otherAuthors)
          .where("target_account_id", "=", viewerAccountId)
          .execute(),
    otherAuthors.length === 0
      ? []
      : db
          .selectFrom("follows")
          .select("target_account_id")
          .where("account_id", "=", viewerAccountId)
          .where("target_account_id", "in", otherAuthors)
          .execute(),
    restricted.length === 0
      ? []
      : db
          .selectFrom("mentions")
          .select("status_id")
          .where("account_id", "=", viewerAccountId)
          .where("status_id", "in", restricted)
          .execute(),
  ]);
  const blockers = new Set(blockedBy.map((r) => r.account_id));
  const followed = new Set(following.map((r) => r.target_account_id));
  const mentions = new Set(mentioned.map((r) => r.status_id));

  const visible = new Set<string>();
  for (const status of candidates) {
    if (status.account_id === viewerAccountId) {
      visible.add(status.id);
      continue;
    }
    if (blockers.has(status.account_id)) continue;
    const ok =
      status.visibility === "public" || status.visibility === "unlisted"
        ? true
        : status.visibility === "private"
          ? followed.has(status.account_id) || mentions.has(status.id)
          : mentions.has(status.id);
    if (ok) visible.add(status.id);
  }
  return visible;
}

export async function isStatusVisible(
  db: Kysely<Database>,
  status: StatusFacts,
  viewerAccountId: string | undefined,
): Promise<boolean> {
  return (await visibleStatusIds(db, [status], viewerAccountId)).has(status.id);
}
