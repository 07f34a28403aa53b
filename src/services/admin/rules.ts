/**
 * The server's rules (Mastodon's Rule): added, edited, removed and reordered by moderators with
 * Manage Rules, each change written to the audit log (`create`, `update`, `destroy` of a Rule,
 * named by its text) in the transaction that makes it.
 *
 * Policy on rule IDs. The rules are one instance setting, an ordered list, and the API numbers
 * them by position (`/api/v1/instance/rules` answers IDs "1", "2", …; a report's `rule_ids` cite
 * those). Mastodon's rules have IDs of their own and a removed rule is only hidden (soft-deleted),
 * so a report keeps naming the rule it cited. Here, removing or moving a rule renumbers the ones
 * after it; so that every report still cites the same rules, the same transaction rewrites the
 * reports' `rule_ids`: the IDs after a removed rule go down by one, two swapped rules swap their
 * IDs, and a removed rule leaves the reports that cited it (its text stays in the audit log).
 * Pages act on a rule by its position and the version (a digest of its text and hint) they
 * showed, so a form opened before someone else changed the list cannot change the wrong rule.
 */
import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Database, InstanceRule } from "../../db/schema.ts";
import { Conflict, NotFound, ValidationFailed } from "../../errors.ts";
import { loadSettingForUpdate, loadSettings, saveSetting } from "../instance/settings.ts";
import { recordAction } from "./audit.ts";

/** The longest rule text (Mastodon's Rule::TEXT_SIZE_LIMIT); the hint has no limit there either. */
export const RULE_TEXT_LIMIT = 300;

/** A rule with the ID the API gives it (its position, from 1) and its version. */
export interface NumberedRule extends InstanceRule {
  id: string;
  version: string;
}

export interface RuleParams {
  text: string;
  hint?: string;
}

/** A digest of a rule's text and hint: what a form saw, to tell whether the rule is still the same. */
export function ruleVersion(rule: InstanceRule): string {
  return createHash("sha256").update(`${rule.text}\u0000${rule.hint}`).digest("hex").slice(0, 16);
}

const numbered = (rules: readonly InstanceRule[]): NumberedRule[] =>
  rules.map((rule, i) => ({ ...rule, id: String(i + 1), version: ruleVersion(rule) }));

/** The rules in their order, with the IDs the API gives them. */
export async function listRules(ctx: Ctx): Promise<NumberedRule[]> {
  return numbered((await loadSettings(ctx.db.kysely)).values.rules);
}

/** The rule with API ID `id` (404 when there is none). */
export async function ruleOf(ctx: Ctx, id: string | undefined): Promise<NumberedRule> {
  const rules = await listRules(ctx);
  return rules[positionOf(id, rules.length)]!;
}

/** The index of the rule with API ID `id` among `count` rules; NotFound for anything else. */
function positionOf(id: string | undefined, count: number): number {
  if (!id || !/^[1-9]\d{0,5}$/.test(id) || Number(id) > count) throw new NotFound();
  return Number(id) - 1;
}

function checkRule(params: RuleParams): InstanceRule {
  const text = params.text.trim();
  const hint = (params.hint ?? "").trim();
  const problems: string[] = [];
  if (!text) problems.push("Text can't be blank");
  else if ([...text].length > RULE_TEXT_LIMIT)
    problems.push(`Text is too long (maximum is ${RULE_TEXT_LIMIT} characters)`);
  if (problems.length > 0) throw new ValidationFailed(problems);
  return { text, hint };
}

interface RuleChange {
  /** The rules after the change. */
  rules: InstanceRule[];
  /** How the change renumbers: old API ID → new one (null: the rule is gone). Absent: nothing moved. */
  renumber?: (id: number) => number | null;
  audit: { action: "create" | "update" | "destroy"; rule: InstanceRule; id: number; detail?: string };
}

/**
 * Reads the rules in a transaction (locked against a concurrent change), applies `change` (which
 * answers undefined when there is nothing to change), saves them, carries the reports' rule IDs
 * along and records the audit entry.
 */
