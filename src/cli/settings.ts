import { ValidationFailed } from "../errors.ts";
import {
  isSettingKey,
  loadSettings,
  parseSettingValue,
  saveSetting,
  SETTING_DEFINITIONS,
} from "../services/instance/settings.ts";
import { UsageError, type Command } from "./command.ts";

function keyOf(text: string) {
  if (!isSettingKey(text)) throw new UsageError(`unknown setting "${text}"; \`rookery settings list\` shows them`);
  return text;
}

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export const settingsList: Command = {
  path: ["settings", "list"],
  summary: "Lists every instance setting with its current value.",
  usage: "settings list",
  positionals: [0, 0],
  options: {},
  async run(ctx, _args, io) {
    const { values } = await loadSettings(ctx.db.kysely);
    for (const [key, definition] of Object.entries(SETTING_DEFINITIONS)) {
      io.out(`${key} = ${show(values[key as keyof typeof values])}\n    ${definition.description}`);
    }
    return 0;
  },
};

export const settingsGet: Command = {
  path: ["settings", "get"],
  summary: "Prints the value of an instance setting.",
  usage: "settings get KEY",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const key = keyOf(positionals[0]);
    const { values } = await loadSettings(ctx.db.kysely);
    io.out(show(values[key]));
    return 0;
  },
};

export const settingsSet: Command = {
  path: ["settings", "set"],
  summary:
    "Changes an instance setting (registrations_mode open|approved|none, timeline_preview, site_title, site_contact_email, rules, …).",
  usage: "settings set KEY VALUE",
  positionals: [2, 2],
  options: {},
  async run(ctx, { positionals }, io) {
    const key = keyOf(positionals[0]);
    try {
      await saveSetting(ctx.db.kysely, key, parseSettingValue(key, positionals[1]));
    } catch (error) {
      if (error instanceof ValidationFailed) {
        io.err(error.reasons.join("\n"));
        return 1;
      }
      throw error;
    }
    io.out("OK");
    return 0;
  },
};
