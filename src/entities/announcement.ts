import type { Ctx } from "../context.ts";
import { accountsByIds } from "../db/queries/accounts.ts";
import { statusesByIds } from "../db/queries/statuses.ts";
import type { AccountRow, AnnouncementRow } from "../db/schema.ts";
import { acctOf, accountUrl } from "./account.ts";
import { loadEmojisFor, serializeCustomEmoji, type CustomEmoji } from "./custom_emoji.ts";
import { serializeStatuses, type Status } from "./status.ts";

export interface AnnouncementReaction {
  name: string;
  count: number;
  me?: boolean;
  url?: string;
  static_url?: string;
}

/** The Announcement entity. */
export interface AnnouncementJson {
  id: string;
  content: string;
  starts_at: string | null;
  ends_at: string | null;
  all_day: boolean;
  published_at: string;
  updated_at: string;
  read?: boolean;
  mentions: Array<{ id: string; username: string; url: string; acct: string }>;
  statuses: Status[];
  tags: Array<{ name: string; url: string }>;
  emojis: CustomEmoji[];
  reactions: AnnouncementReaction[];
}

const parse = (text: string) => JSON.parse(text) as string[];

/**
 * Serializes announcements for a viewer with a fixed number of queries: reads, reactions (counted
 * per name, with the viewer's own), their custom emoji, mentioned accounts, linked public statuses.
 */
export async function serializeAnnouncements(
  ctx: Ctx,
  rows: readonly AnnouncementRow[],
  viewer: AccountRow,
): Promise<AnnouncementJson[]> {
  if (rows.length === 0) return [];
  const db = ctx.db.kysely;
  const ids = rows.map((r) => r.id);
  const [reads, reactions, mentioned, linked, emojis] = await Promise.all([
    db
      .selectFrom("announcement_reads")
      .select("announcement_id")
      .where("account_id", "=", viewer.id)
      .where("announcement_id", "in", ids)
      .execute(),
    db
      .selectFrom("announcement_reactions")
      .select((eb) => [
        "announcement_id",
        "name",
        eb.fn.countAll<number | string>().as("count"),
        eb.fn.max("custom_emoji_id").as("custom_emoji_id"),
        eb.fn.sum<number | string>(eb.case().when("account_id", "=", viewer.id).then(1).else(0).end()).as("mine"),
      ])
      .where("announcement_id", "in", ids)
      .groupBy(["announcement_id", "name"])
      .execute(),
    accountsByIds(db, [...new Set(rows.flatMap((r) => parse(r.mention_ids)))]),
    statusesByIds(db, [...new Set(rows.flatMap((r) => parse(r.status_ids)))]),
    loadEmojisFor(
      ctx,
      rows.map((r) => ({ key: r.id, domain: null, texts: [r.text] })),
    ),
  ]);
  const customIds = [...new Set(reactions.map((r) => r.custom_emoji_id).filter((id): id is string => !!id))];
  const custom = new Map(
    customIds.length
      ? (await db.selectFrom("custom_emojis").selectAll().where("id", "in", customIds).execute()).map((e) => [
          String(e.id),
          serializeCustomEmoji(ctx, e),
        ])
      : [],
  );
  // Only statuses anyone may see are shown in an announcement.
  const shown = linked.filter((s) => (s.visibility === "public" || s.visibility === "unlisted") && !s.deleted_at);
  const statusJson = new Map((await serializeStatuses(ctx, shown, viewer)).map((s) => [s.id, s]));
  const accounts = new Map(mentioned.map((a) => [a.id, a]));
  const read = new Set(reads.map((r) => r.announcement_id));
  return rows.map((row) => ({
    id: row.id,
    content: row.content,
    starts_at: row.starts_at,
    ends_at: row.ends_at,
    all_day: row.all_day,
    published_at: row.published_at ?? row.created_at,
    updated_at: row.updated_at,
    read: read.has(row.id),
    mentions: parse(row.mention_ids).flatMap((id) => {
      const a = accounts.get(id);
      return a ? [{ id: a.id, username: a.username, url: accountUrl(ctx, a), acct: acctOf(a) }] : [];
    }),
    statuses: parse(row.status_ids).flatMap((id) => statusJson.get(id) ?? []),
    tags: parse(row.tag_names).map((name) => ({
      name: name.toLowerCase(),
      url: `${ctx.config.baseUrl}/tags/${encodeURIComponent(name.toLowerCase())}`,
    })),
    emojis: emojis.get(row.id) ?? [],
    reactions: reactions
      .filter((r) => r.announcement_id === row.id)
      .map((r) => {
        const emoji = r.custom_emoji_id ? custom.get(String(r.custom_emoji_id)) : undefined;
        return {
          name: r.name,
          count: Number(r.count),
          me: Number(r.mine) > 0,
          ...(emoji ? { url: emoji.url, static_url: emoji.static_url } : {}),
        };
      }),
  }));
}
