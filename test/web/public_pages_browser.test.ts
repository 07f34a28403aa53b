/**
 * The public pages (profile, a post's thread, a hashtag, /about) opened in headless Chromium over a
 * real socket: each loads with 200, shows what it is about, loads every image it links, and meets
 * no console error, script error, CSP violation or failed request. A full-page screenshot of each
 * is kept in `test-artifacts/` (or TEST_ARTIFACTS_DIR) for a person to look at.
 *
 * The server is configured as http://rookery.test (LOCAL_HTTPS=false): the pages link their images
 * at the base URL, and Chromium's host resolver sends rookery.test to the listening port, so the
 * pages load from the origin their CSP names ('self') without a certificate. Every other host
 * resolves to nothing, so a page that reached outside would fail here.
 */
import assert from "node:assert/strict";
import { after, before, describe, test, type TestContext } from "node:test";
import sharp from "sharp";
import type { Browser, Locator, Page } from "playwright-core";
import { launchChromium, openPage, ORIGIN, screenshot, SKIP } from "../chromium.ts";
import {
  createTestServer,
  postStatus,
  request,
  standardAccounts,
  testImage,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import type { MediaAttachment, Status } from "../types.ts";

const DISPLAY_NAME = "Alice Liddell";
const BIO = "Birdwatcher by the old mill. Mostly herons.";
const FIELD = { name: "Pronouns", value: "she/her" };
const PICTURE_ALT = "A grey heron standing in shallow water";
const OPENING = "Spotted a heron at the lake this morning #birdwatching";
const REPLY = "Lovely! Which lake was it?";
const ANSWER = "The one behind the old mill.";
const CW = "Season finale spoilers";
const CW_TEXT = "The heron was the detective all along.";
const POLL_QUESTION = "Which bird next weekend? #birdwatching";
const POLL_OPTIONS = ["Heron", "Kingfisher", "Puffin"];

/** A picture with something in it (a flat colour would hide scaling and cropping). */
function heronPicture(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="427">
<rect width="640" height="427" fill="#8ecae6"/><rect y="300" width="640" height="127" fill="#219ebc"/>
<circle cx="520" cy="90" r="50" fill="#ffb703"/><ellipse cx="300" cy="230" rx="70" ry="40" fill="#6c757d"/>
<rect x="290" y="260" width="6" height="70" fill="#495057"/><rect x="310" y="260" width="6" height="70" fill="#495057"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

interface Visit {
  page: Page;
  status: number | undefined;
  /** The page's Content-Security-Policy header (what "no CSP violation" is measured against). */
  csp: string | undefined;
  /** Console errors, page errors, failed requests and error answers, in the order they came. */
  problems: string[];
  /** The URLs of the images the page loaded with 200. */
  images: string[];
}

describe("public pages in Chromium", { skip: SKIP }, () => {
  let server: TestServer;
  let browser: Browser;
  let a: StandardAccounts;
  let opening: Status;
  let reply: Status;
  let answer: Status;

  before(async () => {
    server = await createTestServer({ env: { LOCAL_HTTPS: "false" } });
    a = await standardAccounts(server.ctx);
    await makeContent();
    browser = await launchChromium(server);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** alice's profile (name, bio, a field, avatar, header), a thread, a warned post and a poll. */
  async function makeContent() {
    const profile = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: a.alice.token,
      parts: [
        { name: "display_name", value: DISPLAY_NAME },
        { name: "note", value: BIO },
        { name: "fields_attributes[0][name]", value: FIELD.name },
        { name: "fields_attributes[0][value]", value: FIELD.value },
        {
          name: "avatar",
          value: await testImage({ width: 200, height: 200, color: "#e76f51" }),
          filename: "avatar.png",
          type: "image/png",
        },
        {
          name: "header",
          value: await testImage({ width: 1500, height: 500, color: "#264653" }),
          filename: "header.png",
          type: "image/png",
        },
      ],
    });
    assert.equal(profile.statusCode, 200, profile.body);
    // A picture with shapes in it, not the kit's flat test image, so that cropping would show.
    const media = await request(server.app, "POST", "/api/v2/media", {
      token: a.alice.token,
      parts: [
        { name: "file", value: await heronPicture(), filename: "heron.png", type: "image/png" },
        { name: "description", value: PICTURE_ALT },
      ],
    });
    assert.equal(media.statusCode, 200, media.body);
    opening = await postStatus(server, a.alice, { status: OPENING, media_ids: [(media.json() as MediaAttachment).id] });
    reply = await postStatus(server, a.bob, { status: `@alice ${REPLY}`, in_reply_to_id: opening.id });
    answer = await postStatus(server, a.alice, { status: `@bob ${ANSWER}`, in_reply_to_id: reply.id });
    await postStatus(server, a.alice, { status: CW_TEXT, spoiler_text: CW });
    await postStatus(server, a.alice, { status: POLL_QUESTION, poll: { options: POLL_OPTIONS, expires_in: 86400 } });
  }

  /**
   * Opens `path` in a fresh page, watching for every kind of trouble a visitor could meet, and
   * keeps a full-page screenshot named `name` (taken before any assertion, so a failure has one).
   */
  async function visit(t: TestContext, name: string, path: string): Promise<Visit> {
    const { context, page, problems } = await openPage(browser, { width: 1100, height: 800 });
    t.after(() => context.close());
    const images: string[] = [];
    page.on("response", (res) => {
      if (res.status() < 400 && res.request().resourceType() === "image") images.push(res.url());
    });
    const response = await page.goto(`${ORIGIN}${path}`, { waitUntil: "load" });
    // Images below the fold are lazy: bring each into view so that all of them load.
    for (const image of await page.locator("img").all()) await image.scrollIntoViewIfNeeded();
    await page.waitForLoadState("networkidle");
    await page.evaluate("window.scrollTo(0, 0)");
    await screenshot(page, `public-${name}`);
    const csp = response?.headers()["content-security-policy"];
    return { page, status: response?.status(), csp, problems, images };
  }

  /** Every `<img>` of the page has loaded a picture (a broken one has no natural width). */
  async function assertImagesLoaded(page: Page) {
    const broken = await page
      .locator("img")
      .evaluateAll((images: Array<{ currentSrc: string; complete: boolean; naturalWidth: number }>) =>
        images.filter((i) => !i.complete || i.naturalWidth === 0).map((i) => i.currentSrc),
      );
    assert.deepEqual(broken, []);
  }

  async function assertVisible(locator: Locator, what: string) {
    assert.ok(await locator.first().isVisible(), `${what} is not visible`);
  }

  /** The page answered 200 and the browser met no trouble loading it. */
  function assertLoadedCleanly(v: Visit) {
    assert.equal(v.status, 200);
    assert.match(v.csp ?? "", /^default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: https:;/);
    assert.deepEqual(v.problems, []);
  }

  test("the profile shows the name, bio, field, avatar, header and posts; the warned post stays collapsed", async (t) => {
    const v = await visit(t, "profile", "/@alice");
    assertLoadedCleanly(v);
    const { page } = v;
    await assertVisible(page.getByRole("heading", { level: 1, name: DISPLAY_NAME }), "the display name");
    await assertVisible(page.getByText("@alice@rookery.test"), "the handle");
    await assertVisible(page.getByText(BIO), "the bio");
    await assertVisible(page.locator("dl.fields dt", { hasText: FIELD.name }), "the field's name");
    await assertVisible(page.locator("dl.fields dd", { hasText: FIELD.value }), "the field's value");
    await assertVisible(page.getByText("Spotted a heron at the lake"), "the post with a picture");
    await assertVisible(page.getByRole("img", { name: PICTURE_ALT }), "the picture");
    await assertVisible(page.getByText(CW), "the content warning");
    assert.equal(await page.getByText(CW_TEXT).isVisible(), false, "the warned text is shown without a click");
    for (const option of POLL_OPTIONS) await assertVisible(page.getByText(option, { exact: true }), option);
    await assertImagesLoaded(page);
    const avatar = await page.locator(".profile .about img.avatar").getAttribute("src");
    const header = await page.locator(".profile img.header").getAttribute("src");
    assert.match(avatar ?? "", /^http:\/\/rookery\.test\/system\/accounts\/avatars\//);
    assert.match(header ?? "", /^http:\/\/rookery\.test\/system\/accounts\/headers\//);
    for (const src of [avatar, header]) assert.ok(v.images.includes(src!), `${src} was not loaded`);
    assert.ok(
      v.images.some((url) => url.includes("/system/media_attachments/")),
      v.images.join("\n"),
    );
  });

  test("a thread page shows the post, its picture and the replies under it", async (t) => {
    const v = await visit(t, "thread", `/@alice/${opening.id}`);
    assertLoadedCleanly(v);
    const { page } = v;
    const focus = page.locator(`article.status.focus#status-${opening.id}`);
    await assertVisible(focus, "the focused post");
    await assertVisible(focus.getByText("Spotted a heron at the lake"), "the post's text");
    await assertVisible(focus.getByRole("img", { name: PICTURE_ALT }), "the post's picture");
    const replies = page.getByRole("region", { name: "Replies" });
    await assertVisible(replies.locator(`#status-${reply.id}`).getByText(REPLY), "bob's reply");
    await assertVisible(replies.locator(`#status-${answer.id}`).getByText(ANSWER), "alice's answer");
    await assertImagesLoaded(page);
  });

  test("a reply's page shows the post it answers above it", async (t) => {
    const v = await visit(t, "reply", `/@bob/${reply.id}`);
    assertLoadedCleanly(v);
    const { page } = v;
    const earlier = page.getByRole("region", { name: "Earlier in the thread" });
    await assertVisible(earlier.getByText("Spotted a heron at the lake"), "the post answered");
    await assertVisible(page.locator(`article.focus#status-${reply.id}`).getByText(REPLY), "the reply");
    await assertImagesLoaded(page);
  });

  test("the hashtag page shows its heading and the posts with the tag", async (t) => {
    const v = await visit(t, "tag", "/tags/birdwatching");
    assertLoadedCleanly(v);
    const { page } = v;
    await assertVisible(page.getByRole("heading", { level: 1, name: "#birdwatching" }), "the hashtag heading");
    await assertVisible(page.getByText("Spotted a heron at the lake"), "the tagged post");
    await assertVisible(page.getByText("Which bird next weekend?"), "the tagged poll");
    assert.equal(await page.getByText(REPLY).count(), 0, "an untagged post is on the tag's page");
    await assertImagesLoaded(page);
  });

  test("the about page shows the site's name and its rules section", async (t) => {
    const v = await visit(t, "about", "/about");
    assertLoadedCleanly(v);
    const { page } = v;
    await assertVisible(page.getByRole("heading", { level: 1 }), "the site's name");
    await assertVisible(page.getByRole("heading", { level: 2, name: "Rules" }), "the rules heading");
    await assertImagesLoaded(page);
  });
});
