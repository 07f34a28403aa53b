/**
 * Strikes as their user reads them (Mastodon's Disputes::StrikesController and AccountWarningPolicy).
 * Policy:
 * - a user reads only their own warnings: another user's, or a value that is no ID, is "not
 *   found" (404), never "forbidden", so nobody learns which strikes exist;
 * - a strike may be appealed once, within 20 days of it (Mastodon's Appeal::MAX_STRIKE_AGE);
 * - reading needs no "functional" account: a suspended or frozen user must be able to read the
 *   decision and appeal it (the pages give them a way in, see web/disputes.ts);
 * - the posts a strike names are shown even when deleted since (Mastodon's `with_discarded`), so the
 *   user sees what the decision was about.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import type { AccountWarningRow, AppealRow, Database, ReportCategory } from "../../db/schema.ts";
import { warningStatusIds } from "../../entities/account_warning.ts";
import { NotFound } from "../../errors.ts";
import { htmlToPlainText } from "../../text/sanitize.ts";

/** How long after a strike its user may appeal it. */
export const APPEAL_WINDOW_DAYS = 20;
const APPEAL_WINDOW_MS = APPEAL_WINDOW_DAYS * 24 * 60 * 60 * 1000;
/** The longest appeal, in characters. */
export const APPEAL_MAX_LENGTH = 2000;

/** Each action in words: a short title, and what it means for the user. */
export const STRIKE_ACTIONS: Record<string, { title: string; explanation: string }> = {
  none: { title: "Warning", explanation: "A moderator sent you a warning. Nothing about your account has changed." },
  disable: {
    title: "Account frozen",
    explanation: "You cannot use your account, but your profile and other data remain intact.",
  },
  mark_statuses_as_sensitive: {
    title: "Posts marked as sensitive",
    explanation: "Some of your posts were marked as sensitive: their media are hidden behind a warning.",
  },
  delete_statuses: { title: "Posts removed", explanation: "Some of your posts were removed." },
  sensitive: {
    title: "Media marked as sensitive",
    explanation: "Media you post are shown behind a warning from now on.",
  },
  silence: {
    title: "Account limited",
    explanation:
      "Your posts reach only the people who already follow you; they no longer appear on the public timelines.",
  },
  suspend: {
    title: "Account suspended",
    explanation: "You cannot use your account, and your profile and other data are no longer accessible.",
  },
};

/** The title of `action` (an unknown one reads as a warning). */
export const strikeTitle = (action: string) => (STRIKE_ACTIONS[action] ?? STRIKE_ACTIONS.none).title;

/** The reasons a report gives, in words (`other` says nothing the moderator's text would not). */
export const REPORT_REASONS: Partial<Record<ReportCategory, string>> = {
  spam: "Spam",
  legal: "Illegal content",
  violation: "A server rule was broken",
};

/** A strike with what its pages show besides the warning. */
export interface Strike {
  warning: AccountWarningRow;
  appeal: AppealRow | undefined;
  /** Why the report behind it was filed, when it came from one and said more than "other". */
  reason: string | undefined;
}

/** A post a strike names, as the strike pages show it. */
export interface StrikePost {
  id: string;
  /** Undefined when the post is gone from the database altogether. */
  post?: {
    text: string;
    spoilerText: string;
    url: string;
    createdAt: string;
    deleted: boolean;
    /** The descriptions (or types) of its attachments. */
    media: string[];
  };
}

async function withDetails(db: Kysely<Database>, warnings: readonly AccountWarningRow[]): Promise<Strike[]> {
  if (warnings.length === 0) return [];
  const ids = warnings.map((w) => w.id);
  const appeals = await db.selectFrom("appeals").selectAll().where("account_warning_id", "in", ids).execute();
  const reportIds = warnings.flatMap((w) => (w.report_id ? [w.report_id] : []));
  const reports = reportIds.length
    ? await db.selectFrom("reports").select(["id", "category"]).where("id", "in", reportIds).execute()
    : [];
  return warnings.map((warning) => ({
    warning,
    appeal: appeals.find((a) => a.account_warning_id === warning.id),
    reason: REPORT_REASONS[reports.find((r) => r.id === warning.report_id)?.category ?? "other"],
  }));
}

/** `accountId`'s strikes, newest first, a page at a time. */
export async function strikesOf(ctx: Ctx, accountId: string, page: PageParams): Promise<Strike[]> {
  const db = ctx.db.kysely;
  const query = db.selectFrom("account_warnings").selectAll().where("target_account_id", "=", accountId);
  return withDetails(db, await fetchPage(query, "id", page));
}

/** One of `accountId`'s strikes (404 for anyone else's, or for a value that is no ID). */
export async function strikeOf(ctx: Ctx, accountId: string, id: string | undefined): Promise<Strike> {
  const db = ctx.db.kysely;
  const warning =
    id && isIdLike(id)
      ? await db
          .selectFrom("account_warnings")
          .selectAll()
          .where("id", "=", id)
          .where("target_account_id", "=", accountId)
          .executeTakeFirst()
      : undefined;
  if (!warning) throw new NotFound();
  return (await withDetails(db, [warning]))[0]!;
}

/** Until when a strike may be appealed. */
export function appealDeadline(warning: Pick<AccountWarningRow, "created_at">): Date {
  return new Date(Date.parse(warning.created_at) + APPEAL_WINDOW_MS);
}

/** Whether the strike's user may still appeal it: not yet appealed, and within the window. */
export function mayAppeal(strike: Pick<Strike, "warning" | "appeal">, now = new Date()): boolean {
  return strike.appeal === undefined && now.getTime() <= appealDeadline(strike.warning).getTime();
}

/** The posts each of `warnings` names, in the order it names them, by warning ID (two queries in all). */
export async function strikePosts(
  ctx: Ctx,
  warnings: readonly Pick<AccountWarningRow, "id" | "status_ids">[],
): Promise<Map<string, StrikePost[]>> {
  const db = ctx.db.kysely;
  const named = new Map(warnings.map((w) => [w.id, (warningStatusIds(w) ?? []).filter(isIdLike)]));
  const ids = [...new Set([...named.values()].flat())];
  const statuses = ids.length
    ? await db
        .selectFrom("statuses")
        .select(["id", "text", "content", "spoiler_text", "url", "uri", "created_at", "deleted_at"])
        .where("id", "in", ids)
        .execute()
    : [];
  const media = ids.length
    ? await db
        .selectFrom("media_attachments")
        .select(["status_id", "type", "description"])
        .where("status_id", "in", ids)
        .orderBy("id")
        .execute()
    : [];
  const posts = new Map<string, StrikePost>(
    statuses.map((s) => [
      s.id,
      {
        id: s.id,
        post: {
          text: s.text || htmlToPlainText(s.content),
          spoilerText: s.spoiler_text,
          url: s.url ?? s.uri,
          createdAt: s.created_at,
          deleted: s.deleted_at !== null,
          media: media.filter((m) => m.status_id === s.id).map((m) => m.description || m.type),
        },
      },
    ]),
  );
  return new Map([...named].map(([warningId, list]) => [warningId, list.map((id) => posts.get(id) ?? { id })]));
}
