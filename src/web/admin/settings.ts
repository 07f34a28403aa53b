/**
 * The server's settings in the admin area (Mastodon's Admin::SettingsController, Manage Settings):
 * one form of every setting `rookery settings` changes but the rules, which have their own page.
 * Each setting's input follows its type (a checkbox for a switch, a menu for a choice, a text
 * area for long text), and the form saves all or nothing (services/admin/settings.ts
 * updateSettings): a refused value shows the form again, with the reason beside the setting.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { InstanceSettings } from "../../db/schema.ts";
import { toStringParam } from "../../api/params.ts";
import { SettingsInvalid, updateSettings, type PlainSettingKey } from "../../services/admin/settings.ts";
import { loadSettings, SETTING_DEFINITIONS } from "../../services/instance/settings.ts";
import { html, type SafeHtml } from "../html.ts";
import {
  checkbox,
  checked,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  selected,
  type Staff,
  staffRoutes,
} from "./frame.ts";

const SECTION = "/admin/settings";

const NOTICES = {
  saved: "The settings were saved.",
  unchanged: "Nothing needed saving: the settings were already so.",
};

/** How each setting is labelled on the form; the definitions' descriptions are shown under it. */
const LABELS: Partial<Record<PlainSettingKey, string>> = {
  site_title: "Server name",
  site_short_description: "Short description",
  site_extended_description: "Extended description",
  site_contact_username: "Contact account (username)",
  site_contact_email: "Contact e-mail address",
  registrations_mode: "Who can sign up",
  require_invite_text: "Ask for a reason to join",
  closed_registrations_message: "Message when sign-ups are closed",
  timeline_preview: "Visitors may read the public timelines",
  trendable_by_default: "Let hashtags, posts and links trend without review",
  peers_api_enabled: "Publish the list of known servers",
  activity_api_enabled: "Publish weekly activity figures",
  show_domain_blocks: "Who may see the list of blocked servers",
  show_domain_blocks_rationale: "Who may see why they are blocked",
};

/** The words of the choices. */
const CHOICES: Record<string, Record<string, string>> = {
  registrations_mode: {
    open: "Anyone",
    approved: "Anyone, once a moderator approves",
    none: "Nobody",
  },
  show_domain_blocks: { disabled: "Nobody", users: "Signed-in users", all: "Everyone" },
  show_domain_blocks_rationale: { disabled: "Nobody", users: "Signed-in users", all: "Everyone" },
};

/** The form's sections; a setting not named here is shown under "Other settings". */
const GROUPS: Array<{ legend: string; keys: PlainSettingKey[] }> = [
  {
    legend: "About this server",
    keys: [
      "site_title",
      "site_short_description",
      "site_extended_description",
      "site_contact_username",
      "site_contact_email",
    ],
  },
  { legend: "Sign-ups", keys: ["registrations_mode", "require_invite_text", "closed_registrations_message"] },
  {
    legend: "Discovery",
    keys: ["timeline_preview", "trendable_by_default", "peers_api_enabled", "activity_api_enabled"],
  },
  { legend: "Blocked servers", keys: ["show_domain_blocks", "show_domain_blocks_rationale"] },
];

/** Texts longer than this get a text area. */
const LONG_TEXT = 500;

const FORM_KEYS = (Object.keys(SETTING_DEFINITIONS) as Array<keyof InstanceSettings>).filter(
  (key): key is PlainSettingKey => key !== "rules",
);

/** What the form shows for each setting: the stored value, or what was typed when it is shown again. */
type FormValues = Record<PlainSettingKey, string>;

function storedValues(values: InstanceSettings): FormValues {
  return Object.fromEntries(FORM_KEYS.map((key) => [key, String(values[key])])) as FormValues;
}

/**
 * The form's values as sent: switches are off when their box is not sent (a browser sends only
 * ticked ones); a text or choice the form did not send stays as it is.
 */
function sentValues(req: FastifyRequest): Partial<FormValues> {
  const texts: Partial<FormValues> = {};
  for (const key of FORM_KEYS) {
    const kind = SETTING_DEFINITIONS[key].type.kind;
    const value = toStringParam(req.input[key]);
    if (kind === "boolean") texts[key] = checkbox(req, key) ? "true" : "false";
    // Browsers send a text area's line breaks as CRLF; store them as the CLI would.
    else if (value !== undefined) texts[key] = value.replace(/\r\n?/g, "\n");
  }
  return texts;
}

