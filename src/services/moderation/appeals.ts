/**
 * Appeals of strikes (Mastodon's AppealService, ApproveAppealService, Appeal and AppealPolicy).
 * Policy:
 * - a user appeals their own strike, once, within 20 days of it, with a text of at most 2,000
 *   characters; the staff who handle appeals (Manage Appeals) are told by e-mail;
 * - a moderator with Manage Appeals decides a pending appeal once (a decided one is 403, as
 *   Mastodon's policy answers). Approving undoes what the strike did — a freeze is lifted, a
 *   limit, a suspension, sensitive media — marks the strike overruled and mails the user; removed
 *   posts stay removed (Mastodon cannot undo that either). Rejecting changes nothing but the appeal
 *   and mails the user. No outranking is needed: like enable or unsuspend, a decision lifts, or
 *   leaves, a punishment;
 * - each decision is in the audit log (`approve` / `reject` on the Appeal), in its transaction,
 *   and the mail is queued in it too, so a rolled-back decision sends nothing.
 */
import type { Kysely, Transaction } from "kysely";
import type { Ctx } from "../../context.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountRow, AccountWarningRow, AppealRow, Database } from "../../db/schema.ts";
import { Forbidden, NotFound, ValidationFailed } from "../../errors.ts";
import { hasPermission } from "../accounts/roles.ts";
import { handleOf, type Moderator } from "../admin/accounts.ts";
import { recordAction } from "../admin/audit.ts";
import { withdrawDataDeletion } from "../admin/deletion_requests.ts";
import { loadSettings } from "../instance/settings.ts";
import type { MailMessage } from "../mail/mailer.ts";
import { APPEAL_MAX_LENGTH, mayAppeal, REPORT_REASONS, strikeOf, strikeTitle } from "./strikes.ts";

export const APPEAL_STATES = ["pending", "approved", "rejected", "all"] as const;
export type AppealStateFilter = (typeof APPEAL_STATES)[number];

/** Why an appeal was refused, in the user's words. */
export const APPEAL_ERRORS = {
  blank: "Please write why the decision should be reconsidered.",
  tooLong: `Your appeal is too long (the most is ${APPEAL_MAX_LENGTH} characters).`,
  taken: "You have already appealed this decision.",
  tooLate: "It is too late to appeal this decision: appeals are possible for 20 days.",
};

/** The refusal of a decision on an appeal that is no longer pending. */
export const ALREADY_DECIDED = "This appeal has already been decided.";
/** Approving cannot bring back an account whose data were deleted. */
export const DATA_GONE = "This account's data have been deleted: its suspension cannot be undone.";

/** An appeal with the strike it is about and the accounts around it. */
export interface AppealEntry {
  appeal: AppealRow;
  warning: AccountWarningRow;
  /** The appealing account. */
  account: AccountRow;
  /** The moderator who issued the strike (undefined once their account is gone). */
  issuedBy: AccountRow | undefined;
  /** The moderator who decided the appeal. */
  decidedBy: AccountRow | undefined;
  /** Why the report behind the strike was filed, in words (when it came from one and said more than "other"). */
  reason: string | undefined;
}

/** The `mail.deliver` job, queued in the decision's transaction (as services/admin/account_mails.ts does). */
async function queueMail(ctx: Ctx, tx: Kysely<Database>, message: MailMessage): Promise<void> {
  await ctx.jobs.enqueueWith(tx, "mail.deliver", message, { maxAttempts: 8 });
}

const dateOf = (iso: string) => iso.slice(0, 10);

