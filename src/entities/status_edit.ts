import type { Ctx } from "../context.ts";
import { mediaOrder, pollOptions, versionMediaDescriptions, versionPollOptions } from "../db/columns.ts";
import { statusEdits } from "../db/queries/statuses.ts";
import type { StatusRow } from "../db/schema.ts";
import { serializeAccount } from "./account.ts";
import { loadEmojisFor } from "./custom_emoji.ts";
import { serializeMediaAttachment } from "./media_attachment.ts";

/**
 * The versions of a status, oldest first. A status never edited has one version: itself.
 * Media are looked up once for all versions.
 */
export async function serializeStatusHistory(ctx: Ctx, status: StatusRow) {
  const edits = await statusEdits(ctx.db.kysely, status.id);
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("id", "=", status.account_id)
    .executeTakeFirstOrThrow();
  const author = await serializeAccount(ctx, account);
  const versions = edits.length
    ? edits
    : [
        {
          id: status.id,
          content: status.content,
          spoiler_text: status.spoiler_text,
          sensitive: status.sensitive,
          created_at: status.created_at,
          ordered_media_attachment_ids: status.ordered_media_attachment_ids,
          media_descriptions: null,
          poll_options: null,
        } as const,
      ];
  const mediaIds = [...new Set(versions.flatMap((v) => mediaOrder(v)))];
  const media = mediaIds.length
    ? await ctx.db.kysely.selectFrom("media_attachments").selectAll().where("id", "in", mediaIds).execute()
    : [];
  const currentPoll =
    !edits.length && status.poll_id
      ? await ctx.db.kysely.selectFrom("polls").select("options").where("id", "=", status.poll_id).executeTakeFirst()
      : undefined;
  const emojis = await loadEmojisFor(
    ctx,
    versions.map((v) => ({ key: v.id, domain: account.domain, texts: [v.content, v.spoiler_text] })),
  );
  return versions.map((version) => {
    const order = mediaOrder(version);
    const descriptions = versionMediaDescriptions(version);
    const options = versionPollOptions(version) ?? (currentPoll ? pollOptions(currentPoll) : null);
    return {
      content: version.content,
      spoiler_text: version.spoiler_text,
      sensitive: version.sensitive,
      created_at: version.created_at,
      account: author,
      poll: options ? { options: options.map((title) => ({ title })) } : null,
      media_attachments: order
        .map((id, i) => {
          const row = media.find((m) => m.id === id);
          // A recorded version keeps the description it had then, even when it had none.
          return row
            ? {
                ...serializeMediaAttachment(ctx, row),
                description: i < descriptions.length ? descriptions[i] : row.description,
              }
            : undefined;
        })
        .filter((m) => m !== undefined),
      emojis: emojis.get(version.id) ?? [],
    };
  });
}
