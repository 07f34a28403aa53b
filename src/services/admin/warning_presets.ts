/**
 * Warning presets (Mastodon's AccountWarningPreset, Manage Settings): texts that moderators pick on
 * the account action form (and the admin API's `warning_preset_id`) instead of writing the same
 * warning again; the strike gets the preset's text before the moderator's own. A preset needs a
 * text; its title is optional and only helps moderators find it. They are listed as Mastodon's
 * `alphabetic` scope lists them — by title, then text — all at once: a server has a handful.
 *
 * One divergence: Mastodon does not log changes to presets. Here each creation, change and
 * removal is in the audit log (`create`, `update`, `destroy` of an AccountWarningPreset, named by
 * its title or the start of its text), in the transaction that makes it, as the server settings
 * are, because a preset's words end up in users' strikes.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import type { AccountWarningPresetRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { recordAction } from "./audit.ts";

/** What a moderator writes; both trimmed. */
export interface WarningPresetParams {
  title?: string;
  text?: string;
}

/** How much of a text names a preset without a title (in its label and the audit log). */
const LABEL_LENGTH = 30;

/** The name a preset goes by: its title, or the start of its text (Mastodon's `to_label`). */
export function warningPresetLabel(preset: Pick<AccountWarningPresetRow, "title" | "text">): string {
  if (preset.title) return preset.title;
  const chars = [...preset.text.replace(/\s+/g, " ")];
  return chars.length <= LABEL_LENGTH ? chars.join("") : `${chars.slice(0, LABEL_LENGTH - 1).join("")}…`;
}

/** Every preset, by title then text (titleless ones first), as the action form offers them. */
export function listWarningPresets(ctx: Ctx): Promise<AccountWarningPresetRow[]> {
  return ctx.db.kysely
    .selectFrom("account_warning_presets")
    .selectAll()
    .orderBy("title")
    .orderBy("text")
    .orderBy("id")
    .execute();
}

/** The preset `id`; 404 when there is none. */
export async function warningPresetOf(ctx: Ctx, id: string | undefined): Promise<AccountWarningPresetRow> {
  const row =
    id && isIdLike(id)
      ? await ctx.db.kysely.selectFrom("account_warning_presets").selectAll().where("id", "=", id).executeTakeFirst()
      : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Mastodon's validation: a text (not only spaces); the title may be empty. */
function checkPreset(params: WarningPresetParams): { title: string; text: string } {
  const text = params.text?.trim() ?? "";
  if (!text) throw new ValidationFailed("Text can't be blank");
  return { title: params.title?.trim() ?? "", text };
}

/** Adds a preset. */
export async function createWarningPreset(
  ctx: Ctx,
  actorId: string,
  params: WarningPresetParams,
): Promise<AccountWarningPresetRow> {
  const values = checkPreset(params);
  const now = new Date().toISOString();
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const preset = await tx
      .insertInto("account_warning_presets")
      .values({ id: newId(), ...values, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAction(tx, {
      actorId,
      action: "create",
      targetType: "AccountWarningPreset",
      targetId: preset.id,
      humanIdentifier: warningPresetLabel(preset),
    });
    return preset;
  });
}

/** Replaces a preset's title and text. */
export async function updateWarningPreset(
  ctx: Ctx,
  actorId: string,
  id: string | undefined,
  params: WarningPresetParams,
): Promise<AccountWarningPresetRow> {
  const current = await warningPresetOf(ctx, id);
  const values = checkPreset(params);
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const preset = await tx
      .updateTable("account_warning_presets")
      .set({ ...values, updated_at: new Date().toISOString() })
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirst();
    // Removed by someone else in the meantime.
    if (!preset) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: "update",
      targetType: "AccountWarningPreset",
      targetId: preset.id,
      humanIdentifier: warningPresetLabel(preset),
    });
    return preset;
  });
}

/** Removes a preset. Strikes that used it keep their text: it was copied into them. */
export async function removeWarningPreset(ctx: Ctx, actorId: string, id: string | undefined): Promise<void> {
  const current = await warningPresetOf(ctx, id);
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const removed = await tx
      .deleteFrom("account_warning_presets")
      .where("id", "=", current.id)
      .returningAll()
      .executeTakeFirst();
    if (!removed) throw new NotFound();
    await recordAction(tx, {
      actorId,
      action: "destroy",
      targetType: "AccountWarningPreset",
      targetId: removed.id,
      humanIdentifier: warningPresetLabel(removed),
    });
  });
}
