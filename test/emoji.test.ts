import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import { helpText, parseCommandArgs, UsageError, type Command } from "../src/cli/command.ts";
import { emojiDisable, emojiEnable, emojiImport, emojiList, emojiRemove } from "../src/cli/emoji.ts";
import type { CustomEmoji } from "../src/entities/custom_emoji.ts";
import { addCustomEmoji, EMOJI_SIZE_LIMIT } from "../src/services/emoji/manage.ts";
import { createTestServer, createUser, get, request, type TestServer, type TestUser } from "./kit.ts";

const EMOJI_COMMANDS: Command[] = [emojiImport, emojiList, emojiRemove, emojiDisable, emojiEnable];

interface CliResult {
  code: number;
  out: string[];
  err: string[];
}

/** Runs one emoji command as `rookery emoji …` would, against the test server's context. */
async function cli(server: TestServer, command: Command, ...argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const args = parseCommandArgs(command, argv);
  const code = await command.run(server.ctx, args, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

function frame(width: number, height: number, red: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: red, g: 40, b: 200, alpha: 0.8 } } })
    .png()
    .toBuffer();
}

async function animated(format: "gif" | "webp", width: number, height: number): Promise<Buffer> {
  const frames = await Promise.all([frame(width, height, 255), frame(width, height, 0), frame(width, height, 128)]);
  const image = sharp(frames, { join: { animated: true } });
  return (
    format === "gif" ? image.gif({ delay: [80, 80, 80], loop: 0 }) : image.webp({ delay: [80, 80, 80], loop: 0 })
  ).toBuffer();
}

/** The stored file behind an emoji URL, fetched through the app like a client would. */
async function fetchImage(server: TestServer, url: string) {
  const base = server.config.baseUrl;
  assert.ok(url.startsWith(`${base}/system/custom_emojis/images/`), url);
  const res = await get(server.app, url.slice(base.length));
  const metadata = res.statusCode === 200 ? await sharp(res.rawPayload, { animated: true }).metadata() : undefined;
  return { status: res.statusCode, type: res.headers["content-type"], metadata };
}

async function listed(server: TestServer): Promise<CustomEmoji[]> {
  const res = await get(server.app, "/api/v1/custom_emojis");
  assert.equal(res.statusCode, 200);
  return res.json() as CustomEmoji[];
}

