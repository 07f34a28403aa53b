/**
 * Moderators' notes on an account (Mastodon's AccountModerationNote): staff write what the next
 * moderator should know about an account; its owner never sees them. Rules:
 * - reading and writing need Manage Users (checked at the edge, as for the account page);
 * - a note holds 1 to 500 characters (Mastodon allows 2,000; Rookery keeps notes short);
 * - its author may delete it, and so may a moderator whose role outranks the author's
 *   (Mastodon's AccountModerationNotePolicy#destroy?: an admin removes a moderator's note);
 * - notes are not written to the audit log, as in Mastodon: they change nothing on the account.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import type { AccountModerationNoteRow } from "../../db/schema.ts";
import { Forbidden, NotFound, ValidationFailed } from "../../errors.ts";
import { EVERYONE_ROLE_ID } from "../accounts/roles.ts";
import { accountOf, roleOfAccount, type Moderator } from "./accounts.ts";

/** The longest note, in characters. */
export const MODERATION_NOTE_MAX = 2000;

/** A note with its author's handle, and whether the moderator reading it may delete it. */
export interface ModerationNote extends AccountModerationNoteRow {
  author: string;
  mayDelete: boolean;
}

/** Mastodon's AccountModerationNotePolicy#destroy?: the author, or a moderator outranking the author. */
function mayDelete(moderator: Moderator, authorId: string, authorPosition: number | null): boolean {
  return authorId === moderator.account.id || authorPosition === null || moderator.role.position > authorPosition;
}

/** The notes on account `targetId`, oldest first (the order they were written), as `reader` sees them. */
export async function moderationNotesOf(ctx: Ctx, targetId: string, reader: Moderator): Promise<ModerationNote[]> {
  const rows = await ctx.db.kysely
    .selectFrom("account_moderation_notes")
    .innerJoin("accounts", "accounts.id", "account_moderation_notes.account_id")
    .leftJoin("users", "users.account_id", "account_moderation_notes.account_id")
    .leftJoin("user_roles", (join) =>
      join.on((eb) => eb("user_roles.id", "=", eb.fn.coalesce("users.role_id", eb.val(EVERYONE_ROLE_ID)))),
    )
    .selectAll("account_moderation_notes")
    .select([
      "accounts.username as author_username",
      "accounts.domain as author_domain",
      "user_roles.position as author_position",
    ])
    .where("account_moderation_notes.target_account_id", "=", targetId)
    .orderBy("account_moderation_notes.id", "asc")
    .execute();
  return rows.map(({ author_username, author_domain, author_position, ...note }) => ({
    ...note,
    author: author_domain === null ? author_username : `${author_username}@${author_domain}`,
    mayDelete: mayDelete(reader, note.account_id, author_position),
  }));
}

/** Mastodon's validations of a note's content (presence, length). */
function checkContent(content: string | undefined): string {
  const text = content?.trim() ?? "";
  if (text === "") throw new ValidationFailed("Content can't be blank");
  if ([...text].length > MODERATION_NOTE_MAX)
    throw new ValidationFailed(`Content is too long (maximum is ${MODERATION_NOTE_MAX} characters)`);
  return text;
}

/** Writes `moderator`'s note on account `targetId` (404 for an unknown account, 422 for bad content). */
export async function createModerationNote(
  ctx: Ctx,
  moderator: Moderator,
  targetId: string | undefined,
  content: string | undefined,
): Promise<AccountModerationNoteRow> {
  const target = await accountOf(ctx.db.kysely, targetId);
  const text = checkContent(content);
  const now = new Date().toISOString();
  return ctx.db.kysely
    .insertInto("account_moderation_notes")
    .values({
      id: newId(),
      account_id: moderator.account.id,
      target_account_id: target.id,
      content: text,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Deletes note `id` (404 for an unknown one; 403 unless `moderator` wrote it or outranks its
 * author). Returns the note as it was, so the caller knows which account it was about.
 */
export async function deleteModerationNote(
  ctx: Ctx,
  moderator: Moderator,
  id: string | undefined,
): Promise<AccountModerationNoteRow> {
  const db = ctx.db.kysely;
  const note =
    id && isIdLike(id)
      ? await db.selectFrom("account_moderation_notes").selectAll().where("id", "=", id).executeTakeFirst()
      : undefined;
  if (!note) throw new NotFound();
  const role = await roleOfAccount(db, await accountOf(db, note.account_id));
  if (!mayDelete(moderator, note.account_id, role?.position ?? null)) throw new Forbidden();
  await db.deleteFrom("account_moderation_notes").where("id", "=", note.id).execute();
  return note;
}
