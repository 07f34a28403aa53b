import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, test } from "node:test";
import { loadConfig } from "../src/config.ts";
import { DeepLProvider } from "../src/services/translation/deepl.ts";
import { translationLanguages } from "../src/services/translation/languages.ts";
import { LibreTranslateProvider } from "../src/services/translation/libretranslate.ts";
import {
  translationProvider,
  useTranslationProvider,
  type TranslationProvider,
} from "../src/services/translation/provider.ts";
import {
  appToken,
  createTestServer,
  errorOf,
  postStatus,
  request,
  standardAccounts,
  tokenFor,
  uploadImage,
  type RequestOptions,
  type StandardAccounts,
  type TestServer,
} from "./kit.ts";

// ---- A local stand-in for a translation service. ----

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** What the stand-in answers: JSON, raw text, or nothing at all. */
type Answer = { status?: number; json?: unknown; text?: string } | "hang";

interface FakeService {
  url: string;
  received: Received[];
  answer: (req: Received) => Answer;
  /** The requests to one path (query string included). */
  to(path: string): Received[];
  close(): Promise<void>;
}

async function fakeService(answer: (req: Received) => Answer): Promise<FakeService> {
  const service: FakeService = {
    url: "",
    received: [],
    answer,
    to: (path) => service.received.filter((r) => r.path === path),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown = raw || undefined;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // Left as text; the assertions will show it.
      }
      const received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      service.received.push(received);
      const reply = service.answer(received);
      if (reply === "hang") return;
      res.writeHead(reply.status ?? 200, {
        "content-type": reply.text === undefined ? "application/json" : "text/html",
      });
      res.end(reply.text ?? JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}

/** The stand-in's German: word for word, text outside tags only. */
const GERMAN: Record<string, string> = {
  Hallo: "Hello",
  Welt: "world",
  Achtung: "Caution",
  Ja: "Yes",
  Nein: "No",
  Bild: "Picture",
  einer: "of a",
  Katze: "cat",
};
function fakeTranslate(html: string): string {
  return html
    .split(/(<[^>]*>)/)
    .map((part) => (part.startsWith("<") ? part : part.replace(/[A-Za-z]+/g, (word) => GERMAN[word] ?? word)))
    .join("");
}

// ---- Helpers over the Rookery API. ----

function translate(
  server: TestServer,
  statusId: string,
  token: string | undefined,
  options: Omit<RequestOptions, "token"> = {},
) {
  return request(server.app, "POST", `/api/v1/statuses/${statusId}/translate`, { token, ...options });
}

/** Swaps the provider of a server for one test, then puts the old one back. */
async function withProvider(
  server: TestServer,
  provider: TranslationProvider,
  run: () => Promise<void>,
): Promise<void> {
  const original = translationProvider(server.ctx);
  useTranslationProvider(server.ctx, provider);
  try {
    await run();
  } finally {
    useTranslationProvider(server.ctx, original);
  }
}

// ---- LibreTranslate ----

const LIBRE_LANGUAGES = [
  { code: "en", name: "English", targets: ["de", "en", "fr", "pt", "zh-Hans"] },
  { code: "de", name: "German", targets: ["de", "en", "fr", "pt"] },
  { code: "fr", name: "French", targets: ["de", "en", "fr"] },
  { code: "pt", name: "Portuguese", targets: ["en", "pt"] },
  // A regional variant after the language itself: `pt` keeps meaning the server's `pt`.
  { code: "pt-BR", name: "Portuguese (Brazil)", targets: ["en", "pt"] },
  { code: "zh-Hans", name: "Chinese", targets: ["en", "zh-Hans"] },
];

function libreTranslateAnswer(req: Received): Answer {
  if (req.method === "GET" && req.path === "/languages") return { json: LIBRE_LANGUAGES };
  if (req.method === "POST" && req.path === "/translate") {
    const body = req.body as { q: string[]; source: string };
    const detected =
      body.source === "auto" ? { detectedLanguage: body.q.map(() => ({ confidence: 91, language: "de" })) } : {};
    return { json: { translatedText: body.q.map(fakeTranslate), ...detected } };
  }
  return { status: 404, json: { error: "Not Found" } };
}

describe("POST /api/v1/statuses/:id/translate with LibreTranslate", () => {
  let lt: FakeService;
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    lt = await fakeService(libreTranslateAnswer);
    server = await createTestServer({
      // The trailing slash is how admins often write it.
      env: { LIBRE_TRANSLATE_ENDPOINT: `${lt.url}/`, LIBRE_TRANSLATE_API_KEY: "lt-secret" },
    });
    accounts = await standardAccounts(server.ctx);
  });
  after(async () => {
    await server.close();
    await lt.close();
  });
  beforeEach(() => {
    lt.answer = libreTranslateAnswer;
    lt.received.length = 0;
  });

  test("translates content, content warning and poll options in one request", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo Welt"],
      ["spoiler_text", "Achtung <Katze> & :blobcat:"],
      ["language", "de"],
      ["poll[options][]", "Ja"],
      ["poll[options][]", "Nein"],
      ["poll[expires_in]", "3600"],
    ]);
    const res = await translate(server, status.id, accounts.alice.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      content: "<p>Hello world</p>",
      spoiler_text: "Caution <cat> & :blobcat:",
      media_attachments: [],
      poll: { id: status.poll!.id, options: [{ title: "Yes" }, { title: "No" }] },
      detected_source_language: "de",
      provider: "LibreTranslate",
    });
    const sent = lt.to("/translate");
    assert.equal(sent.length, 1);
    assert.match(String(sent[0].headers["content-type"]), /^application\/json/);
    assert.deepEqual(sent[0].body, {
      q: ["<p>Hallo Welt</p>", 'Achtung &lt;Katze&gt; &amp; <span translate="no">:blobcat:</span>', "Ja", "Nein"],
      source: "de",
      target: "en",
      format: "html",
      api_key: "lt-secret",
    });
  });

  test("a status without a language is sent as auto and the provider's detection is reported", async () => {
    const status = await postStatus(server, accounts.alice, [["status", "Hallo"]]);
    assert.equal(status.language, null);
    const res = await translate(server, status.id, accounts.alice.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().detected_source_language, "de");
    assert.equal(res.json().poll, null);
    assert.equal((lt.to("/translate")[0].body as { source: string }).source, "auto");
  });

  test("translates media descriptions in the status's order; one without a description stays empty", async () => {
    const described = (await uploadImage(server, accounts.alice, { description: "Bild einer Katze" })).id;
    const bare = (await uploadImage(server, accounts.alice)).id;
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
      ["media_ids[]", bare],
      ["media_ids[]", described],
    ]);
    const res = await translate(server, status.id, accounts.alice.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().media_attachments, [
      { id: bare, description: "" },
      { id: described, description: "Picture of a cat" },
    ]);
    assert.deepEqual((lt.to("/translate")[0].body as { q: string[] }).q, ["<p>Hallo</p>", "Bild einer Katze"]);
  });

  test("the target is the lang parameter, else the user's locale, else Accept-Language, else English", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    await server.ctx.db.kysely
      .updateTable("users")
      .set({ locale: "fr" })
      .where("id", "=", accounts.bob.user.id)
      .execute();
    const targetOf = async (token: string, options: Omit<RequestOptions, "token"> = {}) => {
      lt.received.length = 0;
      // Translations are kept per language: forget them, so that each case reaches the provider.
      await server.ctx.db.kysely.deleteFrom("status_translations").execute();
      const res = await translate(server, status.id, token, options);
      assert.equal(res.statusCode, 200, res.body);
      return (lt.to("/translate")[0].body as { target: string }).target;
    };
    assert.equal(await targetOf(accounts.bob.token, { form: { lang: "en" } }), "en");
    assert.equal(await targetOf(accounts.bob.token, { json: { lang: "pt-BR" } }), "pt");
    assert.equal(await targetOf(accounts.bob.token), "fr");
    assert.equal(await targetOf(accounts.bob.token, { headers: { "accept-language": "pt" } }), "fr");
    // Not a language: ignored, as Mastodon ignores a locale it does not know.
    assert.equal(await targetOf(accounts.bob.token, { form: { lang: "?!" } }), "fr");
    assert.equal(
      await targetOf(accounts.carol.token, { headers: { "accept-language": "ja;q=0, fr-CH;q=0.8, pt;q=0.9" } }),
      "pt",
    );
    assert.equal(await targetOf(accounts.carol.token), "en");
  });

  test("403 for a language pair the provider does not offer, such as the status's own language", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    assert.deepEqual(errorOf(await translate(server, status.id, accounts.bob.token, { form: { lang: "de" } })), [
      403,
      "This action is not allowed",
    ]);
    assert.deepEqual(errorOf(await translate(server, status.id, accounts.bob.token, { form: { lang: "ja" } })), [
      403,
      "This action is not allowed",
    ]);
    const unknownSource = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "ja"],
    ]);
    assert.deepEqual(errorOf(await translate(server, unknownSource.id, accounts.bob.token)), [
      403,
      "This action is not allowed",
    ]);
    assert.equal(lt.to("/translate").length, 0);
  });

  test("a boost is translated as the status it boosts", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo Welt"],
      ["language", "de"],
    ]);
    const boost = await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, {
      token: accounts.carol.token,
    });
    assert.equal(boost.statusCode, 200, boost.body);
    const res = await translate(server, boost.json().id, accounts.bob.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().content, "<p>Hello world</p>");
  });

  test("only public and unlisted statuses: 403 for the author's private and direct ones, 404 for a stranger", async () => {
    const form = (visibility: string): Array<[string, string]> => [
      ["status", "Hallo"],
      ["language", "de"],
      ["visibility", visibility],
    ];
    const unlisted = await postStatus(server, accounts.alice, form("unlisted"));
    const privateStatus = await postStatus(server, accounts.alice, form("private"));
    const direct = await postStatus(server, accounts.alice, form("direct"));
    assert.equal((await translate(server, unlisted.id, accounts.carol.token)).statusCode, 200);
    assert.deepEqual(errorOf(await translate(server, privateStatus.id, accounts.alice.token)), [
      403,
      "This action is not allowed",
    ]);
    assert.deepEqual(errorOf(await translate(server, direct.id, accounts.alice.token)), [
      403,
      "This action is not allowed",
    ]);
    assert.deepEqual(errorOf(await translate(server, privateStatus.id, accounts.carol.token)), [
      404,
      "Record not found",
    ]);
    assert.deepEqual(errorOf(await translate(server, "99999999999", accounts.carol.token)), [404, "Record not found"]);
    assert.deepEqual(errorOf(await translate(server, "not-an-id", accounts.carol.token)), [404, "Record not found"]);
    assert.equal(lt.to("/translate").length, 1);
  });

  test("a status with nothing to translate is refused", async () => {
    const media = (await uploadImage(server, accounts.alice)).id;
    const status = await postStatus(server, accounts.alice, [["media_ids[]", media]]);
    assert.deepEqual(errorOf(await translate(server, status.id, accounts.alice.token)), [
      403,
      "This action is not allowed",
    ]);
  });

  test("an app token may translate public statuses; a token needs read:statuses; no token is 401", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    const privateStatus = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["visibility", "private"],
    ]);
    const app = await appToken(server.ctx, "read");
    const res = await translate(server, status.id, app);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().content, "<p>Hello</p>");
    assert.deepEqual(errorOf(await translate(server, privateStatus.id, app)), [404, "Record not found"]);
    assert.equal(
      (await translate(server, status.id, await tokenFor(server.ctx, accounts.carol, "read:statuses"))).statusCode,
      200,
    );
    assert.deepEqual(
      errorOf(await translate(server, status.id, await tokenFor(server.ctx, accounts.carol, "write read:accounts"))),
      [403, "This action is outside the authorized scopes"],
    );
    assert.deepEqual(errorOf(await translate(server, status.id, undefined)), [401, "The access token is invalid"]);
  });

  test("503 Service Unavailable when the provider fails, answers garbage or the wrong number of texts", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["spoiler_text", "Achtung"],
      ["language", "de"],
    ]);
    const failures: Answer[] = [
      { status: 500, json: { error: "Internal error" } },
      { status: 429, json: { error: "Slowdown" } },
      { status: 403, json: { error: "Invalid API key" } },
      // A refusal counts even when its body looks like an answer.
      { status: 400, json: { translatedText: ["Hello", "Caution"] } },
      { text: "<html><body>Bad gateway</body></html>" },
      // Well formed, but no translation of one status is a megabyte long.
      { json: { translatedText: ["Hello".repeat(250_000), "Caution"] } },
      { json: { translatedText: "Hello" } },
      { json: { translatedText: ["Hello"] } },
      { json: { translatedText: ["Hello", 42] } },
      { json: null },
    ];
    for (const failure of failures) {
      lt.answer = (req) => (req.path === "/translate" ? failure : libreTranslateAnswer(req));
      assert.deepEqual(
        errorOf(await translate(server, status.id, accounts.bob.token)),
        [503, "Service Unavailable"],
        JSON.stringify(failure),
      );
    }
    lt.answer = libreTranslateAnswer;
    assert.equal((await translate(server, status.id, accounts.bob.token)).statusCode, 200);
  });

  test("503 when the provider does not answer in time", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    lt.answer = (req) => (req.path === "/translate" ? "hang" : libreTranslateAnswer(req));
    await withProvider(server, new LibreTranslateProvider({ endpoint: lt.url, timeoutMs: 300 }), async () => {
      const started = Date.now();
      assert.deepEqual(errorOf(await translate(server, status.id, accounts.bob.token)), [503, "Service Unavailable"]);
      // Well under the default of 10 s: the client's own timeout ended the wait.
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    });
  });

  test("503 when the language list cannot be loaded, and the instance then lists no languages", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    lt.answer = (req) => (req.path === "/languages" ? { status: 502, text: "Bad gateway" } : libreTranslateAnswer(req));
    await withProvider(server, new LibreTranslateProvider({ endpoint: lt.url }), async () => {
      assert.deepEqual(errorOf(await translate(server, status.id, accounts.bob.token)), [503, "Service Unavailable"]);
      assert.deepEqual(await translationLanguages(server.ctx), {});
      lt.answer = (req) => (req.path === "/languages" ? { json: [{ code: 7 }] } : libreTranslateAnswer(req));
      assert.deepEqual(await translationLanguages(server.ctx), {});
    });
    assert.equal(lt.to("/translate").length, 0);
  });

  test("the provider's HTML is sanitized; protected emoji shortcodes and hashtags travel marked translate=no", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo :blobcat: #Katze https://example.com/a:bc:d"],
      ["language", "de"],
    ]);
    lt.answer = (req) =>
      req.path === "/translate"
        ? {
            json: {
              translatedText: [
                '<p onclick="steal()" class="x">Hello <span translate="no">:blobcat:</span> <script>alert(1)</script>' +
                  '<a href="javascript:alert(1)" class="evil mention">x</a><img src=x onerror="alert(1)">' +
                  '<a href="https://example.com/" target="_blank" style="color:red">ok</a> &lt;b&gt;</p><div><em class="mention">fine</em></div>',
              ],
            },
          }
        : libreTranslateAnswer(req);
    const res = await translate(server, status.id, accounts.bob.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(
      res.json().content,
      '<p class="">Hello :blobcat: <a class="mention">x</a><a href="https://example.com/" target="_blank" rel="noopener">ok</a> &lt;b&gt;</p><em>fine</em>',
    );
    const [sent] = (lt.to("/translate")[0].body as { q: string[] }).q;
    // The link was already translate="no": the shortcode-like text inside it is left as it is.
    assert.equal(
      sent,
      '<p>Hallo <span translate="no">:blobcat:</span> ' +
        '<a href="https://rookery.test/tags/Katze" class="mention hashtag" rel="tag" translate="no">#<span>Katze</span></a> ' +
        '<a href="https://example.com/a:bc:d" target="_blank" rel="nofollow noopener" translate="no">' +
        '<span class="invisible">https://</span><span class="">example.com/a:bc:d</span><span class="invisible"></span></a></p>',
    );
  });

  test("translationLanguages lists the pairs with und for any source, and keeps them for an hour", async () => {
    const expected = {
      en: ["de", "fr", "pt", "zh"],
      de: ["en", "fr", "pt"],
      fr: ["de", "en"],
      pt: ["en"],
      zh: ["en"],
      und: ["de", "en", "fr", "pt", "zh"],
    };
    await withProvider(server, new LibreTranslateProvider({ endpoint: lt.url }), async () => {
      assert.deepEqual(await translationLanguages(server.ctx), expected);
      assert.deepEqual(await translationLanguages(server.ctx), expected);
      assert.equal(lt.to("/languages").length, 1);
    });
    await withProvider(server, new LibreTranslateProvider({ endpoint: lt.url, languagesTtlMs: 0 }), async () => {
      await translationLanguages(server.ctx);
      await translationLanguages(server.ctx);
      assert.equal(lt.to("/languages").length, 3);
    });
  });

  test("languages go out in the server's own codes (zh → zh-Hans); no api_key goes out when none is set", async () => {
    const english = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "en"],
    ]);
    const chinese = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "zh"],
    ]);
    await withProvider(server, new LibreTranslateProvider({ endpoint: lt.url }), async () => {
      assert.equal(
        (await translate(server, english.id, accounts.carol.token, { form: { lang: "zh" } })).statusCode,
        200,
      );
      assert.equal(
        (await translate(server, chinese.id, accounts.carol.token, { form: { lang: "en" } })).statusCode,
        200,
      );
    });
    assert.deepEqual(
      lt.to("/translate").map((r) => r.body),
      [
        { q: ["<p>Hallo</p>"], source: "en", target: "zh-Hans", format: "html" },
        { q: ["<p>Hallo</p>"], source: "zh-Hans", target: "en", format: "html" },
      ],
    );
  });
});

