/**
 * Plain text → entities and Mastodon's counted length (reference/behaviour.md §4): pure functions,
 * tested beside the module. How formatText turns them into HTML is in test/text.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { countedLength, extractEntities, graphemeLength, type TextEntity } from "./entities.ts";

/** A compact view of the entities: ["url", url] / ["mention", username, domain] / ["hashtag", name]. */
function summary(text: string): Array<[string, string | null] | [string, string, string | null]> {
  return extractEntities(text).map((e: TextEntity) =>
    e.kind === "url" ? ["url", e.url] : e.kind === "mention" ? ["mention", e.username, e.domain] : ["hashtag", e.name],
  );
}

/** The source text each entity covers (checks the positions, not only the parsed value). */
function spans(text: string): string[] {
  return extractEntities(text).map((e) => text.slice(e.start, e.end));
}

const FAMILY = "👨‍👩‍👧‍👦";

describe("extractEntities: links", () => {
  test("a link with a counted scheme, and its exact position", () => {
    const text = "see https://example.com/path?q=1 now";
    assert.deepEqual(extractEntities(text), [{ kind: "url", start: 4, end: 32, url: "https://example.com/path?q=1" }]);
  });

  test("trailing sentence punctuation is not part of the link", () => {
    for (const end of [".", ",", "!", "?", ":", ";", "'", '"']) {
      assert.deepEqual(summary(`go to https://example.com/foo${end} now`), [["url", "https://example.com/foo"]], end);
    }
    assert.deepEqual(summary("https://example.com/a?b=1!"), [["url", "https://example.com/a?b=1"]]);
    assert.deepEqual(summary('"https://example.com/q"'), [["url", "https://example.com/q"]]);
  });

  test("parentheses: an enclosing pair stays outside, a balanced pair inside the path stays in", () => {
    assert.deepEqual(summary("(see https://example.com)"), [["url", "https://example.com"]]);
    assert.deepEqual(summary("(https://example.com/wiki/Foo_(bar))"), [["url", "https://example.com/wiki/Foo_(bar)"]]);
    assert.deepEqual(spans("x (https://example.com/a_(b)) y"), ["https://example.com/a_(b)"]);
  });

  test("schemes: http(s), gemini and friends with //, xmpp: and magnet: are links; ftp and scheme-less are not", () => {
    assert.deepEqual(summary("http://example.com"), [["url", "http://example.com"]]);
    assert.deepEqual(summary("gemini://example.com/x"), [["url", "gemini://example.com/x"]]);
    assert.deepEqual(summary("ipfs://bafy/x"), [["url", "ipfs://bafy/x"]]);
    assert.deepEqual(summary("chat at xmpp:room@conference.example"), [["url", "xmpp:room@conference.example"]]);
    assert.deepEqual(summary("magnet:?xt=urn:btih:abcdef"), [["url", "magnet:?xt=urn:btih:abcdef"]]);
    assert.deepEqual(summary("ftp://example.com/x"), []);
    assert.deepEqual(summary("example.com/x and www.example.com"), []);
  });

  test("a scheme glued to a preceding word is not a link", () => {
    assert.deepEqual(summary("foohttps://example.com"), []);
  });

  test("a # or @ inside a link belongs to the link (no hashtag or mention)", () => {
    assert.deepEqual(summary("https://example.com/#tag"), [["url", "https://example.com/#tag"]]);
    assert.deepEqual(summary("https://example.com/@bob"), [["url", "https://example.com/@bob"]]);
  });
});

describe("extractEntities: mentions", () => {
  test("local and remote forms, with the domain lowercased", () => {
    assert.deepEqual(summary("hi @bob"), [["mention", "bob", null]]);
    assert.deepEqual(summary("hi @rita@Remote.Example"), [["mention", "rita", "remote.example"]]);
    assert.deepEqual(summary("@bob_1.x"), [["mention", "bob_1.x", null]]);
  });

  test("not preceded by a word character, / or =", () => {
    for (const text of ["x@bob", "_@bob", "é@bob", "1@bob", "/@bob", "=@bob", "mail me at bob@example.com"]) {
      assert.deepEqual(summary(text), [], text);
    }
    for (const text of ["(@bob)", "hey,@bob", "\n@bob", ".@bob"]) {
      assert.deepEqual(summary(text), [["mention", "bob", null]], text);
    }
  });

  test("a sentence-ending dot is not part of the username or domain", () => {
    assert.deepEqual(spans("thanks @bob."), ["@bob"]);
    assert.deepEqual(spans("thanks @rita@remote.example."), ["@rita@remote.example"]);
    assert.deepEqual(summary("thanks @rita@remote.example."), [["mention", "rita", "remote.example"]]);
  });
});

