/** The exact HTML of local posts: links, mentions, hashtags, paragraphs, custom emoji; and the author's counters. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  accountJson,
  createCustomEmoji,
  createRemoteAccount,
  createTestServer,
  createUser,
  postStatus,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../../kit.ts";

describe("HTML of local posts, mentions, tags and emojis", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const content = async (status: string) => (await postStatus(server, a.alice, { status })).content;
  const link = (href: string, prefix: string, middle: string, cls: string, rest: string) =>
    `<a href="${href}" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">${prefix}</span><span class="${cls}">${middle}</span><span class="invisible">${rest}</span></a>`;

  test("a long link: scheme hidden, 30 visible characters with an ellipsis, the rest hidden", async () => {
    assert.equal(
      await content("https://example.com/a/very/long/path/that/goes/on"),
      `<p>${link("https://example.com/a/very/long/path/that/goes/on", "https://", "example.com/a/very/long/path/t", "ellipsis", "hat/goes/on")}</p>`,
    );
  });

  test("a short link has an empty class and an empty last span; www. is hidden with the scheme", async () => {
    assert.equal(
      await content("see https://example.com"),
      `<p>see ${link("https://example.com/", "https://", "example.com", "", "")}</p>`,
    );
    assert.equal(
      await content("http://www.example.org/page"),
      `<p>${link("http://www.example.org/page", "http://www.", "example.org/page", "", "")}</p>`,
    );
  });

  test("when exactly one character would be left over the whole URL is shown", async () => {
    const display31 = `example.com/${"b".repeat(19)}`;
    assert.equal([...display31].length, 31);
    assert.equal(
      await content(`https://${display31}`),
      `<p>${link(`https://${display31}`, "https://", display31, "", "")}</p>`,
    );
    const display32 = `${display31}c`;
    assert.equal(
      await content(`https://${display32}`),
      `<p>${link(`https://${display32}`, "https://", display32.slice(0, 30), "ellipsis", display32.slice(30))}</p>`,
    );
  });

  test("trailing punctuation is not part of a link; text around it is escaped", async () => {
    assert.equal(
      await content('Go to https://example.com/x. <b>now</b> & "then"'),
      `<p>Go to ${link("https://example.com/x", "https://", "example.com/x", "", "")}. &lt;b&gt;now&lt;/b&gt; &amp; &quot;then&quot;</p>`,
    );
  });

  test("mentions of local and remote accounts; unknown ones stay text", async () => {
    const body = await postStatus(server, a.alice, {
      status: "Hi @bob, @rita@remote.example, @nobody and @ghost@nowhere.example",
    });
    assert.equal(
      body.content,
      '<p>Hi <span class="h-card" translate="no"><a href="https://rookery.test/@bob" class="u-url mention">@<span>bob</span></a></span>, ' +
        '<span class="h-card" translate="no"><a href="https://remote.example/@rita" class="u-url mention">@<span>rita</span></a></span>, @nobody and @ghost@nowhere.example</p>',
    );
    assert.deepEqual(body.mentions, [
      { id: a.bob.account.id, username: "bob", url: "https://rookery.test/@bob", acct: "bob" },
      { id: a.rita.id, username: "rita", url: "https://remote.example/@rita", acct: "rita@remote.example" },
    ]);
  });

  test("a local mention written with the local domain, and a repeated mention, are listed once", async () => {
    const body = await postStatus(server, a.alice, { status: "@carol@rookery.test and @carol again" });
    assert.deepEqual(
      body.mentions.map((m) => m.acct),
      ["carol"],
    );
    assert.equal(body.content.match(/class="u-url mention"/g)?.length, 2);
  });

  test("a remote account sharing a local username is shown with its domain", async () => {
    await createRemoteAccount(server.ctx, "bob", "other.example");
    const body = await postStatus(server, a.alice, { status: "@bob @bob@other.example" });
    assert.equal(
      body.content,
      '<p><span class="h-card" translate="no"><a href="https://rookery.test/@bob" class="u-url mention">@<span>bob</span></a></span> ' +
        '<span class="h-card" translate="no"><a href="https://other.example/@bob" class="u-url mention">@<span>bob@other.example</span></a></span></p>',
    );
    assert.deepEqual(
      body.mentions.map((m) => m.acct),
      ["bob", "bob@other.example"],
    );
  });

  test("hashtags keep their casing in the HTML; tags are lowercase with their URL", async () => {
    const body = await postStatus(server, a.alice, { status: "#Caturday and #caturday and #123 and #Café_Time" });
    assert.equal(
      body.content,
      '<p><a href="https://rookery.test/tags/Caturday" class="mention hashtag" rel="tag">#<span>Caturday</span></a> and ' +
        '<a href="https://rookery.test/tags/caturday" class="mention hashtag" rel="tag">#<span>caturday</span></a> and #123 and ' +
        '<a href="https://rookery.test/tags/Caf%C3%A9_Time" class="mention hashtag" rel="tag">#<span>Café_Time</span></a></p>',
    );
    assert.deepEqual(
      [...body.tags].sort((x, y) => x.name.localeCompare(y.name)),
      [
        { name: "café_time", url: "https://rookery.test/tags/caf%C3%A9_time" },
        { name: "caturday", url: "https://rookery.test/tags/caturday" },
      ],
    );
  });

  test("paragraphs and line breaks", async () => {
    assert.equal(await content("a\nb\n\nc"), "<p>a<br />b</p><p>c</p>");
    assert.equal(await content("one\r\ntwo\r\n\r\n\r\nthree"), "<p>one<br />two</p><p>three</p>");
    assert.equal(await content("single line"), "<p>single line</p>");
  });

  test("custom emoji stay as shortcodes and are listed in emojis", async () => {
    await createCustomEmoji(server, "blobcat");
    const body = await postStatus(server, a.alice, {
      status: "I love :blobcat: and :unknown:",
      spoiler_text: ":blobcat:",
    });
    assert.equal(body.content, "<p>I love :blobcat: and :unknown:</p>");
    assert.equal(body.emojis.length, 1);
    assert.equal(body.emojis[0].shortcode, "blobcat");
    assert.equal(body.emojis[0].url, "https://rookery.test/emoji/blobcat.png");
    assert.equal(body.emojis[0].visible_in_picker, true);
  });

  test("statuses_count and last_status_at move with new posts, but not for direct messages", async () => {
    const user = await createUser(server.ctx, "counter");
    const start = await accountJson(server, user);
    assert.equal(start.statuses_count, 0);
    assert.equal(start.last_status_at, null);
    await postStatus(server, user, { status: "one" });
    await postStatus(server, user, { status: "two", visibility: "private" });
    const account = await accountJson(server, user);
    assert.equal(account.statuses_count, 2);
    assert.equal(account.last_status_at, new Date().toISOString().slice(0, 10));
    await postStatus(server, user, { status: "@alice psst", visibility: "direct" });
    assert.equal((await accountJson(server, user)).statuses_count, 2);
  });
});