// ---- DeepL ----

const DEEPL_SOURCES = [
  { language: "DE", name: "German" },
  { language: "EN", name: "English" },
  { language: "PT", name: "Portuguese" },
  { language: "ZH", name: "Chinese" },
];
const DEEPL_TARGETS = [
  { language: "DE", name: "German", supports_formality: true },
  { language: "EN-GB", name: "English (British)", supports_formality: false },
  { language: "EN-US", name: "English (American)", supports_formality: false },
  { language: "PT-BR", name: "Portuguese (Brazilian)", supports_formality: true },
  { language: "PT-PT", name: "Portuguese (European)", supports_formality: true },
  { language: "ZH-HANS", name: "Chinese (simplified)", supports_formality: false },
];
const DEEPL_KEY = "0a1b2c3d-dl-secret:fx";

function deeplAnswer(req: Received): Answer {
  if (req.headers.authorization !== `DeepL-Auth-Key ${DEEPL_KEY}`)
    return { status: 403, json: { message: "Wrong endpoint. Use https://api.deepl.com" } };
  if (req.method === "GET" && req.path === "/v2/languages?type=source") return { json: DEEPL_SOURCES };
  if (req.method === "GET" && req.path === "/v2/languages?type=target") return { json: DEEPL_TARGETS };
  if (req.method === "POST" && req.path === "/v2/translate") {
    const body = req.body as { text: string[] };
    return {
      json: { translations: body.text.map((text) => ({ detected_source_language: "DE", text: fakeTranslate(text) })) },
    };
  }
  return { status: 404, json: { message: "Not found" } };
}

