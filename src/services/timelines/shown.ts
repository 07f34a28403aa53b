/**
 * Where a status is shown: the home feeds and lists that hold it, whether it is on the public
 * timelines, its hashtags. Streams announce a new or edited status there, and a deletion must be
 * announced where the status was — read before the deletion takes its feed entries.
 */
import type { Compilable, Kysely } from "kysely";
import { prepared } from "../../db/prepared.ts";
import type { Database, StatusRow } from "../../db/schema.ts";
import type { ShownStatus } from "../../events/types.ts";

type Shown = Pick<
  StatusRow,
  "id" | "account_id" | "visibility" | "reblog_of_id" | "in_reply_to_account_id" | "ordered_media_attachment_ids"
>;

/**
 * Where each status is shown now. With `mentioned`, the home feeds of the local accounts it
 * mentions count too (a deletion reaches them even if their feed never held it).
 */
export async function whereShown(
  db: Kysely<Database>,
  statuses: readonly Shown[],
  options: { mentioned?: boolean } = {},
): Promise<ShownStatus[]> {
  return Promise.all(statuses.map((status) => shownOne(db, status, options.mentioned === true)));
}

/** The statements of shownOne, built once each (db/prepared.ts): they run for every new status. */
const byStatus = (db: Kysely<Database>, key: string, build: (status: string) => Compilable, statusId: string) =>
  db.executeQuery<Record<string, string>>(
    prepared<"status">(db, `shown.${key}`, (slot) => build(slot("status") as string), { status: statusId }),
  );

async function shownOne(db: Kysely<Database>, status: Shown, withMentioned: boolean): Promise<ShownStatus> {
  const original = status.visibility === "public" && !status.reblog_of_id;
  const [author, tags, homes, lists, mentioned] = await Promise.all([
    db.executeQuery<{ silenced_at: string | null; domain: string | null }>(
      prepared<"account">(
        db,
        "shown.author",
        (slot) =>
          db
            .selectFrom("accounts")
            .select(["silenced_at", "domain"])
            .where("id", "=", slot("account") as string),
        { account: status.account_id },
      ),
    ),
    original
      ? byStatus(
          db,
          "tags",
          (id) =>
            db
              .selectFrom("statuses_tags")
              .innerJoin("tags", "tags.id", "statuses_tags.tag_id")
              .select("tags.name")
              .where("statuses_tags.status_id", "=", id),
          status.id,
        )
      : { rows: [] },
    byStatus(
      db,
      "homes",
      (id) => db.selectFrom("home_feed_entries").select("account_id").where("status_id", "=", id),
      status.id,
    ),
    byStatus(
      db,
      "lists",
      (id) => db.selectFrom("list_feed_entries").select("list_id").where("status_id", "=", id),
      status.id,
    ),
    withMentioned
      ? byStatus(
          db,
          "mentioned",
          (id) =>
            db
              .selectFrom("mentions")
              .innerJoin("accounts", "accounts.id", "mentions.account_id")
              .select("mentions.account_id")
              .where("mentions.status_id", "=", id)
              .where("accounts.domain", "is", null),
          status.id,
        )
      : { rows: [] },
  ]).then(
    ([author, tags, homes, lists, mentioned]) =>
      [
        author.rows[0],
        tags.rows as { name: string }[],
        homes.rows as { account_id: string }[],
        lists.rows as { list_id: string }[],
        mentioned.rows as { account_id: string }[],
      ] as const,
  );
  const replyToOthers = status.in_reply_to_account_id !== null && status.in_reply_to_account_id !== status.account_id;
  return {
    statusId: status.id,
    authorId: status.account_id,
    local: author?.domain === null,
    visibility: status.visibility,
    onPublicTimelines: original && author !== undefined && !author.silenced_at && !replyToOthers,
    hasMedia: status.ordered_media_attachment_ids !== null && status.ordered_media_attachment_ids !== "[]",
    tags: author ? tags.map((t) => t.name.toLowerCase()) : [],
    homeAccountIds: [...new Set([...homes.map((h) => h.account_id), ...mentioned.map((m) => m.account_id)])],
    listIds: lists.map((l) => l.list_id),
  };
}
