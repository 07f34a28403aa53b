/**
 * Plain text → entities, counted length and Mastodon's HTML (reference/behaviour.md §4).
 * extractEntities, countedLength and graphemeLength are pure; formatText needs a server (it looks up
 * mentioned accounts), so those tests run against one with the standard accounts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { countedLength, extractEntities, graphemeLength, type TextEntity } from "../src/text/entities.ts";
import { formatText } from "../src/text/format.ts";
import { createTestServer, standardAccounts, type StandardAccounts, type TestServer } from "./kit.ts";

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

function link(href: string, prefix: string, visible: string, rest: string, ellipsis: boolean, rel = "nofollow noopener"): string {
  return (
    `<a href="${href}" target="_blank" rel="${rel}" translate="no">` +
    `<span class="invisible">${prefix}</span><span class="${ellipsis ? "ellipsis" : ""}">${visible}</span><span class="invisible">${rest}</span></a>`
  );
}

const mention = (href: string, label: string) => `<span class="h-card" translate="no"><a href="${href}" class="u-url mention">@<span>${label}</span></a></span>`;
const hashtag = (name: string) => `<a href="https://rookery.test/tags/${name}" class="mention hashtag" rel="tag">#<span>${name}</span></a>`;

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
    for (const text of ["#tag", "x #tag", "(#tag)", ".#tag"]) assert.deepEqual(summary(text), [["hashtag", "tag"]], text);
  });

  test("letters of any script, separators inside, fullwidth ＃, trailing punctuation outside", () => {
    assert.deepEqual(summary("#café #日本語 #a_b"), [["hashtag", "café"], ["hashtag", "日本語"], ["hashtag", "a_b"]]);
    assert.deepEqual(summary("#foo·bar"), [["hashtag", "foo·bar"]]);
    assert.deepEqual(summary("#tag· and"), [["hashtag", "tag"]]);
    assert.deepEqual(summary("＃fullwidth"), [["hashtag", "fullwidth"]]);
    assert.deepEqual(spans("I like #Caturday."), ["#Caturday"]);
  });

  test("entities come back in text order", () => {
    assert.deepEqual(summary("#one @bob https://example.com #two"), [["hashtag", "one"], ["mention", "bob", null], ["url", "https://example.com"], ["hashtag", "two"]]);
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

describe("formatText", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const html = async (text: string, multiline = true) => (await formatText(server.ctx, text, { multiline })).html;

  test("empty and blank text give an empty string, not an empty paragraph", async () => {
    assert.equal(await html(""), "");
    assert.equal(await html("   \n\n "), "");
    assert.equal(await html("", false), "");
  });

  test("HTML in the text is escaped", async () => {
    assert.equal(await html(`<script>alert("x")</script> & 'y'`), "<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>");
  });

  test("blank lines split paragraphs, single newlines become <br />", async () => {
    assert.equal(await html("a\nb\n\nc"), "<p>a<br />b</p><p>c</p>");
    assert.equal(await html("one\n\n\n\ntwo"), "<p>one</p><p>two</p>");
    assert.equal(await html("trailing\n"), "<p>trailing</p>");
    assert.equal(await html("plain"), "<p>plain</p>");
  });

  test("CRLF and lone CR are newlines", async () => {
    assert.equal(await html("a\r\nb\r\n\r\nc"), "<p>a<br />b</p><p>c</p>");
    assert.equal(await html("a\rb"), "<p>a<br />b</p>");
  });

  test(
    "only two or more consecutive newlines split paragraphs (a line holding spaces does not)",
    {},
    async () => {
      assert.equal(await html("a\n \nb"), "<p>a<br /> <br />b</p>");
    },
  );

  test("without multiline there are no paragraphs", async () => {
    assert.equal(await html("just one line", false), "just one line");
    assert.equal(await html("<b>", false), "&lt;b&gt;");
  });

  test("a long link: three spans, 30 visible characters, ellipsis (behaviour.md §4 example)", async () => {
    assert.equal(
      await html("https://example.com/a/very/long/path/that/goes/on"),
      `<p>${link("https://example.com/a/very/long/path/that/goes/on", "https://", "example.com/a/very/long/path/t", "hat/goes/on", true)}</p>`,
    );
  });

  test("the 30-character cut: 30 shown plainly, exactly one more is shown too, two more get the ellipsis", async () => {
    const base = "example.com/"; // 12 characters
    const thirty = base + "a".repeat(18);
    assert.equal(thirty.length, 30);
    assert.equal(await html(`https://${thirty}`, false), link(`https://${thirty}`, "https://", thirty, "", false));
    assert.equal(await html(`https://${thirty}b`, false), link(`https://${thirty}b`, "https://", `${thirty}b`, "", false));
    assert.equal(await html(`https://${thirty}bc`, false), link(`https://${thirty}bc`, "https://", thirty, "bc", true));
    assert.equal(await html(`https://${thirty}bcd`, false), link(`https://${thirty}bcd`, "https://", thirty, "bcd", true));
  });

  test("the hidden prefix holds the scheme and a leading www., or xmpp:", async () => {
    assert.equal(await html("https://www.example.com/x", false), link("https://www.example.com/x", "https://www.", "example.com/x", "", false));
    assert.equal(await html("http://example.com/", false), link("http://example.com/", "http://", "example.com/", "", false));
    assert.equal(await html("xmpp:room@conference.example", false), link("xmpp:room@conference.example", "xmpp:", "room@conference.example", "", false));
  });

  test(
    "other schemes have no hidden prefix: the whole URL is the visible part",
    {},
    async () => {
      assert.equal(await html("gemini://example.com/x", false), link("gemini://example.com/x", "", "gemini://example.com/x", "", false));
      assert.equal(await html("magnet:?xt=urn:btih:abc", false), link("magnet:?xt=urn:btih:abc", "", "magnet:?xt=urn:btih:abc", "", false));
    },
  );

  test("an & in a link is escaped in href and text; punctuation after the link stays outside", async () => {
    assert.equal(await html("go https://example.com/?a=1&b=2."), `<p>go ${link("https://example.com/?a=1&amp;b=2", "https://", "example.com/?a=1&amp;b=2", "", false)}.</p>`);
  });

  test("the rel option adds to nofollow noopener (profile fields use me)", async () => {
    const { html: value } = await formatText(server.ctx, "https://alice.example/me", { multiline: false, rel: "me" });
    assert.equal(value, link("https://alice.example/me", "https://", "alice.example/me", "", false, "nofollow noopener me"));
  });

  test("mentions of known accounts: h-card markup, href = the account URL, label = username", async () => {
    const result = await formatText(server.ctx, "hi @bob and @rita@remote.example", { multiline: true });
    assert.equal(result.html, `<p>hi ${mention("https://rookery.test/@bob", "bob")} and ${mention("https://remote.example/@rita", "rita")}</p>`);
    assert.deepEqual(result.mentions.map((a) => a.id), [accounts.bob.account.id, accounts.rita.id]);
  });

  test("a mention with this server's domain, or in another case, is the local account", async () => {
    assert.equal(await html("@bob@rookery.test"), `<p>${mention("https://rookery.test/@bob", "bob")}</p>`);
    assert.equal(await html("@BOB"), `<p>${mention("https://rookery.test/@bob", "bob")}</p>`);
  });

  test("profile-field style (not multiline) shows a remote mention with its domain", async () => {
    assert.equal(await html("@rita@remote.example", false), mention("https://remote.example/@rita", "rita@remote.example"));
  });

  test("unknown and suspended accounts stay plain escaped text", async () => {
    assert.equal(await html("@nobody and @nobody@elsewhere.example"), "<p>@nobody and @nobody@elsewhere.example</p>");
    await server.ctx.db.kysely.updateTable("accounts").set({ suspended_at: new Date().toISOString() }).where("id", "=", accounts.lucy.account.id).execute();
    const result = await formatText(server.ctx, "@lucy", { multiline: true });
    assert.equal(result.html, "<p>@lucy</p>");
    assert.deepEqual(result.mentions, []);
  });

  test("each mentioned account is listed once", async () => {
    const result = await formatText(server.ctx, "@carol @carol @CAROL", { multiline: true });
    assert.deepEqual(result.mentions.map((a) => a.id), [accounts.carol.account.id]);
  });

  test("hashtags keep their casing; tags are listed once, case-insensitively", async () => {
    const result = await formatText(server.ctx, "#Caturday #caturday #日本語", { multiline: true });
    assert.equal(result.html, `<p>${hashtag("Caturday")} ${hashtag("caturday")} <a href="https://rookery.test/tags/${encodeURIComponent("日本語")}" class="mention hashtag" rel="tag">#<span>日本語</span></a></p>`);
    assert.deepEqual(result.tags, ["Caturday", "日本語"]);
    assert.equal(await html("#123"), "<p>#123</p>");
  });

  test("a note with everything at once", async () => {
    const text = "Hi <you>\nI am @alice's friend @carol.\n\nhttps://example.com/x #Tag";
    assert.equal(
      await html(text),
      `<p>Hi &lt;you&gt;<br />I am ${mention("https://rookery.test/@alice", "alice")}&#39;s friend ${mention("https://rookery.test/@carol", "carol")}.</p>` +
        `<p>${link("https://example.com/x", "https://", "example.com/x", "", false)} ${hashtag("Tag")}</p>`,
    );
  });
});
