import {
  DEFAULT_LANGUAGES_TTL_MS,
  DEFAULT_TIMEOUT_MS,
  ExpiringValue,
  primaryLanguage,
  requestJson,
  TranslationUnavailable,
} from "./http.ts";
import type { TranslationProvider, TranslationResult } from "./provider.ts";

export interface DeepLOptions {
  apiKey: string;
  /** Free keys (ending in `:fx`) talk to api-free.deepl.com, paid ones to api.deepl.com. */
  plan: "free" | "pro";
  /** Overrides the plan's base URL (tests aim it at a local server). */
  baseUrl?: string;
  timeoutMs?: number;
  languagesTtlMs?: number;
}

const NAME = "DeepL.com";
/** DeepL takes at most 50 texts per request. */
const MAX_TEXTS_PER_REQUEST = 50;

export function deeplBaseUrl(plan: "free" | "pro"): string {
  return plan === "free" ? "https://api-free.deepl.com" : "https://api.deepl.com";
}

/** DeepL's `GET /v2/languages`: `[{language: "EN-GB", name}]`, as our codes (`en`), each once. */
function parseLanguages(data: unknown, type: string): string[] {
  if (!Array.isArray(data))
    throw new TranslationUnavailable(`${NAME} answered /v2/languages?type=${type} with something that is not a list`);
  const codes = new Set<string>();
  for (const item of data) {
    const language = typeof item === "object" && item !== null ? (item as { language?: unknown }).language : undefined;
    if (typeof language !== "string")
      throw new TranslationUnavailable(`${NAME} answered /v2/languages?type=${type} with an unexpected entry`);
    const code = primaryLanguage(language);
    if (code) codes.add(code);
  }
  return [...codes];
}

function parseTranslations(data: unknown, count: number): Array<{ text: string; detected: string | undefined }> {
  const list =
    typeof data === "object" && data !== null ? (data as { translations?: unknown }).translations : undefined;
  if (!Array.isArray(list) || list.length !== count)
    throw new TranslationUnavailable(`${NAME} answered /v2/translate without one translation per text`);
  return list.map((item) => {
    const { text, detected_source_language: detected } = (typeof item === "object" && item !== null ? item : {}) as {
      text?: unknown;
      detected_source_language?: unknown;
    };
    if (typeof text !== "string")
      throw new TranslationUnavailable(`${NAME} answered /v2/translate with a translation that is not text`);
    return { text, detected: typeof detected === "string" ? primaryLanguage(detected) : undefined };
  });
}

/** A client of DeepL's API v2 (`POST /v2/translate`, `GET /v2/languages`). */
export class DeepLProvider implements TranslationProvider {
  readonly name = NAME;
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #languages: ExpiringValue<Record<string, string[]>>;

  constructor(options: DeepLOptions) {
    this.baseUrl = (options.baseUrl ?? deeplBaseUrl(options.plan)).replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#languages = new ExpiringValue(options.languagesTtlMs ?? DEFAULT_LANGUAGES_TTL_MS, () =>
      this.#loadLanguages(),
    );
  }

  #request(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    return requestJson(NAME, `${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `DeepL-Auth-Key ${this.#apiKey}` },
      body,
      timeoutMs: this.#timeoutMs,
    });
  }

  async translate(texts: string[], source: string | undefined, target: string): Promise<TranslationResult> {
    const results: Array<{ text: string; detected: string | undefined }> = [];
    for (let start = 0; start < texts.length; start += MAX_TEXTS_PER_REQUEST) {
      const chunk = texts.slice(start, start + MAX_TEXTS_PER_REQUEST);
      // DeepL still accepts the bare `EN` and `PT` targets, which it maps to a default variant.
      const body: Record<string, unknown> = { text: chunk, target_lang: target.toUpperCase(), tag_handling: "html" };
      if (source) body.source_lang = source.toUpperCase();
      results.push(...parseTranslations(await this.#request("POST", "/v2/translate", body), chunk.length));
    }
    return { texts: results.map((r) => r.text), detectedSourceLanguage: source ?? results[0]?.detected ?? "und" };
  }

  languages(): Promise<Record<string, string[]>> {
    return this.#languages.get();
  }

  async #loadLanguages(): Promise<Record<string, string[]>> {
    const [sources, targets] = await Promise.all([
      this.#request("GET", "/v2/languages?type=source").then((data) => parseLanguages(data, "source")),
      this.#request("GET", "/v2/languages?type=target").then((data) => parseLanguages(data, "target")),
    ]);
    return Object.fromEntries(sources.map((source) => [source, targets.filter((target) => target !== source)]));
  }
}
