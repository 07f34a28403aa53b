import type { Ctx } from "../../context.ts";
import type { MediaAttachmentRow, PollRow, StatusRow } from "../../db/schema.ts";
import { pollOptions } from "../../db/columns.ts";
import { newId } from "../../db/ids.ts";
import { Forbidden, NotFound, ServiceUnavailable } from "../../errors.ts";
import { protectHtml, protectText, sanitizeTranslatedHtml, textOfHtml } from "./html.ts";
import { primaryLanguage, TranslationUnavailable } from "./http.ts";
import { languagePairs, UNDETERMINED } from "./languages.ts";
import { translationProvider } from "./provider.ts";

/** Mastodon's Translation entity. */
export interface Translation {
  content: string;
  spoiler_text: string;
  media_attachments: Array<{ id: string; description: string }>;
  poll: { id: string; options: Array<{ title: string }> } | null;
  detected_source_language: string;
  provider: string;
}

/** The language a client asked for (`lang`), else the viewer's locale, else English; `pt-BR` counts as `pt`. */
export function targetLanguage(targetParam: string | undefined, viewerLocale: string | null | undefined): string {
  return primaryLanguage(targetParam) ?? primaryLanguage(viewerLocale) ?? "en";
}

/** What gets translated, in the order sent to the provider. */
type Piece =
  { kind: "content" } | { kind: "spoiler" } | { kind: "option"; index: number } | { kind: "media"; id: string };

async function loadParts(
  ctx: Ctx,
  status: StatusRow,
): Promise<{ media: MediaAttachmentRow[]; poll: PollRow | undefined }> {
  const db = ctx.db.kysely;
  const [rows, poll] = await Promise.all([
    db.selectFrom("media_attachments").selectAll().where("status_id", "=", status.id).orderBy("id").execute(),
    status.poll_id ? db.selectFrom("polls").selectAll().where("id", "=", status.poll_id).executeTakeFirst() : undefined,
  ]);
  // The author's order, as the status shows them.
  const order: string[] = status.ordered_media_attachment_ids
    ? JSON.parse(status.ordered_media_attachment_ids)
    : rows.map((r) => r.id);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { media: order.map((id) => byId.get(id)).filter((r): r is MediaAttachmentRow => !!r), poll };
}

/** How long a translation is kept for reuse. */
export const TRANSLATION_CACHE_MS = 30 * 24 * 60 * 60 * 1000;

/** A kept translation of this version of the status into `language` by `provider`, if any. */
async function cachedTranslation(
  ctx: Ctx,
  statusId: string,
  language: string,
  provider: string,
  version: string,
): Promise<Translation | undefined> {
  const row = await ctx.db.kysely
    .selectFrom("status_translations")
    .select(["translation", "created_at"])
    .where("status_id", "=", statusId)
    .where("language", "=", language)
    .where("provider", "=", provider)
    .where("version", "=", version)
    .executeTakeFirst();
  if (!row || Date.parse(row.created_at) + TRANSLATION_CACHE_MS < Date.now()) return undefined;
  return JSON.parse(row.translation) as Translation;
}

/** Keeps a translation, replacing one of an older version (or another provider) of the same status and language. */
async function cacheTranslation(
  ctx: Ctx,
  statusId: string,
  language: string,
  provider: string,
  version: string,
  translation: Translation,
): Promise<void> {
  const values = { provider, version, translation: JSON.stringify(translation), created_at: new Date().toISOString() };
  await ctx.db.kysely
    .insertInto("status_translations")
    .values({ id: newId(), status_id: statusId, language, ...values })
    .onConflict((oc) => oc.columns(["status_id", "language"]).doUpdateSet(values))
    .execute();
}

/** Deletes kept translations older than the cache period (the maintenance job). */
export async function pruneTranslations(ctx: Ctx, now = Date.now()): Promise<number> {
  const result = await ctx.db.kysely
    .deleteFrom("status_translations")
    .where("created_at", "<", new Date(now - TRANSLATION_CACHE_MS).toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Machine-translates a status the viewer may see (callers check that) into `targetParam`, or the
 * viewer's locale, or English: its content, content warning, poll options and media descriptions
 * go to the provider in one call. Like Mastodon: only public and unlisted statuses (403 otherwise),
 * only language pairs the provider offers (403), 503 when translation is off or the provider fails.
 * A translation is kept per status, target language, provider and version (an edit makes a new
 * version) for 30 days, so asking again does not call the provider.
 */
export async function translateStatus(
  ctx: Ctx,
  status: StatusRow,
  viewerLocale: string | null | undefined,
  targetParam: string | undefined,
): Promise<Translation> {
  const provider = translationProvider(ctx);
  if (!provider) throw new ServiceUnavailable();
  // A boost carries no text of its own: its original is what the reader sees.
  const proper = status.reblog_of_id
    ? await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", status.reblog_of_id).executeTakeFirst()
    : status;
  if (!proper) throw new NotFound();
  if (proper.visibility !== "public" && proper.visibility !== "unlisted") throw new Forbidden();

  const { media, poll } = await loadParts(ctx, proper);
  const pieces: Piece[] = [];
  const texts: string[] = [];
  const add = (piece: Piece, html: string) => {
    pieces.push(piece);
    texts.push(html);
  };
  if (proper.content.trim() !== "") add({ kind: "content" }, protectHtml(proper.content));
  if (proper.spoiler_text.trim() !== "") add({ kind: "spoiler" }, protectText(proper.spoiler_text));
  const titles = poll ? pollOptions(poll) : [];
  titles.forEach((title, index) => {
    if (title.trim() !== "") add({ kind: "option", index }, protectText(title));
  });
  for (const attachment of media) {
    if (attachment.description?.trim()) add({ kind: "media", id: attachment.id }, protectText(attachment.description));
  }
  if (texts.length === 0) throw new Forbidden();

  const source = primaryLanguage(proper.language);
  const target = targetLanguage(targetParam, viewerLocale);
  const version = proper.edited_at ?? proper.created_at;
  const cached = await cachedTranslation(ctx, proper.id, target, provider.name, version);
  if (cached) return cached;
  try {
    const pairs = await languagePairs(provider);
    if (!pairs[source ?? UNDETERMINED]?.includes(target)) throw new Forbidden();
    const result = await provider.translate(texts, source, target);

    const translated = new Map<string, string>();
    let content = "";
    let spoilerText = "";
    const optionTitles = titles.map(() => "");
    pieces.forEach((piece, i) => {
      const text = result.texts[i];
      if (piece.kind === "content") content = sanitizeTranslatedHtml(text);
      else if (piece.kind === "spoiler") spoilerText = textOfHtml(text);
      else if (piece.kind === "option") optionTitles[piece.index] = textOfHtml(text);
      else translated.set(piece.id, textOfHtml(text));
    });
    const translation: Translation = {
      content,
      spoiler_text: spoilerText,
      media_attachments: media.map((m) => ({ id: m.id, description: translated.get(m.id) ?? "" })),
      poll: poll ? { id: poll.id, options: optionTitles.map((title) => ({ title })) } : null,
      detected_source_language: result.detectedSourceLanguage,
      provider: provider.name,
    };
    await cacheTranslation(ctx, proper.id, target, provider.name, version, translation);
    return translation;
  } catch (error) {
    if (error instanceof TranslationUnavailable)
      ctx.log.warn({ provider: provider.name, reason: error.reason, statusId: proper.id }, "translation failed");
    throw error;
  }
}