/** A reason as the service words it ("site_title is too long …") said of the field beside it. */
function problemText(key: string, reason: string): string {
  return reason.startsWith(`${key} `) ? `This ${reason.slice(key.length + 1)}.` : `${reason}.`;
}

function settingInput(key: PlainSettingKey, value: string, problem: string | undefined): SafeHtml {
  const { type, description } = SETTING_DEFINITIONS[key];
  const label = LABELS[key] ?? key;
  const describedBy = problem ? `${key}_hint ${key}_error` : `${key}_hint`;
  const invalid = problem ? html` aria-invalid="true"` : "";
  const hint = html`<p class="muted" id="${key}_hint">${description}</p>${problem ? html`<p id="${key}_error"><strong>${problemText(key, problem)}</strong></p>` : ""}`;
  switch (type.kind) {
    case "boolean":
      return html`<label for="${key}"><input type="checkbox" id="${key}" name="${key}" value="1"${checked(value === "true")} aria-describedby="${describedBy}"${invalid}> ${label}</label>${hint}`;
    case "choice": {
      const words = CHOICES[key] ?? {};
      const options = type.choices.map(
        (choice) => html`<option value="${choice}"${selected(choice === value)}>${words[choice] ?? choice}</option>`,
      );
      return html`<label for="${key}">${label}</label><select id="${key}" name="${key}" aria-describedby="${describedBy}"${invalid}>${options}</select>${hint}`;
    }
    case "string":
      if (type.max > LONG_TEXT)
        return html`<label for="${key}">${label}</label><textarea id="${key}" name="${key}" rows="${type.max > 10_000 ? 8 : 4}" maxlength="${type.max}" aria-describedby="${describedBy}"${invalid}>${value}</textarea>${hint}`;
      return html`<label for="${key}">${label}</label><input type="${key === "site_contact_email" ? "email" : "text"}" id="${key}" name="${key}" value="${value}" maxlength="${type.max}" aria-describedby="${describedBy}"${invalid}>${hint}`;
    default:
      return html``;
  }
}

export default async function adminSettingsRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_settings");

  function formPage(
    reply: FastifyReply,
    staff: Staff,
    values: FormValues,
    problems: Partial<Record<string, string>> = {},
  ) {
    const grouped = new Set(GROUPS.flatMap((g) => g.keys));
    const others = FORM_KEYS.filter((key) => !grouped.has(key));
    const groups = others.length > 0 ? [...GROUPS, { legend: "Other settings", keys: others }] : GROUPS;
    const invalid = Object.keys(problems).length > 0;
    const fieldsets = groups.map(
      (group) =>
        html`<fieldset><legend>${group.legend}</legend>${group.keys.map((key) => settingInput(key, values[key], problems[key]))}</fieldset>`,
    );
    return renderAdminPage(ctx, reply, staff, {
      title: "Server settings",
      section: SECTION,
      notices: NOTICES,
      status: invalid ? 422 : undefined,
      alert: invalid ? "Nothing was saved: please correct the settings marked below." : undefined,
      body: html`<p>What the server says about itself, who may sign up, and what it shows to visitors and other servers. The server rules have <a href="/admin/rules">their own page</a>.</p>
${postForm(staff, SECTION, html`${fieldsets}<button type="submit">Save the settings</button>`)}`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const { values } = await loadSettings(ctx.db.kysely);
    return formPage(reply, staff, storedValues(values));
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const texts = sentValues(req);
    let changed: string[];
    try {
      changed = await updateSettings(ctx, { actorId: staff.moderator.account.id, texts });
    } catch (error) {
      if (!(error instanceof SettingsInvalid)) throw error;
      const { values } = await loadSettings(ctx.db.kysely);
      return formPage(reply, staff, { ...storedValues(values), ...texts }, error.problems);
    }
    return redirectWithNotice(reply, SECTION, changed.length > 0 ? "saved" : "unchanged");
  });
}
