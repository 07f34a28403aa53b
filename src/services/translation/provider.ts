import type { Config } from "../../config.ts";
import type { Ctx } from "../../context.ts";
import { DeepLProvider } from "./deepl.ts";
import { LibreTranslateProvider } from "./libretranslate.ts";

export { TranslationUnavailable } from "./http.ts";

export interface TranslationResult {
  /** One translation per input text, in the same order. */
  texts: string[];
  /** ISO 639 code of the source: the one given, or the one the provider detected. */
  detectedSourceLanguage: string;
}

/**
 * A machine translation service. Texts are HTML (plain texts arrive escaped); language codes are
 * lowercase ISO 639 codes on both sides of the interface. Failures throw TranslationUnavailable.
 */
export interface TranslationProvider {
  /** Shown to clients as the Translation's `provider`. */
  name: string;
  /** Translates all `texts` at once; `source` undefined means the provider detects it. */
  translate(texts: string[], source: string | undefined, target: string): Promise<TranslationResult>;
  /** Source language → the target languages it can be translated into. */
  languages(): Promise<Record<string, string[]>>;
}

/** The provider the configuration names: DeepL when it has a key, else LibreTranslate when it has an endpoint. */
export function createTranslationProvider(config: Config): TranslationProvider | undefined {
  const { deeplApiKey, deeplPlan, libreTranslateEndpoint, libreTranslateApiKey } = config.translation;
  if (deeplApiKey) return new DeepLProvider({ apiKey: deeplApiKey, plan: deeplPlan });
  if (libreTranslateEndpoint)
    return new LibreTranslateProvider({ endpoint: libreTranslateEndpoint, apiKey: libreTranslateApiKey });
  return undefined;
}

// One client per context, so its language list is cached for the life of the server.
const providers = new WeakMap<Pick<Ctx, "config">, TranslationProvider | null>();

/** The translation provider of this server, or undefined when translation is not configured. */
export function translationProvider(ctx: Pick<Ctx, "config">): TranslationProvider | undefined {
  let provider = providers.get(ctx);
  if (provider === undefined) {
    provider = createTranslationProvider(ctx.config) ?? null;
    providers.set(ctx, provider);
  }
  return provider ?? undefined;
}

/** Replaces the provider of `ctx` (tests aim a client at a local server, with a short timeout). */
export function useTranslationProvider(ctx: Pick<Ctx, "config">, provider: TranslationProvider | undefined): void {
  providers.set(ctx, provider ?? null);
}
