/**
 * Custom emoji of other servers, as their posts and profiles name them (Emoji tags): kept by
 * shortcode and domain with the image's URL on their server, so the API shows them on remote
 * posts and names as Mastodon does. A changed image replaces the old one; at most a bounded number
 * per object, with shortcodes as Mastodon allows them.
 */
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";

export interface RemoteEmoji {
  shortcode: string;
  /** The Emoji's id, if it has one. */
  uri: string | null;
  imageUrl: string;
}

const SHORTCODE = /^[a-zA-Z0-9_]{2,}$/;
const EMOJIS_MAX = 50;

/** Stores (or updates) the emoji `domain` uses. */
export async function storeRemoteEmojis(ctx: Ctx, domain: string, emojis: readonly RemoteEmoji[]): Promise<void> {
  const now = new Date().toISOString();
  const unique = new Map<string, RemoteEmoji>();
  for (const emoji of emojis.slice(0, EMOJIS_MAX))
    if (SHORTCODE.test(emoji.shortcode) && /^https?:\/\//.test(emoji.imageUrl)) unique.set(emoji.shortcode, emoji);
  for (const emoji of unique.values()) {
    const known = await ctx.db.kysely
      .selectFrom("custom_emojis")
      .select(["id", "image_remote_url"])
      .where("shortcode", "=", emoji.shortcode)
      .where("domain", "=", domain)
      .executeTakeFirst();
    if (known) {
      if (known.image_remote_url !== emoji.imageUrl)
        await ctx.db.kysely
          .updateTable("custom_emojis")
          .set({ image_remote_url: emoji.imageUrl, uri: emoji.uri, updated_at: now })
          .where("id", "=", known.id)
          .execute();
      continue;
    }
    await ctx.db.kysely
      .insertInto("custom_emojis")
      .values({
        id: newId(),
        shortcode: emoji.shortcode,
        domain,
        uri: emoji.uri,
        image_file: null,
        image_remote_url: emoji.imageUrl,
        image_static_file: null,
        disabled: false,
        visible_in_picker: false,
        category: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}