async function changeRules(
  ctx: Ctx,
  actorId: string,
  change: (rules: InstanceRule[]) => RuleChange | undefined,
): Promise<NumberedRule[]> {
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const current = await loadSettingForUpdate(tx, ctx.db.engine, "rules");
    const changed = change(current);
    if (!changed) return numbered(current);
    const { rules, renumber, audit } = changed;
    await saveSetting(tx, "rules", rules);
    if (renumber) await renumberReports(tx, renumber);
    await recordAction(tx, {
      actorId,
      action: audit.action,
      targetType: "Rule",
      targetId: String(audit.id),
      humanIdentifier: audit.rule.text,
      detail: audit.detail ?? null,
    });
    return numbered(rules);
  });
}

/** The rule at `id` in `rules`, which must still be the `version` the moderator saw (when given). */
function pick(rules: readonly InstanceRule[], id: string | undefined, version: string | undefined) {
  const index = positionOf(id, rules.length);
  const rule = rules[index]!;
  if (version !== undefined && ruleVersion(rule) !== version)
    throw new Conflict("The rules were changed in the meantime. Please check them and try again.");
  return { index, rule };
}

/** Adds a rule at the end of the list. */
export async function addRule(ctx: Ctx, actorId: string, params: RuleParams): Promise<NumberedRule> {
  const rule = checkRule(params);
  const rules = await changeRules(ctx, actorId, (current) => ({
    rules: [...current, rule],
    audit: { action: "create", rule, id: current.length + 1 },
  }));
  return rules[rules.length - 1]!;
}

/** Changes a rule's text and hint; it keeps its place and its ID. */
export async function updateRule(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  params: RuleParams,
  version?: string,
): Promise<NumberedRule> {
  const rule = checkRule(params);
  const rules = await changeRules(ctx, actorId, (current) => {
    const { index, rule: before } = pick(current, id, version);
    if (before.text === rule.text && before.hint === rule.hint) return undefined;
    return {
      rules: current.map((r, i) => (i === index ? rule : r)),
      audit: { action: "update", rule, id: index + 1 },
    };
  });
  return rules[Number(id) - 1]!;
}

/** Removes a rule; the ones after it move up, and the reports follow (see the module's policy). */
export async function removeRule(ctx: Ctx, actorId: string, id: string | undefined, version?: string): Promise<void> {
  await changeRules(ctx, actorId, (current) => {
    const { index, rule } = pick(current, id, version);
    const removed = index + 1;
    return {
      rules: current.filter((_, i) => i !== index),
      renumber: (n) => (n === removed ? null : n > removed ? n - 1 : n),
      audit: { action: "destroy", rule, id: removed },
    };
  });
}

/**
 * Moves a rule one place up (`-1`) or down (`1`), swapping it with its neighbour; moving the first
 * rule up or the last one down changes nothing (and logs nothing).
 */
export async function moveRule(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  offset: -1 | 1,
  version?: string,
): Promise<void> {
  await changeRules(ctx, actorId, (current) => {
    const { index, rule } = pick(current, id, version);
    const other = index + offset;
    if (other < 0 || other >= current.length) return undefined;
    const [from, to] = [index + 1, other + 1];
    const rules = [...current];
    [rules[index], rules[other]] = [rules[other]!, rules[index]!];
    return {
      rules,
      renumber: (n) => (n === from ? to : n === to ? from : n),
      audit: { action: "update", rule, id: to, detail: `moved from ${from} to ${to}` },
    };
  });
}

/** Rewrites every report's rule IDs by `renumber` (see the module's policy on IDs). */
async function renumberReports(tx: Kysely<Database>, renumber: (id: number) => number | null): Promise<void> {
  const reports = await tx.selectFrom("reports").select(["id", "rule_ids"]).where("rule_ids", "is not", null).execute();
  for (const report of reports) {
    const before = ruleIdsOf(report.rule_ids);
    const after = before.flatMap((id) => {
      const n = /^\d+$/.test(id) ? renumber(Number(id)) : Number.NaN;
      return n === null ? [] : [Number.isNaN(n) ? id : String(n)];
    });
    if (after.length === before.length && after.every((id, i) => id === before[i])) continue;
    await tx
      .updateTable("reports")
      .set({ rule_ids: after.length > 0 ? JSON.stringify(after) : null })
      .where("id", "=", report.id)
      .execute();
  }
}

function ruleIdsOf(json: string | null): string[] {
  if (!json) return [];
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}
