import type { Ctx } from "../context.ts";
import type { PreviewCardRow } from "../db/schema.ts";

export function serializePreviewCard(ctx: Ctx, row: PreviewCardRow) {
  return {
    url: row.url,
    title: row.title,
    description: row.description,
    language: row.language,
    type: row.type,
    author_name: row.author_name,
    author_url: row.author_url,
    // Mastodon 4.3's list of authors; a card knows at most the one its page names.
    authors: row.author_name || row.author_url ? [{ name: row.author_name, url: row.author_url, account: null }] : [],
    provider_name: row.provider_name,
    provider_url: row.provider_url,
    html: row.html,
    width: row.width,
    height: row.height,
    image: row.image_file ? `${ctx.config.baseUrl}/system/${row.image_file}` : null,
    image_description: row.image_description,
    embed_url: row.embed_url,
    blurhash: row.blurhash,
    published_at: row.published_at,
  };
}
