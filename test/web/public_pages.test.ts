/**
 * The public pages as a visitor's browser and a feed reader meet them: profiles (`/@alice`,
 * `/@alice/with_replies`), a post with its thread, hashtags, `/about`, the RSS feeds of accounts and
 * tags. They show what the API shows a reader without a token (never a private or direct post),
 * share their addresses with the ActivityPub documents (content negotiation on Accept), escape
 * whatever users typed, tell link previews and search engines what they may show, and keep their
 * content from visitors when the server asks for a sign-in. Both engines.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { attributes, Browser, decodeEntities, locationOf } from "../browser.ts";
import { DEFAULT_SETTINGS, saveSetting } from "../../src/services/instance/settings.ts";
import {
  accountJson,
  createTestServer,
  createUser,
  errorOf,
  follow,
  postStatus,
  request,
  standardData,
  statusJson,
  testImage,
  tokenFor,
  uploadImage,
  type StandardData,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { Status } from "../types.ts";

const BROWSER = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
const AP = { accept: "application/activity+json" };
const ORIGIN = "https://rookery.test";
const PUBLIC_CACHE = "public, max-age=60";
const PRIVATE_CACHE = "private, no-store";
const SIGNED_IN_ONLY = "This server shows its posts only to signed-in users";
const TIMELINES_SIGNED_IN_ONLY = "This server shows its timelines only to signed-in users";

/** A page as a browser asks for it. */
const browse = (server: TestServer, path: string, headers: Record<string, string> = BROWSER) =>
  request(server.app, "GET", path, { headers });

/** Asserts an HTML page of the public layout answered with `status`; returns its markup. */
function pageBody(res: LightMyRequestResponse, status = 200): string {
  assert.equal(res.statusCode, status, res.body.slice(0, 500));
  assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
  assert.match(String(res.headers.vary), /\bAccept\b/);
  assert.ok(res.body.startsWith("<!DOCTYPE html>"));
  return res.body;
}

/** The markup between `<body>` and `</body>`: what the page shows, without its head. */
const shown = (page: string) => page.slice(page.indexOf("<body>"), page.lastIndexOf("</body>"));

/** The head of a page. */
const headOf = (page: string) => page.slice(0, page.indexOf("</head>"));

/** The `content` of `<meta property=…>` or `<meta name=…>`, decoded; undefined when absent. */
function meta(page: string, key: string): string | undefined {
  for (const match of headOf(page).matchAll(/<meta\b[^>]*>/g)) {
    const a = attributes(match[0]);
    if (a.property === key || a.name === key) return a.content;
  }
  return undefined;
}

/** Every `<link rel="alternate">` of a page's head as `type href`. */
function alternates(page: string): string[] {
  return [...headOf(page).matchAll(/<link\b[^>]*>/g)]
    .map((m) => attributes(m[0]))
    .filter((a) => a.rel === "alternate")
    .map((a) => `${a.type} ${a.href}`);
}

