import { open } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { Ctx } from "../context.ts";
import { serializeCustomEmoji } from "../entities/custom_emoji.ts";
import { NotFound, ValidationFailed } from "../errors.ts";
import type { Command, Output } from "./command.ts";

/** The emoji service loads sharp: imported when a command runs, not for `--help`. */
const emojiService = () => import("../services/emoji/manage.ts");

/** `:blobcat:` and `blobcat` name the same emoji. */
function shortcodeArgument(text: string): string {
  return text.replace(/^:(.*):$/, "$1");
}

/** Reads a regular file, but never more than `limit` bytes (enough to tell that it is too large). */
async function readAtMost(path: string, limit: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    if (!(await handle.stat()).isFile()) throw new Error("not a regular file");
    const buffer = Buffer.alloc(limit);
    let length = 0;
    while (length < limit) {
      const { bytesRead } = await handle.read(buffer, length, limit - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/** Runs a service call, printing its validation reasons or a missing emoji instead of throwing. */
async function reporting(io: Output, shortcode: string, action: () => Promise<string>): Promise<number> {
  try {
    io.out(await action());
    return 0;
  } catch (error) {
    if (error instanceof ValidationFailed) {
      for (const reason of error.reasons) io.err(reason);
      return 1;
    }
    if (error instanceof NotFound) {
      io.err(`No custom emoji :${shortcode}:`);
      return 1;
    }
    throw error;
  }
}

export const emojiImport: Command = {
  path: ["emoji", "import"],
  summary:
    "Adds a custom emoji from a PNG, GIF or WebP image (at most 256 KB; animation is kept). It is scaled to fit 128×128.",
  usage: "emoji import FILE [--shortcode NAME] [--category C] [--unlisted]",
  positionals: [1, 1],
  options: {
    shortcode: { type: "string", description: "The name used as :NAME: (letters, digits, _); default: the file name" },
    category: { type: "string", description: "Group the emoji under this category in pickers" },
    unlisted: { type: "boolean", description: "Keep it out of clients' emoji pickers (it still renders)" },
  },
  async run(ctx: Ctx, { values, positionals }, io) {
    const file = positionals[0];
    const shortcode =
      typeof values.shortcode === "string" ? shortcodeArgument(values.shortcode) : basename(file, extname(file));
    let data: Buffer;
    try {
      data = await readAtMost(file, (await emojiService()).EMOJI_SIZE_LIMIT + 1);
    } catch (error) {
      io.err(`Cannot read ${file}: ${(error as Error).message}`);
      return 1;
    }
    return reporting(io, shortcode, async () => {
      await (
        await emojiService()
      ).addCustomEmoji(ctx, {
        shortcode,
        data,
        category: typeof values.category === "string" ? values.category : null,
        visibleInPicker: values.unlisted !== true,
      });
      return `Added :${shortcode}:`;
    });
  },
};

export const emojiList: Command = {
  path: ["emoji", "list"],
  summary: "Lists the local custom emoji with their image, category and state.",
  usage: "emoji list",
  positionals: [0, 0],
  options: {},
  async run(ctx, _args, io) {
    const rows = await (await emojiService()).listCustomEmojis(ctx);
    const width = Math.max(0, ...rows.map((row) => row.shortcode.length + 2));
    for (const row of rows) {
      const notes = [
        row.category ? `category=${row.category}` : "",
        row.visible_in_picker ? "" : "unlisted",
        row.disabled ? "disabled" : "",
      ].filter(Boolean);
      io.out([`:${row.shortcode}:`.padEnd(width), serializeCustomEmoji(ctx, row).url, ...notes].join("  "));
    }
    return 0;
  },
};

export const emojiRemove: Command = {
  path: ["emoji", "remove"],
  summary: "Deletes a local custom emoji and its image files.",
  usage: "emoji remove SHORTCODE",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const shortcode = shortcodeArgument(positionals[0]);
    return reporting(io, shortcode, async () => {
      await (await emojiService()).removeCustomEmoji(ctx, shortcode);
      return `Removed :${shortcode}:`;
    });
  },
};

export const emojiDisable: Command = {
  path: ["emoji", "disable"],
  summary: "Stops a local custom emoji from being listed or rendered (its files are kept).",
  usage: "emoji disable SHORTCODE",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const shortcode = shortcodeArgument(positionals[0]);
    return reporting(io, shortcode, async () => {
      await (await emojiService()).setEmojiDisabled(ctx, shortcode, true);
      return `Disabled :${shortcode}:`;
    });
  },
};

export const emojiEnable: Command = {
  path: ["emoji", "enable"],
  summary: "Lists and renders a disabled custom emoji again.",
  usage: "emoji enable SHORTCODE",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const shortcode = shortcodeArgument(positionals[0]);
    return reporting(io, shortcode, async () => {
      await (await emojiService()).setEmojiDisabled(ctx, shortcode, false);
      return `Enabled :${shortcode}:`;
    });
  },
};
