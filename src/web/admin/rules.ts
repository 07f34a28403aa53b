/**
 * The server's rules in the admin area (Mastodon's Admin::RulesController, Manage Rules): the list
 * in its order with a form that adds a rule, a page that edits one, and buttons that move a rule up
 * or down or remove it. A rule's ID is its number in the list, as the API gives it; every form
 * carries the version of the rule it showed, so a page opened before another moderator changed the
 * list cannot change the wrong rule (services/admin/rules.ts explains how reports keep their rules).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { ValidationFailed } from "../../errors.ts";
import { toStringParam } from "../../api/params.ts";
import {
  addRule,
  listRules,
  moveRule,
  removeRule,
  ruleOf,
  RULE_TEXT_LIMIT,
  updateRule,
  type NumberedRule,
  type RuleParams,
} from "../../services/admin/rules.ts";
import { html, type SafeHtml } from "../html.ts";
import { actionButton, postForm, redirectWithNotice, renderAdminPage, staffRoutes, type Staff } from "./frame.ts";

const SECTION = "/admin/rules";

const NOTICES = {
  created: "The rule was added.",
  updated: "The rule was saved.",
  moved: "The rule was moved.",
  removed: "The rule was removed.",
};

/** The rule's text and hint as the form sent them (untrimmed, so a form shown again keeps them). */
function ruleParams(req: FastifyRequest): RuleParams {
  return { text: toStringParam(req.input.text) ?? "", hint: toStringParam(req.input.hint) ?? "" };
}

/** The path's rule ID and the version the form showed. */
function target(req: FastifyRequest): { id: string; version: string | undefined } {
  return { id: (req.params as { id: string }).id, version: toStringParam(req.input.version) };
}

/** The text and hint inputs of the add and edit forms. */
function ruleFields(values: RuleParams): SafeHtml {
  return html`<label for="text">Rule</label><input type="text" id="text" name="text" value="${values.text}" required maxlength="${RULE_TEXT_LIMIT}" aria-describedby="text_hint">
<p class="muted" id="text_hint">Short and clear, at most ${RULE_TEXT_LIMIT} characters.</p>
<label for="hint">Explanation (optional)</label><textarea id="hint" name="hint" rows="3" aria-describedby="hint_hint">${values.hint ?? ""}</textarea>
<p class="muted" id="hint_hint">Shown under the rule to say more about it.</p>`;
}

function rulesTable(staff: Staff, rules: NumberedRule[]): SafeHtml {
  if (rules.length === 0) return html`<p class="empty">The server has no rules yet.</p>`;
  const rows = rules.map((rule, i) => {
    const fields = { version: rule.version };
    // Every row has the same buttons: their names say which rule they act on.
    const up =
      i > 0
        ? actionButton(staff, `${SECTION}/${rule.id}/move_up`, "Move up", {
            secondary: true,
            ariaLabel: `Move rule ${rule.id} up`,
            fields,
          })
        : "";
    const down =
      i < rules.length - 1
        ? actionButton(staff, `${SECTION}/${rule.id}/move_down`, "Move down", {
            secondary: true,
            ariaLabel: `Move rule ${rule.id} down`,
            fields,
          })
        : "";
    const remove = actionButton(staff, `${SECTION}/${rule.id}/delete`, "Remove", {
      danger: true,
      ariaLabel: `Remove rule ${rule.id}`,
      fields,
    });
    return html`<tr><td>${rule.id}</td><td><strong>${rule.text}</strong>${rule.hint ? html`<br><span class="muted">${rule.hint}</span>` : ""}</td>
<td><a href="${SECTION}/${rule.id}/edit" aria-label="${`Edit rule ${rule.id}`}">Edit</a> ${up} ${down} ${remove}</td></tr>`;
  });
  return html`<table><thead><tr><th scope="col">Number</th><th scope="col">Rule</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export default async function adminRuleRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_rules");

  async function rulesPage(reply: FastifyReply, staff: Staff, values: RuleParams, error?: ValidationFailed) {
    const rules = await listRules(ctx);
    return renderAdminPage(ctx, reply, staff, {
      title: "Server rules",
      section: SECTION,
      notices: NOTICES,
      status: error ? 422 : undefined,
      alert: error ? `The rule was not added: ${error.reasons.join(", ")}.` : undefined,
      body: html`<p>The rules are shown on the about page, to people signing up, and to anyone filing a report, who can say which rules were broken. Reports name rules by their number: when a rule is moved or removed, the reports that named rules follow, and a report that named a removed rule no longer names it.</p>
${rulesTable(staff, rules)}
<h2>Add a rule</h2>
${postForm(staff, SECTION, html`${ruleFields(values)}<button type="submit">Add the rule</button>`)}`,
    });
  }

  function editPage(
    reply: FastifyReply,
    staff: Staff,
    rule: NumberedRule,
    values: RuleParams,
    error?: ValidationFailed,
  ) {
    return renderAdminPage(ctx, reply, staff, {
      title: `Edit rule ${rule.id}`,
      section: SECTION,
      status: error ? 422 : undefined,
      alert: error ? `The rule was not saved: ${error.reasons.join(", ")}.` : undefined,
      body: html`${postForm(staff, `${SECTION}/${rule.id}`, html`${ruleFields(values)}<button type="submit">Save the rule</button>`, { fields: { version: rule.version } })}
<nav><a href="${SECTION}">Back to the rules</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    return rulesPage(reply, staff, { text: "", hint: "" });
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const values = ruleParams(req);
    try {
      await addRule(ctx, staff.moderator.account.id, values);
    } catch (error) {
      if (error instanceof ValidationFailed) return rulesPage(reply, staff, values, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "created");
  });

  routes.get(`${SECTION}/:id/edit`, async (req, reply, staff) => {
    const rule = await ruleOf(ctx, target(req).id);
    return editPage(reply, staff, rule, rule);
  });

  routes.post(`${SECTION}/:id`, async (req, reply, staff) => {
    const { id, version } = target(req);
    const values = ruleParams(req);
    try {
      await updateRule(ctx, staff.moderator.account.id, id, values, version);
    } catch (error) {
      if (error instanceof ValidationFailed) {
        const rule = await ruleOf(ctx, id);
        return editPage(reply, staff, { ...rule, version: version ?? rule.version }, values, error);
      }
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "updated");
  });

  for (const [action, offset] of [
    ["move_up", -1],
    ["move_down", 1],
  ] as const) {
    routes.post(`${SECTION}/:id/${action}`, async (req, reply, staff) => {
      const { id, version } = target(req);
      await moveRule(ctx, staff.moderator.account.id, id, offset, version);
      return redirectWithNotice(reply, SECTION, "moved");
    });
  }

  routes.post(`${SECTION}/:id/delete`, async (req, reply, staff) => {
    const { id, version } = target(req);
    await removeRule(ctx, staff.moderator.account.id, id, version);
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
