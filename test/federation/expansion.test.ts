/**
 * JSON-LD expansion once per object (src/federation/expansion.ts): every recorded activity parses
 * to the same objects as with jsonld's own `expand`, the shortcut is taken (few real expansions
 * per activity), and what falls outside Fedify's parsing still goes to jsonld.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, test } from "node:test";
import { getDocumentLoader, type DocumentLoader } from "@fedify/fedify";
import { Activity } from "@fedify/vocab";
import jsonld from "@fedify/vocab-runtime/jsonld";
import {
  expandOnce,
  forwardedExpansions,
  installExpansionOnce,
  withPlainExpansion,
} from "../../src/federation/expansion.ts";
import { recordedActivity, RECORDED_ORIGINS as ORIGINS } from "./fake_remote.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");

/** Fedify's preloaded contexts, and Akkoma's litepub context from the recording; nothing fetched. */
const preloaded = getDocumentLoader();
const contextLoader: DocumentLoader = async (url, options) => {
  if (url === `${ORIGINS.akkoma}/schemas/litepub-0.1.jsonld`)
    return {
      contextUrl: null,
      documentUrl: url,
      document: JSON.parse(readFileSync(join(FIXTURES, "litepub-0.1.jsonld"), "utf8")),
    };
  return preloaded(url, options);
};
const documentLoader: DocumentLoader = (url) => Promise.reject(new Error(`no fetching in this test: ${url}`));

const names = readdirSync(join(FIXTURES, "activities")).map((file) => file.replace(/\.json$/, ""));

/** Everything the parsed activity holds, its embedded object included. */
async function parsed(json: Record<string, unknown>): Promise<string> {
  const parsed = await Activity.fromJsonLd(json, { contextLoader, documentLoader });
  const object = await parsed.getObject({ contextLoader, documentLoader, crossOrigin: "ignore" }).catch(() => null);
  return inspect(
    { parsed, object, json: await parsed.toJsonLd({ format: "expand", contextLoader }) },
    { depth: Infinity },
  );
}

describe("JSON-LD expansion once per object", () => {
  installExpansionOnce();

  for (const name of names)
    test(`${name}: the same objects as with jsonld's own expansion`, async () => {
      const plain = await withPlainExpansion(() => parsed(recordedActivity(name)));
      assert.equal(await parsed(recordedActivity(name)), plain);
    });

  test("a Create(Note) costs one real expansion, not fifteen", async () => {
    const api = jsonld as unknown as { expand: typeof expandOnce };
    const asked: unknown[] = [];
    api.expand = (input, options) => {
      asked.push(input);
      return expandOnce(input, options);
    };
    const before = forwardedExpansions();
    try {
      await Activity.fromJsonLd(recordedActivity("mastodon_create_note"), { contextLoader, documentLoader });
    } finally {
      installExpansionOnce();
    }
    assert.ok(asked.length >= 10, `Fedify asked for ${asked.length} expansions`);
    assert.equal(forwardedExpansions() - before, 1);
  });

  test("the result is jsonld's own, and each answer a fresh copy", async () => {
    const json = recordedActivity("mastodon_create_note");
    const options = { documentLoader: contextLoader, keepFreeFloatingNodes: true };
    const expected = await withPlainExpansion(() => jsonld.expand(json, options));
    const first = await expandOnce(json, options);
    const second = await expandOnce(json, options);
    assert.deepEqual(first, expected);
    assert.deepEqual(second, expected);
    assert.notEqual(first[0], second[0]);
    // An expanded node expands to itself, copied: deleting its type leaves the other answers whole.
    const node = first[0] as Record<string, unknown>;
    delete node["@type"];
    const again = (await expandOnce(node, options))[0] as Record<string, unknown>;
    assert.notEqual(again, node);
    assert.deepEqual(
      again,
      await withPlainExpansion(() => jsonld.expand(node, options)).then((result) => (result as unknown[])[0]),
    );
    assert.ok("@type" in (second[0] as Record<string, unknown>));
  });

  test("other options and inputs go to jsonld", async () => {
    const json = recordedActivity("mastodon_create_note");
    const options = { documentLoader: contextLoader };
    const expected = await withPlainExpansion(() => jsonld.expand(json, options));
    assert.deepEqual(await expandOnce(json, options), expected);
    const list = { "@list": [{ "@value": 1 }] };
    const parsingOptions = { documentLoader: contextLoader, keepFreeFloatingNodes: true };
    assert.deepEqual(
      await expandOnce(list, parsingOptions),
      await withPlainExpansion(() => jsonld.expand(list, parsingOptions)),
    );
  });
});
