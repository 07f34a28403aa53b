/**
 * Plain text → Mastodon's HTML with formatText (reference/behaviour.md §4). formatText needs a server
 * (it looks up mentioned accounts), so these tests run against one with the standard accounts; the
 * pure entity extraction and counting are tested beside src/text/entities.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { formatText } from "../src/services/text/format.ts";
import { createTestServer, standardAccounts, type StandardAccounts, type TestServer } from "./kit.ts";

function link(
  href: string,
  prefix: string,
  visible: string,
  rest: string,
  ellipsis: boolean,
  rel = "nofollow noopener",
): string {
  return (
    `<a href="${href}" target="_blank" rel="${rel}" translate="no">` +
    `<span class="invisible">${prefix}</span><span class="${ellipsis ? "ellipsis" : ""}">${visible}</span><span class="invisible">${rest}</span></a>`
  );
}

const mention = (href: string, label: string) =>
  `<span class="h-card" translate="no"><a href="${href}" class="u-url mention">@<span>${label}</span></a></span>`;
const hashtag = (name: string) =>
  `<a href="https://rookery.test/tags/${name}" class="mention hashtag" rel="tag">#<span>${name}</span></a>`;

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
    assert.equal(
      await html(`<script>alert("x")</script> & 'y'`),
      "<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>",
    );
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

  test("only two or more consecutive newlines split paragraphs (a line holding spaces does not)", {}, async () => {
    assert.equal(await html("a\n \nb"), "<p>a<br /> <br />b</p>");
  });

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
    assert.equal(
      await html(`https://${thirty}b`, false),
      link(`https://${thirty}b`, "https://", `${thirty}b`, "", false),
    );
    assert.equal(await html(`https://${thirty}bc`, false), link(`https://${thirty}bc`, "https://", thirty, "bc", true));
    assert.equal(
      await html(`https://${thirty}bcd`, false),
      link(`https://${thirty}bcd`, "https://", thirty, "bcd", true),
    );
  });

  test("the hidden prefix holds the scheme and a leading www., or xmpp:", async () => {
    assert.equal(
      await html("https://www.example.com/x", false),
      link("https://www.example.com/x", "https://www.", "example.com/x", "", false),
    );
    assert.equal(
      await html("http://example.com/", false),
      link("http://example.com/", "http://", "example.com/", "", false),
    );
    assert.equal(
      await html("xmpp:room@conference.example", false),
      link("xmpp:room@conference.example", "xmpp:", "room@conference.example", "", false),
    );
  });

  test("other schemes have no hidden prefix: the whole URL is the visible part", {}, async () => {
    assert.equal(
      await html("gemini://example.com/x", false),
      link("gemini://example.com/x", "", "gemini://example.com/x", "", false),
    );
    assert.equal(
      await html("magnet:?xt=urn:btih:abc", false),
      link("magnet:?xt=urn:btih:abc", "", "magnet:?xt=urn:btih:abc", "", false),
    );
  });

  test("an & in a link is escaped in href and text; punctuation after the link stays outside", async () => {
    assert.equal(
      await html("go https://example.com/?a=1&b=2."),
      `<p>go ${link("https://example.com/?a=1&amp;b=2", "https://", "example.com/?a=1&amp;b=2", "", false)}.</p>`,
    );
  });

  test("the rel option adds to nofollow noopener (profile fields use me)", async () => {
    const { html: value } = await formatText(server.ctx, "https://alice.example/me", { multiline: false, rel: "me" });
    assert.equal(
      value,
      link("https://alice.example/me", "https://", "alice.example/me", "", false, "nofollow noopener me"),
    );
  });

  test("mentions of known accounts: h-card markup, href = the account URL, label = username", async () => {
    const result = await formatText(server.ctx, "hi @bob and @rita@remote.example", { multiline: true });
    assert.equal(
      result.html,
      `<p>hi ${mention("https://rookery.test/@bob", "bob")} and ${mention("https://remote.example/@rita", "rita")}</p>`,
    );
    assert.deepEqual(
      result.mentions.map((a) => a.id),
      [accounts.bob.account.id, accounts.rita.id],
    );
  });

  test("a mention with this server's domain, or in another case, is the local account", async () => {
    assert.equal(await html("@bob@rookery.test"), `<p>${mention("https://rookery.test/@bob", "bob")}</p>`);
    assert.equal(await html("@BOB"), `<p>${mention("https://rookery.test/@bob", "bob")}</p>`);
  });

  test("profile-field style (not multiline) shows a remote mention with its domain", async () => {
    assert.equal(
      await html("@rita@remote.example", false),
      mention("https://remote.example/@rita", "rita@remote.example"),
    );
  });

  test("unknown and suspended accounts stay plain escaped text", async () => {
    assert.equal(await html("@nobody and @nobody@elsewhere.example"), "<p>@nobody and @nobody@elsewhere.example</p>");
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", accounts.lucy.account.id)
      .execute();
    const result = await formatText(server.ctx, "@lucy", { multiline: true });
    assert.equal(result.html, "<p>@lucy</p>");
    assert.deepEqual(result.mentions, []);
  });

  test("each mentioned account is listed once", async () => {
    const result = await formatText(server.ctx, "@carol @carol @CAROL", { multiline: true });
    assert.deepEqual(
      result.mentions.map((a) => a.id),
      [accounts.carol.account.id],
    );
  });

  test("hashtags keep their casing; tags are listed once, case-insensitively", async () => {
    const result = await formatText(server.ctx, "#Caturday #caturday #日本語", { multiline: true });
    assert.equal(
      result.html,
      `<p>${hashtag("Caturday")} ${hashtag("caturday")} <a href="https://rookery.test/tags/${encodeURIComponent("日本語")}" class="mention hashtag" rel="tag">#<span>日本語</span></a></p>`,
    );
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