describe("POST /api/v1/statuses/:id/translate with DeepL", () => {
  let dl: FakeService;
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    dl = await fakeService(deeplAnswer);
    server = await createTestServer({ env: { DEEPL_API_KEY: DEEPL_KEY } });
    // The configured client talks to api-free.deepl.com; this one, configured the same way, to the stand-in.
    const configured = translationProvider(server.ctx);
    assert.ok(configured instanceof DeepLProvider);
    assert.equal(configured.baseUrl, "https://api-free.deepl.com");
    const { deeplApiKey, deeplPlan } = server.config.translation;
    useTranslationProvider(server.ctx, new DeepLProvider({ apiKey: deeplApiKey!, plan: deeplPlan, baseUrl: dl.url }));
    accounts = await standardAccounts(server.ctx);
  });
  after(async () => {
    await server.close();
    await dl.close();
  });
  beforeEach(() => {
    dl.answer = deeplAnswer;
    dl.received.length = 0;
  });

  test("sends every text in one request with the key, the languages and HTML tag handling", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo Welt"],
      ["spoiler_text", "Achtung"],
      ["language", "de"],
      ["poll[options][]", "Ja"],
      ["poll[options][]", "Nein"],
      ["poll[expires_in]", "3600"],
    ]);
    const res = await translate(server, status.id, accounts.bob.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      content: "<p>Hello world</p>",
      spoiler_text: "Caution",
      media_attachments: [],
      poll: { id: status.poll!.id, options: [{ title: "Yes" }, { title: "No" }] },
      detected_source_language: "de",
      provider: "DeepL.com",
    });
    const sent = dl.to("/v2/translate");
    assert.equal(sent.length, 1);
    assert.equal(sent[0].headers.authorization, `DeepL-Auth-Key ${DEEPL_KEY}`);
    assert.match(String(sent[0].headers["content-type"]), /^application\/json/);
    assert.deepEqual(sent[0].body, {
      text: ["<p>Hallo Welt</p>", "Achtung", "Ja", "Nein"],
      target_lang: "EN",
      source_lang: "DE",
      tag_handling: "html",
    });
  });

  test("without a status language DeepL detects it; a regional lang asks for the language", async () => {
    const status = await postStatus(server, accounts.alice, [["status", "Hallo"]]);
    const res = await translate(server, status.id, accounts.bob.token, { form: { lang: "pt-BR" } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().detected_source_language, "de");
    assert.deepEqual(dl.to("/v2/translate")[0].body, {
      text: ["<p>Hallo</p>"],
      target_lang: "PT",
      tag_handling: "html",
    });
  });

  test("503 when DeepL refuses the key, runs out of quota, fails or answers garbage", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    const failures: Answer[] = [
      { status: 403, json: { message: "Authorization failure" } },
      { status: 456, json: { message: "Quota exceeded" } },
      { status: 429, json: { message: "Too many requests" } },
      { status: 500, json: {} },
      { text: "<h1>maintenance</h1>" },
      { json: { translations: [] } },
      { json: { translations: [{ detected_source_language: "DE" }] } },
    ];
    for (const failure of failures) {
      dl.answer = (req) => (req.path === "/v2/translate" ? failure : deeplAnswer(req));
      assert.deepEqual(
        errorOf(await translate(server, status.id, accounts.bob.token)),
        [503, "Service Unavailable"],
        JSON.stringify(failure),
      );
    }
  });

  test("languages map DeepL's codes to ISO 639-1 (EN-GB → en, PT-BR → pt), each once, with und", async () => {
    await withProvider(server, new DeepLProvider({ apiKey: DEEPL_KEY, plan: "free", baseUrl: dl.url }), async () => {
      assert.deepEqual(await translationLanguages(server.ctx), {
        de: ["en", "pt", "zh"],
        en: ["de", "pt", "zh"],
        pt: ["de", "en", "zh"],
        zh: ["de", "en", "pt"],
        und: ["de", "en", "pt", "zh"],
      });
      await translationLanguages(server.ctx);
    });
    assert.deepEqual(dl.received.map((r) => [r.method, r.path, r.headers.authorization]).sort(), [
      ["GET", "/v2/languages?type=source", `DeepL-Auth-Key ${DEEPL_KEY}`],
      ["GET", "/v2/languages?type=target", `DeepL-Auth-Key ${DEEPL_KEY}`],
    ]);
    await withProvider(server, new DeepLProvider({ apiKey: "wrong", plan: "free", baseUrl: dl.url }), async () => {
      assert.deepEqual(await translationLanguages(server.ctx), {});
    });
  });

  test("more than 50 texts go out in requests of 50, answers kept in order", async () => {
    const provider = new DeepLProvider({ apiKey: DEEPL_KEY, plan: "pro", baseUrl: dl.url });
    const texts = Array.from({ length: 120 }, (_, i) => `Hallo ${i}`);
    const result = await provider.translate(texts, "de", "en");
    assert.deepEqual(
      result.texts,
      texts.map((t) => t.replace("Hallo", "Hello")),
    );
    assert.deepEqual(
      dl.to("/v2/translate").map((r) => (r.body as { text: string[] }).text.length),
      [50, 50, 20],
    );
  });
});

