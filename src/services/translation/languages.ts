import type { Ctx } from "../../context.ts";
import { TranslationUnavailable } from "./http.ts";
import { translationProvider, type TranslationProvider } from "./provider.ts";

/** Mastodon's key for statuses without a language: the provider detects it, so every target is offered. */
export const UNDETERMINED = "und";

/**
 * Source → targets of a provider, plus `und` → every target (Mastodon's entry for statuses whose
 * language is unknown). Throws TranslationUnavailable when the provider fails.
 */
export async function languagePairs(provider: TranslationProvider): Promise<Record<string, string[]>> {
  const pairs = await provider.languages();
  const everyTarget = [...new Set(Object.values(pairs).flat())].sort();
  return { ...pairs, [UNDETERMINED]: everyTarget };
}

/** What `/api/v1/instance/translation_languages` shows: the pairs, or `{}` when translation is off or its provider fails. */
export async function translationLanguages(ctx: Ctx): Promise<Record<string, string[]>> {
  const provider = translationProvider(ctx);
  if (!provider) return {};
  try {
    return await languagePairs(provider);
  } catch (error) {
    if (!(error instanceof TranslationUnavailable)) throw error;
    ctx.log.warn({ provider: provider.name, reason: error.reason }, "translation languages unavailable");
    return {};
  }
}
