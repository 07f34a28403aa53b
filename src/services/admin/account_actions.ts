/**
 * A moderator's action on an account (Mastodon's Admin::AccountAction): `none` (a warning only),
 * `disable` (no sign-in), `sensitive` (media behind a warning), `silence` (off the public
 * timelines), `suspend` (hidden everywhere, signed out, its data to be removed). In one
 * transaction: the change, a warning (strike) the user can read and appeal (with the report's
 * posts unless `includeStatuses` is false), the resolution of the reports it answers — the one
 * given for `none`, every open report on the account for the others, as Mastodon does — the
 * audit log, and the e-mail to a local user unless `send_email_notification` is false. Streams
 * of a disabled or suspended user close at once (`access.changed`) and other servers hear of a
 * suspension (`account.updated`).
 */
import type { Transaction } from "kysely";
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import type { AccountRow, Database, ReportRow } from "../../db/schema.ts";
import { Forbidden, NotFound, ValidationFailed } from "../../errors.ts";
import { removeFollow } from "../accounts/follow.ts";
import { hasPermission } from "../accounts/roles.ts";
import { queueWarningMail } from "./account_mails.ts";
import { accountOf, assertOutranks, handleOf, type Moderator } from "./accounts.ts";
import { recordAction } from "./audit.ts";
import { requestDataDeletion } from "./deletion_requests.ts";
import { warningPresetOf } from "./warning_presets.ts";

export const ACTION_TYPES = ["none", "disable", "sensitive", "silence", "suspend"] as const;
export type AccountActionType = (typeof ACTION_TYPES)[number];

export interface AccountActionParams {
  type?: string;
  reportId?: string;
  warningPresetId?: string;
  text?: string;
  /** Default true. */
  sendEmailNotification?: boolean;
  /**
   * Whether the strike names the report's posts, so the user sees what it is about (Mastodon's
   * `include_statuses`, which only its web form sends). Default true.
   */
  includeStatuses?: boolean;
}

/** Mastodon's validations: a type, one of the list (remote accounts have no user to warn or disable). */
function checkType(type: string | undefined, account: AccountRow): AccountActionType {
  if (!type) throw new ValidationFailed(["Type can't be blank", "Type is not included in the list"]);
  const allowed: readonly string[] =
    account.domain === null ? ACTION_TYPES : ACTION_TYPES.filter((t) => t !== "disable");
  if (!allowed.includes(type)) throw new ValidationFailed("Type is not included in the list");
  return type as AccountActionType;
}

async function byId<T>(find: (id: string) => Promise<T | undefined>, id: string | undefined): Promise<T | undefined> {
  if (id === undefined || id.trim() === "") return undefined;
  const row = isIdLike(id.trim()) ? await find(id.trim()) : undefined;
  if (!row) throw new NotFound();
  return row;
}

