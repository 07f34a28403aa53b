import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { newId } from "../src/db/ids.ts";
import { CardSourceUnavailable, detachCard, fetchCardForStatus } from "../src/services/cards/fetch.ts";
import { sanitizeEmbedHtml } from "../src/services/cards/oembed.ts";
import {
  createTestServer,
  get,
  request,
  standardAccounts,
  TEST_ENGINE,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "./kit.ts";

interface Page {
  status?: number;
  type?: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

/** A web site on 127.0.0.1 whose pages each test sets; unknown paths are a 404 page that has a title. */
class Site {
  readonly pages = new Map<string, Page>();
  readonly hits = new Map<string, number>();
  origin = "";
  readonly #server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    const page = this.pages.get(path) ?? { status: 404, body: "<html><head><title>Not found</title></head></html>" };
    res.writeHead(page.status ?? 200, { "content-type": page.type ?? "text/html; charset=utf-8", ...page.headers });
    res.end(page.body);
  });

  async start(host: string): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, host, resolve));
    this.origin = `http://${host}:${(this.#server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Serves `page` at `path` and returns its absolute URL. */
  serve(path: string, page: Page | string): string {
    this.pages.set(path, typeof page === "string" ? { body: page } : page);
    return `${this.origin}${path}`;
  }
}

const image = (width: number, height: number, format: "jpeg" | "png", alpha = false) =>
  sharp({
    create: {
      width,
      height,
      channels: alpha ? 4 : 3,
      background: alpha ? { r: 20, g: 120, b: 200, alpha: 0.5 } : { r: 200, g: 60, b: 30 },
    },
  })
    [format]()
    .toBuffer();

describe(`link preview cards (${TEST_ENGINE})`, () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  const site = new Site();
  /** Reachable, but not listed in ALLOWED_PRIVATE_ADDRESSES. */
  const forbidden = new Site();

  before(async () => {
    await Promise.all([site.start("127.0.0.1"), forbidden.start("127.0.0.2")]);
    server = await createTestServer({ env: { ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1" } });
    accounts = await standardAccounts(server.ctx);
    site.serve("/images/rook.jpg", { type: "image/jpeg", body: await image(800, 600, "jpeg") });
    site.serve("/images/thumb.jpg", { type: "image/jpeg", body: await image(640, 360, "jpeg") });
    site.serve("/images/small.png", { type: "image/png", body: await image(120, 80, "png", true) });
    forbidden.serve("/images/rook.jpg", { type: "image/jpeg", body: await image(800, 600, "jpeg") });
  });
  after(async () => {
    await server.close();
    await Promise.all([site.stop(), forbidden.stop()]);
  });

  async function post(user: TestUser, text: string, visibility = "public"): Promise<string> {
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: user.token,
      json: { status: text, visibility },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().id;
  }

  /** The status's `card` as the API shows it to its author. */
  async function cardOf(user: TestUser, statusId: string) {
    const res = await get(server.app, `/api/v1/statuses/${statusId}`, user.token);
    assert.equal(res.statusCode, 200);
    return res.json().card;
  }

  async function postAndFetch(text: string, visibility = "public") {
    const id = await post(accounts.alice, text, visibility);
    await fetchCardForStatus(server.ctx, id);
    return { id, card: await cardOf(accounts.alice, id) };
  }

  test("an OpenGraph page gives a link card with a resized thumbnail", async () => {
    const url = site.serve(
      "/article",
      `<!doctype html><html lang="en-GB"><head>
        <title>Fallback title</title>
        <meta property="og:title" content="Rooks &amp; ravens">
        <meta property="og:description" content="  All about
          corvids.  ">
        <meta property="og:image" content="/images/rook.jpg">
        <meta property="og:image:alt" content="A rook on a fence">
        <meta property="og:type" content="article">
        <meta property="og:site_name" content="Bird News">
        <meta property="og:url" content="/article">
        <meta name="author" content="Ada Birder">
        <meta property="article:published_time" content="2024-05-01T10:00:00Z">
      </head><body><svg><title>an icon</title></svg></body></html>`,
    );
    const { card } = await postAndFetch(`Read this: ${url} !`);
    assert.ok(card, "the status has a card");
    assert.equal(card.url, url);
    assert.equal(card.title, "Rooks & ravens");
    assert.equal(card.description, "All about corvids.");
    assert.equal(card.type, "link");
    assert.equal(card.author_name, "Ada Birder");
    assert.equal(card.provider_name, "Bird News");
    assert.equal(card.html, "");
    assert.equal(card.language, "en");
    assert.equal(card.published_at, "2024-05-01T10:00:00.000Z");
    assert.equal(card.image_description, "A rook on a fence");
    assert.match(
      card.image,
      /^https:\/\/rookery\.test\/system\/cache\/preview_cards\/images\/\d+\/original\/[0-9a-f]+\.jpg$/,
    );
    assert.equal(typeof card.blurhash, "string");
    assert.ok(card.blurhash.length >= 6);
    // Link cards are sized by their image, which fits 400×400.
    assert.deepEqual([card.width, card.height], [400, 300]);

    const file = await server.app.inject({ method: "GET", url: new URL(card.image).pathname });
    assert.equal(file.statusCode, 200);
    assert.equal(file.headers["content-type"], "image/jpeg");
    const stored = await sharp(file.rawPayload).metadata();
    assert.deepEqual([stored.format, stored.width, stored.height], ["jpeg", 400, 300]);
  });

  test("a small image is not enlarged, and keeps its transparency", async () => {
    const url = site.serve(
      "/small-image",
      `<title>Small</title><meta property="og:image" content="${site.origin}/images/small.png">`,
    );
    const { card } = await postAndFetch(url);
    assert.match(card.image, /\.png$/);
    assert.deepEqual([card.width, card.height], [120, 80]);
    const stored = await sharp(
      (await server.app.inject({ method: "GET", url: new URL(card.image).pathname })).rawPayload,
    ).metadata();
    assert.deepEqual([stored.format, stored.width, stored.height, stored.hasAlpha], ["png", 120, 80, true]);
  });

  test("without OpenGraph, the <title> and meta description make the card", async () => {
    const url = site.serve(
      "/plain",
      `<html><head><title>  Plain &amp; simple\n page </title><meta name="description" content="Just a page &lt;with&gt; text"></head><body>x</body></html>`,
    );
    const { card } = await postAndFetch(`See ${url}`);
    assert.equal(card.title, "Plain & simple page");
    assert.equal(card.description, "Just a page <with> text");
    assert.equal(card.type, "link");
    assert.equal(card.image, null);
    assert.equal(card.blurhash, null);
    assert.deepEqual([card.width, card.height], [0, 0]);
  });

  test("titles are cut to 250 characters and descriptions to 1000", async () => {
    const url = site.serve(
      "/long",
      `<title>${"t".repeat(400)}</title><meta name="description" content="${"d".repeat(3000)}">`,
    );
    const { card } = await postAndFetch(url);
    assert.equal([...card.title].length, 250);
    assert.ok(card.title.endsWith("…"));
    assert.equal([...card.description].length, 1000);
  });

  test("a page without a title gives no card", async () => {
    const url = site.serve(
      "/untitled",
      `<html><body><svg><title>An icon's title is not the page's</title></svg><p>No title here</p></body></html>`,
    );
    assert.equal((await postAndFetch(url)).card, null);
  });

  test("oEmbed discovery gives a video card with the provider's iframe", async () => {
    site.serve("/oembed?id=video", {
      type: "application/json",
      body: JSON.stringify({
        version: "1.0",
        type: "video",
        title: "A rook learns to use tools",
        author_name: "Corvid Channel",
        author_url: "https://video.example/@corvids",
        provider_name: "VideoSite",
        provider_url: "https://video.example/",
        html: `<iframe width="480" height="270" src="https://video.example/embed/1" frameborder="0" onload="alert(1)" allowfullscreen></iframe>`,
        width: 480,
        height: 270,
        thumbnail_url: "/images/thumb.jpg",
      }),
    });
    const url = site.serve(
      "/watch",
      `<html><head><title>Watch</title><meta property="og:title" content="Page title"><link rel="alternate" type="application/json+oembed" href="/oembed?id=video"></head></html>`,
    );
    const { card } = await postAndFetch(url);
    assert.equal(card.type, "video");
    assert.equal(card.title, "A rook learns to use tools");
    assert.equal(card.author_name, "Corvid Channel");
    assert.equal(card.author_url, "https://video.example/@corvids");
    assert.equal(card.provider_name, "VideoSite");
    assert.equal(card.provider_url, "https://video.example/");
    assert.match(
      card.html,
      /^<iframe src="https:\/\/video\.example\/embed\/1" width="480" height="270"[^>]*><\/iframe>$/,
    );
    assert.match(card.html, /sandbox="/);
    assert.doesNotMatch(card.html, /onload|<script/i);
    assert.deepEqual([card.width, card.height], [480, 270]);
    assert.match(card.image, /\.jpg$/);
  });

  test("oEmbed HTML that is not just an iframe is downgraded to a link card", async () => {
    site.serve("/oembed?id=script", {
      type: "application/json",
      body: JSON.stringify({
        version: "1.0",
        type: "rich",
        title: "Embed title",
        provider_name: "Widgets",
        html: `<blockquote class="post">Hi</blockquote><script async src="https://widgets.example/embed.js"></script>`,
        width: 550,
        height: null,
      }),
    });
    const url = site.serve(
      "/widget",
      `<title>Widget page</title><link rel="alternate" type="application/json+oembed" href="${site.origin}/oembed?id=script">`,
    );
    const { card } = await postAndFetch(url);
    assert.equal(card.type, "link");
    assert.equal(card.html, "");
    assert.equal(card.title, "Widget page");
    assert.equal(card.provider_name, "Widgets");
    assert.deepEqual([card.width, card.height], [0, 0]);
  });

  test("embed HTML is accepted only as one http(s) iframe", () => {
    const base = "https://provider.example/oembed";
    assert.match(
      sanitizeEmbedHtml(` <iframe src="//player.example/1" width="100%"></iframe>\n`, base, 640, 360)!,
      /^<iframe src="https:\/\/player\.example\/1" width="640" height="360" frameborder="0" sandbox="[^"]+"><\/iframe>$/,
    );
    for (const html of [
      `<iframe src="https://a.example/"></iframe><script>alert(1)</script>`,
      `<iframe src="https://a.example/"><script>alert(1)</script></iframe>`,
      `<iframe src="javascript:alert(1)"></iframe>`,
      `<iframe src="data:text/html,hi"></iframe>`,
      `<iframe></iframe>`,
      `text <iframe src="https://a.example/"></iframe>`,
      `<iframe src="https://a.example/"></iframe><iframe src="https://b.example/"></iframe>`,
      `<video src="https://a.example/v.mp4"></video>`,
    ]) {
      assert.equal(sanitizeEmbedHtml(html, base), undefined, html);
    }
  });

  test("a URL that does not answer HTML gives no card", async () => {
    const pdf = site.serve("/paper.pdf", { type: "application/pdf", body: "%PDF-1.4 <title>not html</title>" });
    assert.equal((await postAndFetch(pdf)).card, null);
    const png = `${site.origin}/images/rook.jpg`;
    assert.equal((await postAndFetch(png)).card, null);
  });

  test("private and direct statuses get no card, and the link is never fetched", async () => {
    const url = site.serve("/secret", "<title>Secret</title>");
    for (const visibility of ["private", "direct"]) {
      const { card } = await postAndFetch(`${url} @bob`, visibility);
      assert.equal(card, null, visibility);
    }
    assert.equal(site.hits.get("/secret"), undefined);
    // An unlisted one does.
    assert.equal((await postAndFetch(url, "unlisted")).card.title, "Secret");
  });

  test("statuses linking the same URL share one card, fetched once", async () => {
    const url = site.serve("/shared", `<title>Shared</title><meta property="og:image" content="/images/rook.jpg">`);
    const first = await postAndFetch(url);
    const secondId = await post(accounts.bob, `also ${url}`);
    const card = await fetchCardForStatus(server.ctx, secondId);
    assert.ok(card);
    assert.deepEqual(await cardOf(accounts.bob, secondId), first.card);
    assert.equal(site.hits.get("/shared"), 1);
    const rows = await server.ctx.db.kysely.selectFrom("preview_cards").select("id").where("url", "=", url).execute();
    assert.equal(rows.length, 1);
    const links = await server.ctx.db.kysely
      .selectFrom("preview_cards_statuses")
      .selectAll()
      .where("preview_card_id", "=", rows[0].id)
      .execute();
    assert.equal(links.length, 2);
  });

  test("a card older than two weeks is fetched again, in place", async () => {
    const url = site.serve("/changing", "<title>Before</title>");
    const first = await postAndFetch(url);
    site.serve("/changing", "<title>After</title>");
    assert.equal((await postAndFetch(url)).card.title, "Before", "a fresh card is reused");
    const old = new Date(Date.now() - 15 * 24 * 60 * 60 * 1000).toISOString();
    await server.ctx.db.kysely.updateTable("preview_cards").set({ updated_at: old }).where("url", "=", url).execute();
    assert.equal((await postAndFetch(url)).card.title, "After");
    assert.equal(site.hits.get("/changing"), 2);
    assert.equal(
      (await cardOf(accounts.alice, first.id)).title,
      "After",
      "the older status shows the same, refreshed card",
    );
  });

  test("a redirected link gets the card of its destination, and the short link is remembered", async () => {
    site.serve("/destination", "<title>Destination</title>");
    const short = site.serve("/short", { status: 301, headers: { location: "/destination" }, body: "" });
    const { card } = await postAndFetch(short);
    assert.equal(card.url, `${site.origin}/destination`);
    assert.equal(card.title, "Destination");
    assert.equal((await postAndFetch(short)).card.url, `${site.origin}/destination`);
    assert.equal(site.hits.get("/short"), 1);
  });

  test("the first link that is not a mention, a hashtag or this server's own page is used", async () => {
    const url = site.serve("/first-real", "<title>First real link</title>");
    site.serve("/second", "<title>Second</title>");
    const { card } = await postAndFetch(`@bob #birds https://rookery.test/@alice ${url} ${site.origin}/second`);
    assert.equal(card.title, "First real link");
    const { card: none } = await postAndFetch(`@bob #birds https://rookery.test/@alice only`);
    assert.equal(none, null);
  });

  test("a remote status's card comes from its HTML links, skipping hashtags and mentions", async () => {
    const url = site.serve("/from-remote", "<title>From remote</title>");
    site.serve("/tags/birds", "<title>Tag page</title>");
    site.serve("/@someone", "<title>Profile page</title>");
    const id = newId();
    const now = new Date().toISOString();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id,
        uri: `https://remote.example/statuses/${id}`,
        url: `https://remote.example/@rita/${id}`,
        account_id: accounts.rita.id,
        content: `<p><a href="${site.origin}/tags/birds" class="mention hashtag" rel="tag">#<span>birds</span></a> <span class="h-card"><a href="${site.origin}/@someone" class="u-url mention">@someone</a></span> <a href="${url}">a page</a></p>`,
        visibility: "public",
        local: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await fetchCardForStatus(server.ctx, id);
    assert.equal((await cardOf(accounts.alice, id)).title, "From remote");
  });

  test("forbidden destinations, for the page or its image, are refused without failing the job", async () => {
    const page = forbidden.serve("/page", "<title>Private network</title>");
    const id = await post(accounts.alice, page);
    assert.equal(await fetchCardForStatus(server.ctx, id), undefined);
    assert.equal(await cardOf(accounts.alice, id), null);
    assert.equal(
      await fetchCardForStatus(server.ctx, await post(accounts.alice, "http://169.254.169.254/latest/meta-data/")),
      undefined,
    );
    assert.equal(forbidden.hits.get("/page"), undefined);

    const url = site.serve(
      "/forbidden-image",
      `<title>Image elsewhere</title><meta property="og:image" content="${forbidden.origin}/images/rook.jpg">`,
    );
    const { card } = await postAndFetch(url);
    assert.equal(card.title, "Image elsewhere");
    assert.equal(card.image, null);
    assert.equal(forbidden.hits.get("/images/rook.jpg"), undefined);
  });

  test("a missing page gives no card; an unavailable one throws so that the job retries", async () => {
    const missing = await post(accounts.alice, `${site.origin}/gone`);
    assert.equal(await fetchCardForStatus(server.ctx, missing), undefined);
    assert.equal(await cardOf(accounts.alice, missing), null);

    const url = site.serve("/flaky", { status: 503, body: "<title>Down for maintenance</title>" });
    const id = await post(accounts.alice, url);
    await assert.rejects(fetchCardForStatus(server.ctx, id), CardSourceUnavailable);
    assert.equal(await cardOf(accounts.alice, id), null);
    site.serve("/flaky", "<title>Back up</title>");
    await fetchCardForStatus(server.ctx, id);
    assert.equal((await cardOf(accounts.alice, id)).title, "Back up");
  });

  test("a status that already has a card keeps it, even when the card is old", async () => {
    const url = site.serve("/kept", "<title>Kept</title>");
    const { id, card } = await postAndFetch(url);
    site.serve("/kept", "<title>Changed</title>");
    const old = new Date(Date.now() - 15 * 24 * 60 * 60 * 1000).toISOString();
    await server.ctx.db.kysely.updateTable("preview_cards").set({ updated_at: old }).where("url", "=", url).execute();
    assert.equal(await fetchCardForStatus(server.ctx, id), undefined);
    assert.deepEqual(await cardOf(accounts.alice, id), card);
    assert.equal(site.hits.get("/kept"), 1);
  });

  test("after an edit detaches the card, the status gets the card of its new link", async () => {
    const before = site.serve("/before-edit", "<title>Before the edit</title>");
    const after = site.serve("/after-edit", "<title>After the edit</title>");
    const { id, card } = await postAndFetch(before);
    assert.equal(card.title, "Before the edit");
    const edit = await request(server.app, "PUT", `/api/v1/statuses/${id}`, {
      token: accounts.alice.token,
      json: { status: `now ${after}` },
    });
    assert.equal(edit.statusCode, 200, edit.body);
    await detachCard(server.ctx.db.kysely, id);
    await fetchCardForStatus(server.ctx, id);
    assert.equal((await cardOf(accounts.alice, id)).title, "After the edit");
    const kept = await server.ctx.db.kysely
      .selectFrom("preview_cards")
      .select("id")
      .where("url", "=", before)
      .execute();
    assert.equal(kept.length, 1, "the old card stays for other statuses");
  });

  test("two jobs for one status at once attach one card", async () => {
    const url = site.serve("/twice", "<title>Twice</title>");
    const id = await post(accounts.alice, url);
    const results = await Promise.all([fetchCardForStatus(server.ctx, id), fetchCardForStatus(server.ctx, id)]);
    assert.equal(results.filter(Boolean).length, 1);
    const links = await server.ctx.db.kysely
      .selectFrom("preview_cards_statuses")
      .selectAll()
      .where("status_id", "=", id)
      .execute();
    assert.equal(links.length, 1);
    assert.equal((await cardOf(accounts.alice, id)).title, "Twice");
  });

  test("the page's declared charset is honoured", async () => {
    const body = Buffer.concat([
      Buffer.from(`<meta charset="iso-8859-1"><title>Caf`),
      Buffer.from([0xe9]),
      Buffer.from(` cr`),
      Buffer.from([0xe8]),
      Buffer.from(`me</title>`),
    ]);
    const url = site.serve("/latin1", { type: "text/html", body });
    assert.equal((await postAndFetch(url)).card.title, "Café crème");
  });
});
