/**
 * Moderators' notes on a report (Mastodon's ReportNote and ReportNotesController): what one
 * moderator found out or decided, for the next to read. Policy, as Mastodon's ReportNotePolicy:
 * anyone with Manage Reports may write one; its author may delete it, and so may a moderator with
 * Manage Reports whose role outranks the author's. As in Mastodon, writing or deleting a note is
 * not an entry of the audit log, but resolving or reopening the report along with a note is (as
 * `resolve` / `reopen`, through the same functions the report's own buttons use).
 */
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import type { ReportNoteRow, ReportRow } from "../../db/schema.ts";
import { Forbidden, NotFound, ValidationFailed } from "../../errors.ts";
import { EVERYONE_ROLE_ID, hasPermission, outranks } from "../accounts/roles.ts";
import { accountOf, roleOfAccount, type Moderator } from "./accounts.ts";
import { reopenReport, reportOf, resolveReport } from "./reports.ts";

/** The longest note, in characters (Mastodon's ReportNote validation: 2,000). */
export const REPORT_NOTE_LIMIT = 2000;

export const NOTE_BLANK = "Write something in the note first.";
export const NOTE_TOO_LONG = `A note can be at most ${REPORT_NOTE_LIMIT} characters long.`;

/** What to do with the report once the note is written (Mastodon's "… and resolve", "… and reopen"). */
export type NoteFollowUp = "resolve" | "reopen";

export interface ReportNoteView extends ReportNoteRow {
  /** Whether the moderator reading the notes may delete this one. */
  deletable: boolean;
}

/** Line breaks as one character, surrounding space dropped; the text as it will be stored. */
function normalized(content: string | undefined): string {
  return (content ?? "").replace(/\r\n?/g, "\n").trim();
}

/** Mastodon's validations: present, at most REPORT_NOTE_LIMIT characters. */
function checkContent(content: string): void {
  if (content === "") throw new ValidationFailed(NOTE_BLANK);
  if ([...content].length > REPORT_NOTE_LIMIT) throw new ValidationFailed(NOTE_TOO_LONG);
}

/** May `moderator` delete a note written by an author whose role is `authorRole`? */
function mayDelete(moderator: Moderator, note: ReportNoteRow, authorRole: { position: number } | null): boolean {
  if (note.account_id === moderator.account.id) return true;
  return hasPermission(moderator.role, "manage_reports") && outranks(moderator.role, authorRole ?? undefined);
}

/** The notes on `report`, oldest first, each with whether `moderator` may delete it. */
export async function reportNotes(ctx: Ctx, moderator: Moderator, report: ReportRow): Promise<ReportNoteView[]> {
  const db = ctx.db.kysely;
  const notes = await db
    .selectFrom("report_notes")
    .selectAll()
    .where("report_id", "=", report.id)
    .orderBy("id", "asc")
    .execute();
  const authorIds = [...new Set(notes.map((n) => n.account_id))].filter((id) => id !== moderator.account.id);
  const positions = new Map<string, { position: number } | null>();
  if (authorIds.length > 0) {
    // As roleOfAccount reads one author's role (everyone's when the user has none), for all of them.
    const rows = await db
      .selectFrom("users")
      .innerJoin("user_roles", (join) =>
        join.on((eb) => eb("user_roles.id", "=", eb.fn.coalesce("users.role_id", eb.val(EVERYONE_ROLE_ID)))),
      )
      .select(["users.account_id", "user_roles.position"])
      .where("users.account_id", "in", authorIds)
      .execute();
    for (const row of rows) positions.set(row.account_id, { position: row.position });
  }
  return notes.map((note) => ({
    ...note,
    deletable: mayDelete(moderator, note, positions.get(note.account_id) ?? null),
  }));
}

/**
 * Writes `content` as `moderator`'s note on report `reportId`, then resolves or reopens the report
 * when `followUp` says so. Answers the report as it is then.
 */
export async function addReportNote(
  ctx: Ctx,
  moderator: Moderator,
  reportId: string | undefined,
  content: string | undefined,
  followUp?: NoteFollowUp,
): Promise<ReportRow> {
  const report = await reportOf(ctx, reportId);
  const text = normalized(content);
  checkContent(text);
  const now = new Date().toISOString();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .insertInto("report_notes")
      .values({
        id: newId(),
        report_id: report.id,
        account_id: moderator.account.id,
        content: text,
        created_at: now,
        updated_at: now,
      })
      .execute();
    // The report changed (Mastodon's `touch: true`): apps that sort by `updated_at` see it.
    await tx.updateTable("reports").set({ updated_at: now }).where("id", "=", report.id).execute();
  });
  if (followUp === "resolve") return resolveReport(ctx, moderator.account, report.id);
  if (followUp === "reopen") return reopenReport(ctx, moderator.account, report.id);
  return reportOf(ctx, report.id);
}

/** Deletes note `noteId` of report `reportId` (403 unless `moderator` may); answers the report. */
export async function deleteReportNote(
  ctx: Ctx,
  moderator: Moderator,
  reportId: string | undefined,
  noteId: string | undefined,
): Promise<ReportRow> {
  const db = ctx.db.kysely;
  const note =
    noteId && isIdLike(noteId) && reportId && isIdLike(reportId)
      ? await db
          .selectFrom("report_notes")
          .selectAll()
          .where("id", "=", noteId)
          .where("report_id", "=", reportId)
          .executeTakeFirst()
      : undefined;
  if (!note) throw new NotFound();
  if (note.account_id !== moderator.account.id) {
    const author = await accountOf(db, note.account_id);
    if (!mayDelete(moderator, note, await roleOfAccount(db, author))) throw new Forbidden();
  }
  const now = new Date().toISOString();
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom("report_notes").where("id", "=", note.id).execute();
    await tx.updateTable("reports").set({ updated_at: now }).where("id", "=", note.report_id).execute();
  });
  return reportOf(ctx, note.report_id);
}
