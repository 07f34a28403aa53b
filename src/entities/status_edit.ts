import type { Ctx } from "../context.ts";
import type { StatusEditRow, StatusRow } from "../db/schema.ts";
import { serializeAccount } from "./account.ts";
import { loadEmojisFor } from "./custom_emoji.ts";
import { serializeMediaAttachment } from "./media_attachment.ts";

/**
 * The versions of a status, oldest first. A status never edited has one version: itself.
 * Media are looked up once for all versions.
 */
export async function serializeStatusHistory(ctx: Ctx, status: StatusRow, edits: readonly StatusEditRow[]) {
  const account = await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "=", status.account_id).executeTakeFirstOrThrow();
  const author = await serializeAccount(ctx, account);
  const versions = edits.length
    ? edits
    : [{ id: status.id, content: status.content, spoiler_text: status.spoiler_text, sensitive: status.sensitive, created_at: status.created_at, ordered_media_attachment_ids: status.ordered_media_attachment_ids, media_descriptions: null, poll_options: null } as const];
  const mediaIds = [...new Set(versions.flatMap((v) => (v.ordered_media_attachment_ids ? (JSON.parse(v.ordered_media_attachment_ids) as string[]) : [])))];
  const media = mediaIds.length ? await ctx.db.kysely.selectFrom("media_attachments").selectAll().where("id", "in", mediaIds).execute() : [];
  const currentPoll = !edits.length && status.poll_id ? await ctx.db.kysely.selectFrom("polls").select("options").where("id", "=", status.poll_id).executeTakeFirst() : undefined;
  const emojis = await loadEmojisFor(ctx, versions.map((v) => ({ key: v.id, domain: account.domain, texts: [v.content, v.spoiler_text] })));
  return versions.map((version) => {
    const order: string[] = version.ordered_media_attachment_ids ? JSON.parse(version.ordered_media_attachment_ids) : [];
    const descriptions: Array<string | null> = version.media_descriptions ? JSON.parse(version.media_descriptions) : [];
    const pollOptions: string[] | null = version.poll_options ? JSON.parse(version.poll_options) : currentPoll ? JSON.parse(currentPoll.options) : null;
    return {
      content: version.content,
      spoiler_text: version.spoiler_text,
      sensitive: version.sensitive,
      created_at: version.created_at,
      account: author,
      poll: pollOptions ? { options: pollOptions.map((title) => ({ title })) } : null,
      media_attachments: order
        .map((id, i) => {
          const row = media.find((m) => m.id === id);
          // A recorded version keeps the description it had then, even when it had none.
          return row ? { ...serializeMediaAttachment(ctx, row), description: i < descriptions.length ? descriptions[i] : row.description } : undefined;
        })
        .filter((m) => m !== undefined),
      emojis: emojis.get(version.id) ?? [],
    };
  });
}