/** Takes the action on account `id`; returns the account as it is now. */
export async function takeAccountAction(
  ctx: Ctx,
  moderator: Moderator,
  id: string | undefined,
  params: AccountActionParams,
): Promise<AccountRow> {
  const db = ctx.db.kysely;
  const target = await accountOf(db, id);
  const type = checkType(params.type, target);
  const report = await byId(
    (rid) => db.selectFrom("reports").selectAll().where("id", "=", rid).executeTakeFirst(),
    params.reportId,
  );
  const preset = params.warningPresetId?.trim() ? await warningPresetOf(ctx, params.warningPresetId.trim()) : undefined;
  await assertOutranks(db, moderator, target);
  const user =
    target.domain === null
      ? await db.selectFrom("users").selectAll().where("account_id", "=", target.id).executeTakeFirst()
      : undefined;
  if (type === "disable" && !user) throw new Forbidden();
  const reports: ReportRow[] =
    type === "none"
      ? report
        ? [report]
        : []
      : await db
          .selectFrom("reports")
          .selectAll()
          .where("target_account_id", "=", target.id)
          .where("action_taken_at", "is", null)
          .execute();
  // Resolving reports is Manage Reports' (Mastodon's ReportPolicy#update?).
  if (reports.length > 0 && !hasPermission(moderator.role, "manage_reports")) throw new Forbidden();

  const text = [preset?.text, params.text].filter((t): t is string => !!t?.trim()).join("\n\n");
  const now = new Date().toISOString();
  const log = (tx: Transaction<Database>, action: string, targetType: "Account" | "User", targetId: string) =>
    recordAction(tx, {
      actorId: moderator.account.id,
      action,
      targetType,
      targetId,
      humanIdentifier: handleOf(target),
    });

  return ctx.dispatcher.transaction(async (tx) => {
    switch (type) {
      case "disable":
        await tx.updateTable("users").set({ disabled: true, updated_at: now }).where("id", "=", user!.id).execute();
        await log(tx, "disable", "User", user!.id);
        await ctx.dispatcher.emit(tx, { type: "access.changed", accountIds: [target.id] });
        break;
      case "sensitive":
        await tx
          .updateTable("accounts")
          .set({ sensitized_at: now, updated_at: now })
          .where("id", "=", target.id)
          .execute();
        await log(tx, "sensitive", "Account", target.id);
        break;
      case "silence":
        // A new time even when silenced by a domain block: lifting the block then keeps this silence.
        await tx
          .updateTable("accounts")
          .set({ silenced_at: now, updated_at: now })
          .where("id", "=", target.id)
          .execute();
        await log(tx, "silence", "Account", target.id);
        break;
      case "suspend":
        await tx
          .updateTable("accounts")
          .set({ suspended_at: now, updated_at: now })
          .where("id", "=", target.id)
          .execute();
        await log(tx, "suspend", "Account", target.id);
        await suspendEffects(ctx, tx, target);
        // Its data goes in 30 days unless the suspension is lifted first.
        await requestDataDeletion(tx, target.id, new Date(now));
        break;
      case "none":
        break;
    }
    const warning = await tx
      .insertInto("account_warnings")
      .values({
        id: newId(),
        account_id: moderator.account.id,
        target_account_id: target.id,
        action: type,
        text,
        report_id: report?.id ?? null,
        status_ids: report && params.includeStatuses !== false ? report.status_ids : null,
        created_at: now,
        updated_at: now,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    // A bare strike is noise in the log; one with a moderator's words is not (as Mastodon).
    if (type === "none" && text)
      await recordAction(tx, {
        actorId: moderator.account.id,
        action: "create",
        targetType: "AccountWarning",
        targetId: warning.id,
        humanIdentifier: handleOf(target),
      });
    for (const open of reports) {
      await tx
        .updateTable("reports")
        .set({ action_taken_at: now, action_taken_by_account_id: moderator.account.id, updated_at: now })
        .where("id", "=", open.id)
        .execute();
      await recordAction(tx, {
        actorId: moderator.account.id,
        action: "resolve",
        targetType: "Report",
        targetId: open.id,
        humanIdentifier: open.id,
      });
    }
    // The user is told by e-mail and in the app alike, or not at all (Mastodon's `warnable?`).
    if (user && params.sendEmailNotification !== false) {
      await queueWarningMail(ctx, tx, user.email, target.username, type, text, warning.id);
      await ctx.dispatcher.emit(tx, {
        type: "account_warning.created",
        warningId: warning.id,
        targetAccountId: target.id,
      });
    }
    return tx.selectFrom("accounts").selectAll().where("id", "=", target.id).executeTakeFirstOrThrow();
  });
}

/**
 * What a suspension does besides the mark (read paths already hide a suspended account's posts):
 * a local user's streams close and other servers read the suspended actor; a remote account's
 * follows of local accounts end with a Reject (its server would keep delivering it our posts).
 */
async function suspendEffects(ctx: Ctx, tx: Transaction<Database>, target: AccountRow): Promise<void> {
  if (target.domain === null) {
    await ctx.dispatcher.emit(tx, { type: "access.changed", accountIds: [target.id] });
    await ctx.dispatcher.emit(tx, { type: "account.updated", accountId: target.id });
    return;
  }
  const follows = await tx
    .selectFrom("follows")
    .innerJoin("accounts", "accounts.id", "follows.target_account_id")
    .select("follows.target_account_id")
    .where("follows.account_id", "=", target.id)
    .where("accounts.domain", "is", null)
    .execute();
  for (const follow of follows) await removeFollow(ctx, tx, target.id, follow.target_account_id);
}
