import type { Kysely } from "kysely";
import type {
  Database,
  DomainBlocksVisibility,
  InstanceRule,
  InstanceSettings,
  RegistrationsMode,
} from "../../db/schema.ts";
import type { Engine } from "../../db/connect.ts";
import { ValidationFailed } from "../../errors.ts";

export type { DomainBlocksVisibility, InstanceRule, InstanceSettings, RegistrationsMode };

type SettingKind =
  | { kind: "string"; max: number }
  | { kind: "boolean" }
  | { kind: "choice"; choices: readonly string[] }
  | { kind: "rules" };

interface SettingDefinition {
  type: SettingKind;
  description: string;
}

export const SETTING_DEFINITIONS: Record<keyof InstanceSettings, SettingDefinition> = {
  site_title: { type: { kind: "string", max: 200 }, description: "Name of the server" },
  site_short_description: {
    type: { kind: "string", max: 2000 },
    description: "One-paragraph description (plain text)",
  },
  site_extended_description: {
    type: { kind: "string", max: 100_000 },
    description: "Longer description; blank lines separate paragraphs",
  },
  site_contact_email: { type: { kind: "string", max: 320 }, description: "Public contact e-mail address" },
  site_contact_username: { type: { kind: "string", max: 30 }, description: "Username of the public contact account" },
  registrations_mode: {
    type: { kind: "choice", choices: ["open", "approved", "none"] },
    description: "Who can sign up: open, approved (needs review) or none",
  },
  closed_registrations_message: {
    type: { kind: "string", max: 5000 },
    description: "Shown when registrations are closed",
  },
  require_invite_text: { type: { kind: "boolean" }, description: "Ask for a reason when registrations need approval" },
  timeline_preview: {
    type: { kind: "boolean" },
    description: "Let visitors without an account read the public timelines",
  },
  peers_api_enabled: {
    type: { kind: "boolean" },
    description: "Publish the list of known servers (/api/v1/instance/peers)",
  },
  activity_api_enabled: {
    type: { kind: "boolean" },
    description: "Publish weekly statistics (/api/v1/instance/activity)",
  },
  rules: {
    type: { kind: "rules" },
    description: 'Server rules: a JSON array of strings or {"text","hint"} objects, or one rule per line',
  },
  show_domain_blocks: {
    type: { kind: "choice", choices: ["disabled", "users", "all"] },
    description: "Who may list the blocked servers (/api/v1/instance/domain_blocks): disabled, users or all",
  },
  show_domain_blocks_rationale: {
    type: { kind: "choice", choices: ["disabled", "users", "all"] },
    description: "Who sees the public reasons in that list: disabled, users or all",
  },
  trendable_by_default: {
    type: { kind: "boolean" },
    description: "Let hashtags, posts and links trend before a moderator reviewed them",
  },
};

export const DEFAULT_SETTINGS: InstanceSettings = {
  site_title: "Rookery",
  site_short_description: "",
  site_extended_description: "",
  site_contact_email: "",
  site_contact_username: "",
  registrations_mode: "open",
  closed_registrations_message: "",
  require_invite_text: false,
  timeline_preview: true,
  peers_api_enabled: true,
  activity_api_enabled: true,
  rules: [],
  show_domain_blocks: "disabled",
  show_domain_blocks_rationale: "disabled",
  trendable_by_default: true,
};

export function isSettingKey(key: string): key is keyof InstanceSettings {
  return Object.hasOwn(SETTING_DEFINITIONS, key);
}

export interface StoredSettings {
  values: InstanceSettings;
  /** When each stored setting last changed (absent for defaults). */
  updatedAt: Partial<Record<keyof InstanceSettings, string>>;
}

/** Loads every setting (one query), defaults filled in. */
export async function loadSettings(db: Kysely<Database>): Promise<StoredSettings> {
  const rows = await db.selectFrom("instance_settings").selectAll().execute();
  const values: InstanceSettings = structuredClone(DEFAULT_SETTINGS);
  const updatedAt: StoredSettings["updatedAt"] = {};
  for (const row of rows) {
    if (!isSettingKey(row.key)) continue;
    try {
      (values as unknown as Record<string, unknown>)[row.key] = JSON.parse(row.value);
      updatedAt[row.key] = row.updated_at;
    } catch {
      // A value that no longer parses falls back to the default.
    }
  }
  return { values, updatedAt };
}

function parseRules(text: string): InstanceRule[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  let items: unknown[];
  if (trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (!Array.isArray(parsed)) throw new Error();
      items = parsed;
    } catch {
      throw new ValidationFailed('Rules must be a JSON array of strings or {"text", "hint"} objects');
    }
  } else {
    items = trimmed
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
  }
  return items.map((item) => {
    if (typeof item === "string" && item.trim()) return { text: item.trim(), hint: "" };
    if (
      item &&
      typeof item === "object" &&
      typeof (item as InstanceRule).text === "string" &&
      (item as InstanceRule).text.trim()
    ) {
      const hint = (item as InstanceRule).hint;
      return { text: (item as InstanceRule).text.trim(), hint: typeof hint === "string" ? hint : "" };
    }
    throw new ValidationFailed("Each rule needs a non-empty text");
  });
}

/** Parses a textual value for `key` (as typed on the command line) into its typed form. */
export function parseSettingValue(key: keyof InstanceSettings, text: string): InstanceSettings[typeof key] {
  const { type } = SETTING_DEFINITIONS[key];
  switch (type.kind) {
    case "string":
      if (text.length > type.max) throw new ValidationFailed(`${key} is too long (maximum is ${type.max} characters)`);
      return text;
    case "boolean": {
      const value = text.trim().toLowerCase();
      if (["true", "1", "on", "yes"].includes(value)) return true;
      if (["false", "0", "off", "no"].includes(value)) return false;
      throw new ValidationFailed(`${key} must be true or false`);
    }
    case "choice":
      if (!type.choices.includes(text.trim()))
        throw new ValidationFailed(`${key} must be one of ${type.choices.join(", ")}`);
      return text.trim() as RegistrationsMode;
    case "rules":
      return parseRules(text);
  }
}

export async function saveSetting<K extends keyof InstanceSettings>(
  db: Kysely<Database>,
  key: K,
  value: InstanceSettings[K],
): Promise<void> {
  const now = new Date().toISOString();
  const json = JSON.stringify(value);
  await db
    .insertInto("instance_settings")
    .values({ key, value: json, updated_at: now })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: json, updated_at: now }))
    .execute();
}

/**
 * Reads the stored value of `key` inside the transaction `tx` that is about to change it, so that
 * a read-modify-write (adding a rule to the list) is not lost to a concurrent one: PostgreSQL locks
 * the setting's row until `tx` ends (the row is created with its default first, so there is one to
 * lock); SQLite's write transactions already run one at a time (`begin immediate`).
 */
export async function loadSettingForUpdate<K extends keyof InstanceSettings>(
  tx: Kysely<Database>,
  engine: Engine,
  key: K,
): Promise<InstanceSettings[K]> {
  const fallback = structuredClone(DEFAULT_SETTINGS[key]);
  if (engine === "postgres")
    await tx
      .insertInto("instance_settings")
      .values({ key, value: JSON.stringify(fallback), updated_at: new Date().toISOString() })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
  let query = tx.selectFrom("instance_settings").select("value").where("key", "=", key);
  if (engine === "postgres") query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) return fallback;
  try {
    return JSON.parse(row.value) as InstanceSettings[K];
  } catch {
    return fallback;
  }
}
