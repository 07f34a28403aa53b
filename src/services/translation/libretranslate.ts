import {
  DEFAULT_LANGUAGES_TTL_MS,
  DEFAULT_TIMEOUT_MS,
  ExpiringValue,
  primaryLanguage,
  requestJson,
  TranslationUnavailable,
} from "./http.ts";
import type { TranslationProvider, TranslationResult } from "./provider.ts";

export interface LibreTranslateOptions {
  /** Base URL of the LibreTranslate server (LIBRE_TRANSLATE_ENDPOINT). */
  endpoint: string;
  apiKey?: string;
  timeoutMs?: number;
  languagesTtlMs?: number;
}

interface LanguageTable {
  /** Our code → source codes → target codes. */
  pairs: Record<string, string[]>;
  /** Our code (`zh`) → the server's code (`zh-Hans`). */
  serverCodes: Map<string, string>;
}

const NAME = "LibreTranslate";

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** LibreTranslate's `GET /languages`: `[{code, name, targets}]`; servers before `targets` existed translate any pair. */
function parseLanguages(data: unknown): LanguageTable {
  if (!Array.isArray(data))
    throw new TranslationUnavailable(`${NAME} answered /languages with something that is not a list`);
  const entries: Array<{ code: string; targets: string[] | undefined }> = [];
  for (const item of data) {
    const { code, targets } = (typeof item === "object" && item !== null ? item : {}) as {
      code?: unknown;
      targets?: unknown;
    };
    if (typeof code !== "string" || (targets !== undefined && !isStringArray(targets))) {
      throw new TranslationUnavailable(`${NAME} answered /languages with an unexpected entry`);
    }
    entries.push({ code, targets });
  }
  const serverCodes = new Map<string, string>();
  for (const { code } of entries) {
    const ours = primaryLanguage(code);
    // The server's exact code wins over a regional variant of it (`pt` over `pt-BR`).
    if (ours && (!serverCodes.has(ours) || code.toLowerCase() === ours)) serverCodes.set(ours, code);
  }
  const allCodes = [...serverCodes.keys()];
  const pairs: Record<string, string[]> = {};
  for (const { code, targets } of entries) {
    const source = primaryLanguage(code);
    if (!source) continue;
    const mapped = targets ? targets.map(primaryLanguage).filter((t): t is string => t !== undefined) : allCodes;
    pairs[source] = [...new Set([...(pairs[source] ?? []), ...mapped])].filter((t) => t !== source);
  }
  return { pairs, serverCodes };
}

/** A client of LibreTranslate's HTTP API (`POST /translate`, `GET /languages`). */
export class LibreTranslateProvider implements TranslationProvider {
  readonly name = NAME;
  readonly #endpoint: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #languages: ExpiringValue<LanguageTable>;

  constructor(options: LibreTranslateOptions) {
    this.#endpoint = options.endpoint.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#languages = new ExpiringValue(options.languagesTtlMs ?? DEFAULT_LANGUAGES_TTL_MS, async () =>
      parseLanguages(
        await requestJson(NAME, `${this.#endpoint}/languages`, { method: "GET", timeoutMs: this.#timeoutMs }),
      ),
    );
  }

  async translate(texts: string[], source: string | undefined, target: string): Promise<TranslationResult> {
    const { serverCodes } = await this.#languages.get();
    const body: Record<string, unknown> = {
      q: texts,
      source: source ? (serverCodes.get(source) ?? source) : "auto",
      target: serverCodes.get(target) ?? target,
      format: "html",
    };
    if (this.#apiKey) body.api_key = this.#apiKey;
    const data = (await requestJson(NAME, `${this.#endpoint}/translate`, {
      method: "POST",
      body,
      timeoutMs: this.#timeoutMs,
    })) as {
      translatedText?: unknown;
      detectedLanguage?: unknown;
    } | null;
    const translated = data?.translatedText;
    if (!isStringArray(translated) || translated.length !== texts.length) {
      throw new TranslationUnavailable(`${NAME} answered /translate without one translation per text`);
    }
    // With `source: auto` each text comes with {language, confidence}; the first text (the content) speaks for all.
    const detectedList = data?.detectedLanguage;
    const detected = (Array.isArray(detectedList) ? detectedList[0] : detectedList) as
      { language?: unknown } | null | undefined;
    const detectedCode = typeof detected?.language === "string" ? primaryLanguage(detected.language) : undefined;
    return { texts: translated, detectedSourceLanguage: source ?? detectedCode ?? "und" };
  }

  async languages(): Promise<Record<string, string[]>> {
    return (await this.#languages.get()).pairs;
  }
}
