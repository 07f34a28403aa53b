import type { Ctx } from "../context.ts";
import type { CustomEmojiRow } from "../db/schema.ts";

export interface CustomEmoji {
  shortcode: string;
  url: string;
  static_url: string;
  visible_in_picker: boolean;
  category?: string;
}

const SHORTCODE = /:([a-zA-Z0-9_]{2,}):/g;

export function shortcodesIn(texts: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const text of texts) for (const match of text.matchAll(SHORTCODE)) found.add(match[1]);
  return found;
}

export function serializeCustomEmoji(ctx: Ctx, row: CustomEmojiRow): CustomEmoji {
  const url = row.image_file ? `${ctx.config.baseUrl}/system/${row.image_file}` : (row.image_remote_url ?? "");
  const staticUrl = row.image_static_file ? `${ctx.config.baseUrl}/system/${row.image_static_file}` : url;
  const emoji: CustomEmoji = {
    shortcode: row.shortcode,
    url,
    static_url: staticUrl,
    visible_in_picker: row.visible_in_picker,
  };
  if (row.category) emoji.category = row.category;
  return emoji;
}

export interface EmojiSource {
  key: string;
  /** The domain the text comes from (null for local); emoji are looked up on that domain. */
  domain: string | null;
  texts: readonly string[];
}

/** Finds the custom emoji used in several texts with one query; returns them per source key. */
export async function loadEmojisFor(ctx: Ctx, sources: readonly EmojiSource[]): Promise<Map<string, CustomEmoji[]>> {
  const wanted = sources.map((s) => ({ ...s, codes: shortcodesIn(s.texts) })).filter((s) => s.codes.size > 0);
  const result = new Map<string, CustomEmoji[]>();
  if (wanted.length === 0) return result;
  const allCodes = [...new Set(wanted.flatMap((s) => [...s.codes]))];
  const rows = await ctx.db.kysely
    .selectFrom("custom_emojis")
    .selectAll()
    .where("shortcode", "in", allCodes)
    .where("disabled", "=", false)
    .execute();
  const byKey = new Map(rows.map((r) => [`${r.domain ?? ""}:${r.shortcode}`, r]));
  for (const source of wanted) {
    const emojis: CustomEmoji[] = [];
    for (const code of source.codes) {
      const row = byKey.get(`${source.domain ?? ""}:${code}`);
      if (row) emojis.push(serializeCustomEmoji(ctx, row));
    }
    result.set(source.key, emojis);
  }
  return result;
}