/** The IDs of the posts shown as `<article>`s (a boost shows the boosted post's), in page order. */
const articleIds = (markup: string) =>
  [...markup.matchAll(/<article class="status[^"]*" id="status-(\d+)">/g)].map((m) => m[1]);

/** The markup of `<section aria-label="…">`, or undefined. */
function section(page: string, label: string): string | undefined {
  return new RegExp(`<section aria-label="${label}">([\\s\\S]*?)</section>`).exec(page)?.[1];
}

/** The `href` of the pager's link with `rel="next"` (Older posts), or undefined. */
function olderLink(page: string): string | undefined {
  const tag = /<a\b[^>]*rel="next"[^>]*>/.exec(page)?.[0];
  return tag ? attributes(tag).href : undefined;
}

/** Every `<img class="emoji">` of some markup, as attributes. */
const emojiImages = (markup: string) => [...markup.matchAll(/<img class="emoji"[^>]*>/g)].map((m) => attributes(m[0]));

// ---- XML: a small well-formedness check (no XML parser in node_modules), and the items of a feed. ----

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const XML_NAME = "[A-Za-z_][\\w.:-]*";
const START_TAG = new RegExp(`^<(${XML_NAME})((?:\\s+${XML_NAME}\\s*=\\s*(?:"[^"<]*"|'[^'<]*'))*)\\s*(/?)>$`);
const END_TAG = new RegExp(`^</(${XML_NAME})\\s*>$`);
/** An `&` that does not start one of XML's references. */
const BARE_AMPERSAND = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;
/** A character XML 1.0 does not allow. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/**
 * Fails unless `text` is a well-formed XML document: the declaration first, one root element,
 * every tag closed in order, attributes quoted, `&` only in references, no `<` in text, only
 * characters XML allows, every namespace prefix declared on the root.
 */
function assertWellFormedXml(text: string): void {
  assert.ok(text.startsWith(XML_DECLARATION), "the XML declaration comes first");
  assert.doesNotMatch(text, NOT_XML_CHAR, "only characters XML allows");
  const stack: string[] = [];
  const prefixes = new Set(["xml", "xmlns"]);
  let roots = 0;
  for (const [token] of text.slice(XML_DECLARATION.length).matchAll(/<!\[CDATA\[[\s\S]*?\]\]>|<[^<>]*>|[^<]+|</g)) {
    if (token.startsWith("<![CDATA[")) {
      assert.ok(stack.length > 0, "CDATA inside the root");
    } else if (token.startsWith("</")) {
      const end = END_TAG.exec(token);
      assert.ok(end, `a well-formed end tag: ${token}`);
      assert.equal(stack.pop(), end[1], `${token} closes the element open last`);
    } else if (token.startsWith("<")) {
      const start = START_TAG.exec(token);
      assert.ok(start, `a well-formed start tag: ${token}`);
      assert.doesNotMatch(start[2], BARE_AMPERSAND, `attribute values of ${token}`);
      if (stack.length === 0) {
        roots++;
        for (const declared of start[2].matchAll(/xmlns:([\w.-]+)=/g)) prefixes.add(declared[1]);
      }
      for (const name of [start[1], ...[...start[2].matchAll(/([\w.:-]+)\s*=/g)].map((m) => m[1])]) {
        if (name.includes(":")) assert.ok(prefixes.has(name.split(":")[0]), `the prefix of ${name} is declared`);
      }
      if (!start[3]) stack.push(start[1]);
    } else {
      if (stack.length === 0) assert.match(token, /^\s*$/, "no text outside the root element");
      assert.doesNotMatch(token, BARE_AMPERSAND, `text: ${token.slice(0, 200)}`);
      assert.ok(!token.includes("]]>"), "no ]]> in text");
    }
  }
  assert.deepEqual(stack, [], "every element is closed");
  assert.equal(roots, 1, "one root element");
}

interface FeedItem {
  guid: string;
  link: string;
  /** The post's HTML, decoded from the XML. */
  description: string;
  /** The item's markup as sent. */
  xml: string;
}

const xmlText = (item: string, tag: string) =>
  decodeEntities(new RegExp(`<${tag}\\b[^>]*>([^<]*)</${tag}>`).exec(item)?.[1] ?? "");

function feedItems(xml: string): FeedItem[] {
  return [...xml.matchAll(/<item>([\s\S]*?)<\/item>/g)].map(([, item]) => ({
    guid: xmlText(item, "guid"),
    link: xmlText(item, "link"),
    description: xmlText(item, "description"),
    xml: item,
  }));
}

/** Asserts a feed answered 200 as RSS and is well-formed; returns its items. */
function feedOf(res: LightMyRequestResponse): FeedItem[] {
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  assert.equal(res.headers["content-type"], "application/rss+xml; charset=utf-8");
  assertWellFormedXml(res.body);
  assert.match(res.body, /<rss version="2\.0"[^>]*>\s*<channel>/);
  return feedItems(res.body);
}

describe("public pages", () => {
  let server: TestServer;
  let data: StandardData;
  before(async () => {
    server = await createTestServer();
    data = await standardData(server);
  });
  after(() => server.close());

  const page = (path: string, headers?: Record<string, string>) => browse(server, path, headers);
  const boost = async (user: TestUser, status: Status): Promise<Status> => {
    const res = await request(server.app, "POST", `/api/v1/statuses/${status.id}/reblog`, { token: user.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status;
  };
  const pin = async (user: TestUser, status: Status) => {
    const res = await request(server.app, "POST", `/api/v1/statuses/${status.id}/pin`, { token: user.token });
    assert.equal(res.statusCode, 200, res.body);
  };
  const updateProfile = async (user: TestUser, json: Record<string, unknown>) => {
    const res = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", { token: user.token, json });
    assert.equal(res.statusCode, 200, res.body);
  };
  const suspend = (user: TestUser) =>
    server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", user.account.id)
      .execute();

  // ---- Profiles ----

  test("a profile shows the header, avatar, name, bio, fields with a verified mark, and the counts", async () => {
    const pat = await createUser(server.ctx, "pat");
    const res = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: pat.token,
      parts: [
        { name: "display_name", value: "Pat Patterson" },
        { name: "note", value: "Keeper of bees and lighthouses" },
        { name: "avatar", value: await testImage({ color: "#e76f51" }), filename: "me.png", type: "image/png" },
        { name: "avatar_description", value: "Pat in a beekeeper's hat" },
        { name: "header", value: await testImage({ width: 90, height: 30 }), filename: "sea.png", type: "image/png" },
        { name: "header_description", value: "A lighthouse at dusk" },
        { name: "fields_attributes[0][name]", value: "Web" },
        { name: "fields_attributes[0][value]", value: "https://pat.example" },
        { name: "fields_attributes[1][name]", value: "Hive" },
        { name: "fields_attributes[1][value]", value: "https://hive.example" },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    // A rel=me check succeeded for the first link (stored as the verification job stores it).
    const row = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("fields")
      .where("id", "=", pat.account.id)
      .executeTakeFirstOrThrow();
    const fields = JSON.parse(row.fields) as Array<Record<string, unknown>>;
    fields[0].verified_at = "2026-03-04T05:06:07.000Z";
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ fields: JSON.stringify(fields) })
      .where("id", "=", pat.account.id)
      .execute();
    await follow(server, data.bob, pat);
    await follow(server, data.carol, pat);
    await follow(server, pat, data.alice);
    await postStatus(server, pat, { status: "The bees are out" });
    const api = await accountJson(server, pat);
    assert.notEqual(api.avatar_static, `${ORIGIN}/avatars/original/missing.png`, "the avatar was stored");

    const body = shown(pageBody(await page("/@pat")));
    const images = [...body.matchAll(/<img class="(?:header|avatar)"[^>]*>/g)].map((m) => attributes(m[0]));
    assert.deepEqual(images[0], { class: "header", src: api.header_static, alt: "A lighthouse at dusk" });
    assert.equal(images[1].src, api.avatar_static);
    assert.equal(images[1].alt, "Pat in a beekeeper's hat");
    assert.match(body, /<h1>Pat Patterson<\/h1>/);
    assert.match(body, /<p class="acct">@pat@rookery\.test<\/p>/);
    assert.match(body, /<div class="note"><p>Keeper of bees and lighthouses<\/p><\/div>/);
    const dl = /<dl class="fields">([\s\S]*?)<\/dl>/.exec(body)?.[1] ?? "";
    const dds = [...dl.matchAll(/<dd\b[^>]*>/g)].map((m) => attributes(m[0]));
    assert.deepEqual(
      [...dl.matchAll(/<dt>([^<]*)<\/dt>/g)].map((m) => m[1]),
      ["Web", "Hive"],
    );
    assert.deepEqual(dds[0], { class: "verified", title: "Ownership of this link was checked on March 4, 2026" });
    assert.deepEqual(dds[1], {}, "an unverified link has no mark");
    assert.match(dl, /href="https:\/\/pat\.example\/"/);
    assert.match(body, /<strong>1<\/strong> post</);
    assert.match(body, /<strong>1<\/strong> following/);
    assert.match(body, /<strong>2<\/strong> followers/);
  });

  test("markup in a name, a bio, a field name or a field value is shown as text", async () => {
    const mallory = await createUser(server.ctx, "mallory");
    await updateProfile(mallory, {
      display_name: "<em>Mallory</em>",
      note: "I <3 <b>bold</b> bios",
      fields_attributes: {
        "0": { name: "<i>Evil</i>", value: "<script>alert('x')</script>" },
        "1": { name: "Img", value: '<img src=x onerror="alert(1)">' },
      },
    });
    const body = shown(pageBody(await page("/@mallory")));
    assert.doesNotMatch(pageBody(await page("/@mallory")), /<script/i);
    assert.doesNotMatch(body, /<img[^>]*onerror/i);
    assert.doesNotMatch(body, /<em>Mallory|<b>bold|<i>Evil/);
    assert.match(body, /<h1>&lt;em&gt;Mallory&lt;\/em&gt;<\/h1>/);
    assert.match(body, /I &lt;3 &lt;b&gt;bold&lt;\/b&gt; bios/);
    assert.match(body, /<dt>&lt;i&gt;Evil&lt;\/i&gt;<\/dt>/);
    assert.match(body, /<dd>&lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;<\/dd>/);
  });

  test("recent posts leave out replies to others and show boosts; pinned posts come first", async () => {
    const quinn = await createUser(server.ctx, "quinn");
    const first = await postStatus(server, quinn, { status: "Quinn's first words" });
    const reply = await postStatus(server, quinn, {
      status: "@alice Quinn replies to alice",
      in_reply_to_id: data.statuses.alicePublic.id,
    });
    const thread = await postStatus(server, quinn, { status: "Quinn continues a thread", in_reply_to_id: first.id });
    const boosted = await boost(quinn, data.statuses.alicePublic);
    await pin(quinn, first);

    const body = pageBody(await page("/@quinn"));
    assert.deepEqual(articleIds(section(body, "Pinned posts") ?? ""), [first.id]);
    const posts = section(body, "Posts") ?? "";
    assert.deepEqual(articleIds(posts), [data.statuses.alicePublic.id, thread.id, first.id]);
    assert.doesNotMatch(body, /Quinn replies to alice/);
    assert.ok(!articleIds(body).includes(reply.id));
    assert.match(posts, /<p class="boosted">🔁 <a href="https:\/\/rookery\.test\/@quinn">quinn<\/a> boosted<\/p>/);
    assert.match(posts, /Hello from alice/);
    assert.match(body, /<a href="\/@quinn" aria-current="page">Posts<\/a>/);
    assert.equal(boosted.reblog?.id, data.statuses.alicePublic.id);
  });

  test("/with_replies adds the replies to others", async () => {
    const body = pageBody(await page("/@bob/with_replies"));
    assert.ok(articleIds(section(body, "Posts") ?? "").includes(data.statuses.bobReply.id));
    assert.match(body, /<a href="\/@bob\/with_replies" aria-current="page">Posts and replies<\/a>/);
    const plain = pageBody(await page("/@bob"));
    assert.ok(!articleIds(plain).includes(data.statuses.bobReply.id), "not on the profile itself");
  });

  test("paging: a full page links ?max_id= to an older page that holds the rest, without repeats", async () => {
    const sam = await createUser(server.ctx, "sam");
    const posted: Status[] = [];
    for (let i = 0; i < 25; i++) posted.push(await postStatus(server, sam, { status: `Sam's post number ${i}` }));
    await pin(sam, posted[3]);
    const newestFirst = posted.map((s) => s.id).reverse();

    const first = pageBody(await page("/@sam"));
    const firstIds = articleIds(section(first, "Posts") ?? "");
    assert.deepEqual(firstIds, newestFirst.slice(0, 20));
    const older = olderLink(first);
    assert.equal(older, `/@sam?max_id=${firstIds[19]}`);

    const second = pageBody(await page(older!));
    const secondIds = articleIds(section(second, "Posts") ?? "");
    assert.deepEqual(secondIds, newestFirst.slice(20));
    assert.equal(section(second, "Pinned posts"), undefined, "pinned posts only on the first page");
    assert.equal(olderLink(second), undefined, "no older page after the last");
    assert.match(second, /<a href="\/@sam">Newest posts<\/a>/);
    assert.equal(new Set([...firstIds, ...secondIds]).size, 25);

    const replies = pageBody(await page(`/@sam/with_replies?max_id=${firstIds[19]}`));
    assert.deepEqual(articleIds(section(replies, "Posts") ?? ""), newestFirst.slice(20));
  });

  test("a hashtag's page lists its public posts, newest first, and pages", async () => {
    const tam = await createUser(server.ctx, "tam");
    const posted: Status[] = [];
    for (let i = 0; i < 22; i++) posted.push(await postStatus(server, tam, { status: `Entry ${i} #pagedtag` }));
    const newestFirst = posted.map((s) => s.id).reverse();
    const first = pageBody(await page("/tags/pagedtag"));
    assert.match(first, /<h1>#pagedtag<\/h1>/);
    assert.deepEqual(articleIds(first), newestFirst.slice(0, 20));
    const older = olderLink(first);
    assert.equal(older, `/tags/pagedtag?max_id=${newestFirst[19]}`);
    const second = pageBody(await page(older!));
    assert.deepEqual(articleIds(second), newestFirst.slice(20));
    assert.equal(olderLink(second), undefined);
    assert.deepEqual(articleIds(pageBody(await page("/tags/PagedTag"))), newestFirst.slice(0, 20), "any case");
  });

  // ---- Posts and threads ----

  test("a post's page shows its thread: the ancestors, the post, its replies", async () => {
    const root = await postStatus(server, data.alice, { status: "Root of the thread" });
    const middle = await postStatus(server, data.bob, { status: "@alice Bob answers", in_reply_to_id: root.id });
    const leaf = await postStatus(server, data.alice, { status: "@bob Alice again", in_reply_to_id: middle.id });
    const body = pageBody(await page(`/@bob/${middle.id}`));
    assert.deepEqual(articleIds(section(body, "Earlier in the thread") ?? ""), [root.id]);
    assert.deepEqual(articleIds(section(body, "Replies") ?? ""), [leaf.id]);
    assert.match(body, new RegExp(`<article class="status focus" id="status-${middle.id}">`));
    assert.deepEqual(articleIds(body), [root.id, middle.id, leaf.id], "in thread order");
    const top = pageBody(await page(`/@alice/${root.id}`));
    assert.equal(section(top, "Earlier in the thread"), undefined);
    assert.deepEqual(articleIds(section(top, "Replies") ?? ""), [middle.id, leaf.id]);
  });

  test("a post is only found under its author's name", async () => {
    pageBody(await page(`/@alice/${data.statuses.bobReply.id}`), 404);
    pageBody(await page(`/@bob/${data.statuses.bobReply.id}`), 200);
  });

  test("a boost's page redirects (301) to the boosted post", async () => {
    const uma = await createUser(server.ctx, "uma");
    const boosted = await boost(uma, data.statuses.bobReply);
    const res = await page(`/@uma/${boosted.id}`);
    assert.equal(res.statusCode, 301);
    assert.equal(locationOf(res).href, data.statuses.bobReply.url);
    assert.match(String(res.headers.vary), /\bAccept\b/);
  });

  test("private and direct posts appear nowhere: profiles, threads, their pages, tags, feeds", async () => {
    const vera = await createUser(server.ctx, "vera");
    await follow(server, data.bob, vera);
    const open = await postStatus(server, vera, { status: "Vera in the open #veratag" });
    const secret = await postStatus(server, vera, {
      status: "Vera tells followers a secret #veratag",
      visibility: "private",
    });
    const direct = await postStatus(server, vera, { status: "@bob Vera whispers #veratag", visibility: "direct" });
    const secretReply = await postStatus(server, vera, {
      status: "Vera hides a reply",
      visibility: "private",
      in_reply_to_id: open.id,
    });
    const replyToSecret = await postStatus(server, data.bob, {
      status: "@vera Bob answers in public",
      in_reply_to_id: secret.id,
    });
    await pin(vera, secret);
    const hidden = /Vera tells followers a secret|Vera whispers|Vera hides a reply/;

    for (const path of [
      "/@vera",
      "/@vera/with_replies",
      `/@vera/${open.id}`,
      "/tags/veratag",
      `/@bob/${replyToSecret.id}`,
    ]) {
      const body = pageBody(await page(path));
      assert.doesNotMatch(body, hidden, path);
      for (const id of [secret.id, direct.id, secretReply.id]) assert.ok(!body.includes(id), `${id} on ${path}`);
    }
    for (const path of ["/@vera.rss", "/tags/veratag.rss"]) {
      const res = await page(path);
      assert.deepEqual(
        feedOf(res).map((item) => item.guid),
        [open.url],
        path,
      );
      assert.doesNotMatch(res.body, hidden, path);
    }
    for (const id of [secret.id, direct.id, secretReply.id]) {
      const res = await page(`/@vera/${id}`);
      assert.doesNotMatch(pageBody(res, 404), hidden);
      assert.equal((await page(`/@vera/${id}`, AP)).statusCode, 404, "nor as ActivityPub");
    }
    assert.match(pageBody(await page("/@alice")), /Hello from alice/);
    assert.doesNotMatch(pageBody(await page("/@alice")), /For my followers only|a secret between us/);
  });

  test("a content warning is collapsed: the text waits inside <details>, link previews show the warning only", async () => {
    const post = await postStatus(server, data.alice, { status: "The punchline is here", spoiler_text: "A <joke>" });
    const res = await page(`/@alice/${post.id}`);
    const body = pageBody(res);
    const article = new RegExp(`<article class="status focus" id="status-${post.id}">([\\s\\S]*?)</article>`).exec(
      body,
    )?.[1];
    assert.match(
      article ?? "",
      /<details><summary>A &lt;joke&gt;<\/summary><div class="content"[^>]*><p>The punchline is here<\/p><\/div><\/details>/,
    );
    assert.doesNotMatch(headOf(body), /punchline/);
    assert.equal(meta(body, "og:description"), "Content warning: A <joke>");
  });

  test("media show as <img> with their alt text; a picture makes a large link preview", async () => {
    const media = await uploadImage(server, data.alice, { description: 'A "teal" <rectangle>' });
    const post = await postStatus(server, data.alice, { status: "Look at this", media_ids: [media.id] });
    const body = pageBody(await page(`/@alice/${post.id}`));
    const images = [...shown(body).matchAll(/<div class="media">([\s\S]*?)<\/div>/g)].flatMap((m) =>
      [...m[1].matchAll(/<img\b[^>]*>/g)].map((i) => attributes(i[0])),
    );
    assert.deepEqual(images, [{ src: media.preview_url, alt: 'A "teal" <rectangle>', loading: "lazy" }]);
    assert.match(body, /alt="A &quot;teal&quot; &lt;rectangle&gt;"/);
    assert.equal(meta(body, "twitter:card"), "summary_large_image");
    assert.equal(meta(body, "og:image"), media.preview_url);
    assert.equal(meta(body, "og:image:alt"), 'A "teal" <rectangle>');
    assert.equal(meta(body, "og:type"), "article");
    assert.equal(meta(body, "og:description"), "Look at this");
    assert.equal(meta(body, "og:title"), "alice (@alice@rookery.test)");
    assert.equal(meta(body, "og:url"), post.url);
  });

  test("a sensitive picture is hidden behind a <details> and makes no large link preview", async () => {
    const media = await uploadImage(server, data.alice, { description: "Not for everyone" });
    const post = await postStatus(server, data.alice, { status: "Careful", media_ids: [media.id], sensitive: true });
    const body = pageBody(await page(`/@alice/${post.id}`));
    assert.match(body, /<details><summary>Sensitive media<\/summary><div class="media">/);
    assert.equal(meta(body, "twitter:card"), "summary");
    assert.equal(meta(body, "og:image"), (await accountJson(server, data.alice)).avatar_static);
    assert.notEqual(meta(body, "og:image"), media.preview_url);
  });

  test("a poll shows its options with their results", async () => {
    const post = await postStatus(server, data.alice, {
      status: "Tea or coffee?",
      poll: { options: ["Tea <hot>", "Coffee"], expires_in: 3600 },
    });
    const voters: Array<[TestUser, string]> = [
      [data.bob, "0"],
      [data.carol, "0"],
      [data.admin, "1"],
    ];
    for (const [voter, choice] of voters) {
      const res = await request(server.app, "POST", `/api/v1/polls/${post.poll!.id}/votes`, {
        token: voter.token,
        json: { choices: [choice] },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const body = pageBody(await page(`/@alice/${post.id}`));
    const poll = /<ul class="poll">([\s\S]*?)<\/ul>/.exec(body)?.[1] ?? "";
    const options = [...poll.matchAll(/<li>([^<]*)/g)].map((m) => m[1]);
    assert.deepEqual(options, ["Tea &lt;hot&gt; — 67 % (2)", "Coffee — 33 % (1)"]);
    assert.match(body, /<p class="muted">3 people · Ends <time datetime="/);
  });

  test('custom emoji show as <img class="emoji"> in posts and names', async () => {
    const wes = await createUser(server.ctx, "wes");
    await updateProfile(wes, { display_name: "Wes :blobcat:" });
    const post = await postStatus(server, wes, { status: "Purring :blobcat: all day" });
    const emoji = (await statusJson(server, post.id)).emojis[0];
    assert.equal(emoji.shortcode, "blobcat");
    const expected = {
      class: "emoji",
      src: emoji.static_url,
      alt: ":blobcat:",
      title: ":blobcat:",
      draggable: "false",
    };
    const body = shown(pageBody(await page(`/@wes/${post.id}`)));
    const content = /<div class="content"[^>]*>([\s\S]*?)<\/div>/.exec(body)?.[1] ?? "";
    assert.deepEqual(emojiImages(content), [expected]);
    assert.match(content, /^<p>Purring <img class="emoji"[^>]*> all day<\/p>$/);
    const name = /<span class="name">([\s\S]*?)<\/span>/.exec(body)?.[1] ?? "";
    assert.deepEqual(emojiImages(name), [expected]);
    assert.deepEqual(emojiImages(/<h1>([\s\S]*?)<\/h1>/.exec(pageBody(await page("/@wes")))?.[1] ?? ""), [expected]);
  });

  test("markup in a post's text is shown as text, never injected", async () => {
    const post = await postStatus(server, data.alice, {
      status: `<b>bold</b> <script>alert(1)</script> <img src=x onerror="alert(2)"> & "quotes"`,
    });
    const full = pageBody(await page(`/@alice/${post.id}`));
    const content = /<div class="content"[^>]*>([\s\S]*?)<\/div>/.exec(shown(full))?.[1] ?? "";
    assert.doesNotMatch(full, /<script/i);
    assert.doesNotMatch(content, /<(?!\/?p>)/, "no element but the paragraph");
    assert.match(content, /&lt;b&gt;bold&lt;\/b&gt; &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(content, /&lt;img src=x onerror=&quot;alert\(2\)&quot;&gt; &amp; &quot;quotes&quot;/);
    for (const path of ["/@alice", "/@alice.rss"])
      assert.doesNotMatch((await page(path)).body, /<script|<img src=x/i, path);
  });

  // ---- What link previews and search engines read ----

  test("robots are asked to stay away exactly when the account's noindex is true", async () => {
    const xena = await createUser(server.ctx, "xena");
    const post = await postStatus(server, xena, { status: "Hello, search engines?" });
    assert.equal((await accountJson(server, xena)).noindex, true, "a new account opts out");
    for (const path of ["/@xena", `/@xena/${post.id}`, "/@xena/with_replies"])
      assert.equal(meta(pageBody(await page(path)), "robots"), "noindex, noarchive", path);
    await updateProfile(xena, { indexable: true });
    assert.equal((await accountJson(server, xena)).noindex, false);
    for (const path of ["/@xena", `/@xena/${post.id}`, "/@xena/with_replies"])
      assert.equal(meta(pageBody(await page(path)), "robots"), undefined, path);
  });

  test("a profile's OpenGraph and Twitter tags", async () => {
    const yuri = await createUser(server.ctx, "yuri");
    await updateProfile(yuri, { display_name: "Yuri Y", note: "Astronomer and night owl" });
    const body = pageBody(await page("/@yuri"));
    const api = await accountJson(server, yuri);
    assert.equal(meta(body, "og:type"), "profile");
    assert.equal(meta(body, "og:title"), "Yuri Y (@yuri@rookery.test)");
    assert.equal(meta(body, "og:description"), "Astronomer and night owl");
    assert.equal(meta(body, "description"), "Astronomer and night owl");
    assert.equal(meta(body, "og:image"), api.avatar_static);
    assert.equal(meta(body, "og:url"), `${ORIGIN}/@yuri`);
    assert.equal(meta(body, "og:site_name"), "Rookery");
    assert.equal(meta(body, "twitter:card"), "summary");
    assert.match(body, /<title>Yuri Y \(@yuri@rookery\.test\) – Rookery<\/title>/);
  });

  test("a bio with & and < reads as text in link previews", async () => {
    const zoe = await createUser(server.ctx, "zoe");
    await updateProfile(zoe, { note: "Fish & chips <3" });
    const body = pageBody(await page("/@zoe"));
    assert.equal(meta(body, "og:description"), "Fish & chips <3");
    assert.equal(meta(body, "description"), "Fish & chips <3");
  });

  test('the Link header and <link rel="alternate"> name the ActivityPub document and the feed', async () => {
    const profile = await page("/@alice");
    assert.equal(
      profile.headers.link,
      `<${ORIGIN}/users/alice>; rel="alternate"; type="application/activity+json", <${ORIGIN}/@alice.rss>; rel="alternate"; type="application/rss+xml"`,
    );
    assert.deepEqual(alternates(pageBody(profile)), [
      `application/activity+json ${ORIGIN}/users/alice`,
      `application/rss+xml ${ORIGIN}/@alice.rss`,
    ]);
    const post = await page(`/@alice/${data.statuses.alicePublic.id}`);
    const uri = data.statuses.alicePublic.uri;
    assert.equal(post.headers.link, `<${uri}>; rel="alternate"; type="application/activity+json"`);
    assert.deepEqual(alternates(pageBody(post)), [`application/activity+json ${uri}`]);
    const tag = await page("/tags/introduction");
    assert.equal(tag.headers.link, `<${ORIGIN}/tags/introduction.rss>; rel="alternate"; type="application/rss+xml"`);
    assert.deepEqual(alternates(pageBody(tag)), [`application/rss+xml ${ORIGIN}/tags/introduction.rss`]);
  });

  // ---- Content negotiation and addresses ----

  test("JSON in Accept gets the ActivityPub document, anything else the page; Vary: Accept on both", async () => {
    const post = data.statuses.alicePublic;
    const documents: Array<[string, string]> = [
      ["/@alice", data.alice.account.uri!],
      ["/users/alice", data.alice.account.uri!],
      [`/@alice/${post.id}`, post.uri],
      [`/users/alice/statuses/${post.id}`, post.uri],
    ];
    const jsonTypes = [
      "application/activity+json",
      'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
      "application/json",
      "text/html;q=0.5, application/activity+json",
    ];
    for (const [path, id] of documents) {
      for (const accept of jsonTypes) {
        const res = await page(path, { accept });
        assert.equal(res.statusCode, 200, `${path} ${accept}`);
        assert.match(String(res.headers["content-type"]), /^application\/activity\+json/, `${path} ${accept}`);
        assert.equal((res.json() as { id: string }).id, id);
        assert.match(String(res.headers.vary), /\bAccept\b/, `${path} ${accept}`);
      }
    }
    for (const path of ["/@alice", `/@alice/${post.id}`]) {
      for (const headers of [
        BROWSER,
        { accept: "*/*" },
        {},
        { accept: "application/activity+json;q=0.5, text/html" },
      ]) {
        pageBody(await page(path, headers), 200);
      }
    }
  });

  test("/users/… addresses send browsers (301) to the pages", async () => {
    const post = data.statuses.alicePublic;
    const profile = await page("/users/alice");
    assert.equal(profile.statusCode, 301);
    assert.equal(profile.headers.location, "/@alice");
    assert.match(String(profile.headers.vary), /\bAccept\b/);
    const status = await page(`/users/alice/statuses/${post.id}`);
    assert.equal(status.statusCode, 301);
    assert.equal(status.headers.location, `/@alice/${post.id}`);
    assert.match(String(status.headers.vary), /\bAccept\b/);
    pageBody(await page("/users/nobody"), 404);
    pageBody(await page("/users/nobody/statuses/1"), 404);
  });

  test("@alice@rookery.test is sent (301) to @alice; other servers' accounts have no page here", async () => {
    const post = data.statuses.alicePublic;
    const redirects: Array<[string, string]> = [
      ["/@alice@rookery.test", "/@alice"],
      ["/@alice@ROOKERY.test", "/@alice"],
      ["/@alice@rookery.test/with_replies", "/@alice/with_replies"],
      [`/@alice@rookery.test/${post.id}`, `/@alice/${post.id}`],
      ["/@alice@rookery.test.rss", "/@alice.rss"],
    ];
    for (const [from, to] of redirects) {
      const res = await page(from);
      assert.equal(res.statusCode, 301, from);
      assert.equal(res.headers.location, to, from);
    }
    for (const path of ["/@rita@remote.example", "/@rita", "/@rita/with_replies", "/@rita@remote.example.rss"]) {
      const body = pageBody(await page(path), 404);
      assert.match(body, /<h1>Page not found<\/h1>/, path);
    }
  });

  test("unknown, unconfirmed and unapproved users get an HTML 404", async () => {
    await createUser(server.ctx, "unconfirmed", { confirmed: false });
    await createUser(server.ctx, "unapproved", { approved: false });
    for (const name of ["nobody", "unconfirmed", "unapproved"]) {
      for (const path of [`/@${name}`, `/@${name}/with_replies`, `/@${name}/1`, `/users/${name}`]) {
        const res = await page(path);
        assert.match(pageBody(res, 404), /<h1>Page not found<\/h1>/, path);
        assert.equal(res.headers["cache-control"], "no-store", path);
      }
      assert.equal((await page(`/@${name}.rss`)).statusCode, 404);
    }
  });

  test("a suspended account's pages answer 410 and show nothing of it; its feed is 410", async () => {
    const zed = await createUser(server.ctx, "zed");
    await updateProfile(zed, { display_name: "Zed the Bold", note: "Zed writes a biography" });
    await postStatus(server, zed, { status: "Zed leaves last words" });
    await suspend(zed);
    for (const path of ["/@zed", "/@zed/with_replies"]) {
      const body = pageBody(await page(path), 410);
      assert.match(shown(body), /This account has been suspended\./, path);
      assert.match(shown(body), /<h1>@zed@rookery\.test<\/h1>/, path);
      assert.doesNotMatch(body, /Zed the Bold|Zed writes a biography|Zed leaves last words/, path);
      assert.equal(meta(body, "robots"), "noindex, noarchive", path);
    }
    assert.deepEqual(errorOf(await page("/@zed.rss")), [410, "This account has been suspended"]);
  });

  test("a suspended account's post page answers 410 as its profile does", async () => {
    const ziggy = await createUser(server.ctx, "ziggy");
    const post = await postStatus(server, ziggy, { status: "Ziggy posts once" });
    await suspend(ziggy);
    const body = pageBody(await page(`/@ziggy/${post.id}`), 410);
    assert.doesNotMatch(body, /Ziggy posts once/);
  });

  // ---- /about ----

  test("/about shows the description, extended description, contact account and e-mail, rules, moderated servers", async () => {
    const db = server.ctx.db.kysely;
    const adminToken = await tokenFor(server.ctx, data.admin, "admin:write");
    const block = await request(server.app, "POST", "/api/v1/admin/domain_blocks", {
      token: adminToken,
      json: { domain: "spam.example", severity: "suspend", public_comment: "Floods of <spam>" },
    });
    assert.equal(block.statusCode, 200, block.body);
    await saveSetting(db, "site_short_description", "A quiet <place> for birds");
    await saveSetting(db, "site_extended_description", "First paragraph.\n\nSecond & last.");
    await saveSetting(db, "site_contact_email", "owner@rookery.test");
    await saveSetting(db, "site_contact_username", "admin");
    await saveSetting(db, "rules", [
      { text: "Be kind", hint: "Also to <bots>" },
      { text: "No spam", hint: "" },
    ]);
    try {
      const res = await page("/about");
      const body = pageBody(res);
      assert.equal(res.headers["cache-control"], PUBLIC_CACHE);
      assert.match(body, /<p>A quiet &lt;place&gt; for birds<\/p>/);
      assert.equal(meta(body, "og:description"), "A quiet <place> for birds");
      assert.match(
        body,
        /<h2 id="about-more">About this server<\/h2><p>First paragraph\.<\/p><p>Second &amp; last\.<\/p>/,
      );
      assert.match(
        body,
        /Administered by <a href="https:\/\/rookery\.test\/@admin">admin \(@admin@rookery\.test\)<\/a>/,
      );
      assert.match(body, /<a href="mailto:owner@rookery\.test">owner@rookery\.test<\/a>/);
      const rules = /<ol class="rules">([\s\S]*?)<\/ol>/.exec(body)?.[1] ?? "";
      assert.deepEqual(
        [...rules.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]),
        ['<strong>Be kind</strong><br><span class="muted">Also to &lt;bots&gt;</span>', "<strong>No spam</strong>"],
      );
      assert.doesNotMatch(body, /spam\.example/, "the list is not published by default");

      await saveSetting(db, "show_domain_blocks", "users");
      assert.doesNotMatch(pageBody(await page("/about")), /spam\.example/, "only for signed-in users");
      await saveSetting(db, "show_domain_blocks", "all");
      await saveSetting(db, "show_domain_blocks_rationale", "all");
      const listed = pageBody(await page("/about"));
      assert.match(listed, /<h2 id="moderated">Moderated servers<\/h2>/);
      assert.match(
        listed,
        /<tr><td>spam\.example<\/td><td>Suspended<br><span class="muted">Floods of &lt;spam&gt;<\/span><\/td><\/tr>/,
      );
    } finally {
      for (const key of [
        "site_short_description",
        "site_extended_description",
        "site_contact_email",
        "site_contact_username",
        "rules",
        "show_domain_blocks",
        "show_domain_blocks_rationale",
      ] as const)
        await saveSetting(db, key, DEFAULT_SETTINGS[key]);
    }
  });

  // ---- RSS ----

  test("an account's feed: well-formed RSS of its public posts without replies and boosts, newest first", async () => {
    const tess = await createUser(server.ctx, "tess");
    await updateProfile(tess, { display_name: "Tess & <Co> ]]>" });
    const media = await uploadImage(server, tess, { description: "A <picture> & more" });
    const oldest = await postStatus(server, tess, { status: "Fish & chips <tonight> ]]> \u0007bell" });
    await postStatus(server, tess, { status: "@alice a reply", in_reply_to_id: data.statuses.alicePublic.id });
    await boost(tess, data.statuses.alicePublic);
    await postStatus(server, tess, { status: "Followers only", visibility: "private" });
    await postStatus(server, tess, { status: "@bob just us", visibility: "direct" });
    const newest = await postStatus(server, tess, {
      status: "A picture :blobcat: #tessTag",
      spoiler_text: "Spoiler <here>",
      media_ids: [media.id],
    });

    const res = await page("/@tess.rss");
    const items = feedOf(res);
    assert.equal(res.headers["cache-control"], PUBLIC_CACHE);
    assert.deepEqual(
      items.map((item) => item.guid),
      [newest.url, oldest.url],
    );
    assert.deepEqual(
      items.map((item) => item.link),
      [newest.url, oldest.url],
    );
    assert.match(res.body, /<title>Tess &amp; &lt;Co&gt; \]\]&gt; \(@tess@rookery\.test\)<\/title>/);
    assert.match(res.body, /<link>https:\/\/rookery\.test\/@tess<\/link>/);
    assert.match(res.body, /<atom:link href="https:\/\/rookery\.test\/@tess\.rss" rel="self"/);
    assert.equal(items[0].description, `<p>Spoiler &lt;here&gt;</p><hr />${newest.content}`);
    // XML has no place for the bell character: the feed drops it.
    assert.equal(items[1].description, oldest.content.replace("\u0007", ""));
    assert.ok(oldest.content.includes("\u0007bell"), "the post keeps it");
    assert.match(items[0].xml, /<category>tessTag<\/category>/i);
    assert.match(
      items[0].xml,
      /<media:content url="[^"]+" medium="image"><media:rating scheme="urn:simple">adult<\/media:rating><media:description type="plain">A &lt;picture&gt; &amp; more<\/media:description><\/media:content>/,
    );
    assert.doesNotMatch(res.body, /a reply|Hello from alice|Followers only|just us/);
  });

  test("a hashtag's feed: well-formed RSS of its public posts, newest first, from every author", async () => {
    const one = await postStatus(server, data.bob, { status: "Bob on #feedtag" });
    await postStatus(server, data.carol, { status: "Carol hides #feedtag", visibility: "private" });
    await postStatus(server, data.carol, { status: "Carol mumbles #feedtag", visibility: "unlisted" });
    const two = await postStatus(server, data.carol, { status: "Carol on #FeedTag & more" });
    const res = await page("/tags/feedtag.rss");
    const items = feedOf(res);
    assert.deepEqual(
      items.map((item) => item.guid),
      [two.url, one.url],
    );
    assert.match(res.body, /<title>#feedtag<\/title>/);
    assert.match(res.body, /<atom:link href="https:\/\/rookery\.test\/tags\/feedtag\.rss" rel="self"/);
    assert.doesNotMatch(res.body, /Carol hides|Carol mumbles/);
    assert.equal(res.headers["cache-control"], PUBLIC_CACHE);
  });

  // ---- Caching, previews, hostile input ----

  test("anonymous pages and feeds may be cached a minute; a 404 not at all", async () => {
    const post = data.statuses.alicePublic;
    for (const path of ["/@alice", "/@alice/with_replies", `/@alice/${post.id}`, "/tags/introduction", "/about"]) {
      const res = await page(path);
      pageBody(res);
      assert.equal(res.headers["cache-control"], PUBLIC_CACHE, path);
    }
    for (const path of ["/@alice.rss", "/tags/introduction.rss"])
      assert.equal((await page(path)).headers["cache-control"], PUBLIC_CACHE, path);
    assert.equal((await page("/@nobody")).headers["cache-control"], "no-store");
  });

  test("timeline_preview off: visitors see no posts on a hashtag's page and get 401 for its feed; a signed-in session sees them", async () => {
    await saveSetting(server.ctx.db.kysely, "timeline_preview", false);
    try {
      const res = await page("/tags/introduction");
      const body = pageBody(res);
      assert.equal(res.headers["cache-control"], PRIVATE_CACHE);
      assert.deepEqual(articleIds(body), []);
      assert.doesNotMatch(body, /Hello from alice/);
      assert.match(body, /<a href="\/auth\/sign_in\?return_to=%2Ftags%2Fintroduction">Sign in<\/a>/);
      assert.deepEqual(alternates(body), [], "no feed to offer");
      assert.deepEqual(errorOf(await page("/tags/introduction.rss")), [401, TIMELINES_SIGNED_IN_ONLY]);

      const browser = new Browser(server.app);
      assert.equal((await browser.signIn(data.bob.user.email)).statusCode, 303);
      const signedIn = await browser.get("/tags/introduction");
      assert.deepEqual(articleIds(pageBody(signedIn)), [data.statuses.alicePublic.id]);
      assert.equal(signedIn.headers["cache-control"], PRIVATE_CACHE);
      assert.deepEqual(
        feedOf(await browser.get("/tags/introduction.rss")).map((item) => item.guid),
        [data.statuses.alicePublic.url],
      );
      assert.match(pageBody(await page("/@alice")), /Hello from alice/, "profiles are not timelines");
    } finally {
      await saveSetting(server.ctx.db.kysely, "timeline_preview", true);
    }
  });

  test("hostile addresses and parameters never fail the server", async () => {
    const long = "a".repeat(300);
    const expected: Array<[string, number | number[]]> = [
      // A malformed URL (invalid percent-encoding, NUL) is refused before any route: 400, as in the API.
      ["/@%ff", [400, 404]],
      ["/tags/%00", [400, 404]],
      [`/@${long}`, 404],
      [`/@${long}.rss`, 404],
      [`/@${long}/with_replies`, 404],
      [`/@${long}/1`, 404],
      [`/@alice@${long}`, 404],
      [`/tags/${long}`, 404],
      [`/tags/${long}.rss`, 404],
      ["/tags/%20", 404],
      ["/tags/a-b", 404],
      ["/@alice/abc", 404],
      ["/@alice/99999999999999999999999", 404],
      ["/@alice/-1", 404],
      ["/users/alice/statuses/abc", 404],
      ["/@alice?max_id=abc", 200],
      ["/@alice?max_id[]=1", 200],
      ["/@alice?max_id[a]=1&max_id=2", 200],
      ["/@alice/with_replies?max_id=abc", 200],
      ["/@alice.rss?max_id[]=1", 200],
      ["/tags/introduction?max_id=abc", 200],
      ["/tags/introduction?max_id[]=1", 200],
      ["/tags/introduction?max_id=99999999999999999999999", 200],
    ];
    for (const [path, status] of expected) {
      for (const headers of [BROWSER, AP]) {
        const res = await page(path, headers);
        assert.ok(res.statusCode < 500, `${path} (${headers.accept}): ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (headers === BROWSER) {
          const allowed = Array.isArray(status) ? status : [status];
          assert.ok(allowed.includes(res.statusCode), `${path}: ${res.statusCode}`);
        }
      }
    }
    const first = articleIds(pageBody(await page("/@alice")));
    assert.deepEqual(articleIds(pageBody(await page("/@alice?max_id=abc"))), first, "a bad cursor is no cursor");
  });
});

describe("public pages with DISALLOW_UNAUTHENTICATED_API_ACCESS", () => {
  let server: TestServer;
  let data: StandardData;
  before(async () => {
    server = await createTestServer({ env: { DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" } });
    data = await standardData(server);
  });
  after(() => server.close());

  const pagePaths = () => [
    "/@alice",
    "/@alice/with_replies",
    `/@alice/${data.statuses.alicePublic.id}`,
    "/tags/introduction",
  ];

  test("visitors are sent (302) to sign in and back; feeds answer 401", async () => {
    for (const path of pagePaths()) {
      const res = await browse(server, path);
      assert.equal(res.statusCode, 302, path);
      const location = locationOf(res);
      assert.equal(location.pathname, "/auth/sign_in");
      assert.equal(location.searchParams.get("return_to"), path);
      assert.equal(res.headers["cache-control"], PRIVATE_CACHE, path);
      assert.doesNotMatch(res.body, /Hello from alice/);
    }
    for (const path of ["/@alice.rss", "/tags/introduction.rss"]) {
      const res = await browse(server, path);
      assert.deepEqual(errorOf(res), [401, SIGNED_IN_ONLY], path);
      assert.equal(res.headers["cache-control"], PRIVATE_CACHE, path);
    }
  });

  test("/about stays public", async () => {
    const res = await browse(server, "/about");
    pageBody(res);
    assert.equal(res.headers["cache-control"], PUBLIC_CACHE);
  });

  test("a signed-in session sees the pages, never kept by shared caches, and still no private post", async () => {
    const browser = new Browser(server.app);
    const signIn = await browser.signIn(data.bob.user.email, undefined, "/@alice");
    assert.equal(signIn.statusCode, 303);
    assert.equal(locationOf(signIn).pathname, "/@alice");
    for (const path of pagePaths()) {
      const res = await browser.get(path);
      const body = pageBody(res);
      assert.equal(res.headers["cache-control"], PRIVATE_CACHE, path);
      assert.match(body, /Hello from alice/, path);
      assert.doesNotMatch(body, /For my followers only|a secret between us/, path);
    }
    const feed = await browser.get("/@alice.rss");
    const guids = feedOf(feed).map((item) => item.guid);
    assert.ok(guids.includes(data.statuses.alicePublic.url!));
    assert.ok(!guids.includes(data.statuses.alicePrivate.url!) && !guids.includes(data.statuses.aliceDirect.url!));
    assert.doesNotMatch(feed.body, /For my followers only|a secret between us/);
    assert.equal(feed.headers["cache-control"], PRIVATE_CACHE);
  });
});
