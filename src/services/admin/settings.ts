/**
 * The server settings as the admin area's form saves them (Mastodon's Admin::SettingsController,
 * Manage Settings): several at once, all or nothing, each change in the audit log. The settings
 * themselves — their definitions, parsing and storage — are services/instance/settings.ts, which
 * the CLI and the API read too; this module adds what only moderators do with them.
 */
import type { Ctx } from "../../context.ts";
import type { InstanceSettings } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import {
  isSettingKey,
  loadSettings,
  parseSettingValue,
  saveSetting,
  SETTING_DEFINITIONS,
} from "../instance/settings.ts";
import { recordAction } from "./audit.ts";

/** Some settings refused as a form sent them: the reason of each, by key. */
export class SettingsInvalid extends ValidationFailed {
  readonly problems: Partial<Record<keyof InstanceSettings, string>>;
  constructor(problems: Partial<Record<keyof InstanceSettings, string>>) {
    super(Object.values(problems) as string[]);
    this.problems = problems;
  }
}

/**
 * The settings a form saves together: all but the rules, which change one at a time through
 * services/admin/rules.ts (that keeps the reports' rule IDs pointing at the same rules).
 */
export type PlainSettingKey = Exclude<keyof InstanceSettings, "rules">;

export interface SettingsUpdate {
  /** The moderator saving them, for the audit log. */
  actorId: string;
  /** The settings to save as typed (`rookery settings set` reads the same); absent keys stay as they are. */
  texts: Partial<Record<PlainSettingKey, string>>;
}

/**
 * Saves several settings at once, all or nothing (the admin area's settings form): every text is
 * parsed by parseSettingValue, and the contact username must name a local account, as Mastodon's
 * form checks; any problem throws SettingsInvalid with them all and saves nothing. What changed is
 * saved in one transaction, with one audit entry (`update` of the Setting, by its key) per changed
 * setting. Returns the keys that changed.
 */
export async function updateSettings(ctx: Ctx, update: SettingsUpdate): Promise<Array<keyof InstanceSettings>> {
  const problems: Partial<Record<keyof InstanceSettings, string>> = {};
  const parsed: Partial<Record<keyof InstanceSettings, InstanceSettings[keyof InstanceSettings]>> = {};
  for (const [key, text] of Object.entries(update.texts) as Array<[keyof InstanceSettings, string]>) {
    if (!isSettingKey(key) || key === "rules" || text === undefined) continue;
    try {
      parsed[key] = parseSettingValue(key, text);
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      problems[key] = error.reasons.join(", ");
    }
  }
  const contact = parsed.site_contact_username;
  if (typeof contact === "string" && contact.trim() !== "") {
    const account = await ctx.db.kysely
      .selectFrom("accounts")
      .select("id")
      .where("domain", "is", null)
      .where((eb) => eb(eb.fn("lower", ["username"]), "=", contact.trim().toLowerCase()))
      .executeTakeFirst();
    if (!account) problems.site_contact_username = `site_contact_username must be the username of a local account`;
    else parsed.site_contact_username = contact.trim();
  }
  if (Object.keys(problems).length > 0) throw new SettingsInvalid(problems);
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const { values } = await loadSettings(tx);
    const changed = (Object.keys(parsed) as Array<keyof InstanceSettings>).filter(
      (key) => JSON.stringify(parsed[key]) !== JSON.stringify(values[key]),
    );
    for (const key of changed) {
      const value = parsed[key]!;
      await saveSetting(tx, key, value);
      await recordAction(tx, {
        actorId: update.actorId,
        action: "update",
        targetType: "Setting",
        humanIdentifier: key,
        // Switches and choices say what they became; texts may be long and are not copied.
        detail: SETTING_DEFINITIONS[key].type.kind === "string" ? null : String(value),
      });
    }
    return changed;
  });
}