describe("extractEntities: hashtags", () => {
  test("a hashtag needs at least one letter", () => {
    assert.deepEqual(summary("#123"), []);
    assert.deepEqual(summary("#2024 #_"), []);
    assert.deepEqual(summary("#abc123"), [["hashtag", "abc123"]]);
    assert.deepEqual(summary("#123abc"), [["hashtag", "123abc"]]);
  });

  test("# preceded by a letter, a digit, / or = is not a tag; after space or punctuation it is", () => {
    for (const text of ["a#tag", "1#tag", "/#tag", "=#tag"]) assert.deepEqual(summary(text), [], text);
    for (const text of ["#tag", "x #tag", "(#tag)", ".#tag"])
      assert.deepEqual(summary(text), [["hashtag", "tag"]], text);
  });

  test("letters of any script, separators inside, fullwidth ＃, trailing punctuation outside", () => {
    assert.deepEqual(summary("#café #日本語 #a_b"), [
      ["hashtag", "café"],
      ["hashtag", "日本語"],
      ["hashtag", "a_b"],
    ]);
    assert.deepEqual(summary("#foo·bar"), [["hashtag", "foo·bar"]]);
    assert.deepEqual(summary("#tag· and"), [["hashtag", "tag"]]);
    assert.deepEqual(summary("＃fullwidth"), [["hashtag", "fullwidth"]]);
    assert.deepEqual(spans("I like #Caturday."), ["#Caturday"]);
  });

  test("entities come back in text order", () => {
    assert.deepEqual(summary("#one @bob https://example.com #two"), [
      ["hashtag", "one"],
      ["mention", "bob", null],
      ["url", "https://example.com"],
      ["hashtag", "two"],
    ]);
  });
});

describe("graphemeLength", () => {
  test("counts grapheme clusters, not code units or code points", () => {
    assert.equal(graphemeLength(""), 0);
    assert.equal(graphemeLength("abc"), 3);
    assert.equal(graphemeLength(FAMILY), 1);
    assert.equal(FAMILY.length, 11);
    assert.equal(graphemeLength("e\u0301"), 1);
    assert.equal(graphemeLength("🇯🇵"), 1);
    assert.equal(graphemeLength("👍🏽"), 1);
    assert.equal(graphemeLength(`${FAMILY}x${FAMILY}`), 3);
  });

  test("CRLF is one cluster", () => {
    assert.equal(graphemeLength("a\r\nb"), 3);
    assert.equal(graphemeLength("a\nb"), 3);
  });
});

describe("countedLength", () => {
  test("a URL counts 23 whatever its length", () => {
    assert.equal(countedLength(`https://example.com/${"a".repeat(100)}`), 23);
    assert.equal(countedLength("https://a.io"), 23);
    assert.equal(countedLength("see https://example.com/x."), 4 + 23 + 1);
    assert.equal(countedLength(`gemini://example.com/${"x".repeat(50)}`), 23);
  });

  test("the charactersPerUrl argument replaces 23", () => {
    assert.equal(countedLength(`https://example.com/${"a".repeat(100)}`, 10), 10);
  });

  test("xmpp: and magnet: URIs are linked but count in full", () => {
    assert.equal(countedLength("xmpp:someone@conference.example.org"), 35);
    const magnet = `magnet:?xt=urn:btih:${"c".repeat(40)}`;
    assert.equal(countedLength(magnet), magnet.length);
  });

  test("a remote mention counts as @username; a local one counts in full", () => {
    assert.equal(countedLength("@rita@remote.example"), 5);
    assert.equal(countedLength("hi @rita@remote.example!"), 3 + 5 + 1);
    assert.equal(countedLength("@bob"), 4);
  });

  test("hashtags count in full, text in grapheme clusters", () => {
    assert.equal(countedLength("#Caturday"), 9);
    assert.equal(countedLength(FAMILY.repeat(3)), 3);
    assert.equal(countedLength(`${FAMILY} https://example.com/${"z".repeat(40)}`), 1 + 1 + 23);
  });

  test("text without entities counts as its grapheme length", () => {
    assert.equal(countedLength(""), 0);
    assert.equal(countedLength("ftp://example.com"), 17);
    assert.equal(countedLength("a\r\nb"), 3);
  });
});