// ---- Without a provider ----

describe("translation without a provider", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  test("translating answers 503 Service Unavailable; an unknown status is still 404", async () => {
    const status = await postStatus(server, accounts.alice, [
      ["status", "Hallo"],
      ["language", "de"],
    ]);
    assert.deepEqual(errorOf(await translate(server, status.id, accounts.bob.token)), [503, "Service Unavailable"]);
    assert.deepEqual(errorOf(await translate(server, "99999999999", accounts.bob.token)), [404, "Record not found"]);
  });

  test("no translation languages", async () => {
    assert.equal(translationProvider(server.ctx), undefined);
    assert.deepEqual(await translationLanguages(server.ctx), {});
  });
});

describe("translationProvider", () => {
  test("prefers DeepL when its key is set, then LibreTranslate, else none", () => {
    const both = {
      config: loadConfig({
        DEEPL_API_KEY: "key",
        DEEPL_PLAN: "pro",
        LIBRE_TRANSLATE_ENDPOINT: "http://127.0.0.1:5000",
      }),
    };
    const deepl = translationProvider(both);
    assert.ok(deepl instanceof DeepLProvider);
    assert.equal(deepl.baseUrl, "https://api.deepl.com");
    assert.equal(deepl.name, "DeepL.com");
    const libre = translationProvider({ config: loadConfig({ LIBRE_TRANSLATE_ENDPOINT: "http://127.0.0.1:5000" }) });
    assert.ok(libre instanceof LibreTranslateProvider);
    assert.equal(libre.name, "LibreTranslate");
    assert.equal(translationProvider({ config: loadConfig({}) }), undefined);
  });

  test("one client per server", () => {
    const ctx = { config: loadConfig({ LIBRE_TRANSLATE_ENDPOINT: "http://127.0.0.1:5000" }) };
    const other = { config: ctx.config };
    assert.equal(translationProvider(ctx), translationProvider(ctx));
    assert.notEqual(translationProvider(ctx), translationProvider(other));
  });
});