describe("custom emoji from the CLI", () => {
  let server: TestServer;
  let alice: TestUser;
  let dir: string;
  const files: Record<string, string> = {};

  before(async () => {
    server = await createTestServer();
    alice = await createUser(server.ctx, "alice");
    dir = mkdtempSync(join(tmpdir(), "rookery-emoji-"));
    const write = (name: string, data: Buffer) => {
      files[name] = join(dir, name);
      writeFileSync(files[name], data);
    };
    write("blobcat.png", await frame(300, 200, 255));
    write("small.png", await frame(40, 30, 10));
    write("party.gif", await animated("gif", 200, 200));
    write("wave.webp", await animated("webp", 160, 320));
    write(
      "still.webp",
      await sharp(await frame(64, 64, 90))
        .webp()
        .toBuffer(),
    );
    write(
      "photo.jpg",
      await sharp(await frame(64, 64, 90))
        .flatten()
        .jpeg()
        .toBuffer(),
    );
    write("notes.txt", Buffer.from("not an image\n"));
    write("empty.png", Buffer.alloc(0));
    write(
      "truncated.png",
      (
        await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } })
          .png()
          .toBuffer()
      ).subarray(0, 400),
    );
    // Noise does not compress: a 300×300 RGBA PNG of it is about 350 KB.
    const noise = await sharp(randomBytes(300 * 300 * 4), { raw: { width: 300, height: 300, channels: 4 } })
      .png()
      .toBuffer();
    assert.ok(noise.length > EMOJI_SIZE_LIMIT);
    write("huge.png", noise);
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("each command has a summary, a usage line and help text", () => {
    for (const command of EMOJI_COMMANDS) {
      assert.equal(command.path[0], "emoji");
      assert.ok(command.summary.length > 10);
      assert.ok(command.usage.startsWith(`emoji ${command.path[1]}`), command.usage);
      const help = helpText(command);
      assert.match(help, new RegExp(`^Usage: rookery emoji ${command.path[1]}`));
      assert.match(help, /--help/);
      assert.equal(parseCommandArgs(command, ["--help"]).help, true);
    }
    assert.match(helpText(emojiImport), /--shortcode VALUE[\s\S]*--category VALUE[\s\S]*--unlisted /);
    assert.throws(() => parseCommandArgs(emojiImport, []), UsageError);
    assert.throws(() => parseCommandArgs(emojiImport, ["a.png", "--unknown"]), UsageError);
    assert.throws(() => parseCommandArgs(emojiRemove, []), UsageError);
    assert.throws(() => parseCommandArgs(emojiList, ["extra"]), UsageError);
  });

  test("an imported PNG is listed with working, scaled url and static_url", async () => {
    const result = await cli(
      server,
      emojiImport,
      files["blobcat.png"],
      "--shortcode",
      "blobcat",
      "--category",
      "Blobs",
    );
    assert.deepEqual(result, { code: 0, out: ["Added :blobcat:"], err: [] });
    const emoji = (await listed(server)).find((e) => e.shortcode === "blobcat");
    assert.ok(emoji);
    assert.equal(emoji.visible_in_picker, true);
    assert.equal(emoji.category, "Blobs");
    assert.match(emoji.url, /\/system\/custom_emojis\/images\/\d+\/original\/[0-9a-f]+\.png$/);
    const image = await fetchImage(server, emoji.url);
    assert.equal(image.status, 200);
    assert.equal(image.type, "image/png");
    assert.deepEqual([image.metadata?.width, image.metadata?.height], [128, 85]);
    // A still PNG is its own static image.
    assert.equal(emoji.static_url, emoji.url);
  });

  test("a small image is not enlarged, and the shortcode defaults to the file name", async () => {
    const result = await cli(server, emojiImport, files["small.png"]);
    assert.deepEqual(result, { code: 0, out: ["Added :small:"], err: [] });
    const emoji = (await listed(server)).find((e) => e.shortcode === "small")!;
    const image = await fetchImage(server, emoji.url);
    assert.deepEqual([image.metadata?.width, image.metadata?.height], [40, 30]);
    assert.equal("category" in emoji, false);
  });

  test("an animated GIF keeps its frames and gets a still PNG", async () => {
    assert.equal((await cli(server, emojiImport, files["party.gif"], "--shortcode", "party_gif")).code, 0);
    const emoji = (await listed(server)).find((e) => e.shortcode === "party_gif")!;
    assert.match(emoji.url, /\/original\/[0-9a-f]+\.gif$/);
    assert.match(emoji.static_url, /\/custom_emojis\/images\/\d+\/static\/[0-9a-f]+\.png$/);
    const image = await fetchImage(server, emoji.url);
    assert.equal(image.type, "image/gif");
    assert.equal(image.metadata?.pages, 3);
    assert.deepEqual([image.metadata?.width, image.metadata?.pageHeight], [128, 128]);
    const still = await fetchImage(server, emoji.static_url);
    assert.equal(still.status, 200);
    assert.equal(still.type, "image/png");
    assert.equal(still.metadata?.pages ?? 1, 1);
    assert.deepEqual([still.metadata?.width, still.metadata?.height], [128, 128]);
  });

  test("an animated WebP keeps its frames; a still WebP gets a PNG static image", async () => {
    assert.equal((await cli(server, emojiImport, files["wave.webp"], "--shortcode", "wave")).code, 0);
    assert.equal((await cli(server, emojiImport, files["still.webp"], "--shortcode", "still_webp")).code, 0);
    const emojis = await listed(server);
    const wave = emojis.find((e) => e.shortcode === "wave")!;
    const image = await fetchImage(server, wave.url);
    assert.equal(image.type, "image/webp");
    assert.equal(image.metadata?.pages, 3);
    assert.deepEqual([image.metadata?.width, image.metadata?.pageHeight], [64, 128]);
    assert.equal((await fetchImage(server, wave.static_url)).type, "image/png");
    const still = emojis.find((e) => e.shortcode === "still_webp")!;
    assert.equal((await fetchImage(server, still.url)).type, "image/webp");
    assert.equal((await fetchImage(server, still.static_url)).type, "image/png");
  });

  test("--unlisted keeps an emoji out of the picker but listed", async () => {
    assert.equal(
      (await cli(server, emojiImport, files["small.png"], "--shortcode", "hidden_one", "--unlisted")).code,
      0,
    );
    const emoji = (await listed(server)).find((e) => e.shortcode === "hidden_one");
    assert.equal(emoji?.visible_in_picker, false);
  });

  test("a status and a display name using the shortcode carry the emoji", async () => {
    const emoji = (await listed(server)).find((e) => e.shortcode === "blobcat")!;
    const res = await request(server.app, "POST", "/api/v1/statuses", {
      token: alice.token,
      json: { status: "Hello :blobcat: and :nosuch:" },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().emojis, [emoji]);
    const profile = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: alice.token,
      json: { display_name: "Alice :blobcat:" },
    });
    assert.equal(profile.statusCode, 200, profile.body);
    assert.deepEqual(profile.json().emojis, [emoji]);
    const account = await get(server.app, `/api/v1/accounts/${alice.account.id}`);
    assert.deepEqual(account.json().emojis, [emoji]);
  });

  test("a disabled emoji is neither listed nor rendered until enabled again", async () => {
    assert.deepEqual(await cli(server, emojiDisable, ":blobcat:"), { code: 0, out: ["Disabled :blobcat:"], err: [] });
    assert.equal(
      (await listed(server)).some((e) => e.shortcode === "blobcat"),
      false,
    );
    const status = await request(server.app, "POST", "/api/v1/statuses", {
      token: alice.token,
      json: { status: "Still :blobcat:" },
    });
    assert.deepEqual(status.json().emojis, []);
    assert.deepEqual((await get(server.app, `/api/v1/accounts/${alice.account.id}`)).json().emojis, []);
    const list = await cli(server, emojiList);
    assert.match(list.out.find((line) => line.startsWith(":blobcat:")) ?? "", /category=Blobs  disabled$/);

    assert.deepEqual(await cli(server, emojiEnable, "blobcat"), { code: 0, out: ["Enabled :blobcat:"], err: [] });
    assert.equal(
      (await listed(server)).some((e) => e.shortcode === "blobcat"),
      true,
    );
    assert.equal((await get(server.app, `/api/v1/accounts/${alice.account.id}`)).json().emojis.length, 1);
  });

  test("emoji list prints every local emoji with its URL and state", async () => {
    const { code, out } = await cli(server, emojiList);
    assert.equal(code, 0);
    const byCode = new Map(out.map((line) => [line.split(" ")[0], line]));
    assert.deepEqual(
      [...byCode.keys()],
      [":blobcat:", ":hidden_one:", ":party_gif:", ":small:", ":still_webp:", ":wave:"],
    );
    assert.match(
      byCode.get(":hidden_one:")!,
      /^:hidden_one:\s+https:\/\/rookery\.test\/system\/custom_emojis\/images\/\d+\/original\/[0-9a-f]+\.png  unlisted$/,
    );
    assert.match(byCode.get(":blobcat:")!, /\.png  category=Blobs$/);
  });

  test("a shortcode in use is refused, but another case of it is a different emoji", async () => {
    const before = (await listed(server)).find((e) => e.shortcode === "blobcat");
    const result = await cli(server, emojiImport, files["small.png"], "--shortcode", "blobcat");
    assert.deepEqual(result, { code: 1, out: [], err: ["Shortcode has already been taken"] });
    assert.deepEqual(
      (await listed(server)).find((e) => e.shortcode === "blobcat"),
      before,
    );
    assert.equal((await cli(server, emojiImport, files["small.png"], "--shortcode", "BlobCat")).code, 0);
    const shortcodes = (await listed(server)).map((e) => e.shortcode);
    assert.ok(shortcodes.includes("BlobCat") && shortcodes.includes("blobcat"));
  });

  test("malformed shortcodes are refused", async () => {
    const cases: Array<[string, string[]]> = [
      ["a", ["Shortcode is invalid", "Shortcode is too short (minimum is 2 characters)"]],
      ["blob-cat", ["Shortcode is invalid"]],
      ["blob cat", ["Shortcode is invalid"]],
      ["blob:cat", ["Shortcode is invalid"]],
      ["ブロブ", ["Shortcode is invalid"]],
    ];
    for (const [shortcode, errors] of cases) {
      assert.deepEqual(
        await cli(server, emojiImport, files["small.png"], "--shortcode", shortcode),
        { code: 1, out: [], err: errors },
        shortcode,
      );
    }
    assert.deepEqual(await cli(server, emojiImport, files["small.png"], "--shortcode", ""), {
      code: 1,
      out: [],
      err: ["Shortcode is invalid", "Shortcode is too short (minimum is 2 characters)"],
    });
  });

  test("files that are not PNG, GIF or WebP images are refused", async () => {
    const cases: Array<[string, string]> = [
      ["notes.txt", "Image content type is invalid"],
      ["photo.jpg", "Image content type is invalid"],
      ["empty.png", "Image content type is invalid"],
      ["truncated.png", "Image could not be processed: the file is not a readable image"],
    ];
    for (const [name, error] of cases) {
      assert.deepEqual(
        await cli(server, emojiImport, files[name], "--shortcode", "bad_file"),
        { code: 1, out: [], err: [error] },
        name,
      );
    }
    assert.equal(
      (await listed(server)).some((e) => e.shortcode === "bad_file"),
      false,
    );
  });

  test("files over 256 KB are refused, and errors are reported together", async () => {
    assert.deepEqual(await cli(server, emojiImport, files["huge.png"], "--shortcode", "huge"), {
      code: 1,
      out: [],
      err: ["Image file size must be less than 256 KB"],
    });
    assert.deepEqual(await cli(server, emojiImport, files["huge.png"], "--shortcode", "x"), {
      code: 1,
      out: [],
      err: [
        "Shortcode is invalid",
        "Shortcode is too short (minimum is 2 characters)",
        "Image file size must be less than 256 KB",
      ],
    });
    assert.deepEqual(await cli(server, emojiImport, files["huge.png"], "--shortcode", "blobcat"), {
      code: 1,
      out: [],
      err: ["Shortcode has already been taken", "Image file size must be less than 256 KB"],
    });
    await assert.rejects(
      addCustomEmoji(server.ctx, { shortcode: "huge", data: Buffer.alloc(EMOJI_SIZE_LIMIT + 1) }),
      (error: Error & { status?: number }) =>
        error.status === 422 && error.message === "Validation failed: Image file size must be less than 256 KB",
    );
    assert.equal(
      (await listed(server)).some((e) => e.shortcode === "huge"),
      false,
    );
  });

  test("a missing file or a folder is reported", async () => {
    const missing = await cli(server, emojiImport, join(dir, "nope.png"), "--shortcode", "nope");
    assert.equal(missing.code, 1);
    assert.match(missing.err[0], /^Cannot read .*nope\.png: .*no such file/i);
    const folder = await cli(server, emojiImport, dir, "--shortcode", "folder");
    assert.equal(folder.code, 1);
    assert.match(folder.err[0], /^Cannot read /);
  });

  test("a device is not read as an image", { skip: !existsSync("/dev/zero") }, async () => {
    assert.deepEqual(await cli(server, emojiImport, "/dev/zero", "--shortcode", "zero"), {
      code: 1,
      out: [],
      err: ["Cannot read /dev/zero: not a regular file"],
    });
  });

  test("emoji remove deletes the emoji and its files", async () => {
    const emoji = (await listed(server)).find((e) => e.shortcode === "party_gif")!;
    assert.deepEqual(await cli(server, emojiRemove, "party_gif"), { code: 0, out: ["Removed :party_gif:"], err: [] });
    assert.equal(
      (await listed(server)).some((e) => e.shortcode === "party_gif"),
      false,
    );
    assert.equal((await fetchImage(server, emoji.url)).status, 404);
    assert.equal((await fetchImage(server, emoji.static_url)).status, 404);
    // The shortcode is free again.
    assert.equal((await cli(server, emojiImport, files["party.gif"], "--shortcode", "party_gif")).code, 0);
  });

  test("commands on an unknown shortcode fail", async () => {
    for (const command of [emojiRemove, emojiDisable, emojiEnable]) {
      assert.deepEqual(
        await cli(server, command, "nosuch"),
        { code: 1, out: [], err: ["No custom emoji :nosuch:"] },
        command.path.join(" "),
      );
    }
    // Shortcodes are case-sensitive here too.
    assert.equal((await cli(server, emojiDisable, "BLOBCAT")).code, 1);
  });
});