/** Appeals `accountId`'s strike `warningId` with `text`; the staff who handle appeals hear of it. */
export async function appealStrike(
  ctx: Ctx,
  account: AccountRow,
  warningId: string | undefined,
  text: string | undefined,
): Promise<AppealRow> {
  const strike = await strikeOf(ctx, account.id, warningId);
  const body = (text ?? "").trim();
  if (strike.appeal) throw new ValidationFailed(APPEAL_ERRORS.taken);
  if (!mayAppeal(strike)) throw new ValidationFailed(APPEAL_ERRORS.tooLate);
  if (body === "") throw new ValidationFailed(APPEAL_ERRORS.blank);
  if ([...body].length > APPEAL_MAX_LENGTH) throw new ValidationFailed(APPEAL_ERRORS.tooLong);
  const now = new Date().toISOString();
  try {
    return await ctx.dispatcher.transaction(async (tx) => {
      const appeal = await tx
        .insertInto("appeals")
        .values({
          id: newId(),
          account_id: account.id,
          account_warning_id: strike.warning.id,
          text: body,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await mailStaff(ctx, tx, account, strike.warning, body);
      return appeal;
    });
  } catch (error) {
    // Two submissions at once: the unique index lets one in.
    if (isUniqueViolation(error)) throw new ValidationFailed(APPEAL_ERRORS.taken);
    throw error;
  }
}

/** Mastodon's AdminMailer#new_appeal: to every user whose role handles appeals. */
async function mailStaff(
  ctx: Ctx,
  tx: Kysely<Database>,
  account: AccountRow,
  warning: AccountWarningRow,
  text: string,
): Promise<void> {
  const staff = await tx
    .selectFrom("users")
    .innerJoin("user_roles", "user_roles.id", "users.role_id")
    .select(["users.email", "user_roles.permissions"])
    .where("users.disabled", "=", false)
    .where("users.confirmed_at", "is not", null)
    .execute();
  const { values } = await loadSettings(tx);
  const acct = `@${account.username}@${ctx.config.localDomain}`;
  for (const member of staff.filter((s) => hasPermission(s, "manage_appeals")))
    await queueMail(ctx, tx, {
      to: member.email,
      subject: `${values.site_title}: ${acct} appeals a moderation decision`,
      text:
        `${acct} appeals the decision of ${dateOf(warning.created_at)} (${strikeTitle(warning.action)}):\n\n${text}\n\n` +
        `Approve or reject the appeal here: ${ctx.config.baseUrl}/admin/disputes/appeals\n`,
    });
}

/** The appeals in `state` (pending first by default), newest first, a page at a time. */
export async function listAppeals(ctx: Ctx, state: AppealStateFilter, page: PageParams): Promise<AppealEntry[]> {
  const db = ctx.db.kysely;
  let query = db.selectFrom("appeals").selectAll();
  if (state === "pending") query = query.where("approved_at", "is", null).where("rejected_at", "is", null);
  if (state === "approved") query = query.where("approved_at", "is not", null);
  if (state === "rejected") query = query.where("rejected_at", "is not", null);
  return entriesOf(db, await fetchPage(query, "id", page));
}

/** How many appeals wait for a decision. */
export async function pendingAppealCount(ctx: Ctx): Promise<number> {
  const row = await ctx.db.kysely
    .selectFrom("appeals")
    .select((eb) => eb.fn.countAll<string | number>().as("count"))
    .where("approved_at", "is", null)
    .where("rejected_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function entriesOf(db: Kysely<Database>, appeals: readonly AppealRow[]): Promise<AppealEntry[]> {
  if (appeals.length === 0) return [];
  const warnings = await db
    .selectFrom("account_warnings")
    .selectAll()
    .where(
      "id",
      "in",
      appeals.map((a) => a.account_warning_id),
    )
    .execute();
  const accountIds = new Set<string>();
  for (const a of appeals) {
    accountIds.add(a.account_id);
    for (const id of [a.approved_by_account_id, a.rejected_by_account_id]) if (id) accountIds.add(id);
  }
  for (const w of warnings) if (w.account_id) accountIds.add(w.account_id);
  const accounts = await db
    .selectFrom("accounts")
    .selectAll()
    .where("id", "in", [...accountIds])
    .execute();
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const reportIds = warnings.flatMap((w) => (w.report_id ? [w.report_id] : []));
  const reports = reportIds.length
    ? await db.selectFrom("reports").select(["id", "category"]).where("id", "in", reportIds).execute()
    : [];
  return appeals.flatMap((appeal) => {
    const warning = warnings.find((w) => w.id === appeal.account_warning_id);
    const account = byId.get(appeal.account_id);
    if (!warning || !account) return [];
    const decider = appeal.approved_by_account_id ?? appeal.rejected_by_account_id;
    return [
      {
        appeal,
        warning,
        account,
        issuedBy: warning.account_id ? byId.get(warning.account_id) : undefined,
        decidedBy: decider ? byId.get(decider) : undefined,
        reason: REPORT_REASONS[reports.find((r) => r.id === warning.report_id)?.category ?? "other"],
      },
    ];
  });
}

/** The appeal `id` with its strike (404 for an unknown one or a value that is no ID). */
export async function appealOf(ctx: Ctx, id: string | undefined): Promise<AppealEntry> {
  const db = ctx.db.kysely;
  const appeal =
    id && isIdLike(id) ? await db.selectFrom("appeals").selectAll().where("id", "=", id).executeTakeFirst() : undefined;
  const entry = appeal ? (await entriesOf(db, [appeal]))[0] : undefined;
  if (!entry) throw new NotFound();
  return entry;
}

const isPending = (appeal: AppealRow) => appeal.approved_at === null && appeal.rejected_at === null;

/**
 * Records the decision on a pending appeal, or throws ALREADY_DECIDED (also when another moderator
 * decided it a moment earlier: the update only touches a pending row).
 */
async function decide(
  tx: Transaction<Database>,
  moderator: Moderator,
  entry: AppealEntry,
  decision: "approve" | "reject",
  now: string,
): Promise<void> {
  const set =
    decision === "approve"
      ? { approved_at: now, approved_by_account_id: moderator.account.id, updated_at: now }
      : { rejected_at: now, rejected_by_account_id: moderator.account.id, updated_at: now };
  const decided = await tx
    .updateTable("appeals")
    .set(set)
    .where("id", "=", entry.appeal.id)
    .where("approved_at", "is", null)
    .where("rejected_at", "is", null)
    .executeTakeFirst();
  if (Number(decided.numUpdatedRows) !== 1) throw new Forbidden(ALREADY_DECIDED);
  await recordAction(tx, {
    actorId: moderator.account.id,
    action: decision,
    targetType: "Appeal",
    targetId: entry.appeal.id,
    humanIdentifier: handleOf(entry.account),
  });
}

/** Undoes what the strike did to the account (nothing for a warning; removed posts stay removed). */
async function undoStrike(ctx: Ctx, tx: Transaction<Database>, entry: AppealEntry, now: string): Promise<void> {
  const accountId = entry.account.id;
  switch (entry.warning.action) {
    case "disable":
      await tx
        .updateTable("users")
        .set({ disabled: false, updated_at: now })
        .where("account_id", "=", accountId)
        .execute();
      break;
    case "sensitive":
      await tx
        .updateTable("accounts")
        .set({ sensitized_at: null, updated_at: now })
        .where("id", "=", accountId)
        .execute();
      break;
    case "silence":
      await tx
        .updateTable("accounts")
        .set({ silenced_at: null, updated_at: now })
        .where("id", "=", accountId)
        .execute();
      break;
    case "suspend":
      await tx
        .updateTable("accounts")
        .set({ suspended_at: null, updated_at: now })
        .where("id", "=", accountId)
        .execute();
      await withdrawDataDeletion(tx, accountId);
      // Other servers read the restored profile.
      await ctx.dispatcher.emit(tx, { type: "account.updated", accountId });
      break;
  }
}

async function mailDecision(
  ctx: Ctx,
  tx: Kysely<Database>,
  entry: AppealEntry,
  decision: "approve" | "reject",
): Promise<void> {
  const user = await tx
    .selectFrom("users")
    .select("email")
    .where("account_id", "=", entry.account.id)
    .executeTakeFirst();
  if (!user) return;
  const { values } = await loadSettings(tx);
  const when = dateOf(entry.warning.created_at);
  const what = strikeTitle(entry.warning.action).toLowerCase();
  const link = `${ctx.config.baseUrl}/disputes/strikes/${entry.warning.id}`;
  const message =
    decision === "approve"
      ? {
          subject: `${values.site_title}: Your appeal has been approved`,
          text: `The moderators approved your appeal of their decision of ${when} (${what}). The decision has been lifted, and your account is in good standing again.\n\n${link}\n`,
        }
      : {
          subject: `${values.site_title}: Your appeal has been rejected`,
          text: `The moderators rejected your appeal of their decision of ${when} (${what}). The decision stands.\n\n${link}\n`,
        };
  await queueMail(ctx, tx, { to: user.email, ...message });
}

/** Approves a pending appeal: the strike's action is undone and the strike overruled. */
export async function approveAppeal(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AppealEntry> {
  const entry = await appealOf(ctx, id);
  if (!isPending(entry.appeal)) throw new Forbidden(ALREADY_DECIDED);
  if (entry.warning.action === "suspend" && entry.account.deleted_at) throw new Forbidden(DATA_GONE);
  await ctx.dispatcher.transaction(async (tx) => {
    const now = new Date().toISOString();
    await decide(tx, moderator, entry, "approve", now);
    await undoStrike(ctx, tx, entry, now);
    await tx
      .updateTable("account_warnings")
      .set({ overruled_at: now, updated_at: now })
      .where("id", "=", entry.warning.id)
      .execute();
    await mailDecision(ctx, tx, entry, "approve");
  });
  return appealOf(ctx, entry.appeal.id);
}

/** Rejects a pending appeal: the strike stands. */
export async function rejectAppeal(ctx: Ctx, moderator: Moderator, id: string | undefined): Promise<AppealEntry> {
  const entry = await appealOf(ctx, id);
  if (!isPending(entry.appeal)) throw new Forbidden(ALREADY_DECIDED);
  await ctx.dispatcher.transaction(async (tx) => {
    await decide(tx, moderator, entry, "reject", new Date().toISOString());
    await mailDecision(ctx, tx, entry, "reject");
  });
  return appealOf(ctx, entry.appeal.id);
}
