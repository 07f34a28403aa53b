/**
 * Warning presets in the admin area (Mastodon's Admin::WarningPresetsController, Manage Settings):
 * one page with the form that adds a preset above the presets, by title; a page that edits one;
 * and removing one — through services/admin/warning_presets.ts. The account action form and the
 * admin API's `warning_preset_id` offer what is written here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountWarningPresetRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { toStringParam } from "../../api/params.ts";
import {
  createWarningPreset,
  listWarningPresets,
  removeWarningPreset,
  updateWarningPreset,
  warningPresetLabel,
  warningPresetOf,
  type WarningPresetParams,
} from "../../services/admin/warning_presets.ts";
import { html, type SafeHtml } from "../html.ts";
import { clipped } from "./display.ts";
import { actionButton, postForm, redirectWithNotice, renderAdminPage, staffRoutes, type Staff } from "./frame.ts";

const SECTION = "/admin/warning_presets";

const NOTICES = {
  created: "The preset was added.",
  updated: "The preset was saved.",
  removed: "The preset was removed.",
};

/** The title and text as the form sent them (untrimmed, so a form shown again keeps them). */
function presetParams(req: FastifyRequest): Required<WarningPresetParams> {
  return { title: toStringParam(req.input.title) ?? "", text: toStringParam(req.input.text) ?? "" };
}

/** The title and text inputs of the add and edit forms. */
function presetFields(values: Required<WarningPresetParams>): SafeHtml {
  return html`<label for="title">Title (optional)</label><input type="text" id="title" name="title" value="${values.title}" aria-describedby="title_hint" autocomplete="off">
<p class="muted" id="title_hint">How the preset appears in the menu of the action form; without one, the start of the text is shown.</p>
<label for="text">Warning text</label><textarea id="text" name="text" rows="5" required aria-describedby="text_hint">${values.text}</textarea>
<p class="muted" id="text_hint">The warned user reads it in the strike (and the e-mail about it), before anything the moderator adds.</p>`;
}

function presetsTable(staff: Staff, presets: AccountWarningPresetRow[]): SafeHtml {
  if (presets.length === 0) return html`<p class="empty">There are no warning presets yet.</p>`;
  const rows = presets.map((preset) => {
    const label = `“${warningPresetLabel(preset)}”`;
    const edit = `${SECTION}/${preset.id}/edit`;
    return html`<tr><td>${preset.title ? html`<a href="${edit}">${preset.title}</a>` : html`<span class="muted">No title</span>`}</td>
<td>${clipped(preset.text, 200)}</td>
<td><a href="${edit}" aria-label="${`Edit the preset ${label}`}">Edit</a> ${actionButton(staff, `${SECTION}/${preset.id}/remove`, "Remove", { danger: true, ariaLabel: `Remove the preset ${label}` })}</td></tr>`;
  });
  return html`<table><thead><tr><th scope="col">Title</th><th scope="col">Text</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export default async function adminWarningPresetRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_settings");

  async function presetsPage(
    reply: FastifyReply,
    staff: Staff,
    values: Required<WarningPresetParams>,
    error?: ValidationFailed,
  ) {
    const presets = await listWarningPresets(ctx);
    return renderAdminPage(ctx, reply, staff, {
      title: "Warning presets",
      section: SECTION,
      notices: NOTICES,
      status: error ? 422 : undefined,
      alert: error ? `The preset was not added: ${error.reasons.join(", ")}.` : undefined,
      body: html`<p>Texts for the warnings you give often. The action form on an account offers them; the chosen preset's text comes first in the strike, followed by anything you add there.</p>
<h2>Add a preset</h2>
${postForm(staff, SECTION, html`${presetFields(values)}<button type="submit">Add the preset</button>`)}
<h2>Presets</h2>
${presetsTable(staff, presets)}`,
    });
  }

  function editPage(
    reply: FastifyReply,
    staff: Staff,
    preset: AccountWarningPresetRow,
    values: Required<WarningPresetParams>,
    error?: ValidationFailed,
  ) {
    const label = `“${warningPresetLabel(preset)}”`;
    return renderAdminPage(ctx, reply, staff, {
      title: `Edit the preset ${label}`,
      section: SECTION,
      status: error ? 422 : undefined,
      alert: error ? `The preset was not saved: ${error.reasons.join(", ")}.` : undefined,
      body: html`${postForm(staff, `${SECTION}/${preset.id}`, html`${presetFields(values)}<button type="submit">Save the preset</button>`)}
<h2>Remove the preset</h2>
<p>Warnings already given keep their text.</p>
${actionButton(staff, `${SECTION}/${preset.id}/remove`, `Remove the preset ${label}`, { danger: true })}
<nav><a href="${SECTION}">Back to the warning presets</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    return presetsPage(reply, staff, { title: "", text: "" });
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const values = presetParams(req);
    try {
      await createWarningPreset(ctx, staff.moderator.account.id, values);
    } catch (error) {
      if (error instanceof ValidationFailed) return presetsPage(reply, staff, values, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.get(`${SECTION}/:id/edit`, async (req, reply, staff) => {
    const preset = await warningPresetOf(ctx, toStringParam(req.input.id));
    return editPage(reply, staff, preset, preset);
  });

  routes.post(`${SECTION}/:id`, async (req, reply, staff) => {
    const preset = await warningPresetOf(ctx, toStringParam(req.input.id));
    const values = presetParams(req);
    try {
      await updateWarningPreset(ctx, staff.moderator.account.id, preset.id, values);
    } catch (error) {
      if (error instanceof ValidationFailed) return editPage(reply, staff, preset, values, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "updated");
  });

  routes.post(`${SECTION}/:id/remove`, async (req, reply, staff) => {
    await removeWarningPreset(ctx, staff.moderator.account.id, toStringParam(req.input.id));
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
